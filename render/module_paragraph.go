package render

import "github.com/designbridge/caddy-designbridge/design"

// paragraphBlock is a paragraph: rich HTML (or bare text) with the
// block's typography, link colour and spacing between paragraphs.
type paragraphBlock struct {
	rich     string // rich text
	style    design.Style
	computed design.Style // computedStyle: linkColor, paragraphSpacing
}

var paragraphKind = kind{
	name: design.KindParagraph,
	decode: func(c *design.Value) (block, error) {
		r := content{c: c, key: design.KindParagraph}
		b := &paragraphBlock{rich: r.text("html"), style: design.StyleOf(c.Get("style")),
			computed: design.StyleOf(c.Get("computedStyle"))}
		return b, r.err
	},
}

func (b *paragraphBlock) html(w *emailWriter, m *design.Module) {
	w.blockOpen(m, "paragraph", nil, "")
	w.textDiv("div", b.style, "")
	spacing, _ := b.computed.Px("paragraphSpacing")
	w.rich(b.rich, &richOpts{
		linkColor:   w.linkColorFor(b.computed.Get("linkColor"), b.style.Get("link-color")),
		pMargin:     true,
		paraSpacing: spacing,
	})
	w.s("</div>")
	w.blockClose()
}

func (b *paragraphBlock) text(w *textWriter) { w.fragment(b.rich) }
