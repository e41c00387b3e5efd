package render

import "github.com/designbridge/caddy-designbridge/design"

// moduleHeading renders h1–h6 with the block's typography.
func (w *emailWriter) moduleHeading(m *design.Module, c *design.Value) {
	st := design.StyleOf(c.Get("style"))
	tag := "h1"
	switch lower(c.Get("title").Text()) {
	case "h2":
		tag = "h2"
	case "h3":
		tag = "h3"
	case "h4":
		tag = "h4"
	case "h5":
		tag = "h5"
	case "h6":
		tag = "h6"
	}
	w.blockOpen(m, "heading", nil, "")
	w.textDiv(tag, st, "margin:0;")
	w.rich(c.Get("text").Text(), &richOpts{
		linkColor: w.linkColorFor(st.Get("link-color"), c.At("computedStyle", "linkColor").Text()),
	})
	w.s("</")
	w.s(tag)
	w.s(">")
	w.blockClose()
}

var headingKind = kind{
	name:  design.KindHeading,
	check: textMembers(design.KindHeading, "text", "title"),
	html:  (*emailWriter).moduleHeading,
	text:  func(w *textWriter, c *design.Value) { w.fragment(c.Get("text").Text()) },
}
