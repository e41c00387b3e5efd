package render

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// layoutOfFixture is the layout a testdata/layouts fixture is rendered
// in: its name starts with the layout's.
func layoutOfFixture(t *testing.T, name string) Layout {
	t.Helper()
	l, err := ParseLayout(strings.SplitN(name, "-", 2)[0])
	if err != nil || l == LayoutEmail {
		t.Fatalf("%s: a layout fixture's name starts with page- or popup-", name)
	}
	return l
}

// TestLayoutGolden renders every testdata/layouts/*.json in the layout its
// name starts with and compares the HTML with testdata/golden/layouts/
// (-update rewrites them).
func TestLayoutGolden(t *testing.T) {
	eachFixture(t, "testdata/layouts/*.json", func(t *testing.T, name string, data []byte) {
		layout := layoutOfFixture(t, name)
		d, out := renderDesign(t, data, Limits{Layout: layout})
		if len(out.Warnings) > 0 {
			t.Errorf("warnings: %q", out.Warnings)
		}
		checkWebLayout(t, d, out.Body, layout)
		golden := filepath.Join("testdata/golden/layouts", name+".html")
		matchGolden(t, golden, out.Body)
	})
}

// TestLayoutsOfFixtures renders every email fixture (testdata/fixtures)
// in the page and popup layouts too: the blocks are the same, so each
// must hold the layout's properties and render the same blocks as the
// email layout, with the same warnings.
func TestLayoutsOfFixtures(t *testing.T) {
	fixtures, err := filepath.Glob("testdata/fixtures/*.json")
	if err != nil || len(fixtures) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range fixtures {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		d, err := design.Decode(data)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		email, err := HTML(d)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, layout := range []Layout{LayoutPage, LayoutPopup} {
			t.Run(filepath.Base(f)+"/"+layout.String(), func(t *testing.T) {
				out, err := HTMLWithLimits(d, Limits{Layout: layout})
				if err != nil {
					t.Fatal(err)
				}
				checkWebLayout(t, d, out.Body, layout)
				if got, want := strings.Join(out.Warnings, "\n"), strings.Join(email.Warnings, "\n"); got != want {
					t.Errorf("warnings %q, the email layout's %q", got, want)
				}
				if got, want := blockClasses(t, out.Body, layout), blockClasses(t, email.Body, LayoutEmail); got != want {
					t.Errorf("blocks\n%s\nthe email layout's\n%s", got, want)
				}
			})
		}
	}
}

// TestLayoutOption: the zero Limits is the email layout, and a layout
// that is none of the three is refused, not rendered.
func TestLayoutOption(t *testing.T) {
	d := mustDecode(t, "testdata/fixtures/row-columns.json")
	email, err := HTML(d)
	if err != nil {
		t.Fatal(err)
	}
	explicit, err := HTMLWithLimits(d, Limits{Layout: LayoutEmail})
	if err != nil || !bytes.Equal(email.Body, explicit.Body) {
		t.Fatalf("LayoutEmail differs from the default: %v", err)
	}
	for _, l := range []Layout{-1, LayoutPopup + 1} {
		if out, err := HTMLWithLimits(d, Limits{Layout: l}); err == nil || out != nil {
			t.Errorf("layout %v: %v, %v", l, out, err)
		}
	}
	for _, l := range []Layout{LayoutEmail, LayoutPage, LayoutPopup} {
		if got, err := ParseLayout(l.String()); err != nil || got != l {
			t.Errorf("ParseLayout(%q) = %v, %v", l.String(), got, err)
		}
	}
	if _, err := ParseLayout("message"); err == nil {
		t.Error(`ParseLayout("message") accepted`)
	}
}

