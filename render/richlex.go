package render

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Rich text is tokenized into a list of richTokens before it is written,
// so that the common case can take a fast path without changing a byte of
// the output: lexRichSimple reads the plain markup editors produce
// (lower-case tags, quoted attributes, no comments or raw-text elements)
// straight out of the source string, and anything it is not sure of makes
// it give up, whereupon lexRichFull reads the same text with x/net/html's
// tokenizer. On the inputs it accepts, lexRichSimple yields exactly the
// tokens lexRichFull would (FuzzRichLexers checks this), so the sanitiser
// has one set of rules whichever lexer ran.

// richToken is one token of editor HTML. Its strings are spans (see
// richSpan), so that the token arrays hold no pointers: filling them
// needs no write barriers, and returning them to the pool no clearing.
type richToken struct {
	kind html.TokenType // text, start, self-closing or end tag
	a    atom.Atom      // tags: the element (0 when not a known one)
	// name is a tag's lower-cased name; text is a text token's source
	// text, written as is (entities stay as written) unless escape is set.
	name, text richSpan
	escape     bool
	// attrs are w.richAttrs[attr0:attr1]: a start tag's attributes that
	// richAttrKept, keys lower-cased and values unescaped, first occurrence
	// of a key only.
	attr0, attr1 int32
	// gen names a start tag's text when the tag memo holds it (0: not
	// held): tags with the same gen are the same text, and the sanitiser
	// writes them alike (see tagOutput).
	gen uint32
}

type richAttr struct{ key, val richSpan }

// richSpan is a string of a lexed block: w.richSrc[off:end] when off >= 0,
// else w.richStrs[end]. Most are slices of the block; the others (a
// lower-cased name, an unescaped value, every string of lexRichFull) are
// kept whole.
type richSpan struct{ off, end int32 }

// richStr returns the text of sp.
func (w *emailWriter) richStr(sp richSpan) string {
	if sp.off >= 0 {
		return w.richSrc[sp.off:sp.end]
	}
	return w.richStrs[sp.end]
}

// ownSpan keeps s among the block's own strings.
func (w *emailWriter) ownSpan(s string) richSpan {
	w.richStrs = append(w.richStrs, s)
	return richSpan{-1, int32(len(w.richStrs) - 1)}
}

// srcSpan is s, src[start:end] transformed (lower-cased, unescaped), as a
// span: of src when the transformation left it as it was.
func (w *emailWriter) srcSpan(s string, start, end int) richSpan {
	if len(s) == end-start && s == w.richSrc[start:end] {
		return richSpan{int32(start), int32(end)}
	}
	return w.ownSpan(s)
}

// maxSimpleRich bounds what lexRichSimple takes on (token offsets are
// int32); bigger fragments go through x/net/html.
const maxSimpleRich = 1 << 24

