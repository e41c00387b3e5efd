// Package imagebomb makes hostile images for tests (test-only): PNGs whose
// files are small and whose decoded pixels are not.
package imagebomb

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
	"io"
)

// PNGOfZeros returns a valid PNG of w×h all-zero pixels of the given bit depth
// and color type (0, 2, 4 or 6), optionally Adam7-interlaced, written
// without ever holding its pixels: a decompression bomb whose file is
// about a thousandth of its raw size.
func PNGOfZeros(w, h int, depth, colorType byte, interlaced bool) []byte {
	channels := map[byte]int{0: 1, 2: 3, 4: 2, 6: 4}[colorType]
	rowBytes := func(pw int) int { return 1 + (pw*channels*int(depth)+7)/8 }
	var raw int64
	if !interlaced {
		raw = int64(h) * int64(rowBytes(w))
	} else {
		for _, p := range [][4]int{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}} {
			pw, ph := (w-p[0]+p[2]-1)/p[2], (h-p[1]+p[3]-1)/p[3]
			if pw > 0 && ph > 0 {
				raw += int64(ph) * int64(rowBytes(pw))
			}
		}
	}
	var idat bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&idat, zlib.BestCompression)
	_, _ = io.CopyN(zw, zeros{}, raw) // filter byte 0 and zero samples alike
	_ = zw.Close()
	return pngFile(w, h, depth, colorType, interlaced, idat.Bytes())
}

// PNGHeader returns a PNG that says it is w×h (any size a PNG header can
// hold, up to 2³¹−1 a side) and whose pixel data is an empty zlib stream:
// what a decoder sees before it allocates the image.
func PNGHeader(w, h int, depth, colorType byte, interlaced bool) []byte {
	var idat bytes.Buffer
	_ = zlib.NewWriter(&idat).Close()
	return pngFile(w, h, depth, colorType, interlaced, idat.Bytes())
}

// pngFile writes the signature, IHDR, one IDAT of idat and IEND.
func pngFile(w, h int, depth, colorType byte, interlaced bool, idat []byte) []byte {
	var out bytes.Buffer
	out.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(kind string, data []byte) {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(data)))
		out.Write(n[:])
		crc := crc32.NewIEEE()
		crc.Write([]byte(kind))
		crc.Write(data)
		out.WriteString(kind)
		out.Write(data)
		binary.BigEndian.PutUint32(n[:], crc.Sum32())
		out.Write(n[:])
	}
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = depth, colorType
	if interlaced {
		ihdr[12] = 1
	}
	chunk("IHDR", ihdr)
	chunk("IDAT", idat)
	chunk("IEND", nil)
	return out.Bytes()
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}
