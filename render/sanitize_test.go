package render

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

func rich(src string, o *richOpts) string {
	w := &emailWriter{d: &design.Design{}, maxOutput: DefaultMaxOutput}
	w.rich(src, o)
	return w.body.String()
}

func TestSanitizeRich(t *testing.T) {
	link := &richOpts{linkColor: "#0068A5", pMargin: true, paraSpacing: 16}
	phrasing := &richOpts{phrasing: true}
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
		{"self-closed non-void element closed", `<a/>x<b/>y`, nil, `<a>x<b>y</b></a>`},
		{"self-closed void element", `a<br/>b`, nil, `a<br>b`},
		{"stray end tags ignored", `x</div></span>y`, nil, `xy`},
		{"misnested closed in order", `<b><i>x</b>y</i>`, nil, `<b><i>x</i></b>y`},
		{"table cell outside a table dropped, text kept", `<p>in</p><td style="width:3000px">out</td>`, nil, `<p>in</p>out`},
		{"table parts outside a table dropped", `<tr><th>a</th></tr><caption>c</caption><colgroup><col></colgroup><tbody>b</tbody>`, nil, `acb`},
		{"table parts kept in a table", `<table><caption>c</caption><colgroup><col></colgroup><tbody><tr><td>a<table><tr><td>b</td></tr></table></td></tr></tbody></table>`, nil,
			`<table><caption>c</caption><colgroup><col></colgroup><tbody><tr><td>a<table><tr><td>b</td></tr></table></td></tr></tbody></table>`},
		{"table parts after the table dropped", `<table><tr><td>a</td></tr></table><tr><td>b`, nil, `<table><tr><td>a</td></tr></table>b`},
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
		{"heading in phrasing content a span on its own line", `a<h2 style="color:red">b</h2> c`, phrasing, `a<br><span style="color:red">b</span><br> c`},
		{"paragraphs in phrasing content spans, lines kept", "<p>a<br></p>\n<p align=\"right\">b</p><p></p>", phrasing, "<span>a<br></span>\n<span>b</span><br><span></span>"},
		{"an empty paragraph in phrasing content an empty line", `<p>a</p><p><br></p><p>b</p>`, phrasing, `<span>a</span><br><span><br></span><span>b</span>`},
		{"a cell in phrasing content keeps only what a span may have", `<td colspan="2" class="c" bgcolor="red">x</td>`, phrasing, `<span class="c">x</span>`},
		{"lists in phrasing content", `<ul><li>a</li><li><b>b</b></li></ul>c`, phrasing, `<span><span>a</span><br><span><b>b</b></span></span><br>c`},
		{"a link in a link left out, its text kept", `<p><a href="https://x.test/">a</a> <a>b</a></p>`, &richOpts{phrasing: true, inLink: true}, `<span>a b</span>`},
		{"a link in phrasing content outside a link kept", `<a href="https://x.test/">a</a>`, phrasing, `<a href="https://x.test/">a</a>`},
		{"a rule in phrasing content a line break", `a<hr>b<col>c`, phrasing, `a<br>bc`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := rich(tt.in, tt.o); got != tt.want {
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
		`"It's", serif`:               `"It's", serif`,
		`1px solid "`:                 "",
		`'Lato, serif`:                "",
		"1px solid /*":                "",
		"14px*/":                      "",
		"rgb(1, 2, 3)":                "rgb(1, 2, 3)",
		"rgb(1, 2, 3":                 "",
		"calc(100% - (2px)":           "",
		"attr(x[y)":                   "",
		"a[b":                         "",
		`"(", serif`:                  `"(", serif`,
		"1px)":                        "1px)",
		"url(file://h/s.png)":         "",
		"url( 'SMB://h/s.png' )":      "",
		"url(\"ms-msdt:/id\") repeat": "",
		"image-set('jar:x' 1x)":       "",
		"url($bg$) no-repeat":         "url($bg$) no-repeat",
	} {
		if got := cssValue(in); got != want {
			t.Errorf("cssValue(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCSSURL: a background URL keeps its merge tags (braces, spaces,
// parentheses) inside url('…'); what could end the string, the
// declaration, the attribute or a <style> element is encoded, and a
// URL naming a script is dropped.
func TestCSSURL(t *testing.T) {
	tests := []struct{ in, want, why string }{
		{"url('{{ hero_bg }}')", "{{ hero_bg }}", ""},
		{"url('$bg image$ (2x)')", "$bg image$ (2x)", ""},
		{"url(https://x.test/a (1).png)", "https://x.test/a (1).png", ""},
		{`url("https://x.test/{{ id }}.png")`, "https://x.test/{{ id }}.png", ""},
		{"url('x')}</style><script>alert(1)</script>", "x%27)}%3C/style%3E%3Cscript%3Ealert(1)%3C/script%3E", ""},
		{`url("x' onerror='y")`, "x%27 onerror=%27y", ""},
		{`url('x" style="position:fixed')`, "x%22 style=%22position:fixed", ""},
		{"url('a\\')", "a%5C", ""},
		{"url('java\\73 cript:alert(1)')", "java%5C73 cript:alert(1)", ""},
		{"url('a\nb\rc\fd')", "a%0Ab%0Dc%0Cd", ""},
		{"url('x -->')<script>", "x --%3E%27)%3Cscript%3E", ""},
		{"url('x');}</style><script>alert(1)</script>", "", "contains ';'"},
		{"url('x'),url(javascript:alert(1))", "", "contains a script URL"},
		{"url('x') expression(alert(1))", "", "contains an expression"},
		{"url(javascript:alert(1))", "", `URL scheme "javascript:" not allowed`},
		{"url('data:image/svg+xml,x')", "", "data: URL not of a raster image"},
		{"url(mailto:a@b.test?attach=/etc/passwd)", "", "mailto: URL attaching a file not allowed"},
		{"url(//attacker.test/s/a.png)", "", "network path not allowed"},
		{`url(" \\attacker.test\s\a.png")`, "", "network path not allowed"},
		{"url('/a.png')", "/a.png", ""},
		{"url('" + strings.Repeat("a", 506) + "')", "", "over 512 bytes"},
	}
	for _, tt := range tests {
		got, why := checkURL(tt.in)
		if got != tt.want || why != tt.why {
			t.Errorf("checkURL(%q) = %q, %q; want %q, %q", tt.in, got, why, tt.want, tt.why)
		}
		if strings.ContainsAny(got, "'\"\\<>;\n\r\f") {
			t.Errorf("checkURL(%q) = %q: could end url('…')", tt.in, got)
		}
	}
}

// TestCSSURLHostile renders hostile background URLs (body, row band,
// content box) in every layout: whatever is kept stays inside its
// url('…') string, and no markup or script gets out.
func TestCSSURLHostile(t *testing.T) {
	urls := []string{
		"url('x')}</style><script>alert(1)</script>",
		"url('x');}</style><script>alert(1)</script>",
		`url("x' onerror='alert(1)")`,
		`url('x" onmouseover="alert(1)')`,
		"url('{{ a }}\\'),url(javascript:alert(1))",
		"url('x\n}body{display:none')",
		"url('x -->')<script>alert(1)</script>",
		"url('x')expression(alert(1))",
		"url('{{ hero_bg }}') no-repeat",
		"url('{{ x }}\\')",
	}
	for _, u := range urls {
		q := strconv.Quote(u)
		doc := `{"page":{"body":{"container":{"style":{"background-image":` + q + `}}},"rows":[{"container":{"style":{"background-image":` + q +
			`}},"content":{"style":{"background-image":` + q + `}},"columns":[{"grid-columns":12,"modules":[]}]}]}}`
		inEachLayout(t, doc, func(layout Layout, out *Output) {
			low := strings.ToLower(string(out.Body))
			for _, bad := range []string{"<script", "javascript:", "expression(", "display:none}"} {
				if strings.Contains(low, bad) {
					t.Errorf("%s, %s: %q in the output", u, layout, bad)
				}
			}
			n, err := html.Parse(bytes.NewReader(out.Body))
			if err != nil {
				t.Fatal(err)
			}
			var walk func(n *html.Node)
			walk = func(n *html.Node) {
				for _, a := range n.Attr {
					if strings.HasPrefix(a.Key, "on") {
						t.Errorf("%s, %s: attribute %s", u, layout, a.Key)
					}
					if a.Key == "style" {
						if p := cssStringsEnclosed(a.Val); p != "" {
							t.Errorf("%s, %s: style %q: %s", u, layout, a.Val, p)
						}
					}
				}
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c)
				}
			}
			walk(n)
		})
	}
}

// cssStringsEnclosed checks a style attribute's CSS: each quoted string
// ends on its line without an escape, a url('…') string right before its
// ')', and outside strings there is nothing that ends a rule or starts
// markup. It returns the problem, "" when none.
func cssStringsEnclosed(css string) string {
	for i := 0; i < len(css); i++ {
		switch c := css[i]; c {
		case '\'', '"':
			end := strings.IndexByte(css[i+1:], c)
			if end < 0 {
				return "unterminated string"
			}
			str := css[i+1 : i+1+end]
			if strings.ContainsAny(str, "\\\n\r\f") {
				return "escape or line break in a string"
			}
			if strings.HasSuffix(css[:i], "url(") && !strings.HasPrefix(css[i+2+end:], ")") {
				return "url string not closed by ')'"
			}
			i += end + 1
		case '{', '}', '<', '>', '\\':
			return "a " + string(c) + " outside strings"
		}
	}
	return ""
}

// FuzzFirstField: firstField is the first of strings.Fields.
func FuzzFirstField(f *testing.F) {
	for _, s := range []string{"1px solid #000", "  2px\u00a0dashed", "", " \t", "none", "\xff 1px"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want := ""
		if fs := strings.Fields(s); len(fs) > 0 {
			want = fs[0]
		}
		if got := firstField(s); got != want {
			t.Fatalf("firstField(%q) = %q, want %q", s, got, want)
		}
	})
}

// FuzzEscape: the escapers replace exactly &, <, > and ".
func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain text here", `a&b<c>d"e`, "&&&&&&&&&", "0123456&", "\xff\x80&<"} {
		f.Add(s)
	}
	ref := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	textRef := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")
	f.Fuzz(func(t *testing.T, s string) {
		var a, b, c bytes.Buffer
		escape(&a, s)
		escapeBytes(&b, []byte(s))
		if want := ref.Replace(s); a.String() != want || b.String() != want {
			t.Fatalf("escape(%q) = %q / %q, want %q", s, a.String(), b.String(), want)
		}
		escapeText(&c, s)
		if want := textRef.Replace(s); c.String() != want {
			t.Fatalf("escapeText(%q) = %q, want %q", s, c.String(), want)
		}
	})
}

func TestStyleDeclares(t *testing.T) {
	tests := []struct {
		style, prop string
		want        bool
	}{
		{"color:red", "color", true},
		{"background-color:red", "color", false},
		{"x;color :red", "color", true},
		{"\tmargin-left:1px", "margin", true},
		{"margin-top:0;padding: 1px", "padding", true},
		{"ppadding:1", "padding", false},
		{"colorx:1", "color", false},
		{"color", "color", false},
		{"list-style:none", "list-style", true},
		{"a:b;list-style-type:disc", "list-style", true},
	}
	for _, tt := range tests {
		if got := styleDeclares(tt.style, tt.prop); got != tt.want {
			t.Errorf("styleDeclares(%q, %q) = %v, want %v", tt.style, tt.prop, got, tt.want)
		}
	}
}

func TestSafeInlineStyle(t *testing.T) {
	tests := []struct{ in, want string }{
		{"color:red;;", "color:red;;"}, // nothing watched: kept as written
		{"color:red;width:expression(alert(1))", "color:red"},
		{"POSITION:Fixed;top:0", "top:0"},
		{"position:relative;;top:0;", "position:relative;top:0"}, // watched, so rejoined
		{"background:url(JavaScript:x);color:red", "color:red"},
		{"-moz-Binding:url(x);behavior:url(y)", ""},
		{`font-family:\61 bc;color:red`, "color:red"},
		{"background:url(file://h/s.png);color:red", "color:red"},
		{"background:URL( 'Ms-Msdt:/id' );color:red", "color:red"},
		{"background:url(\"fi\tle://h/s\")", ""},
		{"background:url('file://h/s", ""},
		{"background:image-set('smb://h/s.png' 1x);color:red", "color:red"},
		{"background:-webkit-image-set(url(x.png) 1x, \"search-ms:x\" 2x)", ""},
		{"background:url(https://a.test/x.png);color:red", "background:url(https://a.test/x.png);color:red"},
		{"background:url({{ bg }});color:red", "background:url({{ bg }});color:red"},
		{"background:image-set('x.png' 1x, url(https://a.test/y.png) 2x)", "background:image-set('x.png' 1x, url(https://a.test/y.png) 2x)"},
		{"@IMPORT 'x'", ""},
		// Declarations are read as CSS reads them: a ';' in a string, a
		// comment or a function ends none.
		{`background:image-set("x.png;" 2x, "//h/s.png" 1x);color:red`, "color:red"},
		{`background:image-set('a;' 2x, 'file://h/s.png' 1x)`, ""},
		{`background:image-set(/*;*/"//h/s.png" 1x);color:red`, "color:red"},
		{`background:image-set(x;"//h/s.png" 1x)`, ""},
		{`background:url("data:image/png;base64,AAAA");position:relative;color:red`, `background:url("data:image/png;base64,AAAA");position:relative;color:red`},
		{`font-family:"a;b";position:static`, `font-family:"a;b";position:static`},
		{"content:\"a\n;position:fixed", "content:\"a\n"}, // a line break ends a string
		// A value from elsewhere (a custom property, an attribute) is not
		// here to check.
		{"background:image-set(var(--u) 1x);color:red", "color:red"},
		{"background-image:-webkit-image-set(attr(title) 1x)", ""},
		{"position:var(--p);top:0", "top:0"},
		// Internet Explorer reads a style without its comments.
		{"width:expr/**/ession(alert(1));color:red", "color:red"},
		{"posi/* x */tion:fixed;top:0", "top:0"},
		{"color:red/* a note */", ""},
		{"background:url('x.png')/**/;color:red", "color:red"},
		{"background:url(https://x.test/*|ID|*.png);color:red", "background:url(https://x.test/*|ID|*.png);color:red"},
		{"font-family:'a/*b';position:static", "font-family:'a/*b';position:static"},
		{"background:xurl(/*)x*/", ""},
		{"--p:fixed;--u:'x';color:var(--c)", "--p:fixed;--u:'x';color:var(--c)"},
	}
	for _, tt := range tests {
		if got := safeInlineStyle(tt.in); got != tt.want {
			t.Errorf("safeInlineStyle(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzSafeInlineStyle: a style without watched words is kept as
// written; any other comes back as its own declarations, in order, each
// one safe, none empty. Safe is judged twice: by the sanitiser's own
// rule, and by scriptableDecl, the test's model of what a browser or mail
// client runs or loads (so that neither the watched words nor the rule
// can pass a dangerous declaration unseen).
func FuzzSafeInlineStyle(f *testing.F) {
	for _, s := range []string{"color:red", "width:expression(1)", "POSITION:fixed", "x:url(JavaScript:1)", `x:image-set("a;" 2x, "file:x" 1x)`, "position:var(--p)",
		"-moz-Binding:url(x)", "BEHAVIOR:url(x)", "@IMPORT 'x'", `font-family:\61`, "positio", "position:static;;", "x:url( 'FILE://h/s')", "x:image-set(\"smb:x\" 1x)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := safeInlineStyle(s)
		for _, decl := range cssDeclarations(got) {
			if scriptableDecl(decl) {
				t.Fatalf("safeInlineStyle(%q) = %q keeps %q", s, got, decl)
			}
		}
		if !styleWatched(s) {
			if got != s {
				t.Fatalf("safeInlineStyle(%q) = %q, want it unchanged", s, got)
			}
			return
		}
		if got == "" {
			return
		}
		rest := declarations(s)
		for _, decl := range declarations(got) {
			if strings.TrimSpace(decl) == "" || !declarationSafe(decl) {
				t.Fatalf("safeInlineStyle(%q) = %q keeps %q", s, got, decl)
			}
			for len(rest) > 0 && rest[0] != decl {
				rest = rest[1:]
			}
			if len(rest) == 0 {
				t.Fatalf("safeInlineStyle(%q) = %q: %q is not one of its declarations in order", s, got, decl)
			}
			rest = rest[1:]
		}
	})
}

// sanitizerOpts are the options the invariant checks write rich text
// under: none, a module's with every default set, a heading's and a
// linked label's.
var sanitizerOpts = []*richOpts{
	nil,
	{linkColor: "#00f", pMargin: true, paraSpacing: 12, listItemGap: 4, listIndent: "20px", listStyle: "disc", listPosition: "inside"},
	{linkColor: "#00f", phrasing: true},
	{phrasing: true, inLink: true},
}

// checkSanitized fails when what rich writes for src breaks one of the
// sanitiser's promises, as read back by x/net/html: only allowed
// elements, every end tag closing the innermost open one; only allowed
// attributes (no event handlers); links and images only to safe URLs;
// only safe style declarations; no comments; every element closed by the
// end, but a paragraph a browser has ended (no </p>, which a browser
// reads as a new paragraph: it parses as many as are written); in phrasing content (a heading's), phrasing elements only;
// inside the renderer's link, no link. It also fails when a second run
// differs.
func checkSanitized(t *testing.T, src string) {
	t.Helper()
	for _, o := range sanitizerOpts {
		out := rich(src, o)
		if again := rich(src, o); again != out {
			t.Fatalf("rich(%q) is not deterministic:\n%s\n%s", src, out, again)
		}
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("rich(%q) = %q: "+format, append([]any{src, out}, args...)...)
		}
		// The open elements; a paragraph a browser has ended, at the
		// start tag of a block element, gets no end tag.
		type element struct {
			name  string
			ended bool
		}
		var open []element
		popEnded := func() {
			for len(open) > 0 && open[len(open)-1].ended {
				open = open[:len(open)-1]
			}
		}
		paragraphs := 0
		z := html.NewTokenizer(strings.NewReader(out))
		for {
			tt := z.Next()
			if tt == html.ErrorToken {
				break
			}
			tok := z.Token()
			switch tt {
			case html.CommentToken, html.DoctypeToken:
				fail("a comment or doctype")
			case html.StartTagToken, html.SelfClosingTagToken:
				if !allowedTag(tok.DataAtom) {
					fail("element %q", tok.Data)
				}
				if o != nil && o.phrasing && !phrasingElements[tok.DataAtom] {
					// It would end a heading around it, or restyle it.
					fail("<%s> in phrasing content", tok.Data)
				}
				if o != nil && o.inLink && tok.DataAtom == atom.A {
					fail("a link inside the renderer's link")
				}
				if tableParts[tok.Data] && !slices.ContainsFunc(open, func(e element) bool { return e.name == "table" }) {
					// A browser would put it in the layout's table around
					// the rich text, out of the block's cell.
					fail("<%s> outside a table", tok.Data)
				}
				if tableParts[tok.Data] {
					// A table part closes what is open in the table
					// back to the table's structure.
					for i := len(open) - 1; i >= 0 && open[i].name != "table"; i-- {
						if open[i].name == "p" {
							open[i].ended = true
						}
					}
				} else if paragraphEnders[tok.Data] {
				scope:
					for i := len(open) - 1; i >= 0; i-- {
						switch e := &open[i]; {
						case e.name == "p" && !e.ended:
							e.ended = true
							break scope
						case e.name == "table" || e.name == "td" || e.name == "th" || e.name == "caption":
							break scope
						}
					}
				}
				if tok.DataAtom == atom.P {
					paragraphs++
				}
				if !isVoid(tok.DataAtom) {
					open = append(open, element{name: tok.Data}) // <b/> opens b, as in a browser
				}
				for _, a := range tok.Attr {
					switch {
					case a.Key == "href" || a.Key == "src":
						if !design.SafeURL(strings.TrimSpace(a.Val)) {
							fail("%s=%q", a.Key, a.Val)
						}
					case a.Key == "style":
						for _, decl := range cssDeclarations(a.Val) {
							if scriptableDecl(decl) {
								fail("style declaration %q", decl)
							}
						}
					case !allowedAttr(a.Key) || strings.HasPrefix(a.Key, "on"):
						fail("attribute %q", a.Key)
					}
				}
			case html.EndTagToken:
				popEnded()
				if len(open) == 0 || open[len(open)-1].name != tok.Data {
					fail("end tag %q closes %v", tok.Data, open)
				}
				open = open[:len(open)-1]
			}
		}
		if popEnded(); len(open) > 0 {
			fail("left open: %v", open)
		}
		// x/net/html, as a browser, builds a paragraph for each <p> and
		// none of its own (as it does for a </p> with none open).
		if n := parsedParagraphs(out); n != paragraphs {
			fail("%d paragraphs parsed, %d written", n, paragraphs)
		}
	}
}

// paragraphEnders are the allowed elements at whose start tag a browser
// ends an open paragraph (said apart from the sanitiser's endsParagraph).
var paragraphEnders = map[string]bool{"blockquote": true, "center": true, "dd": true, "div": true,
	"dl": true, "dt": true, "h1": true, "h2": true, "h3": true, "h4": true, "h5": true, "h6": true,
	"hr": true, "li": true, "ol": true, "p": true, "pre": true, "table": true, "ul": true}

// parsedParagraphs is the number of paragraphs x/net/html builds of the
// rich text out, as in a block's div.
func parsedParagraphs(out string) int {
	nodes, err := html.ParseFragment(strings.NewReader(out), &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div})
	if err != nil {
		return -1
	}
	n := 0
	var walk func(c *html.Node)
	walk = func(c *html.Node) {
		if c.Type == html.ElementNode && c.DataAtom == atom.P {
			n++
		}
		for c := c.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for _, c := range nodes {
		walk(c)
	}
	return n
}

// tableParts are the elements a browser puts in the innermost open table
// (closing the cell or row they meet on the way).
var tableParts = map[string]bool{"caption": true, "colgroup": true, "col": true,
	"tbody": true, "thead": true, "tfoot": true, "tr": true, "td": true, "th": true}

// scriptableDecl is what no written style declaration may be, said
// apart from the sanitiser's own rule (declarationSafe) so that the two
// check each other.
func scriptableDecl(decl string) bool {
	l := []byte(decl)
	for i, c := range l {
		if 'A' <= c && c <= 'Z' {
			l[i] = c + 'a' - 'A'
		}
	}
	d := withoutComments(string(l))
	for _, word := range []string{"expression", "javascript:", "vbscript:", "script:", "behavior", "-moz-binding", "binding", "@import", `\`} {
		if strings.Contains(d, word) {
			return true
		}
	}
	for _, u := range cssURLs(d) {
		if !inertScheme(urlScheme(u), u) {
			return true
		}
	}
	if (strings.Contains(d, "url(") || strings.Contains(d, "image-set(") || strings.Contains(d, "position")) &&
		(strings.Contains(d, "var(") || strings.Contains(d, "attr(")) {
		return true // what it loads or where it goes is set elsewhere
	}
	return strings.Contains(d, "position") && (strings.Contains(d, "fixed") || strings.Contains(d, "absolute"))
}

func TestSanitizerInvariants(t *testing.T) {
	for _, src := range sanitizerSeeds {
		checkSanitized(t, src)
	}
}

var sanitizerSeeds = []string{
	`<p style="color:red">a&amp;b<br/></p>`, `<a href='x' title=y onclick="z()">z</a>`,
	`<P CLASS=x>`, `<input disabled />`, `<o:p></o:p>`, `<a href="&quot;&#39;">`,
	`<a href=" jAvA&#x09;script:alert(1)">x</a>`, `<img src="javascript:x" onerror="y">`,
	`<p style="width:expression(1);position:fixed;color:&quot;\61&quot;">x</p>`,
	`<b><i>x</b>y</i>`, `<div><span>x`, `x</div></span>y`, `<plaintext><script>x</script>`,
	`a<!--[if mso]><b>x</b><![endif]-->b`, `<svg><script>x</script><p>y</p></svg>z`,
	`<ul style="list-style:none"><li>a<li>b</ul>`, `<p>a</p><p style="margin:0">b</p>`,
	`<style>p{}</style><script>alert(1)</script><textarea><p></textarea>`,
	`<p>a</p><td>b</td></tr><tr><td>c`, `<table><tr><td>a</td></tr></table><caption>x`,
	`<p>a<div>b</div>c</p>`, `<p><b>a<table><tr><td><p>b<hr>c</td></tr></table>d</b></p>e</p>`, `<p>a<p>b<ul><li>c</p></li></ul>`,
	`<table><p>a<td>b`, `<table><tr><td><p>a<td>b</p>`,
	`<a href="&#102;ile://h/s">x</a><img src=" FILE://h/s"><a href="ms-msdt:/id">y</a><p style="background:url(smb://h/s)">z</p>`,
	`<p style="background:image-set(&quot;a;&quot; 2x, '//h/s.png' 1x);color:red">x</p><p style="background:image-set(/*;*/'file://h/s')">y</p>`,
	`<p style="width:expr/**/ession(alert(1));color:red">x</p>`,
}

// FuzzSanitizer: whatever the rich text, the sanitiser keeps its
// promises (see checkSanitized) and does not panic.
func FuzzSanitizer(f *testing.F) {
	for _, s := range sanitizerSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		checkSanitized(t, src)
	})
}

// TestSanitizerCorpus checks the sanitiser's promises on every HTML
// string of the own and corpus designs.
func TestSanitizerCorpus(t *testing.T) {
	designs := designtest.OwnAndCorpus(t, false)
	total := 0
	for _, name := range designtest.Names(designs) {
		d, err := design.Decode(designs[name])
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var walk func(v *design.Value)
		walk = func(v *design.Value) {
			switch v.Kind {
			case design.String:
				if strings.Contains(v.Str, "<") {
					total++
					checkSanitized(t, v.Str)
				}
			case design.Array, design.Object:
				for i := range v.Members {
					walk(&v.Members[i].Value)
				}
			}
		}
		walk(&d.Root)
	}
	if total == 0 {
		t.Fatalf("no HTML string found in %d designs: nothing was checked", len(designs))
	}
	t.Logf("checked %d HTML strings", total)
}

// TestStyleRulesStayClosed: a design value with an open quote or a CSS
// comment never reaches the <style> element, where the string or comment
// would run on over every rule after it (a button's :hover rule came
// before the whole @media block). Checked in each layout by reading the
// element as CSS does.
func TestStyleRulesStayClosed(t *testing.T) {
	const hostile = `{"page":{"body":{"container":{"style":{}},"content":{"style":{},"computedStyle":{}}},"rows":[{"container":{"style":{}},"content":{"style":{},"computedStyle":{}},"columns":[{"grid-columns":12,"modules":[
	 {"type":"mailup-bee-newsletter-modules-button","descriptor":{"button":{"label":"<p>GO</p>","href":"https://example.com/"},
	  "hoverStyle":{"border-top":"1px solid \"","border-left":"1px solid /*","color":"'red","border-right":"1px solid rgb(1,2,3","border-bottom":"1px solid [x","background-color":"#00ff00"},
	  "mobileStyle":{"font-size":"\"12px","width":"calc(100%"}}},
	 {"type":"mailup-bee-newsletter-modules-paragraph","descriptor":{"paragraph":{"html":"<p>hi</p>"},"style":{"font-family":"\"It's\", serif"},"mobileStyle":{"font-size":"14px*/"}}}]}]}]}}`
	d, err := design.Decode([]byte(hostile))
	if err != nil {
		t.Fatal(err)
	}
	for _, layout := range []Layout{LayoutEmail, LayoutPage, LayoutPopup} {
		t.Run(layout.String(), func(t *testing.T) {
			out, err := HTMLWithLimits(d, Limits{Layout: layout})
			if err != nil {
				t.Fatal(err)
			}
			body := string(out.Body)
			i, j := strings.Index(body, "<style>"), strings.Index(body, "</style>")
			if i < 0 || j < i {
				t.Fatal("no <style> element")
			}
			css := body[i+len("<style>") : j]
			var quote byte
			var blocks []byte // the ends of the ( and [ blocks open
			for k := 0; k < len(css); k++ {
				switch c := css[k]; {
				case c == quote:
					quote = 0
				case quote != 0:
				case c == '"' || c == '\'':
					quote = c
				case strings.HasPrefix(css[k:], "/*"):
					t.Fatalf("a comment opens in the <style> element: …%s…", css[max(k-40, 0):min(k+40, len(css))])
				case c == '(':
					blocks = append(blocks, ')')
				case c == '[':
					blocks = append(blocks, ']')
				case len(blocks) > 0 && c == blocks[len(blocks)-1]:
					blocks = blocks[:len(blocks)-1]
				case len(blocks) > 0 && c == '}':
					// In a ( or [ block a brace ends no rule: the block
					// runs on over the rules after it.
					t.Fatalf("a %q block is left open in a rule: …%s…", blocks, css[max(k-40, 0):min(k+40, len(css))])
				}
			}
			if quote != 0 {
				t.Errorf("a %c string is left open in the <style> element", quote)
			}
			if !strings.Contains(css, "background-color:#00ff00!important") {
				t.Error("the safe hover declaration is lost")
			}
			if layout != LayoutPopup && !strings.Contains(css, "@media") {
				t.Error("no @media block")
			}
		})
	}
}

// declarations splits an inline style where the sanitiser ends its
// declarations (declarationEnd).
func declarations(s string) []string {
	var out []string
	for {
		end := declarationEnd(s)
		out = append(out, s[:end])
		if end == len(s) {
			return out
		}
		s = s[end+1:]
	}
}

// declarationSafe is checkDeclaration's verdict alone.
func declarationSafe(decl string) bool {
	ok, _ := checkDeclaration(decl)
	return ok
}

// safeInlineStyle is checkInlineStyle's style alone.
func safeInlineStyle(s string) string {
	safe, _ := checkInlineStyle(s)
	return safe
}
