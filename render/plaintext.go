package render

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/designbridge/caddy-designbridge/design"
)

// textWriter builds plain text. Separators are owed rather than written:
// a space, line break or blank line is only emitted when more text follows,
// so output never has trailing blanks, leading blank lines or runs of empty
// lines however the source nests its blocks.
type textWriter struct {
	b      strings.Builder
	breaks int    // newlines owed before the next text: 0, 1 (new line) or 2 (blank line)
	space  bool   // a space is owed before the next text on the same line
	prefix string // list bullet owed at the start of the next text
	links  []*openLink

	maxOutput int // bytes; 0 (a table cell's text, cellText) means unbounded

	// warn, when not nil, gets the links left out (refusedLink), at the
	// module row, col, mod.
	warn          *warnings
	row, col, mod int
}

// checkSize stops the render once the text is over the limit, like
// emailWriter.checkSize: at each tag, block and row, so that between
// two checks at most one string of the design is written.
func (w *textWriter) checkSize() {
	if w.maxOutput > 0 && w.b.Len() > w.maxOutput {
		panic(outputFull{})
	}
}

// maxListIndent is the deepest list level indented further: deeper items
// keep its indentation. A nested list in real designs is two or three
// levels deep; without a cap, n nested lists of a few bytes each would
// indent their items by 2n spaces, n² bytes in all.
const maxListIndent = 8

// openLink is an <a> (or a linked image or button) whose label is being
// written; start is the label's offset in the output, -1 until the label's
// first character arrives.
type openLink struct {
	field string // the design's member, for a warning: "href", "<a href>"…
	href  string
	start int
}

func (w *textWriter) lineBreak() {
	w.breaks = max(w.breaks, 1)
	w.space = false
}

func (w *textWriter) paragraphBreak() {
	w.breaks = 2
	w.space = false
}

// hardBreak is <br>: consecutive ones add up (to one blank line at most),
// unlike block boundaries, which merge.
func (w *textWriter) hardBreak() {
	w.breaks = min(w.breaks+1, 2)
	w.space = false
}

// softSpace asks for a word boundary, e.g. around an image's alt text.
func (w *textWriter) softSpace() {
	if w.breaks == 0 {
		w.space = true
	}
}

// flush writes the owed separators before the next character of text.
func (w *textWriter) flush() {
	if w.b.Len() > 0 {
		if w.breaks > 0 {
			w.b.WriteString("\n\n"[:w.breaks])
		} else if w.space {
			w.b.WriteByte(' ')
		}
	}
	if w.prefix != "" && w.atLineStart() {
		w.b.WriteString(w.prefix)
	}
	w.prefix = ""
	w.breaks, w.space = 0, false
	for _, l := range w.links {
		if l.start < 0 {
			l.start = w.b.Len()
		}
	}
}

func (w *textWriter) atLineStart() bool {
	s := w.b.String()
	return s == "" || s[len(s)-1] == '\n'
}

// text writes s with HTML whitespace rules: runs of white space become one
// space. Merge tags ({{ … }}, {% … %}, $…$) are ordinary text to this
// writer, so they come out as written apart from the collapsing of white
// space, which in a browser applies to them too.
func (w *textWriter) text(s string) {
	for _, r := range s {
		switch {
		case r == utf8.RuneError:
			continue
		case isZeroWidth(r):
			continue
		case unicode.IsSpace(r):
			// Includes U+00A0 (&nbsp;) and the hair space used by spacer
			// blocks: in plain text they only separate words.
			if w.b.Len() > 0 && w.breaks == 0 {
				w.space = true
			}
			continue
		case unicode.IsControl(r):
			continue
		}
		if w.breaks > 0 || w.space || w.prefix != "" || w.pendingLinkStart() {
			w.flush()
		}
		w.b.WriteRune(r)
	}
}

func (w *textWriter) pendingLinkStart() bool {
	for _, l := range w.links {
		if l.start < 0 {
			return true
		}
	}
	return false
}

// isZeroWidth reports characters that render as nothing (preheader padding
// such as &zwnj; and &#8203;, byte order marks).
func isZeroWidth(r rune) bool {
	switch r {
	case '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00ad', '\u034f':
		return true
	}
	return false
}

func (w *textWriter) openLink(field, href string) {
	w.links = append(w.links, &openLink{field: field, href: strings.TrimSpace(href), start: -1})
}

// inLinkedLabel reports whether the text being written is the label of a
// linked block (a button, a menu item): its own links are dropped, their
// text kept, as in its HTML, where a link cannot hold another. linkDepth
// counts the links the label itself opened.
func (w *textWriter) inLinkedLabel(linkDepth int) bool {
	if len(w.links) <= linkDepth {
		return false
	}
	href := strings.TrimSpace(w.links[0].href)
	return href != "" && design.SafeURL(href)
}