func mustDecode(t *testing.T, path string) *design.Design {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d, err := design.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestScopeRules: every selector of a popup's rules gets the container in
// front, lists and all.
func TestScopeRules(t *testing.T) {
	for _, tt := range []struct{ css, want string }{
		{"", ""},
		{"*{box-sizing:border-box}", ".p *{box-sizing:border-box}"},
		{"sup,sub{font-size:75%}p{margin:0}", ".p sup,.p sub{font-size:75%}.p p{margin:0}"},
		{".m3 td.pad{padding:0!important;font-family:a, b}", ".p .m3 td.pad{padding:0!important;font-family:a, b}"},
		{".db-stack.db-reverse{display:flex}", ".p .db-stack.db-reverse{display:flex}"},
	} {
		var b bytes.Buffer
		scopeRules(&b, ".p", tt.css)
		if b.String() != tt.want {
			t.Errorf("scopeRules(%q) = %q, want %q", tt.css, b.String(), tt.want)
		}
	}
}

// blockClasses lists, in document order, the class of every block's
// outermost element (the *_block tables the block renderers write).
func blockClasses(t *testing.T, body []byte, layout Layout) string {
	t.Helper()
	var out []string
	walkElements(parseLayout(t, body, layout), func(n *html.Node) bool {
		cls := attr(n, "class")
		for _, c := range strings.Fields(cls) {
			if strings.HasSuffix(c, "_block") {
				out = append(out, c)
				return false // an html block's own markup does not count
			}
		}
		return true
	})
	return strings.Join(out, " ")
}

func parseLayout(t *testing.T, body []byte, layout Layout) *html.Node {
	t.Helper()
	if layout != LayoutPopup {
		doc, err := html.Parse(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return doc
	}
	nodes, err := html.ParseFragment(bytes.NewReader(body), &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body})
	if err != nil {
		t.Fatal(err)
	}
	root := &html.Node{Type: html.DocumentNode}
	for _, n := range nodes {
		root.AppendChild(n)
	}
	return root
}

// walkElements calls f on every element in document order, not going
// below an element for which f returns false.
func walkElements(n *html.Node, f func(*html.Node) bool) {
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if c.Type == html.ElementNode && !f(c) {
			continue
		}
		walkElements(c, f)
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func hasClass(n *html.Node, cls string) bool {
	for _, c := range strings.Fields(attr(n, "class")) {
		if c == cls {
			return true
		}
	}
	return false
}

// checkWebLayout checks what every page and popup must be: rows and
// columns are divs (div.db-row > div.db-row-content > div.db-col, one per row and
// column of the design), tables only inside blocks, one <style> element
// (in the head of a page; inside the container of a popup, all its rules
// scoped to it), a page's document frame, a popup a fragment, and nothing
// able to run script outside the html block.
func checkWebLayout(t *testing.T, d *design.Design, body []byte, layout Layout) {
	t.Helper()
	doc := parseLayout(t, body, layout)
	var rows, styles []*html.Node
	var walk func(n *html.Node, inBlock bool)
	walk = func(n *html.Node, inBlock bool) {
		if n.Type == html.ElementNode {
			if strings.Contains(attr(n, "class"), "_block") {
				inBlock = true
			}
			// An html block's own markup is the design's, sanitised
			// as in the email layout (sanitize_test.go).
			if renderedHTMLBlock(n) {
				return
			}
			switch {
			case n.DataAtom == atom.Table && !inBlock:
				t.Errorf("a layout table outside any block: %v", n.Attr)
			case n.DataAtom == atom.Div && hasClass(n, "db-row"):
				rows = append(rows, n)
			case n.DataAtom == atom.Style:
				styles = append(styles, n)
			}
			checkInert(t, n)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inBlock)
		}
	}
	walk(doc, false)
	if len(rows) != len(d.Page.Rows) {
		t.Errorf("%d div.db-row, the design has %d rows", len(rows), len(d.Page.Rows))
	}
	for i, row := range rows {
		if i >= len(d.Page.Rows) {
			break
		}
		var content *html.Node
		for c := row.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && hasClass(c, "db-row-content") {
				content = c
			}
		}
		if content == nil {
			t.Errorf("row %d: no div.db-row-content", i+1)
			continue
		}
		if !strings.Contains(attr(content, "style"), "display:flex") {
			t.Errorf("row %d: the row content is not a flex container: %q", i+1, attr(content, "style"))
		}
		cols := 0
		for c := content.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && c.DataAtom == atom.Div && hasClass(c, "db-col") {
				cols++
			}
		}
		if want := len(d.Page.Rows[i].Columns); cols != want {
			t.Errorf("row %d: %d div.db-col, the design has %d columns", i+1, cols, want)
		}
	}
	if len(styles) != 1 {
		t.Fatalf("%d <style> elements, want 1", len(styles))
	}
	st := styles[0]
	if layout == LayoutPage {
		if st.Parent == nil || st.Parent.DataAtom != atom.Head {
			t.Error("<style> outside the head")
		}
		checkFrame(t, doc)
		return
	}
	// A popup is a fragment: one container div, holding its style.
	trimmed := bytes.TrimSpace(body)
	if !bytes.HasPrefix(trimmed, []byte(`<div class="`+popupContainer+`"`)) || !bytes.HasSuffix(trimmed, []byte("</div>")) {
		t.Errorf("a popup is not one container div: %.80s…%.20s", trimmed, trimmed[max(len(trimmed)-20, 0):])
	}
	for _, tag := range []string{"<!doctype", "<html", "<head", "<body"} {
		if bytes.Contains(bytes.ToLower(body), []byte(tag)) {
			t.Errorf("a popup fragment holds %s", tag)
		}
	}
	if st.Parent == nil || !hasClass(st.Parent, popupContainer) {
		t.Error("the popup's <style> is not in its container")
	}
	if st.FirstChild != nil {
		checkScoped(t, st.FirstChild.Data)
	}
}

