package render

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
)

func emRich(src string, o *richOpts) string {
	w := &emailWriter{d: &design.Design{}}
	w.rich(src, o)
	return w.body.String()
}

func TestSanitizeRich(t *testing.T) {
	link := &richOpts{linkColor: "#0068A5", pMargin: true, paraSpacing: 16}
	tests := []struct {
		name, in string
		o        *richOpts
		want     string
	}{
		{"plain text fast path", "Hello {{name}} & $x$", nil, "Hello {{name}} & $x$"},
		{"entities kept as written", "a&nbsp;b &amp; c", nil, "a&nbsp;b &amp; c"},
		{"script and content dropped", "a<script>alert(1)</script>b", nil, "ab"},
		{"style element dropped", "<style>p{color:red}</style>x", nil, "x"},
		{"iframe/object dropped with content", `<iframe src="x">t</iframe><object data="y">o</object>z`, nil, "z"},
		{"event handlers dropped", `<p onclick="x()" style="color:red">t</p>`, nil, `<p style="color:red">t</p>`},
		{"javascript href dropped", `<a href="javascript:alert(1)">x</a>`, nil, `<a>x</a>`},
		{"obfuscated scheme dropped", `<a href=" jAvA&#x09;script:alert(1)">x</a>`, nil, `<a>x</a>`},
		{"merge tag href kept", `<a href="{{ unsubscribe_link }}">u</a>`, nil, `<a href="{{ unsubscribe_link }}">u</a>`},
		{"query ampersand re-escaped", `<a href="https://x.test/?a=1&amp;b=2">q</a>`, nil, `<a href="https://x.test/?a=1&amp;b=2">q</a>`},
		{"data-mce-style dropped", `<span style="font-size:14px" data-mce-style="font-size:14px">s</span>`, nil, `<span style="font-size:14px">s</span>`},
		{"img gets empty alt", `<img src="https://x.test/a.png">`, nil, `<img src="https://x.test/a.png" style="max-width:100%;height:auto" alt="">`},
		{"img kept within the column, its own style last", `<img src="https://x.test/a.png" alt="a" style="width:1200px">`, nil, `<img src="https://x.test/a.png" alt="a" style="max-width:100%;height:auto;width:1200px">`},
		{"unclosed elements closed", `<div><span>x`, nil, `<div><span>x</span></div>`},
		{"stray end tags ignored", `x</div></span>y`, nil, `xy`},
		{"misnested closed in order", `<b><i>x</b>y</i>`, nil, `<b><i>x</i></b>y`},
		{"forms and inputs dropped, text kept", `<form action="/x">F<input name="q"></form>`, nil, `F`},
		{"comments dropped", `a<!--[if mso]><b>x</b><![endif]-->b`, nil, `ab`},
		{"plaintext raw text re-escaped", `<plaintext><script>x</script>`, nil, `&lt;script&gt;x&lt;/script&gt;`},
		{"css expression dropped", `<p style="color:red;width:expression(alert(1))">t</p>`, nil, `<p style="color:red">t</p>`},
		{"fixed positioning dropped", `<div style="position:fixed;top:0">t</div>`, nil, `<div style="top:0">t</div>`},
		{"link colour added", `<a href="https://x.test">l</a>`, link, `<a href="https://x.test" style="color:#0068A5">l</a>`},
		{"own link colour kept", `<a href="h" style="color:#111">l</a>`, link, `<a href="h" style="color:#111">l</a>`},
		{"background-color is not color", `<a href="h" style="background-color:#111">l</a>`, link, `<a href="h" style="color:#0068A5;background-color:#111">l</a>`},
		{"paragraph margins and spacing", `<p>a</p><p>b</p>`, link, `<p style="margin:0">a</p><p style="margin:16px 0 0">b</p>`},
		{"own paragraph margin kept", `<p style="margin-top:4px">a</p>`, link, `<p style="margin-top:4px">a</p>`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := emRich(tt.in, tt.o); got != tt.want {
				t.Errorf("\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestCSSValue(t *testing.T) {
	for in, want := range map[string]string{
		"#FFFFFF":                     "#FFFFFF",
		"'Lato', Tahoma, sans-serif":  "'Lato', Tahoma, sans-serif",
		"red;background:url(x)":       "",
		"red}</style><script>":        "",
		"expression(alert(1))":        "",
		"url('javascript:alert(1)')":  "",
		"url('https://x.test/a.png')": "url('https://x.test/a.png')",
		"  10px  ":                    "10px",
	} {
		if got := emCSSValue(in); got != want {
			t.Errorf("emCSSValue(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzStyleSuspect: the one-pass scan finds a style suspect exactly when
// searching the lower-cased style for each word does.
func FuzzStyleSuspect(f *testing.F) {
	for _, s := range []string{"color:red", "width:expression(1)", "POSITION:fixed", "x:url(JavaScript:1)",
		"-moz-Binding:url(x)", "BEHAVIOR:url(x)", "@IMPORT 'x'", `font-family:\61`, "positio", "expressio"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := scanStyleFacts(s)&factSuspect != 0, suspectStyle(s); got != want {
			t.Fatalf("scanStyleFacts(%q) suspect = %v, want %v", s, got, want)
		}
	})
}

// suspectStyle is the plain definition of a suspect style: one of the
// words emSafeInlineStyle filters for, in any ASCII case.
func suspectStyle(s string) bool {
	l := strings.ToLower(s)
	for _, w := range []string{"expression", "script:", "behavior", "binding", "@import", `\`, "position"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// FuzzFirstField: emFirstField is the first of strings.Fields.
func FuzzFirstField(f *testing.F) {
	for _, s := range []string{"1px solid #000", "  2px\u00a0dashed", "", " \t", "none", "\xff 1px"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := ""
		if fs := strings.Fields(s); len(fs) > 0 {
			want = fs[0]
		}
		if got := emFirstField(s); got != want {
			t.Fatalf("emFirstField(%q) = %q, want %q", s, got, want)
		}
	})
}

// FuzzEscape: the word-at-a-time escaper replaces exactly &, <, > and ".
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain text here", `a&b<c>d"e`, "&&&&&&&&&", "0123456&", "\xff\x80&<"} {
		f.Add(s)
	}
	ref := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	f.Fuzz(func(t *testing.T, s string) {
		var a, b bytes.Buffer
		emEscape(&a, s)
		emEscapeBytes(&b, []byte(s))
		if want := ref.Replace(s); a.String() != want || b.String() != want {
			t.Fatalf("escape(%q) = %q / %q, want %q", s, a.String(), b.String(), want)
		}
	})
}

// FuzzStyleFacts: the one-pass scanner answers as asking each question
// of the style in turn does (suspectStyle, a search per property,
// strings.Contains, the escaper).
func FuzzStyleFacts(f *testing.F) {
	for _, s := range []string{"color:red", "background-color:red", "margin-top:0;padding: 1px", "list-style:none",
		"font-family:&quot;Lato&quot;", "x;color :red", "\tmargin-left:1px", "colorx:1", "color", "POSITION:fixed",
		"p\x00adding-", `a"b<c>d&`, "ppadding:1", "font-familyfont-family"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want styleFacts
		for _, q := range []struct {
			fact styleFacts
			has  bool
		}{
			{factSuspect, suspectStyle(s)},
			{factColor, declaresProp(s, "color")},
			{factMargin, declaresProp(s, "margin")},
			{factPadding, declaresProp(s, "padding")},
			{factListStyle, declaresProp(s, "list-style")},
			{factFontFamily, strings.Contains(s, "font-family")},
			{factEscape, strings.ContainsAny(s, `&<>"`)},
		} {
			if q.has {
				want |= q.fact
			}
		}
		if got := scanStyleFacts(s); got != want {
			t.Fatalf("scanStyleFacts(%q) = %07b, want %07b", s, got, want)
		}
	})
}

// declaresProp is the plain definition scanStyleFacts answers for a
// property: prop at the start or after ';' or white space, followed by
// ':', '-' or a space.
func declaresProp(style, prop string) bool {
	for j := 0; j+len(prop) <= len(style); j++ {
		if style[j:j+len(prop)] != prop {
			continue
		}
		before := j == 0 || strings.IndexByte("; \t\n", style[j-1]) >= 0
		after := j+len(prop) < len(style) && strings.IndexByte(":- ", style[j+len(prop)]) >= 0
		if before && after {
			return true
		}
	}
	return false
}

// The memo answers as the scan does, whatever styles share its slots and
// in whatever order they recur.
func TestStyleFactsMemo(t *testing.T) {
	var styles []string
	for i := range 300 {
		decls := []string{"color:#333", "margin:0", "padding-left:4px", "list-style:none",
			"font-family:Arial", "position:fixed", "line-height:1.2", `content:"&"`}
		var b strings.Builder
		for j, d := range decls {
			if i>>j&1 == 1 {
				fmt.Fprintf(&b, "%s;", d)
			}
		}
		fmt.Fprintf(&b, "width:%dpx", i)
		styles = append(styles, b.String())
	}
	w := &emailWriter{}
	for round := range 3 {
		for k := range styles {
			s := styles[(k*7+round*13)%len(styles)]
			if got, want := w.styleFacts(s), scanStyleFacts(s); got != want {
				t.Fatalf("round %d: styleFacts(%q) = %07b, want %07b", round, s, got, want)
			}
		}
	}
}

// checkTagOutputMemo fails when a writer that remembers start tags (one
// render's writer: the memo lasts across its blocks) writes src
// differently from one that does not, under each of several options,
// twice in a row, and again under the first.
func checkTagOutputMemo(t *testing.T, src string) {
	t.Helper()
	opts := []*richOpts{
		{linkColor: "#00f", pMargin: true, paraSpacing: 12, listIndent: "20px", listStyle: "disc"},
		nil,
		{linkColor: "#f00", pMargin: true},
		{linkColor: "#00f", pMargin: true, paraSpacing: 12, listIndent: "20px", listStyle: "disc"},
	}
	w := &emailWriter{d: &design.Design{}, tagMemo: new(tagMemo)}
	for k, o := range opts {
		want := emRich(src, o)
		for range 2 {
			start := w.body.Len()
			w.rich(src, o)
			if got := w.body.String()[start:]; got != want {
				t.Fatalf("block %d of %q with the tag memo:\n got %s\nwant %s", k, src, got, want)
			}
		}
	}
}

func TestTagOutputMemo(t *testing.T) {
	p := `<p style="font-size: 12px; line-height: 14px;">`
	for _, src := range []string{
		// Paragraphs after the first get the spacing: the same tag is
		// written two ways in one block.
		p + `a</p>` + p + `b</p>` + p + `c</p>`,
		p + `a</p><p style="font-size: 14px; line-height: 16px;">b</p>`,
		`<a href="https://example.com/x" style="font-weight: bold">a</a><a href="https://example.com/x" style="font-weight: bold">b</a>`,
		`<ul style="font-size: 12px; line-height: 14px;"><li style="font-size: 12px; line-height: 14px;">x</li></ul><ul style="font-size: 12px; line-height: 14px;"><li>y</li></ul>`,
		`<span style="font-family: 'Open Sans', sans-serif">a</span><span style="font-family: 'Open Sans', sans-serif">b</span>`,
		`<img src="https://example.com/a.png" width="100"><img src="https://example.com/a.png" width="100">`,
	} {
		checkTagOutputMemo(t, src)
	}
}
