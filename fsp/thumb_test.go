package fsp

import (
	"bytes"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"testing"

	"golang.org/x/image/draw"

	"github.com/designbridge/caddy-designbridge/testutil/imagebomb"
)

// TestHalveYCbCr: a halving step on a JPEG's planes gives what the RGBA
// step (ApproxBiLinear from the YCbCr image) gives, within rounding, for
// every chroma subsampling a JPEG decodes to, odd and even sides, a side
// kept, and an image that does not start at (0, 0).
func TestHalveYCbCr(t *testing.T) {
	for _, ratio := range ycbcrRatios {
		for _, c := range []struct{ w, h, dw, dh int }{
			{64, 48, 32, 24},     // exactly half
			{67, 41, 33, 20},     // odd sides
			{64, 41, 64, 20},     // width kept
			{9, 100, 4, 100},     // height kept, odd width
			{401, 267, 200, 133}, // as a 1600×1067 photo's last step
		} {
			big := ycbcrTestImage(c.w+5, c.h+3, ratio)
			src := big.SubImage(image.Rect(5, 3, 5+c.w, 3+c.h)).(*image.YCbCr)
			got := halveYCbCr(src, c.dw, c.dh)
			if got.SubsampleRatio != image.YCbCrSubsampleRatio444 || got.Rect != image.Rect(0, 0, c.dw, c.dh) {
				t.Fatalf("%v %dx%d: got %v %v", ratio, c.w, c.h, got.SubsampleRatio, got.Rect)
			}
			if worst, mean := differsFromApproxBiLinear(src, got); worst > 2 || mean > 1 {
				t.Errorf("%v %dx%d → %dx%d: differs from ApproxBiLinear by up to %d (mean %.2f) per channel",
					ratio, c.w, c.h, c.dw, c.dh, worst, mean)
			}
		}
	}
}

var ycbcrRatios = []image.YCbCrSubsampleRatio{
	image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio420,
	image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410,
}

// differsFromApproxBiLinear compares got, a halving step of src, with
// ApproxBiLinear scaling src to got's size: the largest and the mean
// difference of a colour channel.
func differsFromApproxBiLinear(src, got *image.YCbCr) (worst int, mean float64) {
	want := image.NewRGBA(got.Rect)
	draw.ApproxBiLinear.Scale(want, want.Rect, src, src.Rect, draw.Src, nil)
	sum := 0
	for y := range got.Rect.Dy() {
		for x := range got.Rect.Dx() {
			g := color.RGBAModel.Convert(got.At(x, y)).(color.RGBA)
			w := want.RGBAAt(x, y)
			for _, d := range []int{int(g.R) - int(w.R), int(g.G) - int(w.G), int(g.B) - int(w.B)} {
				worst, sum = max(worst, d, -d), sum+max(d, -d)
			}
		}
	}
	return worst, float64(sum) / float64(3*got.Rect.Dx()*got.Rect.Dy())
}

// FuzzHalveYCbCr: a halving step of any size, subsampling and origin
// stays within the planes and gives ApproxBiLinear's pixels.
func FuzzHalveYCbCr(f *testing.F) {
	f.Add(uint16(64), uint16(48), uint8(2), uint8(0), uint8(0), true, true)
	f.Add(uint16(1601), uint16(3), uint8(5), uint8(7), uint8(3), true, false)
	f.Add(uint16(2), uint16(2), uint8(4), uint8(1), uint8(1), false, true)
	f.Fuzz(func(t *testing.T, w, h uint16, r, minX, minY uint8, halveW, halveH bool) {
		w, h = max(1, w%2000), max(1, h%2000)
		dw, dh := int(w), int(h)
		if halveW && w >= 2 {
			dw = int(w) / 2
		}
		if halveH && h >= 2 {
			dh = int(h) / 2
		}
		ratio := ycbcrRatios[int(r)%len(ycbcrRatios)]
		// A decoded JPEG starts at (0, 0); a part of one elsewhere.
		x0, y0 := int(minX%16), int(minY%16)
		big := ycbcrTestImage(int(w)+x0, int(h)+y0, ratio)
		src := big.SubImage(image.Rect(x0, y0, x0+int(w), y0+int(h))).(*image.YCbCr)
		got := halveYCbCr(src, dw, dh)
		if got.Rect != image.Rect(0, 0, dw, dh) {
			t.Fatalf("rect %v", got.Rect)
		}
		// The mean is of rounding over a few pixels in a small image.
		if worst, mean := differsFromApproxBiLinear(src, got); worst > 2 || dw*dh >= 64 && mean > 1 {
			t.Errorf("%v %v → %dx%d: differs from ApproxBiLinear by up to %d (mean %.2f) per channel", ratio, src.Rect, dw, dh, worst, mean)
		}
	})
}

