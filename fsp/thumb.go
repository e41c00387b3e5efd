package fsp

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	stddraw "image/draw"
	"image/png"
	"path"
	"sync"
	"unsafe"

	"golang.org/x/image/draw"
)

// thumbSize is the box a thumbnail fits in.
const thumbSize = 200

// defaultMaxImageMemory is how much memory making one thumbnail may take
// by default (decoded image, conversions and the halving steps' images).
const defaultMaxImageMemory = 64 << 20

// maxThumbPixels bounds the pixels of an image thumbCost works out: at
// the most bytes a pixel costs (24), the cost stays far from overflowing,
// and such an image is over any budget anyway (a terabyte at one byte).
const maxThumbPixels = 1 << 40

// maxJPEGScans bounds the scans of a JPEG that gets a thumbnail. The
// decoder passes over every block of the image for each scan, and a scan
// can take a dozen bytes, so a file of a few hundred KB could keep a core
// busy for minutes within any memory budget. Encoders write one scan, or
// about ten for a progressive JPEG (a few dozen at most).
const maxJPEGScans = 100

// thumbName is the storage name of the thumbnail of the file called name:
// beside it, hidden from listings by the leading dot.
func thumbName(name string) string { return ".thumb." + name + ".png" }

// thumbKeyFor is the storage key of the thumbnail of the file at key;
// false when the file's name is too long to leave room for it (such a
// file has no thumbnail).
func thumbKeyFor(key string) (string, bool) {
	name := thumbName(path.Base(key))
	return joinKey(path.Dir(key), name), len(name) <= maxNameLen
}

// thumbDims is the size of the thumbnail of a w×h image: it fits the box
// and is never enlarged.
func thumbDims(w, h int) (int, int) {
	if w <= thumbSize && h <= thumbSize {
		return w, h
	}
	if w >= h {
		return thumbSize, max(1, int(int64(h)*thumbSize/int64(w)))
	}
	return max(1, int(int64(w)*thumbSize/int64(h))), thumbSize
}

// thumbCost is the memory making the thumbnail of data takes at its peak,
// worked out from the header alone: the decoded image as Go's decoder
// allocates it (bytes per pixel of the type it decodes to, twice for an
// interlaced PNG whose passes are decoded apart, the coefficients of a
// progressive JPEG), a conversion to 8 bits per channel when the scaler has
// no fast path for the decoded type, and the images of the halving steps.
// Whatever the file's size, nothing is decoded when this is over budget.
func thumbCost(data []byte) (int64, error) {
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return 0, err
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return 1 << 62, nil
	}
	w, h := int64(cfg.Width), int64(cfg.Height)
	px := w * h // both below 2^31 (a PNG's limit; JPEG and GIF: 2^16)
	if px > maxThumbPixels {
		// Past any budget, and the sums below would overflow.
		return 1 << 62, nil
	}
	var perPixel, fixed int64
	convert := false
	switch format {
	case "png":
		depth, colorType, interlaced := data[24], data[25], data[28] == 1
		switch {
		case colorType == 3: // paletted: image.Paletted
			perPixel, convert = 1, true
		case depth == 16: // NRGBA64, RGBA64 or (with tRNS) Gray16→NRGBA64
			perPixel, convert = 8, true
		default: // Gray, RGBA, NRGBA (a gray with tRNS becomes NRGBA)
			perPixel = 4
		}
		if interlaced {
			perPixel *= 2
		}
	case "jpeg":
		if jpegScans(data, maxJPEGScans) > maxJPEGScans {
			return 1 << 62, nil // its decoding's time, not its memory, is past bounds
		}
		comps := int64(3)
		switch cfg.ColorModel {
		case color.GrayModel:
			comps = 1
		case color.CMYKModel:
			comps = 4
		}
		perPixel = comps
		if comps == 4 { // YCbCr and black planes, then CMYK
			perPixel, convert = 8, true
		}
		if jpegProgressive(data) {
			// Coefficients of every block, int32 per sample, kept
			// until the last scan; blocks cover whole 16×16 MCUs.
			bw, bh := (w+15)/16*16, (h+15)/16*16
			fixed += bw * bh * comps * 4
		}
	case "gif":
		perPixel, convert = 1, true
	default:
		return 1 << 62, nil
	}
	if convert {
		perPixel += 4
	}
	dw, dh := thumbDims(cfg.Width, cfg.Height)
	// The halving steps' images (RGBA, or YCbCr and its column taps); the
	// thumbnail; the decoder's two rows; zlib and encoder state.
	for sw, sh, ok := halve(cfg.Width, cfg.Height, dw, dh); ok; sw, sh, ok = halve(sw, sh, dw, dh) {
		fixed += int64(sw)*int64(sh)*4 + 2*int64(sw)*tapsSize
	}
	fixed += int64(dw)*int64(dh)*4 + 2*w*8 + 2<<20
	return px*perPixel + fixed, nil
}