// checkFrame checks a page's document frame: language, title, viewport,
// character set.
func checkFrame(t *testing.T, doc *html.Node) {
	t.Helper()
	var lang, title, viewport, charset bool
	walkElements(doc, func(n *html.Node) bool {
		switch n.DataAtom {
		case atom.Html:
			lang = attr(n, "lang") != ""
		case atom.Title:
			title = true
		case atom.Meta:
			viewport = viewport || attr(n, "name") == "viewport"
			charset = charset || attr(n, "charset") != ""
		}
		return true
	})
	if !lang || !title || !viewport || !charset {
		t.Errorf("document frame: lang=%v title=%v viewport=%v charset=%v", lang, title, viewport, charset)
	}
}

// checkScoped checks that every selector of css (rules, possibly in
// @media blocks) starts with the popup's container class.
func checkScoped(t *testing.T, css string) {
	t.Helper()
	for css != "" {
		open := strings.IndexByte(css, '{')
		end := strings.IndexByte(css, '}')
		switch {
		case end >= 0 && (open < 0 || end < open):
			// The end of an @media block.
			css = css[end+1:]
			continue
		case open < 0:
			t.Errorf("CSS ends with %q", css)
			return
		}
		sel := strings.TrimSpace(css[:open])
		css = css[open+1:]
		if strings.HasPrefix(sel, "@media") {
			continue
		}
		for _, s := range strings.Split(sel, ",") {
			if !strings.HasPrefix(strings.TrimSpace(s), "."+popupContainer+" ") {
				t.Errorf("popup rule not scoped to its container: %q", s)
			}
		}
		end = strings.IndexByte(css, '}')
		if end < 0 {
			t.Errorf("unterminated rule %q", sel)
			return
		}
		css = css[end+1:]
	}
}

