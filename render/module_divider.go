package render

import (
	"github.com/designbridge/caddy-designbridge/design"
)

// moduleDivider renders a horizontal rule as a one-pixel-font table cell
// with a top border (hr is unreliable across clients).
func (w *emailWriter) moduleDivider(m *design.Module) {
	c := m.Content()
	st := design.StyleOf(c.Get("style"))
	border := emCSSValue(st.Get("border-top"))
	if border == "" {
		border = "1px solid #BBBBBB"
	}
	if !emBorderVisible(border) && m.Mobile.Len() == 0 {
		// An invisible divider is the editor's spacer: just its height,
		// as one div (editors use dozens of these; a table each would
		// cost kilobytes).
		pt, _, pb, _ := emPadding(m.Style)
		h := pt + emBorderWidth(border) + 1 + pb // +1: the rule's own line
		w.s(`<div class="divider_block`)
		if m.HideOnMobile {
			w.s(" mh")
		}
		w.s(`" style="height:`)
		w.s(emFmt(h))
		w.s("px;line-height:")
		w.s(emFmt(h))
		w.s(`px;font-size:1px">&#8202;</div>`)
		return
	}
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
