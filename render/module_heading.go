package render

import "github.com/designbridge/caddy-designbridge/design"

// headingBlock is h1–h6 with the block's typography.
type headingBlock struct {
	richContent
	tag string // h1–h6, from title
}

var headingKind = kind{
	name: design.KindHeading,
	decode: func(c *design.Value) (block, error) {
		r := content{c: c, key: design.KindHeading}
		b := &headingBlock{richContent: readRich(&r, "text"), tag: "h1"}
		switch t := lower(r.text("title")); t {
		case "h2", "h3", "h4", "h5", "h6":
			b.tag = t
		}
		return b, r.err
	},
}

func (b *headingBlock) html(w *emailWriter, m *design.Module) {
	w.blockOpen(m, "heading", nil, "")
	w.textDiv(b.tag, b.style, "margin:0;")
	w.rich(b.rich, &richOpts{
		linkColor: w.linkColorFor(b.style.Get("link-color"), b.linkColor),
		phrasing:  true,
	})
	w.s("</")
	w.s(b.tag)
	w.s(">")
	w.blockClose()
}
