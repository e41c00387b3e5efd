package render

import (
	"math"
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

// emAllowedTag reports whether an element is kept (with its allowed
// attributes). Others are dropped but their content kept, except
// design.DropsContent ones. (A switch: cheaper than a map lookup for
// every tag of every rich block.)
func emAllowedTag(a atom.Atom) bool {
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

// emAllowedAttr reports whether an attribute is kept on an allowed
// element; href and src are checked separately.
func emAllowedAttr(key string) bool {
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

func emVoid(a atom.Atom) bool {
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
}

// rich writes sanitised rich HTML.
func (w *emailWriter) rich(src string, o *richOpts) {
	if src == "" {
		return
	}
	// Fast path: plain text without markup or entities needs no tokenizer.
	if !strings.ContainsAny(src, "<&") {
		w.s(src)
		return
	}
	if !w.lexRichSimple(src) {
		w.lexRichFull(src)
	}
	w.sanitizeTokens(o)
}

// sanitizeTokens writes w.richToks (see richlex.go) as sanitised HTML.
func (w *emailWriter) sanitizeTokens(o *richOpts) {
	stack := w.richStack[:0]
	defer func() { w.richStack = stack[:0] }()
	skip := 0 // depth inside dropped-content elements
	var skipTag string
	paras := 0
	oid := w.optsID(o)
	for ti := range w.richToks {
		t := &w.richToks[ti]
		switch t.kind {
		case html.TextToken:
			if skip == 0 {
				if t.escape {
					w.text(w.richStr(t.text))
				} else {
					w.s(w.richStr(t.text))
				}
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name := w.richStr(t.name)
			if skip > 0 {
				if t.kind == html.StartTagToken && name == skipTag {
					skip++
				}
				continue
			}
			if design.DropsContent(name) {
				if t.kind == html.StartTagToken {
					skip = 1
					skipTag = name
				}
				continue
			}
			a := t.a
			if !emAllowedTag(a) {
				continue
			}
			// A tag met before in this render, with the same options
			// (and, for a paragraph, as the first or not) is written as
			// it was then.
			laterPara := a == atom.P && paras > 0
			if out := w.rememberedTag(t, oid, laterPara); out != nil {
				w.body.Write(out) // from the body itself: see tagOutput
				if a == atom.P && o != nil {
					paras++ // as richStyleDefaults counts them
				}
			} else {
				start := w.body.Len()
				w.startTag(t, a, o, &paras)
				w.keepTagOutput(t, oid, laterPara, start)
			}
			if !emVoid(a) && t.kind == html.StartTagToken {
				stack = append(stack, a)
			}
		case html.EndTagToken:
			if skip > 0 {
				if w.richStr(t.name) == skipTag {
					skip--
				}
				continue
			}
			a := t.a
			if !emAllowedTag(a) || emVoid(a) {
				continue
			}
			// Close up to the matching open element; ignore strays.
			for i := len(stack) - 1; i >= 0; i-- {
				if stack[i] == a {
					for j := len(stack) - 1; j >= i; j-- {
						w.s("</")
						w.s(stack[j].String())
						w.s(">")
					}
					stack = stack[:i]
					break
				}
			}
		}
		// Comments and doctypes are not in the token list: dropped
		// (conditional comments could smuggle markup past the sanitiser).
	}
	for i := len(stack) - 1; i >= 0; i-- {
		w.s("</")
		w.s(stack[i].String())
		w.s(">")
	}
}

// startTag writes the start tag t (of the allowed element a) with its
// allowed attributes and its style made safe.
func (w *emailWriter) startTag(t *richToken, a atom.Atom, o *richOpts, paras *int) {
	w.s("<")
	w.s(a.String())
	var style string
	hasAlt := false
	for _, at := range w.richAttrs[t.attr0:t.attr1] {
		switch key, val := w.richStr(at.key), w.richStr(at.val); {
		case key == "href" && a == atom.A:
			if design.SafeURL(strings.TrimSpace(val)) {
				w.attr("href", val)
			}
		case key == "src" && a == atom.Img:
			if design.SafeURL(strings.TrimSpace(val)) {
				w.attr("src", val)
			}
		case key == "style":
			style = val
		case emAllowedAttr(key):
			if key == "target" && a == atom.A {
				w.attr("target", val)
				continue
			}
			hasAlt = hasAlt || key == "alt"
			w.attr(key, val)
		}
	}
	w.richStyleAttr(a, style, o, paras)
	if a == atom.Img && !hasAlt {
		w.s(` alt=""`)
	}
	w.s(">")
}

// tagOutput is what the sanitiser wrote for a remembered start tag,
// w.body's bytes [off, end) (the body only grows during a render), and
// what that depended on besides the tag's text: the module's options (see
// optsID) and, for a paragraph, whether it came first. (The fonts its
// style names were noted when it was written, earlier in the render.)
type tagOutput struct {
	ok, laterPara bool
	opts          int32
	off, end      int32
}

// maxTagOuts bounds how many tags' output is kept per render.
const maxTagOuts = 1 << 12

// maxRichOpts bounds the distinct options optsID tells apart in a render.
const maxRichOpts = 64

// optsID numbers o among the distinct options this render's rich blocks
// had, from 1 (0 for nil), or returns -1 when there are too many to tell.
func (w *emailWriter) optsID(o *richOpts) int32 {
	if o == nil {
		return 0
	}
	// Most blocks have the options of the one before.
	for k := len(w.richOptsSeen) - 1; k >= 0; k-- {
		if w.richOptsSeen[k] == *o {
			return int32(k + 1)
		}
	}
	if len(w.richOptsSeen) >= maxRichOpts {
		return -1
	}
	w.richOptsSeen = append(w.richOptsSeen, *o)
	return int32(len(w.richOptsSeen))
}

// rememberedTag returns what was written for t's text before, if it was
// written with the same options and first-paragraph state.
func (w *emailWriter) rememberedTag(t *richToken, opts int32, laterPara bool) []byte {
	if t.gen == 0 || int(t.gen) > len(w.tagOuts) {
		return nil
	}
	out := &w.tagOuts[t.gen-1]
	// (Options optsID could not number, -1, are never kept.)
	if !out.ok || out.laterPara != laterPara || out.opts != opts {
		return nil
	}
	return w.body.Bytes()[out.off:out.end]
}

// keepTagOutput keeps what was written for t since start, for the
// repeats of its text.
func (w *emailWriter) keepTagOutput(t *richToken, opts int32, laterPara bool, start int) {
	end := w.body.Len()
	if t.gen == 0 || t.gen > maxTagOuts || end > math.MaxInt32 || opts < 0 {
		return
	}
	for len(w.tagOuts) < int(t.gen) {
		w.tagOuts = append(w.tagOuts, tagOutput{})
	}
	w.tagOuts[t.gen-1] = tagOutput{ok: true, laterPara: laterPara, opts: opts, off: int32(start), end: int32(end)}
}

// richStyleAttr writes an element's style attribute: its inline style,
// made safe, after the module's defaults for what it does not set.
func (w *emailWriter) richStyleAttr(a atom.Atom, style string, o *richOpts, paras *int) {
	facts := w.styleFacts(style)
	if facts&factSuspect != 0 {
		style = emSafeInlineStyle(style)
		facts = scanStyleFacts(style)
	}
	pre, join := w.richStyleDefaults(a, facts, o, paras)
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
		emEscape(&w.body, pre)
		if style != "" {
			w.body.WriteByte(';')
		}
	}
	if facts&factEscape != 0 {
		emEscape(&w.body, style)
	} else {
		w.s(style)
	}
	w.body.WriteByte('"')
	// pre is empty unless joined, and its declarations end where style's
	// begin: scanning them one after the other reads both in order.
	if strings.Contains(pre, "font-family") {
		w.scanFonts(pre)
	}
	if facts&factFontFamily != 0 {
		w.scanFonts(style)
	}
}

// richStyleDefaults returns the declarations the module adds to an
// element whose own style has facts, and whether there are any to add
// (for lists, whether the style is rewritten even so).
func (w *emailWriter) richStyleDefaults(a atom.Atom, facts styleFacts, o *richOpts, paras *int) (pre string, join bool) {
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
		if o.linkColor != "" && facts&factColor == 0 {
			return "color:" + o.linkColor, true
		}
	case atom.P:
		*paras++
		if o.pMargin && facts&factMargin == 0 {
			if *paras > 1 && o.paraSpacing > 0 {
				return "margin:" + emFmt(o.paraSpacing) + "px 0 0", true
			}
			return "margin:0", true
		}
	case atom.Ul, atom.Ol:
		s := w.style()
		if facts&factMargin == 0 {
			s.raw("margin:0;")
		}
		if o.listIndent != "" && facts&factPadding == 0 {
			s.add("padding-left", o.listIndent)
		}
		if o.listStyle != "" && facts&factListStyle == 0 {
			s.add("list-style-type", o.listStyle)
		}
		if o.listPosition != "" && facts&factListStyle == 0 {
			s.add("list-style-position", o.listPosition)
		}
		return s.String(), true
	case atom.Li:
		if o.listItemGap > 0 && facts&factMargin == 0 {
			return "margin-bottom:" + emFmt(o.listItemGap) + "px", true
		}
	}
	return "", false
}

// styleFacts are what the sanitiser needs to know of an inline style,
// found in one pass over it (scanStyleFacts) where asking each question
// in turn took six.
type styleFacts uint8

const (
	factSuspect    styleFacts = 1 << iota // a word emSafeInlineStyle filters, in any ASCII case, or '\\'
	factColor                             // declares color (or color-*)
	factMargin                            // declares margin or margin-*
	factPadding                           // declares padding or padding-*
	factListStyle                         // declares list-style or list-style-*
	factFontFamily                        // contains "font-family" anywhere
	factEscape                            // holds a byte emEscape replaces
)

// scanStyleFacts reads s once. A property is declared where its name
// starts s or follows ';' or white space, and is followed by ':', '-' or
// a space (so "color" is not found in "background-color").
func scanStyleFacts(s string) styleFacts {
	var f styleFacts
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !styleFactStart[c] {
			continue
		}
		switch c {
		case '&', '<', '>', '"':
			f |= factEscape
		case '\\':
			f |= factSuspect
		case '@':
			if emHasPrefixFold(s[i:], "@import") {
				f |= factSuspect
			}
		case 'e', 'E':
			if emHasPrefixFold(s[i:], "expression") {
				f |= factSuspect
			}
		case 's', 'S':
			if emHasPrefixFold(s[i:], "script:") {
				f |= factSuspect
			}
		case 'b', 'B':
			if emHasPrefixFold(s[i:], "behavior") || emHasPrefixFold(s[i:], "binding") {
				f |= factSuspect
			}
		case 'P':
			if emHasPrefixFold(s[i:], "position") {
				f |= factSuspect
			}
		case 'p':
			if emHasPrefixFold(s[i:], "position") {
				f |= factSuspect
			} else if styleDeclares(s, i, "padding") {
				f |= factPadding
			}
		case 'c':
			if styleDeclares(s, i, "color") {
				f |= factColor
			}
		case 'm':
			if styleDeclares(s, i, "margin") {
				f |= factMargin
			}
		case 'l':
			if styleDeclares(s, i, "list-style") {
				f |= factListStyle
			}
		case 'f':
			if strings.HasPrefix(s[i:], "font-family") {
				f |= factFontFamily
			}
		}
	}
	return f
}

// styleFactStart marks the bytes scanStyleFacts looks further at.
var styleFactStart = [256]bool{'&': true, '<': true, '>': true, '"': true, '\\': true, '@': true,
	'e': true, 'E': true, 's': true, 'S': true, 'b': true, 'B': true, 'p': true, 'P': true,
	'c': true, 'm': true, 'l': true, 'f': true}

// styleFacts is scanStyleFacts, remembered for recent styles (short ones
// cost less to scan than to look up).
func (w *emailWriter) styleFacts(style string) styleFacts {
	if len(style) < 16 {
		return scanStyleFacts(style)
	}
	e := &w.styleMemo[memoSlot(style, len(w.styleMemo))]
	if e.style == style {
		return e.facts
	}
	f := scanStyleFacts(style)
	*e = styleMemoEntry{style, f}
	return f
}

// styleDeclares reports whether the property name prop starts at i of s
// as a declaration (see scanStyleFacts).
func styleDeclares(s string, i int, prop string) bool {
	if !strings.HasPrefix(s[i:], prop) {
		return false
	}
	if i > 0 {
		if b := s[i-1]; b != ';' && b != ' ' && b != '\t' && b != '\n' {
			return false
		}
	}
	j := i + len(prop)
	return j < len(s) && (s[j] == ':' || s[j] == '-' || s[j] == ' ')
}

// emSafeInlineStyle drops declarations that can run script or escape the
// block (expression(), javascript: URLs, behavior, -moz-binding, @import)
// and keeps the rest as written. It is for styles scanStyleFacts found
// suspect: others are kept whole, as written.
func emSafeInlineStyle(s string) string {
	var b strings.Builder
	for _, decl := range strings.Split(s, ";") {
		d := strings.ToLower(decl)
		if strings.Contains(d, "expression") || strings.Contains(d, "script:") ||
			strings.Contains(d, "behavior") || strings.Contains(d, "binding") ||
			strings.Contains(d, "@import") || strings.Contains(d, "\\") ||
			(strings.Contains(d, "position") && (strings.Contains(d, "fixed") || strings.Contains(d, "absolute"))) {
			continue
		}
		if strings.TrimSpace(decl) == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(';')
		}
		b.WriteString(decl)
	}
	return b.String()
}

// emHasPrefixFold is strings.HasPrefix ignoring ASCII case; prefix is
// lower-case.
func emHasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}
