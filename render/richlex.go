package render

import (
	"bytes"
	"iter"
	"strings"

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
	// text token's decoded text (see decoded).
	z       *html.Tokenizer
	hasAttr bool
}

// attrs yields a start tag's attributes, keys lower-cased and values
// unescaped (the first of repeated keys only), as the tokenizer gives
// them. They are read only when asked, at most once: the sanitiser reads
// none of a tag it drops.
func (t *richToken) attrs() iter.Seq2[[]byte, []byte] {
	return func(yield func(key, val []byte) bool) {
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
	if t.escape {
		return t.text // already the tokenizer's decoded text
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
func richTokens(src string, yield func(t richToken)) {
	z := html.NewTokenizer(strings.NewReader(src))
	for {
		t := richToken{kind: z.Next()}
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
