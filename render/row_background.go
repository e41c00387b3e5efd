package render

import (
	"math"
	"strconv"
	"strings"

	"github.com/designbridge/caddy-designbridge/design"
)

// vmlBackgroundOpen gives Outlook for Windows, which ignores CSS
// background images, a VML rectangle filled with the image behind the
// content, sized and placed as browsers show the CSS background (see
// vmlFill).
func (w *emailWriter) vmlBackgroundOpen(img, color string, st design.Style, size string) {
	w.s(`<!--[if gte mso 9]><v:rect xmlns:v="urn:schemas-microsoft-com:vml" fill="true" stroke="false" style="`)
	w.s(size)
	w.s(`"><v:fill`)
	w.vmlFill(st)
	w.attr("src", img)
	if !isTransparent(color) {
		w.attr("color", color)
	}
	w.s(` /><v:textbox style="mso-fit-shape-to-text:true" inset="0,0,0,0"><![endif]-->`)
}

// vmlFill writes the fill's type, origin, position and size so that
// Outlook shows the crop browsers show. A "frame" fill is stretched over
// the whole shape unless given a size, and VML cannot size it to the
// image's own pixels, so an image at its natural size (background-size
// auto, the editor's default) is a "tile": natural size, placed at the
// design's position (a hero wider than the band shows its top centre,
// not the whole picture squeezed). cover and contain are a frame of the
// shape's size that keeps the image's aspect (at least / at most the
// shape); a size in px is given as such. Origin (a point of the image)
// is put on position (a point of the shape): for a tile both count from
// the top left corner (0…1), for a frame from the centre (−0.5…0.5).
func (w *emailWriter) vmlFill(st design.Style) {
	x, y := bgPosition(st.Get("background-position"))
	repeat := lower(st.Get("background-repeat"))
	size := lower(st.Get("background-size"))
	frame := false
	var sizeAttr, aspect string
	switch {
	case size == "cover" || size == "contain":
		frame, sizeAttr, aspect = true, "1,1", "atmost"
		if size == "cover" {
			aspect = "atleast"
		}
	case size != "" && size != "auto":
		f := strings.Fields(size)
		ok := len(f) <= 2
		for _, v := range f {
			if n, unit, good := design.ParseLength(v); !good || n <= 0 || unit != "px" {
				ok = false
			}
		}
		if ok {
			sizeAttr = strings.Join(f, ",")
			if len(f) == 1 {
				aspect = "atmost" // the height follows the image's aspect
			}
			frame = repeat == "no-repeat"
		}
	}
	if frame {
		x, y = x-0.5, y-0.5
		w.s(` type="frame"`)
	} else {
		w.s(` type="tile"`)
	}
	pt := formatFrac(x) + "," + formatFrac(y)
	w.attr("origin", pt)
	w.attr("position", pt)
	if sizeAttr != "" {
		w.attr("size", sizeAttr)
	}
	if aspect != "" {
		w.attr("aspect", aspect)
	}
}

// bgPosition reads a CSS background-position of one or two keywords or
// percentages as fractions (0 left/top, 1 right/bottom); a value it
// cannot read (lengths, three or four values) counts as the CSS default,
// the top left corner.
func bgPosition(v string) (x, y float64) {
	type coord struct {
		v    float64
		axis byte // 'x', 'y', or '?' for center and percentages
	}
	f := strings.Fields(lower(v))
	if len(f) == 0 || len(f) > 2 {
		return 0, 0
	}
	cs := make([]coord, len(f))
	for i, t := range f {
		switch t {
		case "left":
			cs[i] = coord{0, 'x'}
		case "right":
			cs[i] = coord{1, 'x'}
		case "top":
			cs[i] = coord{0, 'y'}
		case "bottom":
			cs[i] = coord{1, 'y'}
		case "center":
			cs[i] = coord{0.5, '?'}
		default:
			n, unit, ok := design.ParseLength(t)
			if !ok || unit != "%" {
				return 0, 0
			}
			cs[i] = coord{min(max(n/100, 0), 1), '?'}
		}
	}
	if len(cs) == 1 {
		// One value: the other axis is centred.
		if cs[0].axis == 'y' {
			return 0.5, cs[0].v
		}
		return cs[0].v, 0.5
	}
	if cs[0].axis == 'y' || cs[1].axis == 'x' {
		cs[0], cs[1] = cs[1], cs[0] // "top left" is "left top"
	}
	if cs[0].axis == 'y' || cs[1].axis == 'x' {
		return 0, 0 // "top bottom"
	}
	return cs[0].v, cs[1].v
}

// formatFrac writes a fraction with at most three decimals.
func formatFrac(f float64) string {
	r := math.Round(f*1000) / 1000
	if r == 0 {
		r = 0 // no "-0"
	}
	return strconv.FormatFloat(r, 'f', -1, 64)
}

func (w *emailWriter) vmlBackgroundClose() {
	w.s(`<!--[if gte mso 9]></v:textbox></v:rect><![endif]-->`)
}
