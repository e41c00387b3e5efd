package render

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/designbridge/caddy-designbridge/design"
)

// Rich text (text, paragraph, heading, list, button labels, menu items,
// table cells) is editor HTML. It is streamed through the tokenizer, not
// parsed into a tree: allowed elements and attributes are re-emitted,
// everything able to run script or restyle the page is dropped, and
// elements are balanced so a stray tag cannot break the layout tables.

// allowedTag reports whether an element is kept (with its allowed
// attributes). Others are dropped but their content kept, except
// design.DropsContent ones. (A switch: cheaper than a map lookup for
// every tag of every rich block.)
func allowedTag(a atom.Atom) bool {
	switch a {
	case atom.A, atom.Abbr, atom.B, atom.Bdi, atom.Bdo, atom.Big,
		atom.Blockquote, atom.Br, atom.Caption, atom.Center, atom.Cite, atom.Code,
		atom.Col, atom.Colgroup, atom.Del, atom.Dfn, atom.Div, atom.Em, atom.Font,
		atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6, atom.Hr, atom.I,
		atom.Img, atom.Ins, atom.Kbd, atom.Li, atom.Mark, atom.Ol, atom.P,
		atom.Pre, atom.Q, atom.S, atom.Samp, atom.Small, atom.Span, atom.Strike,
		atom.Strong, atom.Sub, atom.Sup, atom.Table, atom.Tbody, atom.Td,
		atom.Tfoot, atom.Th, atom.Thead, atom.Tr, atom.Tt, atom.U, atom.Ul,
		atom.Wbr, atom.Dl, atom.Dt, atom.Dd:
		return true
	}
	return false
}

// allowedAttr reports whether an attribute is kept on an allowed
// element; href and src are checked separately.
func allowedAttr(key string) bool {
	switch key {
	case "style", "class", "title", "alt", "target", "width", "height", "align",
		"valign", "dir", "lang", "colspan", "rowspan", "border", "cellpadding",
		"cellspacing", "bgcolor", "color", "face", "size", "start", "type", "rel",
		"name", "id", "role", "aria-label", "aria-hidden", "reversed", "value",
		"summary", "scope":
		return true
	}
	return false
}

func isVoid(a atom.Atom) bool {
	switch a {
	case atom.Br, atom.Img, atom.Hr, atom.Wbr, atom.Col:
		return true
	}
	return false
}

// richOpts tune the rewriting for one module.
type richOpts struct {
	linkColor    string // added to <a> without a colour of its own
	pMargin      bool   // give <p> margin:0 unless it sets a margin
	paraSpacing  float64
	listItemGap  float64 // li margin-bottom
	listIndent   string  // ul/ol padding
	listStyle    string  // list-style-type
	listPosition string  // list-style-position
	// phrasing: the rich text is written into an element that holds
	// phrasing content only (a heading, a button's label, a menu item),
	// so a block element in it is written as a span (see phrasingTag).
	phrasing bool
	// inLink: the rich text is written inside a link of the renderer's
	// (a button's, a menu item's). A link of its own is left out, its
	// text kept: a browser's parser ends the outer link at an <a>, so
	// the rest of the label would be neither linked nor styled.
	inLink bool
}

// maxRichDepth bounds the allowed elements open at once in rich text. An
// end tag looks for its element among them, so a fragment of many start
// tags and then many stray end tags cost one against the other (a 4 MiB
// design took 29 s); rich text nests a few levels deep.
const maxRichDepth = 256

