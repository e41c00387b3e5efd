package bench

import (
	"strings"

	"github.com/designbridge/caddy-designbridge/design"
)

// richFragments lists the editor HTML fragments render.HTML hands x/net/html's
// tokenizer for d, in document order: the rich text of text, paragraph,
// heading, list, button, menu and table blocks that holds a '<' (render
// writes the others as they are, untokenized). It mirrors what the
// render/module_*.go files pass to their rich-text writer; keep the two
// alike.
func richFragments(d *design.Design) []string {
	var out []string
	add := func(s string) {
		if strings.Contains(s, "<") {
			out = append(out, s)
		}
	}
	cells := func(lines *design.Value) {
		for i := range lines.Len() {
			cs := lines.Index(i).Get("cells")
			for j := range cs.Len() {
				add(cs.Index(j).Get("html").Text())
			}
		}
	}
	for _, r := range d.Page.Rows {
		for _, col := range r.Columns {
			for i := range col.Modules {
				m := &col.Modules[i]
				switch kind := m.EffectiveKind(); kind {
				case design.KindText, design.KindParagraph:
					add(m.Descriptor.At(kind, "html").Text())
				case design.KindHeading:
					add(m.Descriptor.At(kind, "text").Text())
				case design.KindButton:
					add(m.Descriptor.At(kind, "label").Text())
				case design.KindList:
					c := m.Descriptor.Get(kind)
					html := c.Get("html").Text()
					if strings.HasPrefix(strings.TrimSpace(html), "<li") {
						tag := "ul"
						if strings.ToLower(strings.TrimSpace(c.Get("tag").Text())) == "ol" {
							tag = "ol"
						}
						html = "<" + tag + ">" + html + "</" + tag + ">"
					}
					add(html)
				case design.KindMenu:
					items := m.Descriptor.At("menuItemsList", "items")
					for j := range items.Len() {
						add(items.Index(j).Get("text").Text())
					}
				case design.KindTable:
					content := m.Descriptor.At(kind, "content")
					cells(content.Get("headers"))
					cells(content.Get("rows"))
				}
			}
		}
	}
	return out
}