// TestThumbnailJPEGScans: every scan of a JPEG is a pass over all of its
// blocks, so a file of a few KB can hold enough scans to take a decoder
// minutes within any memory budget. A JPEG of more scans than encoders
// write is stored as it is, without a thumbnail and without decoding it;
// one of as many scans as encoders write gets its thumbnail.
func TestThumbnailJPEGScans(t *testing.T) {
	for _, c := range []struct {
		name  string
		data  []byte
		thumb bool
	}{
		{"progressive, 9 AC scans", imagebomb.ProgressiveJPEG(640, 480, 9), true},
		{"progressive, 60 AC scans", imagebomb.ProgressiveJPEG(640, 480, 60), true},
		{"progressive, 1000 AC scans", imagebomb.ProgressiveJPEG(2000, 2000, 1000), false},
	} {
		if _, err := checkContent("x.jpg", c.data, defaultAllowedTypes()); err != nil {
			t.Fatalf("%s: the JPEG is refused: %v", c.name, err)
		}
		out, err := makeThumbnail(c.data, defaultMaxImageMemory, newThumbEncoder())
		if err != nil || (out != nil) != c.thumb {
			t.Errorf("%s (%d bytes): thumbnail %v (%v), want %v", c.name, len(c.data), out != nil, err, c.thumb)
		}
	}
}

// FuzzThumbnail: whatever bytes are uploaded, making the thumbnail gives
// an error, no thumbnail (over the budget), or a PNG fitting the box;
// never a panic.
func FuzzThumbnail(f *testing.F) {
	enc := func(encode func(*bytes.Buffer) error) []byte {
		var b bytes.Buffer
		if err := encode(&b); err != nil {
			f.Fatal(err)
		}
		return b.Bytes()
	}
	photo := ycbcrTestImage(301, 77, image.YCbCrSubsampleRatio420)
	f.Add(enc(func(b *bytes.Buffer) error { return jpeg.Encode(b, photo, nil) }))
	f.Add(enc(func(b *bytes.Buffer) error { return png.Encode(b, photo) }))
	f.Add(enc(func(b *bytes.Buffer) error { return jpeg.Encode(b, image.NewGray(image.Rect(0, 0, 450, 9)), nil) }))
	f.Add(testImage(f, "gif", 500, 3))
	f.Add(imagebomb.PNGOfZeros(401, 40, 16, 6, true))
	thumbs := newThumbEncoder()
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := makeThumbnail(data, 8<<20, thumbs)
		if err != nil || out == nil {
			return
		}
		src, _, err := image.DecodeConfig(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("a thumbnail of an image whose header does not decode: %v", err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(out))
		if err != nil {
			t.Fatalf("the thumbnail is not a PNG: %v", err)
		}
		if w, h := thumbDims(src.Width, src.Height); cfg.Width != w || cfg.Height != h {
			t.Fatalf("%dx%d image: thumbnail %dx%d, want %dx%d", src.Width, src.Height, cfg.Width, cfg.Height, w, h)
		}
	})
}

// ycbcrTestImage is a w×h YCbCr image made as a JPEG encoder makes one,
// from colours within the RGB gamut: luma changes from each pixel to the
// next and chroma from each sample to the next, so a sample read from the
// wrong place shows.
func ycbcrTestImage(w, h int, ratio image.YCbCrSubsampleRatio) *image.YCbCr {
	m := image.NewYCbCr(image.Rect(0, 0, w, h), ratio)
	rgb := func(x, y int) (uint8, uint8, uint8) {
		return uint8(80 + (x*7+y*3)%90), uint8(80 + (x*3+y*11)%90), uint8(80 + (x*13+y*5)%90)
	}
	for y := range h {
		for x := range w {
			yy, cb, cr := color.RGBToYCbCr(rgb(x, y))
			m.Y[m.YOffset(x, y)] = yy
			// A chroma sample keeps the colour of the last pixel it covers.
			c := m.COffset(x, y)
			m.Cb[c], m.Cr[c] = cb, cr
		}
	}
	return m
}

// FuzzJPEGScans: whatever the bytes, jpegScans ends, never panics, and
// its limit only caps the count: up to the limit it counts what an
// unlimited count gives, past it one more than the limit. A progressive
// JPEG of n AC scans has n+1 scans (its DC scan).
func FuzzJPEGScans(f *testing.F) {
	var b bytes.Buffer
	if err := jpeg.Encode(&b, ycbcrTestImage(33, 17, image.YCbCrSubsampleRatio420), nil); err != nil {
		f.Fatal(err)
	}
	f.Add(b.Bytes(), 5)
	f.Add(imagebomb.ProgressiveJPEG(16, 16, 3), 2)
	f.Add(imagebomb.ProgressiveJPEG(8, 8, 150), maxJPEGScans)
	f.Add([]byte("\xff\xd8\xff\xda\x00\x02\xff\x00\xff\xd0\xff\xff\xda\x00\x00"), 1)
	for _, n := range []int{0, 1, 7, 120} {
		if got := jpegScans(imagebomb.ProgressiveJPEG(8, 8, n), 1000); got != n+1 {
			f.Fatalf("a progressive JPEG of %d AC scans: %d scans, want %d", n, got, n+1)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte, limit int) {
		if limit < 0 || limit > 1000 {
			return
		}
		all := jpegScans(data, len(data))
		got := jpegScans(data, limit)
		if want := min(all, limit+1); got != want {
			t.Fatalf("jpegScans(limit %d) = %d, want %d (unlimited %d)", limit, got, want, all)
		}
	})
}