// closeLink ends the innermost link: "label (url)", or the URL alone when
// there is no label or the label already is the URL.
func (w *textWriter) closeLink() {
	if len(w.links) == 0 {
		return
	}
	l := w.links[len(w.links)-1]
	w.links = w.links[:len(w.links)-1]
	if !meaningfulHref(l.href) {
		if l.href != "" && !design.SafeURL(l.href) {
			w.refusedLink(l.field, l.href)
		}
		return
	}
	label := ""
	if l.start >= 0 {
		label = w.b.String()[l.start:]
	}
	switch {
	case label == "":
		w.word(l.href)
	case sameTarget(label, l.href):
	default:
		// Written straight after the label, before any owed separator: the
		// URL belongs to the label's line.
		w.b.WriteString(" (")
		w.b.WriteString(cleanURL(l.href))
		w.b.WriteByte(')')
	}
}

// word writes s as one unit, without collapsing its white space (a URL,
// which may hold a merge tag such as {{ unsubscribe_link }}).
func (w *textWriter) word(s string) {
	s = cleanURL(s)
	if s == "" {
		return
	}
	w.flush()
	w.b.WriteString(s)
}

// cleanURL drops control characters (a raw newline in an attribute) so that
// a URL stays on one line; everything else, merge tags included, is kept.
func cleanURL(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, strings.TrimSpace(s))
}

// refusedLink warns that the link href of field was left out because
// design.SafeURL refused it, as the HTML does (emailWriter.allowURL).
func (w *textWriter) refusedLink(field, href string) {
	if w.warn != nil {
		key, msg := refusedURL(field, href)
		w.warn.onceAs(key, msg, modulePath(w.row, w.col, w.mod))
	}
}

// meaningfulHref: links that lead nowhere, or to script, are not worth
// printing (the HTML renderer drops the script ones too).
func meaningfulHref(href string) bool {
	h := strings.TrimSpace(href)
	return h != "" && h != "#" && design.SafeURL(h)
}

// sameTarget reports whether a link's label already says where it goes
// ("www.example.com" for "https://www.example.com/", an address for its
// mailto: link), so that repeating the URL would add nothing.
func sameTarget(label, href string) bool {
	norm := func(s string) string {
		s = strings.ToLower(strings.TrimSpace(s))
		for _, p := range []string{"mailto:", "tel:", "https://", "http://"} {
			s = strings.TrimPrefix(s, p)
		}
		return strings.TrimRight(s, "/")
	}
	return norm(label) == norm(href)
}

// String returns the text written so far, ending in one newline unless
// empty.
func (w *textWriter) String() string {
	if w.b.Len() == 0 {
		return ""
	}
	return w.b.String() + "\n"
}

