package render

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Editor HTML is read by x/net/html's tokenizer, the one lexer of the
// renderer; richTokens hands the sanitiser only what it reads.

// richToken is one token of editor HTML.
type richToken struct {
	kind html.TokenType // text, start, self-closing or end tag
	a    atom.Atom      // tags: the element (0 when not a known one)
	name string         // tags: the lower-cased name
	// text is a text token's source text, written as is (entities stay
	// as written) unless escape is set.
	text   []byte
	escape bool
	// attrs are a start tag's attributes that richAttrKept, keys
	// lower-cased and values unescaped, as the tokenizer gives them.
	attrs []richAttr
}

type richAttr struct{ key, val string }

// richTokens calls yield for each text and tag token of src, in order.
// Comments and doctypes are left out: the sanitiser drops them. A token's
// text and attrs are valid during its yield only (they are the
// tokenizer's and richTokens' buffers, reused for the next token).
func richTokens(src string, yield func(t richToken)) {
	z := html.NewTokenizer(strings.NewReader(src))
	var attrs []richAttr
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return // io.EOF: a string reader fails in no other way
		case html.TextToken:
			// Raw keeps entities (&nbsp;) as written; text from raw-text
			// states (e.g. after <plaintext>) may hold '<' and is
			// re-escaped instead.
			if raw := z.Raw(); bytes.IndexByte(raw, '<') < 0 {
				yield(richToken{kind: tt, text: raw})
			} else {
				yield(richToken{kind: tt, text: z.Text(), escape: true})
			}
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, hasAttr := z.TagName()
			t := richToken{kind: tt, a: atom.Lookup(name)}
			if t.a != 0 {
				t.name = t.a.String() // the same text, without a copy
			} else {
				t.name = string(name)
			}
			attrs = attrs[:0]
			for hasAttr && tt != html.EndTagToken {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				// Only the attributes the sanitiser may keep are copied:
				// editors' data-mce-style copies are a third of their HTML.
				if richAttrKept(string(k)) {
					attrs = append(attrs, richAttr{string(k), string(v)})
				}
			}
			t.attrs = attrs
			yield(t)
		}
	}
}

// richAttrKept reports whether the sanitiser may keep an attribute (on
// some element).
func richAttrKept(key string) bool {
	return key == "href" || key == "src" || allowedAttr(key)
}
