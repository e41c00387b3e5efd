package render

import "github.com/designbridge/caddy-designbridge/design"

// moduleParagraph renders a paragraph: rich HTML (or bare text) with the
// block's typography, link colour and spacing between paragraphs.
func (w *emailWriter) moduleParagraph(m *design.Module, c *design.Value) {
	st := design.StyleOf(c.Get("style"))
	cs := design.StyleOf(c.Get("computedStyle"))
	w.blockOpen(m, "paragraph", nil, "")
	w.textDiv("div", st, "")
	spacing, _ := cs.Px("paragraphSpacing")
	w.rich(c.Get("html").Text(), &richOpts{
		linkColor:   w.linkColorFor(cs.Get("linkColor"), st.Get("link-color")),
		pMargin:     true,
		paraSpacing: spacing,
	})
	w.s("</div>")
	w.blockClose()
}

var paragraphKind = kind{
	name:  design.KindParagraph,
	check: textMembers(design.KindParagraph, "html"),
	html:  (*emailWriter).moduleParagraph,
	text:  func(w *textWriter, c *design.Value) { w.fragment(c.Get("html").Text()) },
}
