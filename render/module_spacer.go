package render

import (
	"github.com/designbridge/caddy-designbridge/design"
)

// moduleSpacer renders vertical space of a fixed height.
func (w *emailWriter) moduleSpacer(m *design.Module, c *design.Value) {
	st := design.StyleOf(c.Get("style"))
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
	if bg := cssColor(st.Get("background-color")); !isTransparent(bg) {
		w.s(";background-color:")
		w.text(bg)
	}
	w.s(`">&#8202;</div>`)
	if hasMobile {
		w.mobileRule("."+cls, "height:"+formatPx(mh)+"px!important;line-height:"+formatPx(mh)+"px!important")
	}
}

var spacerKind = kind{
	name: design.KindSpacer,
	html: (*emailWriter).moduleSpacer,
}
