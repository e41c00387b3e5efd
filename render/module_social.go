package render

import (
	"github.com/designbridge/caddy-designbridge/design"
)

// moduleSocial renders a row of linked social network icons.
func (w *emailWriter) moduleSocial(m *design.Module) {
	icons := m.Content().Get("icons")
	align := emAlign(m.Style.Get("text-align"))
	if align == "" || align == "justify" {
		align = "center"
	}
	td := w.style()
	td.raw("text-align:" + align + ";")
	w.blockOpen(m, "social", &td, align)
	size := 32.0
	if n, ok := m.Computed.Px("iconsDefaultWidth"); ok && n > 0 {
		size = n
	}
	pt, pr, pb, pl := emShorthand(m.Computed.Get("padding"))
	if m.Computed.Get("padding") == "" {
		pr = 5
	}
	cell := w.style()
	cell.addPadding(pt, pr, pb, pl)
	// Inline-block items wrap in a column too narrow for the whole row of
	// icons; Outlook for Windows gets them in one ghost-table row.
	w.s(`<div class="social-inner" style="text-align:`)
	w.s(align)
	w.s(`"><!--[if mso]><table align="`)
	w.s(align)
	w.s(`"`)
	w.s(emTableAttrs)
	w.s(`><tr><![endif]-->`)
	for i := range icons.Len() {
		ic := icons.Index(i)
		img := ic.Get("image")
		iw := size
		if n, ok := img.Get("width").Px(); ok && n > 0 && n < size*4 {
			iw = n
		}
		alt := img.Get("alt").Text()
		if alt == "" {
			alt = ic.Get("name").Text()
		}
		w.s(`<!--[if mso]><td><![endif]--><div class="si" style="display:inline-block;vertical-align:top"><table`)
		w.s(emTableAttrs)
		w.s("><tr><td")
		w.styleAttr(&cell)
		w.s(">")
		w.imageTag(img.Get("src").Text(), alt, img.Get("title").Text(), img.Get("href").Text(),
			img.Get("target").Text(), iw, "", "", false)
		if t := ic.Get("text").Text(); t != "" {
			w.s(`<span class="tx">`)
			w.text(t)
			w.s("</span>")
		}
		w.s("</td></tr></table></div><!--[if mso]></td><![endif]-->")
	}
	w.s("<!--[if mso]></tr></table><![endif]--></div>")
	w.blockClose()
}
