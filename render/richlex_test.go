package render

import (
	"reflect"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// lexed is a richToken as a test compares it: with its attributes read.
type lexed struct {
	kind   html.TokenType
	a      atom.Atom
	name   string
	text   string
	escape bool
	attrs  []richAttr
}

type richAttr struct{ key, val string }

func lexAll(src string) []lexed {
	var toks []lexed
	richTokens(src, func(t richToken) {
		l := lexed{kind: t.kind, a: t.a, name: string(t.name), text: string(t.text), escape: t.escape}
		for key, val := range t.attrs() {
			l.attrs = append(l.attrs, richAttr{string(key), string(val)})
		}
		toks = append(toks, l)
	})
	return toks
}

func TestRichTokens(t *testing.T) {
	text := func(s string) lexed { return lexed{kind: html.TextToken, text: s} }
	start := func(a atom.Atom, attrs ...richAttr) lexed {
		return lexed{kind: html.StartTagToken, a: a, name: a.String(), attrs: attrs}
	}
	end := func(a atom.Atom) lexed { return lexed{kind: html.EndTagToken, a: a, name: a.String()} }
	tests := []struct {
		name, src string
		want      []lexed
	}{
		{"entities stay as written in text", `<p>a&nbsp;&amp;b</p>`,
			[]lexed{start(atom.P), text("a&nbsp;&amp;b"), end(atom.P)}},
		{"names lower-cased, values unescaped", `<P Style='color:&quot;x&quot;'>`,
			[]lexed{start(atom.P, richAttr{"style", `color:"x"`})}},
		{"first of repeated attributes", `<a href="x" title="a" HREF="y">`,
			[]lexed{start(atom.A, richAttr{"href", "x"}, richAttr{"title", "a"})}},
		{"every attribute, in order", `<span data-mce-style="x" onclick="y" class="c">`,
			[]lexed{start(atom.Span, richAttr{"data-mce-style", "x"}, richAttr{"onclick", "y"}, richAttr{"class", "c"})}},
		{"no attributes on end tags", `</span class="c">`, []lexed{end(atom.Span)}},
		{"comments and doctypes left out", `<!DOCTYPE html>a<!-- c -->b`,
			[]lexed{text("a"), text("b")}},
		{"self-closing", `<br/>`,
			[]lexed{{kind: html.SelfClosingTagToken, a: atom.Br, name: "br"}}},
		{"unknown element keeps its name", `<o:p></o:p>`,
			[]lexed{{kind: html.StartTagToken, name: "o:p"}, {kind: html.EndTagToken, name: "o:p"}}},
		{"raw text with '<' is marked for escaping", `<plaintext><b>`,
			[]lexed{start(atom.Plaintext), {kind: html.TextToken, text: "<b>", escape: true}}},
		{"a '<' before no tag is text, escaped", `a < b`,
			[]lexed{{kind: html.TextToken, text: "a < b", escape: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lexAll(tt.src); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

// FuzzRichTokensNoTag: rich writes a fragment without '<' as it is,
// untokenized, because the tokenizer gives such a fragment back as text
// written as is (entities, "\r" and NUL included).
func FuzzRichTokensNoTag(f *testing.F) {
	f.Add("a&nbsp;b &amp c\r\n\x00 {{x}} >")
	f.Fuzz(func(t *testing.T, src string) {
		if strings.Contains(src, "<") {
			return
		}
		var got strings.Builder
		for _, tok := range lexAll(src) {
			if tok.kind != html.TextToken || tok.escape {
				t.Fatalf("%q: token %+v", src, tok)
			}
			got.WriteString(tok.text)
		}
		if got.String() != src {
			t.Fatalf("%q: text tokens %q", src, got.String())
		}
		if out := rich(src, nil); out != src {
			t.Fatalf("%q: rich wrote %q", src, out)
		}
	})
}
