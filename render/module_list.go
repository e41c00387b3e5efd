package render

import (
	"strings"

	"github.com/designbridge/caddy-designbridge/design"
)

// moduleList renders a bulleted or numbered list. The editor stores the
// whole <ul>/<ol>; when it stored only items, the list element named by
// "tag" is added around them.
func (w *emailWriter) moduleList(m *design.Module, c *design.Value) {
	st := design.StyleOf(c.Get("style"))
	cs := design.StyleOf(c.Get("computedStyle"))
	gap, _ := cs.Px("liSpacing")
	o := &richOpts{
		linkColor:   w.linkColorFor(cs.Get("linkColor"), st.Get("link-color")),
		pMargin:     true,
		listItemGap: gap,
		// Written on every <ul>/<ol> of the text: bounded as colours are
		// (richStyleDefaults makes them safe).
		listIndent:   repeatable(cs.Get("liIndent")),
		listStyle:    repeatable(cs.Get("listStyleType")),
		listPosition: repeatable(cs.Get("listStylePosition")),
	}
	if o.listStyle == "revert" {
		o.listStyle = ""
	}
	html := c.Get("html").Text()
	w.blockOpen(m, "list", nil, "")
	w.textDiv("div", st, "")
	trimmed := strings.TrimSpace(html)
	if strings.HasPrefix(trimmed, "<li") {
		tag := "ul"
		if lower(c.Get("tag").Text()) == "ol" {
			tag = "ol"
		}
		html = "<" + tag + ">" + html + "</" + tag + ">"
	}
	w.rich(html, o)
	w.s("</div>")
	w.blockClose()
}

var listKind = kind{
	name:  design.KindList,
	check: textMembers(design.KindList, "html"),
	html:  (*emailWriter).moduleList,
	text:  func(w *textWriter, c *design.Value) { w.fragment(c.Get("html").Text()) },
}
