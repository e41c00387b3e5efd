package render

import (
	"github.com/designbridge/caddy-designbridge/design"
)

// moduleDivider renders a horizontal rule as a one-pixel-font table cell
// with a top border (hr is unreliable across clients).
func (w *emailWriter) moduleDivider(m *design.Module, b *emBlock) {
	c := m.Content()
	st := design.StyleOf(c.Get("style"))
	align := emAlign(m.Computed.Get("align"))
	if align == "" || align == "justify" {
		align = "center"
	}
	avail := w.blockOpen(m, "divider", nil, align)
	width := 100.0
	if n, unit, ok := st.Value("width").Number(); ok && n > 0 {
		switch unit {
		case "%":
			width = min(n, 100)
		case "px", "":
			width = min(n/avail*100, 100)
		}
	}
	border := emCSSValue(st.Get("border-top"))
	if border == "" {
		border = "1px solid #BBBBBB"
	}
	if width >= 100 || !emBorderVisible(border) {
		// Full width (or invisible, used as a spacer): no inner table.
		w.s(`<div style="font-size:1px;line-height:1px`)
		if emBorderVisible(border) || emBorderWidth(border) > 0 {
			w.s(";border-top:")
			w.text(border)
		}
		w.s(`">&#8202;</div>`)
		w.blockClose()
		return
	}
	w.s(`<table class="dv" align="`)
	w.s(align)
	w.s(`" width="`)
	w.s(emFmt(float64(int(width*100)) / 100))
	w.s(`%"`)
	w.s(emTableAttrs)
	w.s(` style="width:`)
	w.s(emFmt(float64(int(width*100)) / 100))
	w.s(`%"><tr><td style="font-size:1px;line-height:1px;border-top:`)
	w.text(border)
	w.s(`">&#8202;</td></tr></table>`)
	w.blockClose()
}
