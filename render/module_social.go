package render

import (
	"fmt"

	"github.com/designbridge/caddy-designbridge/design"
)

// moduleSocial renders a row of linked social network icons.
func (w *emailWriter) moduleSocial(m *design.Module, c *design.Value) {
	icons := c.Get("icons")
	align := textAlign(m.Style.Get("text-align"))
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
	pt, pr, pb, pl := shorthand(m.Computed.Get("padding"))
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
	w.s(tableAttrs)
	w.s(`><tr><![endif]-->`)
	for i := range icons.Len() {
		w.checkSize()
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
		w.s(tableAttrs)
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

var socialKind = kind{
	name:    design.KindSocial,
	content: "iconsList",
	check:   checkSocial,
	html:    (*emailWriter).moduleSocial,
	text:    socialText,
}

// checkSocial: every icon an object whose image is an object with src,
// href and alt as text.
func checkSocial(c *design.Value) error {
	return checkIconList(c, func(i int, img *design.Value) error {
		if img.Present() && !img.IsObjectLike() {
			return fmt.Errorf("descriptor.iconsList.icons[%d].image must be an object, not %s", i, img.Kind)
		}
		for _, n := range [...]string{"src", "href", "alt"} {
			if v := img.Get(n); !isTextOrAbsent(v) {
				return fmt.Errorf("descriptor.iconsList.icons[%d].image.%s must be a string, not %s", i, n, v.Kind)
			}
		}
		return nil
	})
}

// socialText writes one linked network a line, by the first label it has.
func socialText(w *textWriter, c *design.Value) {
	icons := c.Get("icons")
	for i := range icons.Len() {
		icon := icons.Index(i)
		img := icon.Get("image")
		label := firstNonBlank(img.Get("alt").Text(), icon.Get("text").Text(), img.Get("title").Text(), icon.Get("name").Text())
		w.lineBreak()
		w.linkedLabel(label, img.Get("href").Text())
	}
}