// lexRichSimple tokenizes src into w.richToks and w.richAttrs, or reports
// false when src holds anything outside the subset it reads exactly
// like x/net/html does.
func (w *emailWriter) lexRichSimple(src string) bool {
	if len(src) > maxSimpleRich {
		return false
	}
	w.startRich(src)
	toks, attrs := w.richToks[:0], w.richAttrs[:0]
	defer func() { w.keepRichTokens(toks, attrs) }()
	n := len(src)
	for i := 0; i < n; {
		j := strings.IndexByte(src[i:], '<')
		if j < 0 {
			toks = append(toks, richToken{kind: html.TextToken, text: richSpan{int32(i), int32(n)}})
			break
		}
		if j > 0 {
			toks = append(toks, richToken{kind: html.TextToken, text: richSpan{int32(i), int32(i + j)}})
		}
		lt := i + j // the tag's '<'
		i = lt + 1
		kind := html.StartTagToken
		if i < n && src[i] == '/' {
			kind = html.EndTagToken
			i++
		}
		// A start tag met before lexes as it did then.
		var tagEnd int // past the first '>' of a tag worth remembering, else 0
		if kind == html.StartTagToken && w.tagMemo != nil {
			if e := strings.IndexByte(src[lt:], '>'); e >= minMemoTag {
				tagEnd = lt + e + 1
				if m := &w.tagMemo.slots[tagMemoSlot(src[lt:tagEnd])]; m.text == src[lt:tagEnd] {
					toks, attrs = m.replay(lt, toks, attrs)
					toks[len(toks)-1].gen = m.gen
					i = tagEnd
					continue
				}
			}
		}
		// A '<' not followed by a letter is text to x/net/html (or a
		// comment, doctype, processing instruction…): not simple.
		if i >= n || !isASCIILetter(src[i]) {
			return false
		}
		start := i
		var seen lexClass
		i, seen = scanClass(src, i, lexTagName)
		if i >= n || !(isTagSpace(src[i]) || src[i] == '/' || src[i] == '>') {
			return false
		}
		name, nameSpan := w.lowerSpan(src, start, i, seen)
		tok := richToken{kind: kind, name: nameSpan, a: lookupAtom(name)}
		if kind == html.EndTagToken {
			for i < n && isTagSpace(src[i]) {
				i++
			}
			if i >= n || src[i] != '>' {
				return false
			}
			i++
			toks = append(toks, tok)
			continue
		}
		// After these the tokenizer reads raw text up to the end tag.
		if isRawTextElement(name) {
			return false
		}
		tok.attr0 = int32(len(attrs))
	attributes:
		for {
			for i < n && isTagSpace(src[i]) {
				i++
			}
			if i >= n {
				return false
			}
			switch c := src[i]; {
			case c == '>':
				i++
				break attributes
			case c == '/':
				if i+1 < n && src[i+1] == '>' {
					tok.kind = html.SelfClosingTagToken
					i += 2
					break attributes
				}
				return false
			case !isASCIILetter(c):
				return false
			}
			start := i
			var seen lexClass
			i, seen = scanClass(src, i, lexAttrName)
			if i >= n || !(isTagSpace(src[i]) || src[i] == '/' || src[i] == '>' || src[i] == '=') {
				return false
			}
			keyEnd := i
			key, val := src[start:i], ""
			if seen&lexUpper != 0 {
				key = strings.ToLower(key)
			}
			valStart, valEnd := 0, 0
			kept := richAttrKept(key)
			k := i
			for k < n && isTagSpace(src[k]) {
				k++
			}
			if k < n && src[k] == '=' {
				k++
				for k < n && isTagSpace(src[k]) {
					k++
				}
				if k >= n {
					return false
				}
				if q := src[k]; q == '"' || q == '\'' {
					e := strings.IndexByte(src[k+1:], q)
					if e < 0 {
						return false
					}
					val, i = src[k+1:k+1+e], k+2+e
					valStart, valEnd = k+1, k+1+e
					// Another attribute right after the quote is valid HTML
					// but rare: leave it to the full tokenizer.
					if i >= n || !(isTagSpace(src[i]) || src[i] == '/' || src[i] == '>') {
						return false
					}
				} else {
					start := k
					for k < n && isUnquotedValueByte(src[k]) {
						k++
					}
					// A '/' would join the value ("<p a=b/>").
					if k == start || k >= n || !(isTagSpace(src[k]) || src[k] == '>') {
						return false
					}
					val, i = src[start:k], k
					valStart, valEnd = start, k
				}
				if !kept {
					continue // its value is never read
				}
				var ok bool
				if val, ok = unescapeSimpleAttr(val); !ok {
					return false
				}
			}
			if !kept {
				continue
			}
			// The tokenizer keeps the first of repeated attributes.
			dup := false
			for _, a := range attrs[tok.attr0:] {
				if w.richStr(a.key) == key {
					dup = true
					break
				}
			}
			if !dup {
				attrs = append(attrs, richAttr{w.srcSpan(key, start, keyEnd), w.srcSpan(val, valStart, valEnd)})
			}
		}
		tok.attr1 = int32(len(attrs))
		toks = append(toks, tok)
		if i == tagEnd {
			toks[len(toks)-1].gen = w.tagMemo.remember(src[lt:i], lt, tok, attrs[tok.attr0:])
		}
	}
	return true
}

// tagMemo remembers how recent start tags lexed: editors write the same
// tag, long style attribute and all, on paragraph after paragraph, and
// what lexRichSimple makes of a tag depends on the tag's text alone. It
// numbers the tags it takes, so that the sanitiser can write a tag's
// repeats as it wrote the first (see tagOutput). It lasts one render.
type tagMemo struct {
	slots [32]tagMemoEntry
	gens  uint32 // tags remembered in this render
}

type tagMemoEntry struct {
	text string    // the tag, '<' to '>' ("" for an empty slot)
	tok  richToken // spans from the tag's '<'; attr0 is 0
	// attrs are the tag's kept attributes, spans from the '<'.
	attrs [maxMemoAttrs]richAttr
	gen   uint32 // the tag's number among those remembered in this render, from 1
}

// minMemoTag is the length (to its '>') below which a tag is lexed again
// rather than looked up: short ones cost less.
const minMemoTag = 16

const maxMemoAttrs = 4

func tagMemoSlot(tag string) int { return memoSlot(tag, len(tagMemo{}.slots)) }

