package browserpool

import (
	"bytes"
	"errors"
	"image"
	"image/jpeg"
	"image/png"
	"net/http"

	"golang.org/x/image/webp"
)

// errUnmeasured is an image whose size the pool cannot read.
var errUnmeasured = errors.New("not a PNG, JPEG, GIF or WebP")

// imagePixels is the width × height an image's header states. Chromium
// decodes an image whole, 4 bytes a pixel, however small its file (a
// 428 KB PNG of 20000×20000 took 1.6 GB), so the pool hands it only images
// it has measured: PNG, JPEG, GIF and WebP. An SVG could hold any of them
// as a data: URL, and others (AVIF) need decoders Go does not have.
func imagePixels(data []byte) (int64, error) {
	decode := map[string]func([]byte) (image.Config, error){
		"image/png":  func(b []byte) (image.Config, error) { return png.DecodeConfig(bytes.NewReader(b)) },
		"image/jpeg": func(b []byte) (image.Config, error) { return jpeg.DecodeConfig(bytes.NewReader(b)) },
		"image/gif":  gifBounds,
		"image/webp": func(b []byte) (image.Config, error) { return webp.DecodeConfig(bytes.NewReader(b)) },
	}[http.DetectContentType(data)]
	if decode == nil {
		return 0, errUnmeasured
	}
	cfg, err := decode(data)
	if err != nil {
		return 0, err
	}
	return int64(cfg.Width) * int64(cfg.Height), nil
}

// gifBounds is the size of a GIF as Chromium decodes it: the logical
// screen grown to hold the first frame (where it is placed, and its size),
// for files whose screen is wrong. The header alone (gif.DecodeConfig)
// let a 35-byte GIF that says 1×1, with one pixel at (19999, 19999),
// pass as one pixel and raise Chromium's memory by 3.5 GB. Every frame
// is counted, not only the first: Chromium crops the later ones today,
// and real GIFs keep them within the screen. As Chromium, it reads a
// byte that starts no block as the end of the file.
func gifBounds(b []byte) (image.Config, error) {
	le16 := func(i int) int { return int(b[i]) | int(b[i+1])<<8 }
	if len(b) < 13 {
		return image.Config{}, errBadGIF
	}
	w, h := le16(6), le16(8)
	i := 13
	if b[10]&0x80 != 0 {
		i += 3 << (b[10]&7 + 1) // the global colour table
	}
	frames := 0
	for i < len(b) {
		switch b[i] {
		case 0x21: // an extension: its label, then data sub-blocks
			i = skipSubBlocks(b, i+2)
		case 0x2c: // an image descriptor, a local colour table, the pixels
			if i+10 > len(b) {
				return image.Config{}, errBadGIF
			}
			left, top, fw, fh, flags := le16(i+1), le16(i+3), le16(i+5), le16(i+7), b[i+9]
			w, h = max(w, left+fw), max(h, top+fh)
			frames++
			i += 10
			if flags&0x80 != 0 {
				i += 3 << (flags&7 + 1)
			}
			i = skipSubBlocks(b, i+1) // after the LZW code size
		default: // the trailer, or bytes Chromium takes for the end
			i = len(b)
		}
	}
	if frames == 0 {
		return image.Config{}, errBadGIF
	}
	return image.Config{Width: w, Height: h}, nil
}

// errBadGIF is a GIF whose frames cannot be found.
var errBadGIF = errors.New("gif: no frame, or a malformed block")

// skipSubBlocks returns the index after the data sub-blocks starting at i
// (each a length byte and that many bytes, up to a zero length), or
// len(b) when they run past the end.
func skipSubBlocks(b []byte, i int) int {
	for i < len(b) && b[i] != 0 {
		i += int(b[i]) + 1
	}
	return min(i+1, len(b))
}