// TestLayoutHostileValues: design values in the places the web layouts
// put them (the page's body and container, the popup's container, the
// page's description, the rows' and columns' boxes, the @media rules the
// popup scopes) go through the email layout's checks: none can end a
// declaration, a rule, the <style> element or an attribute.
func TestLayoutHostileValues(t *testing.T) {
	const evil = `{"page":{
	 "head":{"meta":{"title":"</title><script>alert(1)</script>","description":"\"><script>alert(1)</script>","lang":"en\"><script>"}},
	 "body":{"container":{"style":{"background-color":"red;}</style><script>alert(1)</script>","background-image":"url(javascript:alert(1))"}},
	  "content":{"style":{"font-family":"x;position:fixed}</style><script>alert(1)</script>","color":"red;background:url(javascript:alert(1))"},
	   "computedStyle":{"messageWidth":"500px","messageWidthMobile":"250px","linkColor":"expression(alert(1))"}}},
	 "rows":[{"container":{"style":{"background-color":"red}body{display:none","background-image":"url('https://x.test/a.png');}*{position:fixed"}},
	  "content":{"style":{"background-color":"blue;position:fixed","border-radius":"4px}*{x:y","color":"expression(alert(1))"},
	   "computedStyle":{"rowColStackOnMobile":true,"columnsSpacing":"10px","columnsBorderRadius":"2px;position:fixed"},
	   "mobileStyle":{"padding-top":"1px}*{x:y"}},
	  "columns":[
	   {"grid-columns":6,"style":{"background-color":"green}*{position:fixed","padding-top":"5px;position:fixed","border-top":"1px solid red}*{x:y"},"modules":[
	    {"type":"mailup-bee-newsletter-modules-paragraph","descriptor":{"paragraph":{"html":"<p>hi</p>"},"style":{"padding-top":"10px"},
	     "mobileStyle":{"font-size":"1px}*{position:fixed}","line-height":"</style><script>alert(1)</script>"}}}]},
	   {"grid-columns":6,"style":{},"modules":[
	    {"type":"mailup-bee-newsletter-modules-button","descriptor":{"button":{"label":"<p>Go</p>","href":"https://x.test/"},
	     "hoverStyle":{"background-color":"red}</style><script>alert(1)</script>","color":"red;x:y","border-top":"1px solid red}*{position:fixed",
	      "border-left":"expression(alert(1))","border-right":"1px solid url(javascript:alert(1))","border-bottom":"2px solid #00ff00"}}}]}]}]}}`
	d, err := design.Decode([]byte(evil))
	if err != nil {
		t.Fatal(err)
	}
	for _, layout := range []Layout{LayoutPage, LayoutPopup} {
		t.Run(layout.String(), func(t *testing.T) {
			out, err := HTMLWithLimits(d, Limits{Layout: layout})
			if err != nil {
				t.Fatal(err)
			}
			checkWebLayout(t, d, out.Body, layout)
			low := strings.ToLower(string(out.Body))
			for _, bad := range []string{"<script", "javascript:", "expression(", "position:fixed", "x:y", "display:none}"} {
				if strings.Contains(low, bad) {
					i := strings.Index(low, bad)
					t.Errorf("%q in the output: …%s…", bad, out.Body[max(i-60, 0):min(i+40, len(out.Body))])
				}
			}
			if n := strings.Count(low, "</style>"); n != 1 {
				t.Errorf("%d </style>", n)
			}
			// The button's hover rule keeps only its safe declaration.
			hover := ".m2 .bt:hover{border-bottom:2px solid #00ff00!important;}"
			if layout == LayoutPopup {
				hover = ".db-popup " + hover
			}
			if !strings.Contains(string(out.Body), hover) {
				t.Errorf("no %s", hover)
			}
		})
	}
}