// memoSlot picks one of n slots for s (16 bytes or more) from its length
// and three eight-byte words of it, at a quarter, the middle and the end:
// the styles and tags of one design share their beginnings and often
// their lengths, and differ in values further on. (The memos compare the
// whole text anyway.)
func memoSlot(s string, n int) int {
	const k = 0x9E3779B97F4A7C15 // odd, with well-mixed bits
	h := uint64(len(s))
	h = (h ^ emWord(s, len(s)/4)) * k
	h = (h ^ emWord(s, len(s)/2-4)) * k
	h = (h ^ emWord(s, len(s)-8)) * k
	return int((h >> 32) % uint64(n))
}

// remember keeps the tokens of tag (at lt of the block) and returns the
// number it gives the tag, unless one of its strings is not a slice of
// the block or it has too many attributes (then 0).
func (m *tagMemo) remember(tag string, lt int, tok richToken, attrs []richAttr) (gen uint32) {
	if tok.name.off < 0 || len(attrs) > maxMemoAttrs {
		return 0
	}
	for _, a := range attrs {
		if a.key.off < 0 || a.val.off < 0 {
			return 0 // before the slot is touched: it may hold another tag
		}
	}
	e := &m.slots[tagMemoSlot(tag)]
	m.gens++
	e.gen = m.gens
	base := int32(lt)
	for k, a := range attrs {
		e.attrs[k] = richAttr{a.key.from(-base), a.val.from(-base)}
	}
	e.text = tag
	e.tok = tok
	e.tok.name = tok.name.from(-base)
	e.tok.attr0, e.tok.attr1 = 0, int32(len(attrs))
	e.tok.gen = 0
	return e.gen
}

// replay appends the remembered tokens of the tag at lt.
func (e *tagMemoEntry) replay(lt int, toks []richToken, attrs []richAttr) ([]richToken, []richAttr) {
	base := int32(lt)
	tok := e.tok
	tok.name = tok.name.from(base)
	tok.attr0 = int32(len(attrs))
	for _, a := range e.attrs[:e.tok.attr1] {
		attrs = append(attrs, richAttr{a.key.from(base), a.val.from(base)})
	}
	tok.attr1 = int32(len(attrs))
	return append(toks, tok), attrs
}

// from is sp moved by base (sp is a slice of the block).
func (sp richSpan) from(base int32) richSpan { return richSpan{sp.off + base, sp.end + base} }

// lexRichFull tokenizes src with x/net/html into w.richToks and
// w.richAttrs. Comments and doctypes are left out: the sanitiser drops them.
func (w *emailWriter) lexRichFull(src string) {
	w.startRich(src)
	toks, attrs := w.richToks[:0], w.richAttrs[:0]
	z := html.NewTokenizer(strings.NewReader(src))
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			w.keepRichTokens(toks, attrs)
			return
		case html.TextToken:
			// Raw keeps entities (&nbsp;) as written; text from raw-text
			// states (e.g. after <plaintext>) may hold '<' and is
			// re-escaped instead.
			if raw := z.Raw(); bytes.IndexByte(raw, '<') < 0 {
				toks = append(toks, richToken{kind: tt, text: w.ownSpan(string(raw))})
			} else {
				toks = append(toks, richToken{kind: tt, text: w.ownSpan(string(z.Text())), escape: true})
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, hasAttr := z.TagName()
			tok := richToken{kind: tt, name: w.ownSpan(string(name)), a: atom.Lookup(name), attr0: int32(len(attrs))}
			for hasAttr && tt != html.EndTagToken {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				if richAttrKept(string(k)) {
					attrs = append(attrs, richAttr{w.ownSpan(string(k)), w.ownSpan(string(v))})
				}
			}
			tok.attr1 = int32(len(attrs))
			toks = append(toks, tok)
		}
	}
}

// richAttrKept reports whether the sanitiser may keep an attribute (on
// some element): the lexers leave out the others, and do not even decode
// their values (editors' data-mce-style copies are a third of their HTML).
func richAttrKept(key string) bool {
	return key == "href" || key == "src" || key == "style" || emAllowedAttr(key)
}

// startRich makes src the block the spans of the next lexer's tokens
// refer to.
func (w *emailWriter) startRich(src string) {
	w.richSrc = src
	w.richStrsUsed = max(w.richStrsUsed, len(w.richStrs))
	w.richStrs = w.richStrs[:0]
}

// keepRichTokens stores a lexer's output.
func (w *emailWriter) keepRichTokens(toks []richToken, attrs []richAttr) {
	w.richToks, w.richAttrs = toks, attrs
}

func isASCIILetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func isTagSpace(c byte) bool { return c == ' ' || c == '\n' || c == '\t' || c == '\f' }

// lexClass classifies the bytes of names, in one table lookup each.
type lexClass uint8

