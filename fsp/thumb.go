package fsp

import (
	"bytes"
	"image"
	"image/png"

	"golang.org/x/image/draw"
)

// thumbSize is the box a thumbnail fits in.
const thumbSize = 200

// maxThumbPixels bounds the image a thumbnail is made from: decoding
// allocates width×height×4 bytes whatever the file's size.
const maxThumbPixels = 40_000_000

// thumbKey is the storage name of the thumbnail of the file called name:
// beside it, hidden from listings by the leading dot.
func thumbName(name string) string { return ".thumb." + name + ".png" }

// makeThumbnail returns a PNG fitting thumbSize×thumbSize, or nil when data
// is too large to decode (the file is stored without a thumbnail).
func makeThumbnail(data []byte) ([]byte, error) {
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > maxThumbPixels {
		return nil, nil
	}
	src, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	if w > thumbSize || h > thumbSize {
		if w >= h {
			w, h = thumbSize, max(1, h*thumbSize/w)
		} else {
			w, h = max(1, w*thumbSize/h), thumbSize
		}
	}
	dst := image.NewNRGBA(image.Rect(0, 0, w, h))
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, b, draw.Src, nil)
	var out bytes.Buffer
	if err := png.Encode(&out, dst); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}
