// Package imagebomb makes hostile images for tests (test-only): PNGs whose
// files are small and whose decoded pixels are not, and JPEGs whose
// decoding takes far more work than their size or pixels suggest.
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

// ProgressiveJPEG returns a valid progressive JPEG, gray, w×h (each at
// most 65535), with one DC scan and then acScans AC scans over the whole
// image. Each AC scan takes a dozen bytes (its blocks are end-of-band
// runs), yet a decoder passes over every block of the image for it: with
// thousands of scans a file of tens of KB takes a decoder seconds to
// minutes, within any memory budget.
func ProgressiveJPEG(w, h, acScans int) []byte {
	var out bytes.Buffer
	segment := func(marker byte, body []byte) {
		out.Write([]byte{0xff, marker, byte((len(body) + 2) >> 8), byte(len(body) + 2)})
		out.Write(body)
	}
	out.Write([]byte{0xff, 0xd8}) // SOI
	segment(0xdb, append([]byte{0}, bytes.Repeat([]byte{1}, 64)...))
	segment(0xc2, []byte{8, byte(h >> 8), byte(h), byte(w >> 8), byte(w), 1, 1, 0x11, 0})
	// DC table 0: one code, "0", for a difference of 0. AC table 0: "0"
	// for an end-of-band run of 2^14 plus 14 bits, "1" for one block.
	counts := func(n byte) []byte { // n codes of length 1
		c := make([]byte, 16)
		c[0] = n
		return c
	}
	segment(0xc4, append(append([]byte{0x00}, counts(1)...), 0x00))
	segment(0xc4, append(append([]byte{0x10}, counts(2)...), 0xe0, 0x00))
	blocks := ((w + 7) / 8) * ((h + 7) / 8)
	entropy := func(put func(*bitWriter)) {
		bw := &bitWriter{out: &out}
		put(bw)
		bw.flush()
	}
	segment(0xda, []byte{1, 1, 0x00, 0, 0, 0}) // DC, first pass
	entropy(func(bw *bitWriter) {
		for range blocks {
			bw.put(0, 1)
		}
	})
	const run = 1<<14 | 0x2aaa // no 0xFF bytes in the extra bits
	for range acScans {
		segment(0xda, []byte{1, 1, 0x00, 1, 63, 0}) // AC 1–63, first pass
		entropy(func(bw *bitWriter) {
			for left := blocks; left > 0; left -= run {
				bw.put(0, 1)
				bw.put(run&0x3fff, 14)
			}
		})
	}
	out.Write([]byte{0xff, 0xd9}) // EOI
	return out.Bytes()
}

// bitWriter writes JPEG entropy-coded bits, stuffing a zero after 0xFF.
type bitWriter struct {
	out *bytes.Buffer
	acc byte
	n   uint
}

func (w *bitWriter) put(v uint32, n uint) {
	for i := int(n) - 1; i >= 0; i-- {
		w.acc = w.acc<<1 | byte(v>>uint(i)&1)
		if w.n++; w.n == 8 {
			w.out.WriteByte(w.acc)
			if w.acc == 0xff {
				w.out.WriteByte(0)
			}
			w.acc, w.n = 0, 0
		}
	}
}

// flush pads the last byte with 1 bits, as the standard says.
func (w *bitWriter) flush() {
	for w.n != 0 {
		w.put(1, 1)
	}
}