// halve is the size of the halving step a w×h image takes on its way to
// the dw×dh thumbnail: each side at least twice the thumbnail's is
// halved; false when neither is.
func halve(w, h, dw, dh int) (int, int, bool) {
	nw, nh := w, h
	if w >= 2*dw {
		nw = w / 2
	}
	if h >= 2*dh {
		nh = h / 2
	}
	return nw, nh, nw != w || nh != h
}

// jpegProgressive reports whether a JPEG's frame header is progressive
// (SOF2), walking the marker segments before the first scan.
func jpegProgressive(data []byte) bool {
	i := 2 // after SOI
	for i+4 <= len(data) {
		if data[i] != 0xff {
			return false
		}
		marker := data[i+1]
		if marker == 0xff { // fill byte
			i++
			continue
		}
		switch {
		case marker == 0xc2 || marker == 0xc6 || marker == 0xca || marker == 0xce:
			return true
		case marker >= 0xc0 && marker <= 0xcf && marker != 0xc4 && marker != 0xc8 && marker != 0xcc:
			return false // another frame type
		case marker == 0xda: // start of scan before any frame header
			return false
		}
		i += 2 + int(binary.BigEndian.Uint16(data[i+2:]))
	}
	return false
}

// jpegScans counts the scans (SOS segments) of a JPEG, up to one past
// limit: marker segments are skipped by their length, a scan's
// entropy-coded data byte by byte up to the next marker (a 0xFF not
// followed by a stuffed zero or a restart marker).
func jpegScans(data []byte, limit int) int {
	n := 0
	for i := 2; i+1 < len(data) && n <= limit; { // after SOI
		if data[i] != 0xff {
			i++ // entropy-coded data
			continue
		}
		switch marker := data[i+1]; {
		case marker == 0xff: // fill byte
			i++
			continue
		case marker == 0x00, marker >= 0xd0 && marker <= 0xd7: // inside a scan
			i += 2
			continue
		case marker == 0xd9: // EOI
			return n
		case marker == 0xda:
			n++
		}
		if i+4 > len(data) {
			break
		}
		i += 2 + int(binary.BigEndian.Uint16(data[i+2:]))
	}
	return n
}

// thumbEncoder writes thumbnails as PNG. fast deflates at the fastest
// level: on the benchmark images a third to a quarter of the time of the
// default level, for thumbnails 4–14 % larger. stored does not deflate: it
// is for pictures whose own file did not compress (noise, heavy grain),
// where deflate would find as little to shrink in the thumbnail, and the
// encoder's row filters, which take most of its time, are skipped too.
// Their pools keep each encoder's compressor (hundreds of KB) for the next
// thumbnail.
type thumbEncoder struct{ fast, stored png.Encoder }

func newThumbEncoder() *thumbEncoder {
	return &thumbEncoder{
		fast:   png.Encoder{CompressionLevel: png.BestSpeed, BufferPool: &encoderPool{}},
		stored: png.Encoder{CompressionLevel: png.NoCompression, BufferPool: &encoderPool{}},
	}
}

// pngIncompressible reports whether a w×h PNG's file is at least 90 % of
// its raw pixels' size: deflate found next to nothing to shrink.
func pngIncompressible(data []byte, w, h int) bool {
	depth, channels := int64(data[24]), int64(1) // gray, paletted
	switch data[25] {
	case 2: // RGB
		channels = 3
	case 4: // gray and alpha
		channels = 2
	case 6: // RGBA
		channels = 4
	}
	raw := int64(w) * int64(h) * channels * depth / 8
	return int64(len(data)) >= raw*9/10
}

// encoderPool is a png.EncoderBufferPool.
type encoderPool struct{ p sync.Pool }

