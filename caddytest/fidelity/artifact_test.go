package fidelity

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
)

// gap is the blank strip between the two renders of a side-by-side PNG.
const gap = 24

var (
	outlineDiffers = color.RGBA{R: 0xe0, G: 0x10, B: 0x10, A: 0xff} // paired, out of tolerance
	outlineMissing = color.RGBA{R: 0xff, G: 0x8c, B: 0x00, A: 0xff} // no counterpart
)

// writeSideBySide writes the vendor's render (left) and ours (right) as
// one PNG, with the blocks that differ outlined on both sides.
func writeSideBySide(path string, vendorPNG, oursPNG []byte, r result) error {
	v, err := png.Decode(bytes.NewReader(vendorPNG))
	if err != nil {
		return err
	}
	o, err := png.Decode(bytes.NewReader(oursPNG))
	if err != nil {
		return err
	}
	vb, ob := v.Bounds(), o.Bounds()
	canvas := image.NewRGBA(image.Rect(0, 0, vb.Dx()+gap+ob.Dx(), max(vb.Dy(), ob.Dy())))
	draw.Draw(canvas, canvas.Bounds(), image.NewUniform(color.RGBA{R: 0x60, G: 0x60, B: 0x60, A: 0xff}), image.Point{}, draw.Src)
	draw.Draw(canvas, vb.Sub(vb.Min), v, vb.Min, draw.Src)
	right := image.Pt(vb.Dx()+gap, 0)
	draw.Draw(canvas, ob.Sub(ob.Min).Add(right), o, ob.Min, draw.Src)
	for _, p := range r.pairs {
		if p.ok() {
			continue
		}
		c := outlineDiffers
		if p.ours == nil {
			c = outlineMissing
		}
		outline(canvas, p.vendor, image.Point{}, c)
		if p.ours != nil {
			outline(canvas, *p.ours, right, c)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, canvas); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// outline draws a 2 px frame around a block's box, shifted by at.
func outline(img *image.RGBA, b block, at image.Point, c color.RGBA) {
	r := image.Rect(int(b.Left), int(b.Top), int(b.Left+b.Width), int(b.Top+b.Height)).Add(at)
	const w = 2
	for _, edge := range []image.Rectangle{
		{r.Min, image.Pt(r.Max.X, r.Min.Y+w)},
		{image.Pt(r.Min.X, r.Max.Y-w), r.Max},
		{r.Min, image.Pt(r.Min.X+w, r.Max.Y)},
		{image.Pt(r.Max.X-w, r.Min.Y), r.Max},
	} {
		draw.Draw(img, edge.Intersect(img.Bounds()), image.NewUniform(c), image.Point{}, draw.Src)
	}
}
