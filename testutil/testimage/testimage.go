// Package testimage makes pictures for tests and benchmarks (test-only)
// that cost what real uploads cost to decode, scale and encode.
package testimage

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"math/rand/v2"
)

// Photo is a w×h picture with what makes photos cost what they cost:
// smooth shading, a few hard edges and a little sensor noise; with alpha,
// a round cut-out with a soft edge. The same w, h and alpha give the same
// picture.
func Photo(w, h int, alpha bool) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(3, 4))
	for y := range h {
		for x := range w {
			fx, fy := float64(x)/float64(w), float64(y)/float64(h)
			shade := 0.5 + 0.3*math.Sin(7*fx+3*fy) + 0.2*math.Cos(11*fy-5*fx*fy)
			if (x/97+y/61)%3 == 0 { // objects with hard edges
				shade = 1 - shade
			}
			c := func(k float64) uint8 {
				v := 255*shade*k + float64(r.IntN(13)-6)
				return uint8(max(0, min(255, v)))
			}
			a := uint8(255)
			if alpha { // a round cut-out with a soft edge, clear outside
				d := math.Hypot(fx-0.5, fy-0.5)
				a = uint8(255 * max(0, min(1, (0.45-d)*20)))
			}
			img.SetNRGBA(x, y, color.NRGBA{c(1), c(0.8), c(0.6), a})
		}
	}
	return img
}

// NoiseJPEG is a w×h JPEG of noise, seed choosing which: it compresses
// badly, in JPEG and in whatever a render makes of it (a PNG, a PDF).
func NoiseJPEG(w, h int, seed uint32) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	x := seed | 1
	for i := range img.Pix {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		img.Pix[i] = byte(x)
	}
	var b bytes.Buffer
	_ = jpeg.Encode(&b, img, &jpeg.Options{Quality: 60})
	return b.Bytes()
}
