package render

import "github.com/designbridge/caddy-designbridge/design"

// moduleHTML passes the custom HTML block through exactly as written: it
// is the designer's escape hatch (tracking pixels, hand-made cards,
// template-language snippets) and is not sanitised.
func (w *emailWriter) moduleHTML(m *design.Module) {
	w.blockOpen(m, "html", nil, "")
	w.s(m.Content().Get("html").Text())
	w.blockClose()
}
