package render

import (
	"reflect"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/internal/designtest"
)

// lexedToken is a richToken with its strings and attributes resolved,
// for comparing the two lexers' output.
type lexedToken struct {
	kind       html.TokenType
	a          atom.Atom
	name, text string
	escape     bool
	attrs      [][2]string
}

func lexWith(src string, simple bool) ([]lexedToken, bool) {
	return lexWithWriter(&emailWriter{tagMemo: new(tagMemo)}, src, simple)
}

func lexWithWriter(w *emailWriter, src string, simple bool) ([]lexedToken, bool) {
	if simple {
		if !w.lexRichSimple(src) {
			return nil, false
		}
	} else {
		w.lexRichFull(src)
	}
	out := make([]lexedToken, len(w.richToks))
	for i, t := range w.richToks {
		out[i] = lexedToken{kind: t.kind, a: t.a, name: w.richStr(t.name), text: w.richStr(t.text), escape: t.escape}
		for _, at := range w.richAttrs[t.attr0:t.attr1] {
			out[i].attrs = append(out[i].attrs, [2]string{w.richStr(at.key), w.richStr(at.val)})
		}
	}
	return out, true
}

// checkLexersAgree fails when the simple lexer accepts src but reads it
// differently from x/net/html.
func checkLexersAgree(t *testing.T, src string) bool {
	t.Helper()
	w := &emailWriter{tagMemo: new(tagMemo)}
	simple, ok := lexWithWriter(w, src, true)
	if !ok {
		return false
	}
	full, _ := lexWith(src, false)
	// The full lexer ends text at a '<' only before a tag; the simple one
	// never accepts such a '<', so text tokens line up one to one.
	if !reflect.DeepEqual(simple, full) {
		t.Fatalf("lexers disagree on %q:\nsimple %+v\nfull   %+v", src, simple, full)
	}
	// Again, every tag worth remembering now in w's memo (from where
	// they were in the first pass: repeats within src move them).
	if again, _ := lexWithWriter(w, src, true); !reflect.DeepEqual(again, full) {
		t.Fatalf("lexers disagree on %q with the tag memo warm:\nsimple %+v\nfull   %+v", src, again, full)
	}
	// And without a memo.
	if cold, _ := lexWithWriter(&emailWriter{}, src, true); !reflect.DeepEqual(cold, full) {
		t.Fatalf("lexers disagree on %q without a tag memo:\nsimple %+v\nfull   %+v", src, cold, full)
	}
	return true
}

func TestRichLexers(t *testing.T) {
	tests := []struct {
		src    string
		simple bool // whether the fast lexer must take it
	}{
		{`<p>Hello <strong>world</strong></p>`, true},
		{`<p style="margin: 0; font-size: 14px; line-height: 1.5;"><span style="color:#333">Hi&nbsp;there &amp; you</span></p>`, true},
		{`<a href="https://example.com/?a=1&amp;b=2" target="_blank" rel="noopener">x</a>`, true},
		{`<P CLASS="x" Style='color:red'>upper</P>`, true},
		{`<br/><br /><img src="a.png" alt="" width=100 height=50%/>`, false}, // '/' after an unquoted value
		{`<img src="a.png" alt="" width=100 height=50%>`, true},
		{`<td nowrap class="c" colspan = "2">x</td >`, true},
		{`<span style="font-family: &quot;Open Sans&quot;, sans-serif">x</span>`, true},
		{`<a href="x" title="a" href="y">dup</a>`, true},
		{`<o:p></o:p>{{merge_tag}} $name$ a > b`, true},
		{`text only with a trailing <`, false},
		{`a < b`, false},
		{`<!-- comment --><p>x</p>`, false},
		{`<!DOCTYPE html><p>x</p>`, false},
		{`<?xml?>`, false},
		{`</>`, false},
		{`<p>x<script>alert(1)</script></p>`, false},
		{`<style>p{}</style>`, false},
		{`<textarea><p></textarea>`, false},
		{`<a href="x"title="y">adjacent attributes</a>`, false},
		{`<a href="x?a=1&b=2">raw ampersand</a>`, false},
		{`<a href="x&copy=2">entity-like</a>`, false},
		{`<p a=b/>`, false},
		{`<br / >`, false},
		{`<p class="x`, false},
		{`<p`, false},
		{"<p\r\nclass=x>", false},
		{"<p title=\"a\rb\">", false},
		{"<p title=\"a\x00b\">", false},
		{`<p =x>`, false},
		{`<p "x">`, false},
		{`</p x>`, false},
		{`<input disabled/>`, true},
		{`<input disabled />`, true},
		{`<input disabled=>`, false},
		{"<p\ttitle\f=\n'x'>\x00 text keeps NUL</p>", true},
		// Attributes the sanitiser never keeps are left out unread, so
		// what their values hold does not matter.
		{"<p data-mce-style=\"a&copy=2\r\x00\" onclick=\"x&y\" style=\"color:red\">x</p>", true},
		{"<p onclick=\"x\" style=\"a&copy=2\">x</p>", false},
	}
	for _, tt := range tests {
		got := checkLexersAgree(t, tt.src)
		if got != tt.simple {
			t.Errorf("simple lexer took %q: %v, want %v", tt.src, got, tt.simple)
		}
	}
}