// TestLayoutBounds: the page and popup layouts are held to the email
// layout's output bounds: the amplification designs stay within the
// amplification bound, and a document of exactly MaxOutput bytes is
// rendered while one byte less is refused (the popup's scoped rules, which
// grow in assembly, included).
func TestLayoutBounds(t *testing.T) {
	for _, layout := range []Layout{LayoutPage, LayoutPopup} {
		for _, a := range designtest.Amplifiers() {
			t.Run(layout.String()+"/"+a.Name, func(t *testing.T) {
				d, err := design.Decode(a.JSON)
				if err != nil {
					t.Fatal(err)
				}
				out, err := HTMLWithLimits(d, Limits{MaxOutput: 1 << 30, Layout: layout})
				if err != nil {
					t.Fatal(err)
				}
				if bound := ampK*len(a.JSON) + ampC; len(out.Body) > bound {
					t.Errorf("%d bytes of JSON: %d bytes of HTML; the bound is %d", len(a.JSON), len(out.Body), bound)
				}
				n := len(out.Body)
				if _, err := HTMLWithLimits(d, Limits{MaxOutput: n, Layout: layout}); err != nil {
					t.Errorf("limit = size %d: %v", n, err)
				}
				if out, err := HTMLWithLimits(d, Limits{MaxOutput: n - 1, Layout: layout}); !errors.Is(err, ErrOutputTooLarge) || out != nil {
					t.Errorf("limit %d for %d bytes: %v, want ErrOutputTooLarge", n-1, n, err)
				}
			})
		}
	}
}

// FuzzWebLayouts feeds arbitrary documents through Decode and the page
// and popup layouts: rendering must never panic, must be deterministic,
// and must refuse and warn as the email layout does (the blocks are the
// same code).
func FuzzWebLayouts(f *testing.F) {
	for _, pattern := range []string{"testdata/fixtures/*.json", "testdata/layouts/*.json"} {
		files, _ := filepath.Glob(pattern)
		for _, p := range files {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := design.Decode(data)
		if err != nil {
			return
		}
		email, emailErr := HTML(d)
		for _, layout := range []Layout{LayoutPage, LayoutPopup} {
			out, err := HTMLWithLimits(d, Limits{Layout: layout})
			if (err == nil) != (emailErr == nil) {
				t.Fatalf("%s: %v, the email layout: %v", layout, err, emailErr)
			}
			if err != nil {
				continue
			}
			again, _ := HTMLWithLimits(d, Limits{Layout: layout})
			if !bytes.Equal(out.Body, again.Body) {
				t.Fatalf("%s: not deterministic", layout)
			}
			if strings.Join(out.Warnings, "\n") != strings.Join(email.Warnings, "\n") {
				t.Fatalf("%s: warnings %q, the email layout's %q", layout, out.Warnings, email.Warnings)
			}
		}
	})
}

// BenchmarkLayouts measures HTML rendering of an already decoded design in
// each layout (the page and popup layouts share the blocks, so their cost
// should be the email layout's, give or take the frame).
func BenchmarkLayouts(b *testing.B) {
	names, corpus := sortedCorpus(b)
	for _, name := range names {
		d, err := design.Decode(corpus[name])
		if err != nil {
			b.Fatal(err)
		}
		for _, layout := range []Layout{LayoutEmail, LayoutPage, LayoutPopup} {
			b.Run(name+"/"+layout.String(), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(corpus[name])))
				for b.Loop() {
					out, err := HTMLWithLimits(d, Limits{Layout: layout})
					if err != nil {
						b.Fatal(err)
					}
					out.Release()
				}
			})
		}
	}
}

// TestPopupLang: a popup names its language only when the design does;
// otherwise it takes the host page's (a page always has one, "und" when
// the design names none).
func TestPopupLang(t *testing.T) {
	for _, tt := range []struct{ meta, popup, page string }{
		{``, `<div class="db-popup" style=`, `<html lang="und">`},
		{`"head":{"meta":{"lang":"pt_BR"}},`, `<div class="db-popup" lang="pt-BR" style=`, `<html lang="pt-BR">`},
		{`"head":{"meta":{"lang":"en\"><b>"}},`, `<div class="db-popup" style=`, `<html lang="und">`},
	} {
		d, err := design.Decode([]byte(`{"page":{` + tt.meta + `"rows":[]}}`))
		if err != nil {
			t.Fatal(err)
		}
		for layout, want := range map[Layout]string{LayoutPopup: tt.popup, LayoutPage: tt.page} {
			out, err := HTMLWithLimits(d, Limits{Layout: layout})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(out.Body, []byte(want)) {
				t.Errorf("%s with %s: want %s in %.120s", layout, tt.meta, want, out.Body)
			}
		}
	}
}