const (
	lexLower    lexClass = 1 << iota // a-z, digits, ':' and '-' (o:p from Word, custom elements)
	lexUpper                         // A-Z
	lexAttrOnly                      // '_' and '.': in attribute names only

	lexTagName  = lexLower | lexUpper
	lexAttrName = lexTagName | lexAttrOnly
)

var lexClasses = func() (t [256]lexClass) {
	for c := range 256 {
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == ':', c == '-':
			t[c] = lexLower
		case 'A' <= c && c <= 'Z':
			t[c] = lexUpper
		case c == '_', c == '.':
			t[c] = lexAttrOnly
		}
	}
	return t
}()

// scanClass returns the end of the run of bytes of s from i in class
// want, and the classes seen in it (lexUpper: it needs lower-casing).
func scanClass(s string, i int, want lexClass) (int, lexClass) {
	var seen lexClass
	for ; i < len(s); i++ {
		c := lexClasses[s[i]]
		if c&want == 0 {
			break
		}
		seen |= c
	}
	return i, seen
}

// lowerSpan returns the name src[start:end] lower-cased, and its span: of
// src unless it had upper-case letters.
func (w *emailWriter) lowerSpan(src string, start, end int, seen lexClass) (string, richSpan) {
	name := src[start:end]
	if seen&lexUpper == 0 {
		return name, richSpan{int32(start), int32(end)}
	}
	name = strings.ToLower(name)
	return name, w.ownSpan(name)
}

// isUnquotedValueByte: what unquoted values in editor HTML hold (widths,
// colours, names). No '&' (entities), '/' or quotes.
func isUnquotedValueByte(c byte) bool {
	return isASCIILetter(c) || '0' <= c && c <= '9' || c == '%' || c == '#' || c == '.' || c == '-' || c == '_'
}

func isRawTextElement(name string) bool {
	switch name {
	case "iframe", "noembed", "noframes", "noscript", "plaintext", "script", "style", "textarea", "title", "xmp":
		return true
	}
	return false
}

// nextAttrSpecial returns the index of the first NUL, CR or '&' of v, or
// len(v), looking at eight bytes at a time (see emNextEscaped) for '&' or
// a byte below 0x0E: one test covers NUL and CR, and the rare tab or
// newline it also stops at is settled by the byte loop.
func nextAttrSpecial(v string) int {
	const lows, highs = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(v); i += 8 {
		x := emWord(v, i)
		y := x ^ (lows * '&')
		if ((x-lows*0x0E)&^x|(y-lows)&^y)&highs != 0 {
			break
		}
	}
	for ; i < len(v); i++ {
		if c := v[i]; c == 0 || c == '\r' || c == '&' {
			break
		}
	}
	return i
}

// lookupAtom is atom.Lookup with the tags editors write most answered
// by a switch, which is cheaper than hashing.
func lookupAtom(name string) atom.Atom {
	switch name {
	case "p":
		return atom.P
	case "span":
		return atom.Span
	case "a":
		return atom.A
	case "br":
		return atom.Br
	case "strong":
		return atom.Strong
	case "em":
		return atom.Em
	case "li":
		return atom.Li
	case "div":
		return atom.Div
	}
	return atom.Lookup([]byte(name))
}

// simpleEntities are the character references unescapeSimpleAttr decodes:
// the ones editors write in attributes, each ending in ';', which the
// tokenizer decodes the same way in any context.
var simpleEntities = [...]struct{ ref, char string }{
	{"&amp;", "&"}, {"&quot;", `"`}, {"&#39;", "'"}, {"&apos;", "'"},
	{"&lt;", "<"}, {"&gt;", ">"}, {"&#34;", `"`}, {"&#x27;", "'"},
}

// unescapeSimpleAttr decodes an attribute value as the tokenizer would,
// or reports false when it holds something it leaves to x/net/html: a
// NUL or CR (which the tokenizer rewrites) or another kind of '&'.
func unescapeSimpleAttr(v string) (string, bool) {
	amp := nextAttrSpecial(v)
	if amp == len(v) {
		return v, true
	}
	if strings.IndexByte(v[amp:], 0) >= 0 || strings.IndexByte(v[amp:], '\r') >= 0 {
		return "", false
	}
	var b strings.Builder
	b.Grow(len(v))
	for amp >= 0 {
		b.WriteString(v[:amp])
		v = v[amp:]
		found := false
		for _, e := range simpleEntities {
			if strings.HasPrefix(v, e.ref) {
				b.WriteString(e.char)
				v = v[len(e.ref):]
				found = true
				break
			}
		}
		if !found {
			return "", false
		}
		amp = strings.IndexByte(v, '&')
	}
	b.WriteString(v)
	return b.String(), true
}
