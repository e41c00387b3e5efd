package fsp

import (
	"bytes"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"math/rand/v2"
	"testing"

	"golang.org/x/image/draw"

	"github.com/designbridge/caddy-designbridge/testutil/testimage"
)

// thumbBenchImages are uploads of the kinds the editor sends: a resized
// and a camera-size JPEG, a screenshot-sized photo PNG, a PNG with transparency, a GIF, and
// BenchmarkUpload's 200 KB PNG of noise (caddytest/fsp).
func thumbBenchImages(b *testing.B) []struct {
	name string
	data []byte
} {
	enc := func(f func(*bytes.Buffer) error) []byte {
		var buf bytes.Buffer
		if err := f(&buf); err != nil {
			b.Fatal(err)
		}
		return buf.Bytes()
	}
	noise := image.NewRGBA(image.Rect(0, 0, 261, 261))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range noise.Pix {
		noise.Pix[i] = uint8(r.Uint32())
		if i%4 == 3 {
			noise.Pix[i] = 255
		}
	}
	return []struct {
		name string
		data []byte
	}{
		{"jpeg-photo-1600x1067", enc(func(w *bytes.Buffer) error {
			return jpeg.Encode(w, testimage.Photo(1600, 1067, false), &jpeg.Options{Quality: 85})
		})},
		{"jpeg-camera-4000x3000", enc(func(w *bytes.Buffer) error {
			return jpeg.Encode(w, testimage.Photo(4000, 3000, false), &jpeg.Options{Quality: 90})
		})},
		{"png-photo-640x427", enc(func(w *bytes.Buffer) error { return png.Encode(w, testimage.Photo(640, 427, false)) })},
		{"png-alpha-800x600", enc(func(w *bytes.Buffer) error { return png.Encode(w, testimage.Photo(800, 600, true)) })},
		{"gif-480x360", enc(func(w *bytes.Buffer) error {
			return gif.Encode(w, testimage.Photo(480, 360, false), nil)
		})},
		{"png-noise-200KB", enc(func(w *bytes.Buffer) error { return png.Encode(w, noise) })},
	}
}

// BenchmarkThumbnail makes the thumbnail of each kind of upload, as an
// upload does (decode, scale, encode).
func BenchmarkThumbnail(b *testing.B) {
	for _, img := range thumbBenchImages(b) {
		b.Run(img.name, func(b *testing.B) {
			enc := newThumbEncoder() // one per handler
			for b.Loop() {
				if out, err := makeThumbnail(img.data, defaultMaxImageMemory, enc); out == nil || err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(img.data)), "bytes/file")
		})
	}
}

// BenchmarkThumbnailSteps measures the steps of a thumbnail apart, with
// each scaler and encoder the choice was made among.
func BenchmarkThumbnailSteps(b *testing.B) {
	for _, img := range thumbBenchImages(b) {
		src, _, err := image.Decode(bytes.NewReader(img.data))
		if err != nil {
			b.Fatal(err)
		}
		src = scalable(src)
		sb := src.Bounds()
		w, h := thumbDims(sb.Dx(), sb.Dy())
		ref := areaAverage(src, w, h)
		b.Run(img.name+"/decode", func(b *testing.B) {
			for b.Loop() {
				m, _, _ := image.Decode(bytes.NewReader(img.data))
				scalable(m)
			}
		})
		for _, sc := range []struct {
			name string
			s    draw.Scaler
		}{{"ApproxBiLinear", draw.ApproxBiLinear}, {"BiLinear", draw.BiLinear}, {"CatmullRom", draw.CatmullRom}} {
			b.Run(img.name+"/scale-"+sc.name, func(b *testing.B) {
				var dst *image.RGBA
				for b.Loop() {
					dst = image.NewRGBA(image.Rect(0, 0, w, h))
					sc.s.Scale(dst, dst.Bounds(), src, sb, draw.Src, nil)
				}
				b.ReportMetric(psnr(dst, ref), "dB")
			})
		}
		b.Run(img.name+"/scale-halving+ApproxBiLinear", func(b *testing.B) {
			var dst *image.RGBA
			for b.Loop() {
				dst = scaleThumb(src)
			}
			b.ReportMetric(psnr(dst, ref), "dB")
		})
		dst := image.NewRGBA(image.Rect(0, 0, w, h))
		draw.CatmullRom.Scale(dst, dst.Bounds(), src, sb, draw.Src, nil)
		for _, e := range []struct {
			name string
			enc  *png.Encoder
		}{
			{"png-default", &png.Encoder{}},
			{"png-bestspeed", &png.Encoder{CompressionLevel: png.BestSpeed}},
			{"png-bestspeed-pooled", &newThumbEncoder().fast},
			{"png-stored-pooled", &newThumbEncoder().stored},
		} {
			b.Run(img.name+"/encode-"+e.name, func(b *testing.B) {
				enc := e.enc
				var n int
				for b.Loop() {
					var out bytes.Buffer
					if err := enc.Encode(&out, dst); err != nil {
						b.Fatal(err)
					}
					n = out.Len()
				}
				b.ReportMetric(float64(n), "bytes/thumb")
			})
		}
	}
}

// areaAverage is the reference a scaler's quality is measured against:
// each thumbnail pixel is the mean of the source pixels whose centres fall
// in its area (premultiplied, as image.RGBA keeps them).
func areaAverage(src image.Image, w, h int) *image.RGBA {
	b := src.Bounds()
	sum := make([][5]float64, w*h) // r, g, b, a, count
	for y := b.Min.Y; y < b.Max.Y; y++ {
		ty := (y - b.Min.Y) * h / b.Dy()
		for x := b.Min.X; x < b.Max.X; x++ {
			tx := (x - b.Min.X) * w / b.Dx()
			r, g, bl, a := src.At(x, y).RGBA()
			c := &sum[ty*w+tx]
			c[0], c[1], c[2], c[3], c[4] = c[0]+float64(r>>8), c[1]+float64(g>>8), c[2]+float64(bl>>8), c[3]+float64(a>>8), c[4]+1
		}
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	for i, c := range sum {
		for k := range 4 {
			dst.Pix[4*i+k] = uint8(c[k]/c[4] + 0.5)
		}
	}
	return dst
}

// psnr is the peak signal-to-noise ratio of a against the reference b, in
// dB: above about 30 the two look alike at thumbnail size.
func psnr(a, b *image.RGBA) float64 {
	var se float64
	for i := range a.Pix {
		d := float64(a.Pix[i]) - float64(b.Pix[i])
		se += d * d
	}
	return 10 * math.Log10(255*255/(se/float64(len(a.Pix))))
}
