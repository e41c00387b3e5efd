package render

import (
	"strings"

	"github.com/designbridge/caddy-designbridge/design"
)

// textDiv opens the styled wrapper of a rich-text block. Fonts resolve
// "inherit" to the body default so that Outlook, which does not inherit
// fonts into tables, still gets the right one. The colour is written for
// the same reason: the block's own, else its row's (white text on a dark
// row), else the body's.
func (w *emailWriter) textDiv(tag string, st design.Style, extra string) {
	s := w.style()
	s.raw(extra)
	color := w.safeColor("color", st.Get("color"))
	if color == "" {
		color = w.rowColor
	}
	if color == "" {
		color = w.color
	}
	s.add("color", color)
	s.add("font-family", w.fontStack(st.Get("font-family")))
	fs := st.Get("font-size")
	if _, ok := st.Px("font-size"); ok && !strings.HasSuffix(fs, "px") {
		fs += "px"
	}
	s.add("font-size", fs)
	// The normal weight is left out of divs to keep the markup lean, but
	// headings need it: their user-agent default is bold.
	if fw := st.Get("font-weight"); (fw != "400" && fw != "normal") || tag[0] == 'h' {
		s.add("font-weight", fw)
	}
	if ls := st.Get("letter-spacing"); ls != "0px" && ls != "0" && ls != "normal" {
		s.add("letter-spacing", ls)
	}
	// Outlook does not scale a relative line-height (1.2 or 120%) by the
	// font size: it reads the line's height in px from
	// mso-line-height-alt, rounded to whole px as the vendor's exports do.
	// Outlook keeps a line at least the font's own spacing (about 1.2 ×
	// the size) unless the rule, written before the line height, says
	// exactly, so tighter lines say so.
	lh := st.Get("line-height")
	altPx := 0.0
	if size, ok := st.Px("font-size"); ok && size > 0 {
		if n, unit, ok := design.ParseLength(lh); ok && n > 0 && (unit == "" || unit == "%") {
			if unit == "%" {
				n /= 100
			}
			if n < 1.2 {
				s.raw("mso-line-height-rule:exactly;")
			}
			altPx = float64(int(size*n + 0.5))
		}
	}
	s.add("line-height", lh)
	if a := textAlign(st.Get("text-align")); a != "" {
		s.add("text-align", a)
	}
	if d := lower(st.Get("direction")); d == "rtl" || (d == "ltr" && w.d.Page.Body.Direction == "rtl") {
		s.add("direction", d)
	}
	if altPx > 0 {
		s.addPx("mso-line-height-alt", altPx)
	}
	s.raw("word-break:break-word;")
	w.s("<")
	w.s(tag)
	w.s(` class="tx"`)
	w.styleAttr(&s)
	w.s(">")
}

// richContent is the content the text and heading blocks share: rich
// text, its style and its link colour.
type richContent struct {
	rich      string
	style     design.Style
	linkColor string // computedStyle.linkColor
}

// readRich reads a richContent whose text is member.
func readRich(r *content, member string) richContent {
	return richContent{rich: r.text(member), style: design.StyleOf(r.c.Get("style")),
		linkColor: r.c.At("computedStyle", "linkColor").Text()}
}

func (b *richContent) text(w *textWriter) { w.fragment(b.rich) }

// textBlock is the legacy rich-text block (paragraph, heading and list
// replaced it).
type textBlock struct{ richContent }

var textKind = kind{
	name: design.KindText,
	decode: func(c *design.Value) (block, error) {
		r := content{c: c, key: design.KindText}
		return &textBlock{readRich(&r, "html")}, r.err
	},
}

func (b *textBlock) html(w *emailWriter, m *design.Module) {
	w.blockOpen(m, "text", nil, "")
	w.textDiv("div", b.style, "")
	w.rich(b.rich, &richOpts{
		linkColor: w.linkColorFor(b.linkColor, b.style.Get("link-color")),
		pMargin:   true,
	})
	w.s("</div>")
	w.blockClose()
}
