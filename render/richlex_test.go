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
	// start, end: the token's place in the fragment
	start, end int
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

// TestRichTokenPlaces: each token knows where it is written in the
// fragment, by either lexer; what the stream leaves out (comments,
// doctypes) is a gap between places.
func TestRichTokenPlaces(t *testing.T) {
	for src, want := range map[string][]string{
		`<p class="x">a&amp;b<br/></p>`: {`<p class="x">`, `a&amp;b`, `<br/>`, `</p>`},
		`<P>a<!-- c -->b</P >`:          {`<P>`, `a`, `b`, `</P >`},
		`<!DOCTYPE html><div>x</div>`:   {`<div>`, `x`, `</div>`},
	} {
		var got []string
		prev := 0
		richTokens(src, func(tok richToken) {
			if tok.start < prev || tok.end < tok.start {
				t.Errorf("%q: token at %d–%d after %d", src, tok.start, tok.end, prev)
			}
			got = append(got, src[tok.start:tok.end])
			prev = tok.end
		})
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%q: places give %q, want %q", src, got, want)
		}
	}
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

// lexWith is lexAll by one lexer, with text tokens' decoded text.
func lexWith(lex func(string, func(richToken)) bool, src string) ([]lexed, []string, bool) {
	var toks []lexed
	var decoded []string
	ok := lex(src, func(t richToken) {
		l := lexed{kind: t.kind, a: t.a, name: string(t.name), text: string(t.text), escape: t.escape, start: t.start, end: t.end}
		for key, val := range t.attrs() {
			l.attrs = append(l.attrs, richAttr{string(key), string(val)})
		}
		if t.kind == html.TextToken {
			decoded = append(decoded, string(t.decoded()))
		}
		toks = append(toks, l)
	})
	return toks, decoded, ok
}

// FuzzSimpleTokens: wherever simpleTokens takes a fragment, its tokens
// (kinds, names, atoms, attributes, text as written and decoded, places
// in the fragment) are x/net/html's, and its check (yield nil) agrees with its reading.
func FuzzSimpleTokens(f *testing.F) {
	for _, s := range []string{
		`<p style="margin:0;line-height:1.2"><span style='color:#333'>Hi&nbsp;there &amp; you</span></p>`,
		`<a href="https://x.test/?a=1" target="_blank" title="t" href="y">l</a><br/><img src="i.png" alt=""/>`,
		`<ul><li data-mce-style="x">a</li ></ul><o:p></o:p><h1 class=c>x</h1>`,
		`<p>a < b</p><!-- c --><script>x</script><P>`, "<p>\r\n\x00</p>", `<br clear/><p/><a b=""/>`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checked := simpleTokens(src, nil)
		got, gotText, ok := lexWith(simpleTokens, src)
		if ok != checked {
			t.Fatalf("%q: the check says %v, the reading %v", src, checked, ok)
		}
		if !ok {
			return
		}
		want, wantText, _ := lexWith(func(s string, yield func(richToken)) bool { htmlTokens(s, yield); return true }, src)
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotText, wantText) {
			t.Fatalf("%q:\n got %+v %q\nwant %+v %q", src, got, gotText, want, wantText)
		}
	})
}

// TestSimpleTokensTaken: the fast path is taken for the rich text of
// the project's designs' usual shape, and left for what it does not read.
func TestSimpleTokensTaken(t *testing.T) {
	for src, want := range map[string]bool{
		`<p style="margin: 0; font-size: 14px;"><strong>Hi</strong>&nbsp;<a href="https://x.test" target="_blank" rel="noopener">x</a></p>`: true,
		`<ul><li style="font-size:14px;">a<br></li></ul>`: true,
		`<a href="https://x.test/?a=1&amp;b=2">x</a>`:     true,
		`<a href="https://x.test/?a=1&b=2">x</a>`:         false, // not a character reference
		`<P>x</P>`:                   false,
		`<p>a<!-- c -->b</p>`:        false,
		`<style>p{}</style>`:         false,
		`<p title=x>a</p>`:           false,
		`<p>1 < 2</p>`:               false,
		"<p>a\r\nb</p>":              false,
		`<p>unterminated <a href="x`: false,
	} {
		if got := simpleTokens(src, nil); got != want {
			t.Errorf("%q: simpleTokens %v, want %v", src, got, want)
		}
	}
}
