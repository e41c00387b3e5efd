package render

import (
	"github.com/designbridge/caddy-designbridge/design"
)

// spacerBlock is vertical space of a fixed height.
type spacerBlock struct{ styleOnly }

var spacerKind = kind{
	name:   design.KindSpacer,
	decode: func(c *design.Value) (block, error) { return &spacerBlock{styleOnlyOf(c)}, nil },
}

func (b *spacerBlock) html(w *emailWriter, m *design.Module) {
	st := b.style
	h, ok := st.Px("height")
	if !ok || h < 0 {
		h = 20
	}
	h = min(h, 2000)
	mh, hasMobile := m.Mobile.Px("height")
	w.s(`<div class="`)
	cls := w.blockClass(m, "spacer", "", hasMobile)
	w.s(`" style="height:`)
	w.s(formatPx(h))
	w.s("px;line-height:")
	w.s(formatPx(h))
	w.s("px;font-size:1px")
	if bg := w.safeColor("background-color", st.Get("background-color")); !isTransparent(bg) {
		w.s(";background-color:")
		w.attrText(bg)
	}
	w.s(`">&#8202;</div>`)
	if hasMobile {
		w.mobileRule("."+cls, "height:"+formatPx(mh)+"px!important;line-height:"+formatPx(mh)+"px!important")
	}
}
