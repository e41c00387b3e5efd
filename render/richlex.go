package render

import (
	"bytes"
	"iter"
	"strings"
	"unsafe"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Editor HTML is read by x/net/html's tokenizer, the one lexer of the
// renderer; richTokens hands the sanitiser only what it reads.

// richToken is one token of editor HTML. Its text and attributes are the
// tokenizer's: valid until the next token.
type richToken struct {
	kind html.TokenType // text, start, self-closing or end tag
	a    atom.Atom      // tags: the element (0 when not a known one)
	name []byte         // tags: the lower-cased name
	// text is a text token's source text, written as is (entities stay
	// as written) unless escape is set.
	text   []byte
	escape bool
	// z reads a start tag's attributes when hasAttr (see attrs) and a
	// text token's decoded text (see decoded); nil where the token comes
	// from simpleTokens, whose attributes are in simple.
	z       *html.Tokenizer
	hasAttr bool
	simple  []simpleAttr
	// start and end are the token's place in the fragment: src[start:end]
	// is the token as written. The tokens in turn cover the fragment but
	// for the comments and doctypes left out, which leave a gap.
	start, end int
}

// attrs yields a start tag's attributes, keys lower-cased and values
// unescaped (the first of repeated keys only), as the tokenizer gives
// them. They are read only when asked, at most once: the sanitiser reads
// none of a tag it drops.
func (t *richToken) attrs() iter.Seq2[[]byte, []byte] {
	return func(yield func(key, val []byte) bool) {
		if t.z == nil {
			for _, a := range t.simple {
				if !yield(a.key, a.val) {
					return
				}
			}
			return
		}
		for more := t.hasAttr; more; {
			var key, val []byte
			key, val, more = t.z.TagAttr()
			if !yield(key, val) {
				return
			}
		}
	}
}

// decoded is a text token's text with entities decoded, as plain text
// reads it. It is read at most once, instead of text: the tokenizer
// decodes in place.
func (t *richToken) decoded() []byte {
	switch {
	case t.escape:
		return t.text // already the tokenizer's decoded text
	case t.z == nil: // simpleTokens's: no NUL or carriage return
		if bytes.IndexByte(t.text, '&') < 0 {
			return t.text
		}
		return []byte(html.UnescapeString(string(t.text)))
	}
	return t.z.Text()
}

// attr returns the value of a start tag's first attribute key, as attrs
// gives it; it reads the tag's attributes.
func (t *richToken) attr(key string) []byte {
	for k, v := range t.attrs() {
		if string(k) == key {
			return v
		}
	}
	return nil
}

// richTokens calls yield for each text and tag token of src, in order.
// Comments and doctypes are left out: the sanitiser drops them.
//
// Most editor HTML is plain tags with quoted attributes; simpleTokens
// reads those alone, as x/net/html would (FuzzSimpleTokens), without
// its per-fragment buffer and its copies of every name and value.
func richTokens(src string, yield func(t richToken)) {
	if simpleTokens(src, nil) {
		simpleTokens(src, yield)
		return
	}
	htmlTokens(src, yield)
}

// htmlTokens is richTokens by x/net/html's tokenizer, for any src.
func htmlTokens(src string, yield func(t richToken)) {
	z := html.NewTokenizer(strings.NewReader(src))
	for pos := 0; ; {
		t := richToken{kind: z.Next(), start: pos}
		pos += len(z.Raw())
		t.end = pos
		switch t.kind {
		case html.ErrorToken:
			return // io.EOF: a string reader fails in no other way
		case html.TextToken:
			// Raw keeps entities (&nbsp;) as written; text from raw-text
			// states (e.g. after <plaintext>) may hold '<' and is
			// re-escaped instead.
			t.z = z
			if t.text = z.Raw(); bytes.IndexByte(t.text, '<') >= 0 {
				t.text, t.escape = z.Text(), true
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			var hasAttr bool
			t.name, hasAttr = z.TagName()
			t.a = atom.Lookup(t.name)
			if t.kind != html.EndTagToken {
				t.z, t.hasAttr = z, hasAttr
			}
		default:
			continue
		}
		yield(t)
	}
}

// simpleAttr is one attribute read by simpleTokens.
type simpleAttr struct{ key, val []byte }

// simpleTokens reads src as a sequence of text and tags written plainly:
// lower-case names, attribute values in quotes (see plainEntities), no comment,
// no raw-text element (script, style, title…), no NUL or carriage
// return. With yield nil it only checks that src is such a sequence;
// otherwise it yields its tokens as richTokens does. It reports false,
// having yielded nothing when yield is nil, at the first thing outside
// that shape: richTokens then leaves src to x/net/html.
func simpleTokens(src string, yield func(t richToken)) bool {
	if strings.IndexByte(src, 0) >= 0 || strings.IndexByte(src, '\r') >= 0 {
		return false
	}
	// The tokens' slices are views of src's bytes, never written to (as
	// the sanitiser never writes to the tokenizer's): a copy of a large
	// fragment would cost memory the output bound does not allow for.
	data := unsafe.Slice(unsafe.StringData(src), len(src))
	var attrs []simpleAttr
	for i := 0; i < len(src); {
		if src[i] != '<' {
			j := strings.IndexByte(src[i:], '<')
			if j < 0 {
				j = len(src) - i
			}
			if yield != nil {
				yield(richToken{kind: html.TextToken, text: data[i : i+j], start: i, end: i + j})
			}
			i += j
			continue
		}
		t := richToken{kind: html.StartTagToken, start: i}
		i++
		if i < len(src) && src[i] == '/' {
			t.kind = html.EndTagToken
			i++
		}
		name, n := i, simpleName(src[i:])
		if n == 0 || rawTextElement(src[i:i+n]) {
			return false
		}
		i += n
		attrs = attrs[:0]
		for nattr := 0; ; nattr++ {
			if nattr > maxSimpleAttrs {
				return false
			}
			ws := simpleSpace(src[i:])
			i += ws
			if i >= len(src) {
				return false
			}
			if src[i] == '>' {
				i++
				break
			}
			if strings.HasPrefix(src[i:], "/>") && t.kind == html.StartTagToken {
				t.kind = html.SelfClosingTagToken
				i += 2
				break
			}
			// An attribute: key="value", key='value' or a bare key,
			// after white space; none on end tags.
			k := simpleName(src[i:])
			if ws == 0 || k == 0 || t.kind == html.EndTagToken {
				return false
			}
			key, val := i, i+k
			i += k
			end := val
			if i < len(src) && src[i] == '=' {
				if i+1 >= len(src) || src[i+1] != '"' && src[i+1] != '\'' {
					return false
				}
				q := strings.IndexByte(src[i+2:], src[i+1])
				if q < 0 {
					return false
				}
				val, end = i+2, i+2+q
				if !plainEntities(src[val:end]) {
					return false
				}
				i = end + 1
			}
			if yield != nil && !repeated(attrs, src[key:key+k]) {
				v := data[val:end]
				if bytes.IndexByte(v, '&') >= 0 {
					v = []byte(html.UnescapeString(src[val:end]))
				}
				attrs = append(attrs, simpleAttr{data[key : key+k], v})
			}
		}
		if yield != nil {
			t.name, t.end = data[name:name+n], i
			t.a = atom.Lookup(t.name)
			if t.kind != html.EndTagToken {
				t.simple = attrs
			}
			yield(t)
		}
	}
	return true
}

// maxSimpleAttrs is the most attributes a tag of the fast path has: each
// is compared with those before it (x/net/html keeps the first of
// repeated ones), and a tag of thousands is x/net/html's to read.
const maxSimpleAttrs = 32

// simpleName is the length of the lower-case name (of a tag or an
// attribute) at the start of s: a letter, then letters, digits and
// - _ . : (o:p, data-mce-style, xml:lang), 0 if none.
func simpleName(s string) int {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return 0
	}
	n := 1
	for n < len(s) {
		switch c := s[n]; {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == ':':
			n++
		default:
			return n
		}
	}
	return n
}

// simpleSpace is the length of the HTML white space at the start of s
// (carriage returns aside: simpleTokens refuses them).
func simpleSpace(s string) int {
	n := 0
	for n < len(s) && (s[n] == ' ' || s[n] == '\n' || s[n] == '\t' || s[n] == '\f') {
		n++
	}
	return n
}

// plainEntities reports whether every character reference in the
// attribute value v is a decimal one or a common named one, ended by
// ';': x/net/html decodes those in values as html.UnescapeString does
// in text (it differs on names without ';' and unknown ones).
func plainEntities(v string) bool {
	for {
		i := strings.IndexByte(v, '&')
		if i < 0 {
			return true
		}
		v = v[i+1:]
		end := strings.IndexByte(v, ';')
		if end < 0 {
			return false
		}
		switch name := v[:end]; name {
		case "quot", "apos", "amp", "lt", "gt", "nbsp":
		default:
			if len(name) < 2 || name[0] != '#' || strings.Trim(name[1:], "0123456789") != "" {
				return false
			}
		}
		v = v[end+1:]
	}
}

// rawTextElement reports whether x/net/html reads what follows a start
// tag of name as raw text (not tags), where simpleTokens would not.
func rawTextElement(name string) bool {
	switch name {
	case "iframe", "noembed", "noframes", "noscript", "plaintext", "script", "style", "textarea", "title", "xmp":
		return true
	}
	return false
}

// repeated reports whether attrs has key: x/net/html keeps the first of
// repeated attributes.
func repeated(attrs []simpleAttr, key string) bool {
	for _, a := range attrs {
		if string(a.key) == key {
			return true
		}
	}
	return false
}