func (p *encoderPool) Get() *png.EncoderBuffer {
	b, _ := p.p.Get().(*png.EncoderBuffer)
	return b
}

func (p *encoderPool) Put(b *png.EncoderBuffer) { p.p.Put(b) }

// makeThumbnail returns a PNG fitting thumbSize×thumbSize, written by enc,
// or nil when making it would take more than budget bytes (the file is
// stored without a thumbnail).
func makeThumbnail(data []byte, budget int64, enc *thumbEncoder) ([]byte, error) {
	cost, err := thumbCost(data)
	if err != nil {
		return nil, err
	}
	if cost > budget {
		return nil, nil
	}
	src, format, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	pe := &enc.fast
	if b := src.Bounds(); format == "png" && pngIncompressible(data, b.Dx(), b.Dy()) {
		pe = &enc.stored
	}
	var out bytes.Buffer
	if err := pe.Encode(&out, scaleThumb(scalable(src))); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// scaleThumb fits src into the thumbnail's box. An image at least twice
// the thumbnail's size is halved first (each side that is), as often as
// that holds:
// ApproxBiLinear at exactly half the size averages each 2×2 block, a few
// reads per pixel, and fine detail averages out instead of aliasing. The
// last step, less than 2×, is ApproxBiLinear too: its four taps then
// still reach every source pixel. Chosen by BenchmarkThumbnailSteps: as
// close to an exact area average as CatmullRom on the whole image
// (within 2 dB, all above 32 dB PSNR), at a tenth of its time or less.
// A JPEG (YCbCr) is halved on its planes (halveYCbCr), the same steps at
// a third of the time.
func scaleThumb(src image.Image) *image.RGBA {
	b := src.Bounds()
	w, h := thumbDims(b.Dx(), b.Dy())
	// *image.RGBA destinations and the source types scalable returns:
	// the scaler's fast paths, which read the pixel arrays directly.
	for sw, sh, ok := halve(b.Dx(), b.Dy(), w, h); ok; sw, sh, ok = halve(sw, sh, w, h) {
		if ycc, isYCbCr := src.(*image.YCbCr); isYCbCr {
			src = halveYCbCr(ycc, sw, sh)
		} else {
			step := image.NewRGBA(image.Rect(0, 0, sw, sh))
			draw.ApproxBiLinear.Scale(step, step.Rect, src, b, draw.Src, nil)
			src = step
		}
		b = src.Bounds()
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.ApproxBiLinear.Scale(dst, dst.Rect, src, b, draw.Src, nil)
	return dst
}

// halveYCbCr is a halving step to w×h (each side halved or kept) done on
// the planes of a YCbCr image, what JPEGs decode to. Each output pixel
// interpolates, at its centre, the 2×2 block of luma around it and the
// chroma samples those pixels use, as ApproxBiLinear does: the mean of
// the four at exactly half the size. The conversion to RGB is affine, so
// this is the interpolation of their RGB colours (before rounding); on
// the planes it reads a third of the bytes the RGBA step reads and
// converts only the last, small image. The result has full chroma (4:4:4).
func halveYCbCr(src *image.YCbCr, w, h int) *image.YCbCr {
	dst := image.NewYCbCr(image.Rect(0, 0, w, h), image.YCbCrSubsampleRatio444)
	r := src.Rect
	// Where each output column reads in a row of each plane (a plane
	// offset is a row part plus a column part, COffset's too).
	yCols, cCols := make([]taps, w), make([]taps, w)
	for x := range w {
		first, weight := halfTaps(x, w, r.Dx())
		for k, sx := range [2]int{first, min(first+1, r.Dx()-1)} {
			yCols[x].at[k] = sx
			cCols[x].at[k] = src.COffset(r.Min.X+sx, r.Min.Y) - src.COffset(r.Min.X, r.Min.Y)
		}
		yCols[x].weight, cCols[x].weight = weight, weight
	}
	row := func(out, top, bottom []uint8, cols []taps, weight int) { lerpRow(out, top, bottom, cols, weight) }
	if r.Dx() == 2*w && r.Dy() == 2*h {
		row = func(out, top, bottom []uint8, cols []taps, _ int) { meanRow(out, top, bottom, cols) }
	}
	for y := range h {
		first, weight := halfTaps(y, h, r.Dy())
		y0, y1 := r.Min.Y+first, r.Min.Y+min(first+1, r.Dy()-1)
		row(dst.Y[y*dst.YStride:][:w], src.Y[src.YOffset(r.Min.X, y0):], src.Y[src.YOffset(r.Min.X, y1):], yCols, weight)
		c0, c1 := src.COffset(r.Min.X, y0), src.COffset(r.Min.X, y1)
		row(dst.Cb[y*dst.CStride:][:w], src.Cb[c0:], src.Cb[c1:], cCols, weight)
		row(dst.Cr[y*dst.CStride:][:w], src.Cr[c0:], src.Cr[c1:], cCols, weight)
	}
	return dst
}

// halfTaps is where output position i of a side of out pixels, made from
// size source pixels, takes its value: its centre mapped into the source,
// as the first of the two source positions around it and the weight of
// the second in 1/256. At exactly half the size the two weigh the same;
// a side that is kept (size == out) reads its own pixel alone.
func halfTaps(i, out, size int) (first, weight int) {
	c := (2*i+1)*size - out // the centre less half a pixel, times 2·out
	return c / (2 * out), c % (2 * out) * 256 / (2 * out)
}

// taps is where an output column reads in a source row: two places and
// the weight of the second in 1/256 (the first has the rest).
type taps struct {
	at     [2]int
	weight int
}

// tapsSize is the size of taps, for thumbCost.
const tapsSize = int64(unsafe.Sizeof(taps{}))

// meanRow is lerpRow for a step that halves both sides exactly, where
// every weight is a half: the mean of four, in half the time.
func meanRow(out, top, bottom []uint8, cols []taps) {
	for x, t := range cols {
		sum := int(top[t.at[0]]) + int(top[t.at[1]]) + int(bottom[t.at[0]]) + int(bottom[t.at[1]])
		out[x] = uint8((sum + 2) >> 2)
	}
}

// lerpRow fills out, a row of a plane, interpolating the source rows top
// and bottom (weight of bottom wy, in 1/256) at each column's taps.
func lerpRow(out, top, bottom []uint8, cols []taps, wy int) {
	for x, t := range cols {
		a := int(top[t.at[0]])*(256-t.weight) + int(top[t.at[1]])*t.weight
		b := int(bottom[t.at[0]])*(256-t.weight) + int(bottom[t.at[1]])*t.weight
		out[x] = uint8((a*(256-wy) + b*wy + 1<<15) >> 16)
	}
}

// scalable returns img as a type the scaler reads directly (Gray, RGBA,
// NRGBA, YCbCr), converting the others with loops over their pixel arrays
// (16-bit channels keep their high byte).
func scalable(img image.Image) image.Image {
	switch src := img.(type) {
	case *image.Gray, *image.RGBA, *image.NRGBA, *image.YCbCr:
		return img
	case *image.NRGBA64:
		dst := image.NewNRGBA(src.Rect)
		for i := range len(dst.Pix) {
			dst.Pix[i] = src.Pix[2*i]
		}
		return dst
	case *image.RGBA64:
		dst := image.NewRGBA(src.Rect)
		for i := range len(dst.Pix) {
			dst.Pix[i] = src.Pix[2*i]
		}
		return dst
	case *image.Gray16:
		dst := image.NewGray(src.Rect)
		for i := range len(dst.Pix) {
			dst.Pix[i] = src.Pix[2*i]
		}
		return dst
	case *image.Paletted:
		var lut [256][4]uint8
		for i, c := range src.Palette {
			n := color.NRGBAModel.Convert(c).(color.NRGBA)
			lut[i] = [4]uint8{n.R, n.G, n.B, n.A}
		}
		dst := image.NewNRGBA(src.Rect)
		w := src.Rect.Dx()
		for y := range src.Rect.Dy() {
			row := src.Pix[y*src.Stride : y*src.Stride+w]
			out := dst.Pix[y*dst.Stride : y*dst.Stride+4*w]
			for x, idx := range row {
				copy(out[4*x:4*x+4], lut[idx][:])
			}
		}
		return dst
	}
	// Rare types (CMYK JPEG): the standard library's conversion.
	dst := image.NewRGBA(img.Bounds())
	stddraw.Draw(dst, dst.Rect, img, img.Bounds().Min, stddraw.Src)
	return dst
}
