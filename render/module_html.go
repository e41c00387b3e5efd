package render

import "github.com/designbridge/caddy-designbridge/design"

// htmlBlock is the custom HTML block, passed through exactly as written:
// it is the designer's escape hatch (tracking pixels, hand-made cards,
// template-language snippets) and is not sanitised.
type htmlBlock struct{ src string }

var htmlKind = kind{
	name: design.KindHTML,
	decode: func(c *design.Value) (block, error) {
		r := content{c: c, key: design.KindHTML}
		return &htmlBlock{src: r.text("html")}, r.err
	},
}

func (b *htmlBlock) html(w *emailWriter, m *design.Module) {
	w.blockOpen(m, "html", nil, "")
	w.s(b.src)
	w.blockClose()
}

func (b *htmlBlock) text(w *textWriter) { w.fragment(b.src) }
