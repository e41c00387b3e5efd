package render

import (
	"bytes"
	"reflect"
	"slices"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

func lexAll(src string) []richToken {
	var toks []richToken
	richTokens(src, func(t richToken) {
		// Both are only lent for the call.
		t.text = bytes.Clone(t.text)
		t.attrs = slices.Clip(slices.Clone(t.attrs))
		if len(t.attrs) == 0 {
			t.attrs = nil
		}
		toks = append(toks, t)
	})
	return toks
}

func TestRichTokens(t *testing.T) {
	text := func(s string) richToken { return richToken{kind: html.TextToken, text: []byte(s)} }
	start := func(a atom.Atom, attrs ...richAttr) richToken {
		return richToken{kind: html.StartTagToken, a: a, name: a.String(), attrs: attrs}
	}
	end := func(a atom.Atom) richToken { return richToken{kind: html.EndTagToken, a: a, name: a.String()} }
	tests := []struct {
		name, src string
		want      []richToken
	}{
		{"entities stay as written in text", `<p>a&nbsp;&amp;b</p>`,
			[]richToken{start(atom.P), text("a&nbsp;&amp;b"), end(atom.P)}},
		{"names lower-cased, values unescaped", `<P Style='color:&quot;x&quot;'>`,
			[]richToken{start(atom.P, richAttr{"style", `color:"x"`})}},
		{"first of repeated attributes", `<a href="x" title="a" HREF="y">`,
			[]richToken{start(atom.A, richAttr{"href", "x"}, richAttr{"title", "a"})}},
		{"attributes never kept left out", `<span data-mce-style="x" onclick="y" class="c">`,
			[]richToken{start(atom.Span, richAttr{"class", "c"})}},
		{"comments and doctypes left out", `<!DOCTYPE html>a<!-- c -->b`,
			[]richToken{text("a"), text("b")}},
		{"self-closing", `<br/>`,
			[]richToken{{kind: html.SelfClosingTagToken, a: atom.Br, name: "br"}}},
		{"unknown element keeps its name", `<o:p></o:p>`,
			[]richToken{{kind: html.StartTagToken, name: "o:p"}, {kind: html.EndTagToken, name: "o:p"}}},
		{"raw text with '<' is marked for escaping", `<plaintext><b>`,
			[]richToken{start(atom.Plaintext), {kind: html.TextToken, text: []byte("<b>"), escape: true}}},
		{"a '<' before no tag is text, escaped", `a < b`,
			[]richToken{{kind: html.TextToken, text: []byte("a < b"), escape: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lexAll(tt.src); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}