// TestRichLexersCorpus runs both lexers over every HTML string of the
// corpus designs: where the simple one answers it must agree, and it must
// answer for nearly all of them, or the fast path has silently stopped
// being the common one.
func TestRichLexersCorpus(t *testing.T) {
	designs := designtest.OwnAndCorpus(t, false)
	total, simple := 0, 0
	for _, name := range designtest.Names(designs) {
		data := designs[name]
		d, err := design.Decode(data)
		if err != nil {
			continue
		}
		var walk func(v *design.Value)
		walk = func(v *design.Value) {
			switch v.Kind {
			case design.String:
				if strings.Contains(v.Str, "<") {
					total++
					if checkLexersAgree(t, v.Str) {
						simple++
					}
				}
			case design.Array, design.Object:
				for i := range v.Members {
					walk(&v.Members[i].Value)
				}
			}
		}
		walk(&d.Root)
	}
	t.Logf("simple lexer took %d of %d HTML strings", simple, total)
	if total == 0 || simple*10 < total*9 {
		t.Errorf("simple lexer took %d of %d HTML strings, want at least 90%%", simple, total)
	}
}

// FuzzRichLexers: whatever the simple lexer accepts, it reads exactly as
// x/net/html does; remembered tags are written as they would be afresh;
// and rich() never panics.
func FuzzRichLexers(f *testing.F) {
	for _, s := range []string{
		`<p style="color:red">a&amp;b<br/></p>`, `<a href='x' title=y>z</a>`,
		`<P CLASS=x>`, `<input disabled />`, `<o:p></o:p>`, `<a href="&quot;&#39;">`,
		`<p a=b/>`, `<img src="x"/>`, `</p >`,
		`<p style="font-size: 12px;" data-x="1">a</p><p style="font-size: 12px;" data-x="1">b</p>`,
		`<p style="font-size: 12px">a</p><p style="font-size: 14px">b</p><p class="x" title="a>b">c</p><p class="x" title="a>b">`,
		`<SPAN Style="color: red">a</SPAN><SPAN Style="color: red">b</SPAN><span title="&amp;&amp;">c</span><span title="&amp;&amp;">`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkLexersAgree(t, src)
		checkTagOutputMemo(t, src)
	})
}

// TestNextAttrSpecialEveryByte: the word test stops exactly where a byte
// loop would, for every byte value at every position of a word, before
// and after a tab (which the word test flags and the byte loop settles).
func TestNextAttrSpecialEveryByte(t *testing.T) {
	want := func(v string) int {
		for i := 0; i < len(v); i++ {
			if c := v[i]; c == 0 || c == '\r' || c == '&' {
				return i
			}
		}
		return len(v)
	}
	for _, prefix := range []string{"", "\t", "abc\ndef"} {
		for c := range 256 {
			for pos := range 16 {
				b := []byte(prefix + "abcdefghijklmnop")
				b[len(prefix)+pos] = byte(c)
				if got, w := nextAttrSpecial(string(b)), want(string(b)); got != w {
					t.Fatalf("nextAttrSpecial(%q) = %d, want %d", b, got, w)
				}
			}
		}
	}
}

// TestTagMemoSlotReuse: a tag the memo declines (one of its values is
// not a slice of the block) must leave the slot it maps to as it was,
// since that slot may hold another tag met again later.
func TestTagMemoSlotReuse(t *testing.T) {
	kept := `<span lang="xx" id="abcdefgh">`
	var declined string
	for n := 0; n < 26*26*8 && declined == ""; n++ {
		filler := strings.Repeat("q", n%8) + string(rune('a'+n%26)) + string(rune('a'+n/26%26))
		b := `<span id="` + filler + `" title="&amp;">`
		if len(b) == len(kept) && tagMemoSlot(b) == tagMemoSlot(kept) {
			declined = b
		}
	}
	if declined == "" {
		t.Fatal("no tag found for the same slot")
	}
	if !checkLexersAgree(t, kept+"a"+declined+"b"+kept+"c") {
		t.Fatal("the simple lexer refused the test input")
	}
}
