package fsp

import (
	"image"
	"image/color"
	"testing"

	"golang.org/x/image/draw"
)

// TestHalveYCbCr: a halving step on a JPEG's planes gives what the RGBA
// step (ApproxBiLinear from the YCbCr image) gives, within rounding, for
// every chroma subsampling a JPEG decodes to, odd and even sides, a side
// kept, and an image that does not start at (0, 0).
func TestHalveYCbCr(t *testing.T) {
	ratios := []image.YCbCrSubsampleRatio{
		image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio420,
		image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410,
	}
	for _, ratio := range ratios {
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
			want := image.NewRGBA(got.Rect)
			draw.ApproxBiLinear.Scale(want, want.Rect, src, src.Rect, draw.Src, nil)
			worst, sum := 0, 0
			for y := range c.dh {
				for x := range c.dw {
					g := color.RGBAModel.Convert(got.At(x, y)).(color.RGBA)
					w := want.RGBAAt(x, y)
					for _, d := range []int{int(g.R) - int(w.R), int(g.G) - int(w.G), int(g.B) - int(w.B)} {
						worst, sum = max(worst, d, -d), sum+max(d, -d)
					}
				}
			}
			if mean := float64(sum) / float64(3*c.dw*c.dh); worst > 2 || mean > 0.6 {
				t.Errorf("%v %dx%d → %dx%d: differs from ApproxBiLinear by up to %d (mean %.2f) per channel",
					ratio, c.w, c.h, c.dw, c.dh, worst, mean)
			}
		}
	}
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
