package render

import (
	"strings"

	"github.com/designbridge/caddy-designbridge/design"
)

// listBlock is a bulleted or numbered list. The editor stores the whole
// <ul>/<ol>; when it stored only items, the list element named by "tag"
// is added around them.
type listBlock struct {
	rich     string // rich text
	tag      string // "tag", lower-cased: ol or another (ul)
	style    design.Style
	computed design.Style // computedStyle: link colour, item spacing, indent, list style
}

var listKind = kind{
	name: design.KindList,
	decode: func(c *design.Value) (block, error) {
		r := content{c: c, key: design.KindList}
		b := &listBlock{rich: r.text("html"), tag: lower(c.Get("tag").Text()),
			style: design.StyleOf(c.Get("style")), computed: design.StyleOf(c.Get("computedStyle"))}
		return b, r.err
	},
}

func (b *listBlock) html(w *emailWriter, m *design.Module) {
	st, cs := b.style, b.computed
	gap, _ := cs.Px("liSpacing")
	o := &richOpts{
		linkColor:   w.linkColorFor(cs.Get("linkColor"), st.Get("link-color")),
		pMargin:     true,
		listItemGap: gap,
		// Written on every <ul>/<ol> of the text: bounded as colours are
		// (richStyleDefaults makes them safe).
		listIndent:   w.safeRepeated("liIndent", cs.Get("liIndent")),
		listStyle:    w.safeRepeated("listStyleType", cs.Get("listStyleType")),
		listPosition: w.safeRepeated("listStylePosition", cs.Get("listStylePosition")),
	}
	if o.listStyle == "revert" {
		o.listStyle = ""
	}
	html := b.rich
	w.blockOpen(m, "list", nil, "")
	w.textDiv("div", st, "")
	trimmed := strings.TrimSpace(html)
	if strings.HasPrefix(trimmed, "<li") {
		tag := "ul"
		if b.tag == "ol" {
			tag = "ol"
		}
		html = "<" + tag + ">" + html + "</" + tag + ">"
	}
	w.rich(html, o)
	w.s("</div>")
	w.blockClose()
}

func (b *listBlock) text(w *textWriter) { w.fragment(b.rich) }
