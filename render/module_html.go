package render

import "github.com/designbridge/caddy-designbridge/design"

// moduleHTML passes the custom HTML block through exactly as written: it
// is the designer's escape hatch (tracking pixels, hand-made cards,
// template-language snippets) and is not sanitised.
func (w *emailWriter) moduleHTML(m *design.Module, c *design.Value) {
	w.blockOpen(m, "html", nil, "")
	w.s(c.Get("html").Text())
	w.blockClose()
}

var htmlKind = kind{
	name:  design.KindHTML,
	check: textMembers(design.KindHTML, "html"),
	html:  (*emailWriter).moduleHTML,
	text:  func(w *textWriter, c *design.Value) { w.fragment(c.Get("html").Text()) },
}