// fragment converts an HTML fragment (a text, paragraph, heading, list or
// html module's markup) into plain text on w: tags are dropped, entities
// decoded, blocks separated, list items bulleted and links written as
// "label (url)". It reads the fragment through richTokens, as the HTML
// sanitiser does.
func (w *textWriter) fragment(src string) {
	var (
		skipName  []byte // inside <style>, <script>…: ignore until its end tag
		lists     int    // <ul>/<ol> nesting
		items     int    // open <li>
		linkDepth int    // 1 while an <a> of this fragment is open
	)
	richTokens(src, func(t richToken) {
		w.checkSize()
		switch t.kind {
		case html.TextToken:
			if skipName == nil {
				w.text(string(t.decoded()))
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			if skipName != nil {
				return
			}
			if design.DropsContent(string(t.name)) {
				if t.kind == html.StartTagToken {
					skipName = append([]byte(nil), t.name...)
				}
				return
			}
			w.startTag(&t, items, &linkDepth)
			switch t.a {
			case atom.Ul, atom.Ol:
				lists++
				w.listBoundary(lists)
			case atom.Li:
				items++
				w.lineBreak()
				w.prefix = strings.Repeat("  ", min(max(lists-1, 0), maxListIndent-1)) + "- "
			}
		case html.EndTagToken:
			if skipName != nil {
				if string(t.name) == string(skipName) {
					skipName = nil
				}
				return
			}
			switch t.a {
			case atom.A:
				if linkDepth > 0 {
					w.closeLink()
					linkDepth = 0
				}
			case atom.Ul, atom.Ol:
				lists = max(lists-1, 0)
				w.listBoundary(lists + 1)
				w.prefix = ""
			case atom.Li:
				items = max(items-1, 0)
				w.lineBreak()
			case atom.Hr:
			default:
				w.boundary(t.a, items > 0)
			}
		}
	})
	w.checkSize()
	// The end, or a malformed tail: everything readable is written.
	if linkDepth > 0 {
		w.closeLink()
	}
	// A bullet of an item that never got text must not leak into the
	// next block.
	w.prefix = ""
}

// startTag handles the start tags that need no list state of their own:
// line breaks, images by their alt text, links and block boundaries.
func (w *textWriter) startTag(t *richToken, items int, linkDepth *int) {
	switch t.a {
	case atom.Br:
		w.hardBreak()
	case atom.Img:
		if alt := strings.TrimSpace(string(t.attr("alt"))); alt != "" {
			w.softSpace()
			w.text(alt)
			w.softSpace()
		}
	case atom.A:
		if t.kind == html.StartTagToken && !w.inLinkedLabel(*linkDepth) {
			// Links do not nest in HTML: a new <a> ends the open one.
			if *linkDepth > 0 {
				w.closeLink()
			}
			w.openLink("<a href>", string(t.attr("href")))
			*linkDepth = 1
		}
	case atom.Ul, atom.Ol, atom.Li:
	default:
		w.boundary(t.a, items > 0)
	}
}

// boundary is what a block element's tag (start or end) does to the
// text: a line break between cells and sections, a paragraph break
// around paragraphs, headings and tables; nothing for inline elements.
func (w *textWriter) boundary(a atom.Atom, inItem bool) {
	switch a {
	case atom.Td, atom.Th, atom.Tr, atom.Div, atom.Section, atom.Article, atom.Header, atom.Footer,
		atom.Nav, atom.Aside, atom.Main, atom.Center, atom.Dt, atom.Dd, atom.Address, atom.Figcaption,
		atom.Fieldset, atom.Form, atom.Details, atom.Summary, atom.Caption:
		w.lineBreak()
	case atom.P, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Blockquote, atom.Pre,
		atom.Table, atom.Hr, atom.Dl, atom.Figure:
		w.blockBoundary(inItem)
	}
}

// blockBoundary separates paragraphs by a blank line, except inside a list
// item, where a <p> only starts a new line so that items stay together.
func (w *textWriter) blockBoundary(inItem bool) {
	if inItem {
		w.lineBreak()
		return
	}
	w.paragraphBreak()
}

// listBoundary: a top-level list is a paragraph of its own; a nested list
// continues its parent item on the next line.
func (w *textWriter) listBoundary(level int) {
	if level <= 1 {
		w.paragraphBreak()
		return
	}
	w.lineBreak()
}

// cellText converts the HTML of a table cell of the module being
// written on its own; its links left out are warned of as the module's.
func (w *textWriter) cellText(src string) string {
	c := textWriter{warn: w.warn, row: w.row, col: w.col, mod: w.mod}
	c.fragment(src)
	return strings.TrimSuffix(c.String(), "\n")
}

// plainText renders d as plain text: the content of the desktop rendering
// in reading order (rows top to bottom, columns left to right, modules top
// to bottom), one paragraph per block separated by blank lines, links as
// "label (url)", images by their alt text, list items as "- ", no markup.
// Merge tags pass through as written. The output is deterministic.
//
// Blocks hidden on desktop are left out: they are the mobile twins of
// blocks that are shown on desktop, and would repeat them.
func plainText(d *design.Design, bs blocks, maxOutput int) (out *Output, err error) {
	defer stopWhenFull(&err, maxOutput)
	var warn warnings
	w := textWriter{maxOutput: maxOutput, warn: &warn}
	for ri := range d.Page.Rows {
		w.checkSize()
		r := &d.Page.Rows[ri]
		if r.HideOnDesktop {
			continue
		}
		// Template-language wrappers (display conditions) must reach the
		// sending platform in the text part too, on lines of their own.
		if s := strings.TrimSpace(r.DisplayBefore); s != "" {
			w.paragraphBreak()
			w.word(s)
		}
		for ci := range r.Columns {
			c := &r.Columns[ci]
			for mi, b := range bs.column(r, ri, ci) {
				w.checkSize()
				m := &c.Modules[mi]
				if m.HideOnDesktop {
					continue
				}
				w.paragraphBreak()
				w.row, w.col, w.mod = ri, ci, mi
				if b == nil {
					warn.once(unknownKind(m), modulePath(ri, ci, mi))
				} else {
					b.text(&w)
					if k := kinds[m.EffectiveKind()]; k.textOmitted != "" {
						warn.once(k.textOmitted, modulePath(ri, ci, mi))
					}
				}
				w.paragraphBreak()
			}
		}
		if s := strings.TrimSpace(r.DisplayAfter); s != "" {
			w.paragraphBreak()
			w.word(s)
			w.paragraphBreak()
		}
	}
	w.checkSize()
	if w.b.Len() >= maxOutput {
		return nil, tooLarge(maxOutput) // with the final newline, over
	}
	return &Output{Body: []byte(w.String()), Warnings: warn.list()}, nil
}

// linkedLabel writes a plain label (an alt text, a menu item) that may be
// linked: "label (url)", the label alone, or the URL alone; field is the
// link's member, for a warning.
func (w *textWriter) linkedLabel(label, field, href string) {
	w.openLink(field, href)
	w.fragment(label)
	w.closeLink()
}

func firstNonBlank(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}
