package render

import (
	"math"
	"strconv"
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
		open, end := "<ul>", "</ul>"
		if b.tag == "ol" {
			open, end = "<ol>", "</ol>"
			if n := listStart(cs); n > 1 {
				open = `<ol start="` + strconv.Itoa(n) + `">`
			}
		}
		html = open + html + end
	}
	w.rich(html, o)
	w.s("</div>")
	w.blockClose()
}

func (b *listBlock) text(w *textWriter) { w.fragment(b.rich) }

// listStart is the number a numbered list the editor stored as items
// only starts at: computedStyle.startList (the editor writes the same
// number as the start of a list element it stores), else startListFrom,
// which the vendor's types list beside it; 0 when neither is a positive
// integer (a list element's own start is its own business).
func listStart(cs design.Style) int {
	for _, key := range [...]string{"startList", "startListFrom"} {
		if n, err := strconv.Atoi(cs.Get(key)); err == nil && n >= 1 && n <= math.MaxInt32 {
			return n
		}
	}
	return 0
}