// rich writes sanitised rich HTML.
func (w *emailWriter) rich(src string, o *richOpts) {
	if src == "" {
		return
	}
	// Without a '<' the tokenizer would give src back as text, written
	// as is (FuzzRichTokensNoTag).
	if !strings.Contains(src, "<") {
		w.s(src)
		return
	}
	// The open allowed elements, with room for the usual nesting.
	stack := make([]openTag, 0, 16)
	var lines phrasingLines // o.phrasing: where line breaks go
	phrasing := o != nil && o.phrasing
	tables := 0    // <table> elements in stack
	openParas := 0 // paragraphs in stack not ended (endParagraph)
	skip := 0      // depth inside dropped-content elements
	var skipTag string
	paras := 0 // paragraphs met, for richStyleDefaults
	richTokens(src, func(t richToken) {
		switch t.kind {
		case html.TextToken:
			if skip > 0 {
				return
			}
			if phrasing {
				lines.text(w, t.text)
			}
			if t.escape {
				escapeBytes(&w.body, t.text)
			} else {
				w.body.Write(t.text)
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			if skip > 0 {
				if t.kind == html.StartTagToken && string(t.name) == skipTag {
					skip++
				}
				return
			}
			if design.DropsContent(string(t.name)) {
				if t.kind == html.StartTagToken {
					skip = 1
					skipTag = string(t.name)
				}
				return
			}
			if !allowedTag(t.a) || t.a == atom.A && o != nil && o.inLink {
				return
			}
			if len(stack) == maxRichDepth && !isVoid(t.a) {
				return // past the depth bound: left out, its text kept
			}
			out := t.a
			if phrasing {
				if t.a == atom.Hr {
					lines.boundary(w) // a rule: a line break
					return
				}
				if out = phrasingTag(t.a); out == 0 {
					return
				}
				if out != t.a {
					lines.boundary(w) // a block starts a line
				} else if t.a == atom.Br {
					lines.broken()
				} else if t.a == atom.Img {
					lines.content(w)
				}
			}
			if tables == 0 && tablePart(out) {
				// Outside a table of its own, a browser puts a cell or
				// row in the layout's table around the rich text,
				// closing the block's cell: left out, its text kept.
				return
			}
			// Only with a paragraph open: the search costs the depth.
			if openParas > 0 && endsParagraph(out) && endParagraph(stack) {
				openParas--
			} else if openParas > 0 && tablePart(out) {
				openParas -= endTableParagraphs(stack)
			}
			w.startTag(&t, out, o, &paras)
			// A browser reads <b/> as <b>: the element stays open, so it
			// is closed like any other (a self-closing slash means
			// something only on void elements).
			if !isVoid(t.a) {
				stack = append(stack, openTag{a: t.a, out: out})
				switch out {
				case atom.Table:
					tables++
				case atom.P:
					openParas++
				}
			}
		case html.EndTagToken:
			if skip > 0 {
				if string(t.name) == skipTag {
					skip--
				}
				return
			}
			if !allowedTag(t.a) || isVoid(t.a) {
				return
			}
			// Close up to the matching open element; ignore strays.
			for i := len(stack) - 1; i >= 0; i-- {
				if stack[i].a == t.a {
					closedTables, closedParas := w.closeTags(stack[i:], &lines)
					tables -= closedTables
					openParas -= closedParas
					stack = stack[:i]
					break
				}
			}
		}
	})
	w.closeTags(stack, &lines)
}

// closeTags writes the end tags of open, innermost (last) first, and
// returns how many of them are tables and paragraphs (not ended). A block
// element written as a span ends its line (lines.ended). A paragraph a
// browser has ended gets no end tag: a browser reads a </p> without an
// open paragraph as a new, empty one, with its default margins (a gap
// of a line under the text).
func (w *emailWriter) closeTags(open []openTag, lines *phrasingLines) (tables, paras int) {
	for i := len(open) - 1; i >= 0; i-- {
		if open[i].ended {
			continue
		}
		w.checkSize()
		w.s("</")
		w.s(open[i].out.String())
		w.s(">")
		switch open[i].out {
		case atom.Table:
			tables++
		case atom.P:
			paras++
		}
		if open[i].out != open[i].a {
			lines.ended()
		}
	}
	return tables, paras
}

// startTag writes the start tag t (of an allowed element) as the
// element out (t's own, or a span standing for it: phrasingTag) with its
// allowed attributes and its style made safe.
func (w *emailWriter) startTag(t *richToken, out atom.Atom, o *richOpts, paras *int) {
	w.checkSize()
	a := out
	w.s("<")
	w.s(a.String())
	var style string
	hasAlt := false
	for k, val := range t.attrs() {
		switch key := string(k); {
		case key == "href" && a == atom.A, key == "src" && a == atom.Img:
			field := "<img src>"
			if a == atom.A {
				field = "<a href>"
			}
			if w.allowURL(field, strings.TrimSpace(string(val))) {
				w.attrBytes(key, val)
			}
		case key == "style":
			style = string(val)
		case out != t.a && !globalAttr(key):
			// A span keeps what any element may have, not a cell's
			// colspan or a list's start.
		case allowedAttr(key):
			hasAlt = hasAlt || key == "alt"
			w.attrBytes(key, val)
			if key == "face" && a == atom.Font {
				// A web font it names is linked too (as scanFonts reads a style).
				w.useFont(strings.TrimSpace(strings.ReplaceAll(string(val), "&quot;", "")))
			}
		}
	}
	w.richStyleAttr(a, style, o, paras)
	if a == atom.Img && !hasAlt {
		w.s(` alt=""`)
	}
	w.s(">")
}

// richStyleAttr writes an element's style attribute: its inline style,
// made safe, after the module's defaults for what it does not set.
func (w *emailWriter) richStyleAttr(a atom.Atom, style string, o *richOpts, paras *int) {
	style, refused := checkInlineStyle(style)
	if refused != "" {
		w.warnURL("<"+a.String()+" style>", refused)
	}
	pre, join := w.richStyleDefaults(a, style, o, paras)
	if join {
		// The defaults first, then the element's own declarations, which
		// win where both set a property.
		pre = strings.TrimSuffix(strings.TrimSpace(pre), ";")
		style = strings.TrimSpace(style)
		if pre == "" {
			join = false
		}
	}
	if !join && style == "" {
		return
	}
	w.s(` style="`)
	if join {
		escape(&w.body, pre)
		if style != "" {
			w.body.WriteByte(';')
		}
	}
	escape(&w.body, style)
	w.body.WriteByte('"')
	// pre is empty unless joined, and its declarations end where style's
	// begin: scanning them one after the other reads both in order.
	w.scanFonts(pre)
	w.scanFonts(style)
}

// richStyleDefaults returns the declarations the module adds to an
// element with its own (safe) style, and whether there are any to add
// (for lists, whether the style is rewritten even so).
func (w *emailWriter) richStyleDefaults(a atom.Atom, style string, o *richOpts, paras *int) (pre string, join bool) {
	if a == atom.Img {
		// An image in rich text must not widen the email past a phone's
		// screen; inline, since some clients drop <head> styles.
		return "max-width:100%;height:auto", true
	}
	if o == nil {
		return "", false
	}
	switch a {
	case atom.A:
		if o.linkColor != "" && !styleDeclares(style, "color") {
			return "color:" + o.linkColor, true
		}
	case atom.P:
		*paras++
		if o.pMargin && !styleDeclares(style, "margin") {
			if *paras > 1 && o.paraSpacing > 0 {
				return "margin:" + formatPx(o.paraSpacing) + "px 0 0", true
			}
			return "margin:0", true
		}
	case atom.Ul, atom.Ol:
		s := w.style()
		if !styleDeclares(style, "margin") {
			s.raw("margin:0;")
		}
		if o.listIndent != "" && !styleDeclares(style, "padding") {
			s.add("padding-left", o.listIndent)
		}
		if o.listStyle != "" && !styleDeclares(style, "list-style") {
			s.add("list-style-type", o.listStyle)
		}
		if o.listPosition != "" && !styleDeclares(style, "list-style") {
			s.add("list-style-position", o.listPosition)
		}
		return s.String(), true
	case atom.Li:
		if o.listItemGap > 0 && !styleDeclares(style, "margin") {
			return "margin-bottom:" + formatPx(o.listItemGap) + "px", true
		}
	}
	return "", false
}

// styleDeclares reports whether style declares the property prop or one
// of its longhands (prop-*): prop starts style or follows ';' or white
// space, and is followed by ':', '-' or a space (so "color" is not found
// in "background-color").
func styleDeclares(style, prop string) bool {
	for i := 0; ; {
		j := strings.Index(style[i:], prop)
		if j < 0 {
			return false
		}
		j += i
		before := j == 0 || strings.IndexByte("; \t\n", style[j-1]) >= 0
		end := j + len(prop)
		after := end < len(style) && strings.IndexByte(":- ", style[end]) >= 0
		if before && after {
			return true
		}
		i = j + 1
	}
}

// The safety rule for inline styles. The sanitiser looks for these words
// in a style, in any ASCII case: what can run script (expression(),
// javascript: and vbscript: URLs, behavior, -moz-binding, @import, CSS
// escapes and comments that could spell any of them: Internet Explorer
// reads expr/**/ession() as expression()), load a URL (url(),
// image-set()), or take an element out of the email's flow (position). A
// style that holds none of them is kept exactly as written.
var styleWatchWords = [...]string{"expression", "script:", "behavior", "binding", "@import", `\`, "/*", "position", "url(", "image-set("}

// styleWatched reports whether s holds one of styleWatchWords.
func styleWatched(s string) bool {
	l := asciiLower(s)
	for _, word := range styleWatchWords {
		if strings.Contains(l, word) {
			return true
		}
	}
	return false
}

// checkDeclaration reports whether the sanitiser keeps one declaration
// of a watched style: one that holds none of the words, names position
// without fixed or absolute, or loads only URLs design.SafeURL allows.
// A position or a load that takes a value from elsewhere (var(), which a
// custom property of this or any enclosing element sets, such as
// --p:fixed or --u:"file://…", or attr()) is not kept: what it would
// read is not here to check.
// For a declaration dropped for a URL it loads, it also returns that URL
// (lower-cased), for the render's warning.
func checkDeclaration(decl string) (ok bool, refused string) {
	l := asciiLower(decl)
	for _, word := range styleWatchWords {
		if !strings.Contains(l, word) {
			continue
		}
		switch word {
		case "position":
			if strings.Contains(l, "fixed") || strings.Contains(l, "absolute") || substitutes(l) {
				return false, ""
			}
		case "url(", "image-set(":
			if substitutes(l) {
				return false, ""
			}
			if u := refusedStyleURL(l); u != "" {
				return false, u
			}
		case "/*":
			if cssComment(l) {
				return false, ""
			}
		default:
			return false, ""
		}
	}
	return true, ""
}

// checkInlineStyle returns s as written when it holds none of the
// watched words, and otherwise its safe non-empty declarations joined by
// ';'; it also returns the URL of the first declaration it dropped for
// that URL ("" when none), for the render's warning.
func checkInlineStyle(s string) (safe, refused string) {
	if !styleWatched(s) {
		return s, ""
	}
	var b strings.Builder
	for rest := s; rest != ""; {
		end := declarationEnd(rest)
		decl := rest[:end]
		rest = rest[min(end+1, len(rest)):]
		if strings.TrimSpace(decl) == "" {
			continue
		}
		ok, u := checkDeclaration(decl)
		if !ok {
			if refused == "" {
				refused = u
			}
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(';')
		}
		b.WriteString(decl)
	}
	return b.String(), refused
}

// substitutes reports whether the declaration l (ASCII lower-cased)
// takes a value from elsewhere: var() or attr().
func substitutes(l string) bool {
	return strings.Contains(l, "var(") || strings.Contains(l, "attr(")
}

// cssComment reports whether the declaration l (ASCII lower-cased) holds
// a CSS comment: a "/*" outside strings and unquoted url()s, where it
// is text (url(https://x.test/*|ID|*.png), a merge tag in a path, holds
// none).
func cssComment(l string) bool {
	var quote byte
	for i := 0; i < len(l); i++ {
		switch c := l[i]; {
		case c == '\\':
			i++
		case quote != 0:
			if c == quote || c == '\n' || c == '\r' || c == '\f' {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '/' && strings.HasPrefix(l[i+1:], "*"):
			return true
		case c == 'u' && strings.HasPrefix(l[i:], "url(") && (i == 0 || !identByte(l[i-1])):
			arg := strings.TrimLeft(l[i+len("url("):], " \t\n\r\f")
			if arg != "" && (arg[0] == '"' || arg[0] == '\'') {
				continue // a string, read as any other
			}
			end := strings.IndexByte(arg, ')')
			if end < 0 {
				return false // the URL runs to the end
			}
			i = len(l) - len(arg) + end
		}
	}
	return false
}

// identByte reports whether c may be part of a CSS name (before "url(",
// it makes another function of it: xurl( is no url()).
func identByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c >= 0x80
}

// declarationEnd is the index of the ';' that ends the first declaration
// of the inline style s as CSS reads it (len(s) when none does): a ';'
// in a string, a comment or a block ((), [], {}), or escaped, ends
// nothing. Checked one by one, the declarations must be the ones a
// browser reads: a ';' in image-set("a;" 1x, "file://…" 2x) or in
// image-set(/*;*/"file://…") would otherwise leave the URL in a
// declaration without the function, which nothing checks. Where this
// reading could part from CSS's (quotes in an unquoted url()), it reads
// a longer declaration than CSS does, which is checked whole.
func declarationEnd(s string) int {
	var quote byte
	var room [16]byte
	blocks := room[:0] // the ends of the blocks open, innermost last
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			i++ // the escaped character, in a string or not
		case quote != 0:
			if c == quote || c == '\n' || c == '\r' || c == '\f' {
				quote = 0 // a line break ends a string (a bad one)
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '/' && strings.HasPrefix(s[i+1:], "*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return len(s)
			}
			i += 2 + end + 1
		case c == '(':
			blocks = append(blocks, ')')
		case c == '[':
			blocks = append(blocks, ']')
		case c == '{':
			blocks = append(blocks, '}')
		case len(blocks) > 0:
			if c == blocks[len(blocks)-1] {
				blocks = blocks[:len(blocks)-1]
			}
		case c == ';':
			return i
		}
	}
	return len(s)
}

// asciiLower returns s with A-Z lower-cased (s itself when it has none,
// as editors' styles mostly do). Only ASCII: the watched words are, and
// other case mappings (U+0130 to 'i') would make them match where no
// browser reads them.
func asciiLower(s string) string {
	i := 0
	for i < len(s) && !('A' <= s[i] && s[i] <= 'Z') {
		i++
	}
	if i == len(s) {
		return s
	}
	b := []byte(s)
	for ; i < len(b); i++ {
		if c := b[i]; 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
