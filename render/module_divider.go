package render

import (
	"github.com/designbridge/caddy-designbridge/design"
)

// dividerBlock is a horizontal rule, rendered as a one-pixel-font table
// cell with a top border (hr is unreliable across clients).
type dividerBlock struct{ styleOnly }

var dividerKind = kind{
	name:   design.KindDivider,
	decode: func(c *design.Value) (block, error) { return &dividerBlock{styleOnlyOf(c)}, nil },
}

func (b *dividerBlock) html(w *emailWriter, m *design.Module) {
	st := b.style
	border := w.safeCSS("border-top", st.Get("border-top"))
	if border == "" {
		border = "1px solid #BBBBBB"
	}
	// The rule is its border plus a one-pixel line; the divider's own
	// height (the editor's spacer setting) is the box the rule sits at
	// the top of, when taller than that.
	rule := borderWidth(border) + 1
	extra := 0.0
	if n, unit, ok := st.Value("height").Number(); ok && (unit == "px" || unit == "") && n > rule {
		extra = n - rule
	}
	if !borderVisible(border) && m.Mobile.Len() == 0 {
		// An invisible divider is the editor's spacer: just its height,
		// as one div (editors use dozens of these; a table each would
		// cost kilobytes).
		pt, _, pb, _ := padding(m.Style)
		h := pt + rule + extra + pb
		w.s(`<div class="`)
		w.blockClass(m, "divider", "", false)
		w.s(`" style="height:`)
		w.s(formatPx(h))
		w.s("px;line-height:")
		w.s(formatPx(h))
		w.s(`px;font-size:1px">&#8202;</div>`)
		return
	}
	align := textAlign(m.Computed.Get("align"))
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
	if width >= 100 || !borderVisible(border) {
		// Full width (or invisible, used as a spacer): no inner table.
		w.s(`<div style="font-size:1px;line-height:1px`)
		if borderVisible(border) || borderWidth(border) > 0 {
			w.s(";border-top:")
			w.attrText(border)
		}
		w.s(`">&#8202;</div>`)
		w.dividerSpace(extra)
		w.blockClose()
		return
	}
	w.s(`<table class="dv" align="`)
	w.s(align)
	w.s(`" width="`)
	w.s(formatPx(float64(int(width*100)) / 100))
	w.s(`%"`)
	w.s(tableAttrs)
	w.s(` style="width:`)
	w.s(formatPx(float64(int(width*100)) / 100))
	w.s(`%"><tr><td style="font-size:1px;line-height:1px;border-top:`)
	w.attrText(border)
	w.s(`">&#8202;</td></tr></table>`)
	w.dividerSpace(extra)
	w.blockClose()
}

// dividerSpace writes the space below a rule that the divider's height
// asks for (inside the padded cell, so mobile padding rules keep it).
func (w *emailWriter) dividerSpace(h float64) {
	if h <= 0 {
		return
	}
	w.s(`<div style="height:`)
	w.s(formatPx(h))
	w.s("px;line-height:")
	w.s(formatPx(h))
	w.s(`px;font-size:1px">&#8202;</div>`)
}
