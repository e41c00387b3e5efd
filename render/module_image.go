package render

import (
	"strings"

	"github.com/designbridge/caddy-designbridge/design"
)

// imageWidth works out an image's display width in pixels from the
// class tokens (fixedwidth / autowidth / fullwidth; cls is the lower-cased
// computed class), the computed width (number, "245px" or "100%"), the
// natural width and percWidth, clamped to the space the column leaves.
func imageWidth(m *design.Module, img *imageBlock, avail float64, cls string) float64 {
	return float64(int(within(imageDesignWidth(m, img, avail, cls), avail) + 0.5))
}

// within is the width wd bounded by room, room when wd asks nothing.
func within(wd, room float64) float64 {
	if wd <= 0 || wd > room {
		return room
	}
	return wd
}

// imageDesignWidth is the width the design asks of an image, before the
// column's bound (0 when it asks none).
func imageDesignWidth(m *design.Module, img *imageBlock, avail float64, cls string) float64 {
	computed := 0.0
	if n, unit, ok := m.Computed.Value("width").Number(); ok && n > 0 {
		switch unit {
		case "", "px":
			computed = n
		case "%":
			computed = avail * n / 100
		}
	}
	natural, _ := img.width.Px()
	if computed == 0 {
		if p, _, ok := img.percWidth.Number(); ok && p > 0 {
			computed = avail * p / 100
		}
	}
	switch {
	case hasToken(cls, "fullwidth"):
		return avail
	case hasToken(cls, "autowidth"):
		if natural != 0 {
			return natural
		}
		return computed
	default: // fixedwidth, or no class
		if computed != 0 {
			return computed
		}
		return natural
	}
}

// fluidMaxWidth is an image's max-width in the web layouts, where a
// column is as wide as the screen lets it be (a stacked column takes the
// row), given avail, the room its column leaves on the desktop: the width
// the design asks, bounded by the room the column's width in the editor
// leaves, as in the vendor's page and popup exports. The desktop room
// alone (the email layout's bound, which Outlook needs) left a stacked
// 250 px image at 245 px where a popup's other column has padding.
func (w *emailWriter) fluidMaxWidth(m *design.Module, img *imageBlock, avail float64, cls string) float64 {
	// The block's padding off the editor's width; whole pixels, down, as
	// the vendor writes them.
	room := max(avail+w.colNominal-w.colWidth, 10)
	return float64(int(within(imageDesignWidth(m, img, room, cls), room)))
}

// imageAlign is the alignment token of the lower-cased class cls (or
// the block's text-align), centre by default.
func imageAlign(m *design.Module, cls string) string {
	if a := alignToken(cls); a != "" {
		return a
	}
	if a := textAlign(m.Style.Get("text-align")); a == "left" || a == "right" {
		return a
	}
	return "center"
}

// alignToken is the first alignment token (left, right, center) of the
// lower-cased class cls, "" when it has none.
func alignToken(cls string) string {
	for rest := cls; ; {
		var tok string
		if tok, rest = nextField(rest); tok == "" {
			return ""
		}
		switch tok {
		case "left", "right", "center":
			return tok
		}
	}
}

// mobileMargins place a block image on phones (see imageTag's margins):
// the rule for each alignment of mobileStyle.class.
var mobileMargins = map[string]string{
	"left":   "margin-left:0!important;margin-right:auto!important",
	"right":  "margin-left:auto!important;margin-right:0!important",
	"center": "margin-left:auto!important;margin-right:auto!important",
}

// hasToken reports whether the space-separated list s holds tok.
func hasToken(s, tok string) bool {
	for rest := s; ; {
		var f string
		if f, rest = nextField(rest); f == "" {
			return false
		}
		if f == tok {
			return true
		}
	}
}

// imageBlock is an image, linked when it has an href.
type imageBlock struct {
	src                      string // src, else dynamicSrc (design.ImageSrc)
	href, alt, target, title string
	width, percWidth         *design.Value
}

var imageKind = kind{
	name: design.KindImage,
	decode: func(c *design.Value) (block, error) {
		r := content{c: c, key: design.KindImage}
		r.text("src") // checked; the source is ImageSrc's
		b := &imageBlock{href: r.text("href"), alt: r.text("alt"), target: r.text("target"),
			src: design.ImageSrc(c), title: c.Get("title").Text(),
			width: c.Get("width"), percWidth: c.Get("percWidth")}
		return b, r.err
	},
}

func (img *imageBlock) text(w *textWriter) { w.linkedLabel(img.alt, "href", img.href) }

// html: the width attribute is for Outlook; other clients get max-width
// so the image shrinks with the column.
func (img *imageBlock) html(w *emailWriter, m *design.Module) {
	cls := lower(m.Computed.Get("class")) // read three times below
	align := imageAlign(m, cls)
	td := w.style()
	td.raw("text-align:" + align + ";")
	avail := w.blockOpen(m, "image", &td, align)
	width := imageWidth(m, img, avail, cls)
	maxWidth := width
	if w.fluid {
		maxWidth = w.fluidMaxWidth(m, img, avail, cls)
	}
	mobileCls := lower(m.Mobile.Get("class"))
	fullMobile := strings.Contains(cls, "fullwidthonmobile") || strings.Contains(mobileCls, "fullwidth")
	if ma := alignToken(mobileCls); ma != "" && ma != align {
		// The class on phones aligns the image otherwise ("left
		// fixedwidth" under "center fixedwidth"), as the vendor's
		// exports float it there. A mobile class gives the block its
		// own class (m.Mobile is not empty).
		w.mobileRule("."+w.mobileClass()+" img", mobileMargins[ma])
	}
	w.imageTag(w.keptURL("src", strings.TrimSpace(img.src)), img.alt, img.title,
		w.keptURL("href", strings.TrimSpace(img.href)), img.target, width, maxWidth, align,
		w.safeCSS("border-radius", m.Style.Get("border-radius")), fullMobile)
	w.blockClose()
}

// imageTag writes an optionally linked <img>: width wide for Outlook, and
// fluid up to maxWidth elsewhere. Its callers check src and href with
// keptURL, which warns naming their fields; the checks here are silent.
func (w *emailWriter) imageTag(src, alt, title, href, target string, width, maxWidth float64, align, radius string, fullMobile bool) {
	href = strings.TrimSpace(href)
	linked := href != "" && design.SafeURL(href)
	if linked {
		w.s("<a")
		w.attr("href", href)
		if t := lower(target); t == "_blank" || t == "_self" || t == "_top" || t == "_parent" {
			w.attr("target", t)
		} else {
			w.s(` target="_blank"`)
		}
		w.s(">")
	}
	w.s("<img")
	if fullMobile {
		w.s(` class="fw"`)
	}
	src = strings.TrimSpace(src)
	if !design.SafeURL(src) {
		src = ""
	}
	w.attr("src", src)
	w.attr("alt", alt)
	if strings.TrimSpace(title) != "" {
		w.attr("title", title)
	}
	w.s(` width="`)
	w.int(int(width))
	w.s(`" style="display:block;height:auto;border:0;width:100%;max-width:`)
	w.int(int(maxWidth))
	w.s("px")
	switch align {
	case "center":
		w.s(";margin:0 auto")
	case "right":
		w.s(";margin-left:auto")
	}
	if radius != "" && radius != "0px" && radius != "0" {
		w.s(";border-radius:")
		w.attrText(radius)
	}
	w.s(`">`)
	if linked {
		w.s("</a>")
	}
}
