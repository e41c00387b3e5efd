package render

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
	"github.com/designbridge/caddy-designbridge/testutil/inventory"
)

func TestFragmentText(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "Hello world", "Hello world"},
		{"whitespace collapses", "  Hello \n\t  world  ", "Hello world"},
		{"entities decoded", "Fish &amp; chips &lt;3 &quot;x&quot; &#8364;5 caf&eacute;", `Fish & chips <3 "x" €5 café`},
		{"nbsp is a space", "a&nbsp;&nbsp;b", "a b"},
		{"zero width dropped", "a&zwnj;&#8203;b&#xFEFF;", "ab"},
		{"tags stripped", `<p style="margin:0"><span style="font-size:14px"><strong>Bold</strong> and <em>it</em></span></p>`, "Bold and it"},
		{"paragraphs blank line", "<p>One</p><p>Two</p>", "One\n\nTwo"},
		{"empty paragraphs vanish", "<p>One</p><p>&nbsp;</p><p><br></p><p>Two</p>", "One\n\nTwo"},
		{"br is a line break", "a<br>b<br/>c", "a\nb\nc"},
		{"double br is a blank line", "a<br><br><br>b", "a\n\nb"},
		{"trailing br ignored", "<p>a<br></p>", "a"},
		{"div is a line", "<div>a</div><div>b</div>", "a\nb"},
		{"tinymce wrapper", `<div class="txtTinyMce-wrapper" style="line-height:14px"><p style="font-size:12px" data-mce-style="font-size:12px">First</p><p>Second</p></div>`, "First\n\nSecond"},
		{"heading own paragraph", "intro<h1>Title</h1>body", "intro\n\nTitle\n\nbody"},
		{"link", `Visit <a href="https://example.com/x?a=1&amp;b=2">our shop</a> now`, "Visit our shop (https://example.com/x?a=1&b=2) now"},
		{"link label is url", `<a href="https://www.example.com/">www.example.com</a>`, "www.example.com"},
		{"mailto label is address", `<a href="mailto:info@example.com">info@example.com</a>`, "info@example.com"},
		{"link without label", `<a href="https://example.com/u"></a>`, "https://example.com/u"},
		{"empty href", `<a href="">label</a>`, "label"},
		{"hash href", `<a href="#">label</a>`, "label"},
		{"javascript href", `<a href="javascript:void(0)">label</a>`, "label"},
		{"linked image alt", `<a href="https://example.com"><img src="logo.png" alt="Logo"></a>`, "Logo (https://example.com)"},
		{"linked image no alt", `<a href="https://example.com/p"><img src="logo.png"></a>`, "https://example.com/p"},
		{"image alt inline", `Hi<img alt="smile" src="s.png">there`, "Hi smile there"},
		{"image without alt", `<img src="s.png">`, ""},
		{"merge tags untouched", `<p>Hi {{ customer.first_name }}, {{customText[Dear|Hello]}} $product_reco[2].price$</p>`, "Hi {{ customer.first_name }}, {{customText[Dear|Hello]}} $product_reco[2].price$"},
		{"merge tag href", `<a href="{{ unsubscribe_link }}">Unsubscribe</a>`, "Unsubscribe ({{ unsubscribe_link }})"},
		{"merge tag href with entity", `<a href="https://x.test/?u={{id}}&amp;l=$list$">go</a>`, "go (https://x.test/?u={{id}}&l=$list$)"},
		{"list", `<ul start="1"><li>one</li><li>two</li></ul>`, "- one\n- two"},
		{"ordered list", `<ol><li>one</li><li>two</li></ol>`, "- one\n- two"},
		{"list after paragraph", `<p>Items:</p><ul><li>one</li></ul><p>after</p>`, "Items:\n\n- one\n\nafter"},
		{"list items with paragraphs", `<ul><li><p>one</p></li><li><p>two</p></li></ul>`, "- one\n- two"},
		{"nested list", `<ul><li>a<ul><li>a1</li><li>a2</li></ul></li><li>b</li></ul>`, "- a\n  - a1\n  - a2\n- b"},
		{"empty item", `<ul><li></li><li>b</li></ul>`, "- b"},
		{"style and script skipped", `<style>p{color:red}</style><p>x</p><script>alert(1)</script>`, "x"},
		{"comments skipped", `a<!--[if mso]><table><tr><td><![endif]-->b`, "ab"},
		{"table cells on lines", `<table><tr><td>a</td><td>b</td></tr><tr><td>c</td></tr></table>`, "a\nb\nc"},
		{"unclosed tags", `<p><b>bold <a href="https://e.test">open`, "bold open (https://e.test)"},
		{"nested anchors end the outer", `<a href="https://a.test">A<a href="https://b.test">B</a></a>`, "A (https://a.test)B (https://b.test)"},
		{"bare ampersand", "Tom & Jerry", "Tom & Jerry"},
		{"hair space spacer", "<div>&#8202;</div>", ""},
		{"newline in href dropped", "<a href=\"https://e.test/\na\">x</a>", "x (https://e.test/a)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := fragmentText(tc.in); got != tc.want {
				t.Errorf("fragmentText(%q)\n got %q\nwant %q", tc.in, got, tc.want)
			}
		})
	}
}

// updateGolden rewrites the golden files under testdata/ instead of
// comparing with them: go test ./render -run PlainText -update
var updateGolden = flag.Bool("update", false, "rewrite golden files under testdata/")

// designJSON wraps rows (a JSON array) into a minimal design document.
func designJSON(rows string) string {
	return `{"page":{"title":"","description":"","template":{"name":"template-base","type":"basic","version":"2.0.0"},` +
		`"body":{"type":"mailup-bee-page-properties","container":{"style":{"background-color":"#FFFFFF"}},` +
		`"content":{"style":{"font-family":"Arial, sans-serif","color":"#000000"},"computedStyle":{"messageWidth":"600px","linkColor":"#0068A5"}},"webFonts":[]},` +
		`"rows":` + rows + `}}`
}

// row builds a row whose columns hold the given modules (JSON arrays).
func row(extra string, columns ...string) string {
	cols := make([]string, len(columns))
	for i, c := range columns {
		cols[i] = fmt.Sprintf(`{"grid-columns":%d,"modules":%s,"style":{"background-color":"transparent","padding-top":"5px","padding-right":"0px","padding-bottom":"5px","padding-left":"0px"}}`, 12/len(columns), c)
	}
	r := `{"type":"","columns":[` + strings.Join(cols, ",") + `],"container":{"style":{"background-color":"transparent"}},"content":{"style":{"width":"600px"},"computedStyle":{"rowColStackOnMobile":true}}`
	if extra != "" {
		r += "," + extra
	}
	return r + "}"
}

func module(kind, descriptor string) string {
	return `{"type":"mailup-bee-newsletter-modules-` + kind + `","descriptor":` + descriptor + `}`
}

func paragraph(html string) string {
	return module("paragraph", `{"paragraph":{"html":`+strconv.Quote(html)+`,"style":{"font-size":"16px"}},"style":{"padding-top":"10px"}}`)
}

func heading(text string) string {
	return module("heading", `{"heading":{"title":"h1","text":`+strconv.Quote(text)+`},"style":{}}`)
}

func mods(ms ...string) string { return "[" + strings.Join(ms, ",") + "]" }

func TestPlainText(t *testing.T) {
	tests := []struct {
		name         string
		rows         string
		want         string
		wantWarnings []string
	}{
		{
			name: "empty design",
			rows: `[]`,
			want: "",
		},
		{
			name: "reading order: rows, then columns left to right, then modules top to bottom",
			rows: "[" + row("", mods(heading("A1"), paragraph("<p>A2</p>")), mods(paragraph("<p>B1</p>"), paragraph("<p>B2</p>"))) + "," +
				row("", mods(paragraph("<p>C1</p>")), mods(), mods(paragraph("<p>E1</p>"))) + "]",
			want: "A1\n\nA2\n\nB1\n\nB2\n\nC1\n\nE1\n",
		},
		{
			name: "heading html and paragraph with several paragraphs",
			rows: "[" + row("", mods(heading(`<span class="tinyMce-placeholder"><strong>BURGER</strong> MONTH</span>`), paragraph(`<p>One&nbsp;line.</p><p>Second<br>line &amp; more.</p>`))) + "]",
			want: "BURGER MONTH\n\nOne line.\n\nSecond\nline & more.\n",
		},
		{
			name: "legacy text module",
			rows: "[" + row("", mods(module("text", `{"text":{"html":"<div class=\"txtTinyMce-wrapper\" style=\"font-size:12px\"><p style=\"margin:0\" data-mce-style=\"margin:0\">Hi {{accLname}},</p><p>Welcome.</p></div>","style":{"color":"#555555"}}}`))) + "]",
			want: "Hi {{accLname}},\n\nWelcome.\n",
		},
		{
			name: "button",
			rows: "[" + row("", mods(module("button", `{"button":{"label":"<div class=\"txtTinyMce-wrapper\"><p style=\"word-break:break-word\">Get Started</p></div>","href":"https://example.com/start?a=1&b=2","target":"_blank","style":{}},"style":{"text-align":"center"}}`))) + "]",
			want: "Get Started (https://example.com/start?a=1&b=2)\n",
		},
		{
			name: "button without link",
			rows: "[" + row("", mods(module("button", `{"button":{"label":"<p>Button</p>","href":""}}`))) + "]",
			want: "Button\n",
		},
		{
			name: "images: linked with alt, alt only, linked without alt, neither",
			rows: "[" + row("", mods(
				module("image", `{"image":{"src":"https://cdn.test/logo.png","alt":"ACME logo","href":"https://acme.test/"}}`),
				module("image", `{"image":{"src":"https://cdn.test/hero.png","alt":"Summer sale","href":""}}`),
				module("image", `{"image":{"src":"https://cdn.test/x.png","alt":"","href":"https://acme.test/x"}}`),
				module("image", `{"image":{"src":"https://cdn.test/y.png","alt":"","href":""}}`),
			)) + "]",
			want: "ACME logo (https://acme.test/)\n\nSummer sale\n\nhttps://acme.test/x\n",
		},
		{
			name: "list module",
			rows: "[" + row("", mods(module("list", `{"list":{"tag":"ul","html":"<ul start=\"1\"><li>This is an unordered list</li><li>With <a href=\"https://l.test\">a link</a></li></ul>"}}`))) + "]",
			want: "- This is an unordered list\n- With a link (https://l.test)\n",
		},
		{
			name: "html module drops style and script",
			rows: "[" + row("", mods(module("html", `{"html":{"html":"<style>.x{color:red}</style><div class=\"x\"><h2>Card</h2><p>Body</p></div><script>x()</script>"}}`))) + "]",
			want: "Card\n\nBody\n",
		},
		{
			name: "social icons by alt text, one per line",
			rows: "[" + row("", mods(module("social", `{"iconsList":{"icons":[`+
				`{"type":"follow","name":"Facebook","text":"","image":{"src":"https://r.test/facebook@2x.png","prefix":"https://www.facebook.com/","href":"https://www.facebook.com/acme","alt":"Facebook","title":"Facebook"}},`+
				`{"type":"follow","name":"Twitter","text":"","image":{"src":"https://r.test/twitter@2x.png","href":"https://twitter.com/acme","alt":"","title":""}}]},"computedStyle":{"iconsDefaultWidth":32}}`))) + "]",
			want: "Facebook (https://www.facebook.com/acme)\nTwitter (https://twitter.com/acme)\n",
		},
		{
			name: "icons module",
			rows: "[" + row("", mods(module("icons", `{"iconsList":{"icons":[`+
				`{"image":"https://r.test/a.png","href":"","text":"Random Times","alt":""},`+
				`{"image":"https://r.test/b.png","href":"https://store.test","text":"","alt":"App Store"},`+
				`{"image":"https://r.test/c.png","href":"","text":"","alt":""}]}}`))) + "]",
			want: "Random Times\nApp Store (https://store.test)\n",
		},
		{
			name: "menu",
			rows: "[" + row("", mods(module("menu", `{"menuItemsList":{"items":[{"text":"Home","link":{"href":"www.example.com","target":"_self"}},{"text":"Terms &amp; Conditions","link":{"href":"","target":"_self"}}]},"computedStyle":{"separator":"|"}}`))) + "]",
			want: "Home (www.example.com)\nTerms & Conditions\n",
		},
		{
			name: "table module",
			rows: "[" + row("", mods(module("table", `{"table":{"content":{"headers":[{"cells":[{"html":"Item"},{"html":"<b>Price</b>"}]}],"rows":[{"cells":[{"html":"Tea"},{"html":"$3"}]},{"cells":[{"html":""},{"html":""}]},{"cells":[{"html":"Cake &amp; cream"},{"html":"$5"}]}]}}}`))) + "]",
			want: "Item | Price\nTea | $3\nCake & cream | $5\n",
		},
		{
			name: "video by thumbnail alt text",
			rows: "[" + row("", mods(module("video", `{"video":{"src":"https://www.youtube.com/watch?v=abc","mode":"thumbnail","thumbSrc":"https://img.test/t.jpg","thumbAlt":"Watch the launch","iconType":2}}`))) + "]",
			want: "Watch the launch (https://www.youtube.com/watch?v=abc)\n",
		},
		{
			name: "dividers, spacers, empty modules and forms write nothing",
			rows: "[" + row("", mods(
				paragraph("<p>before</p>"),
				module("divider", `{"divider":{"style":{"border-top":"1px solid #BBBBBB","width":"100%"}},"computedStyle":{"align":"center"}}`),
				module("spacer", `{"spacer":{"style":{"height":"20px"}}}`),
				module("empty", `[]`),
				module("form", `{"form":{"structure":{"title":"Sign up","fields":{"email":{"type":"email","label":"Email"}},"layout":[["email"]]}}}`),
				paragraph("<p>after</p>"),
			)) + "]",
			want:         "before\n\nafter\n",
			wantWarnings: []string{"form module omitted from the plain text (email clients cannot submit forms) at page.rows[0].columns[0].modules[4]"},
		},
		{
			name: "blocks hidden on desktop are left out, blocks hidden on mobile kept",
			rows: "[" + row("", mods(
				module("paragraph", `{"paragraph":{"html":"<p>desktop</p>"},"computedStyle":{"hideContentOnMobile":true}}`),
				module("paragraph", `{"paragraph":{"html":"<p>mobile</p>"},"computedStyle":{"hideContentOnDesktop":true}}`),
			)) + "," + row(`"content":{"computedStyle":{"hideContentOnDesktop":true}}`, mods(paragraph("<p>mobile row</p>"))) + "]",
			want: "desktop\n",
		},
		{
			name: "display condition wraps the row's text",
			rows: "[" + row(`"container":{"style":{},"displayCondition":{"type":"BEE_CUSTOM_DISPLAY_CONDITION","label":"reco","before":"{ SPLIO PRODUCT_RECO 4 }","after":"{ SPLIO ENDPRODUCT_RECO }"}}`, mods(paragraph("<p>$product_reco[1].name$</p>"))) + "]",
			want: "{ SPLIO PRODUCT_RECO 4 }\n\n$product_reco[1].name$\n\n{ SPLIO ENDPRODUCT_RECO }\n",
		},
		{
			name: "merge tags untouched in text and links",
			rows: "[" + row("", mods(paragraph(`<p>Hi {{ customer.first_name }}, {{customText[Dear|Hello]}}</p><p><a href="{{ unsubscribe_link }}">Unsubscribe</a> | <a href="https://x.test/?id=$user_id$&amp;l={{list}}">Prefs</a></p>`))) + "]",
			want: "Hi {{ customer.first_name }}, {{customText[Dear|Hello]}}\n\nUnsubscribe ({{ unsubscribe_link }}) | Prefs (https://x.test/?id=$user_id$&l={{list}})\n",
		},
		{
			name:         "script links are not printed, and are warned of",
			rows:         "[" + row("", mods(module("button", `{"button":{"label":"<p>Click</p>","href":"javascript:alert(1)"}}`))) + "]",
			want:         "Click\n",
			wantWarnings: []string{`URL of "href" dropped (URL scheme "javascript:" not allowed) at page.rows[0].columns[0].modules[0]`},
		},
		{
			name: "unknown module types are warned about once per type",
			rows: "[" + row("", mods(paragraph("<p>x</p>"), module("carousel", `{"carousel":{"slides":[{"type":"image","alt":"s","src":"https://s.test/1.png"}]}}`))) + "," +
				row("", mods(module("carousel", `{}`), module("carousel", `{}`), module("x-\u00e9", `{}`))) + "]",
			want: "x\n",
			wantWarnings: []string{
				`unknown module type "mailup-bee-newsletter-modules-carousel" omitted at page.rows[0].columns[0].modules[1] (and 2 more)`,
				`unknown module type "mailup-bee-newsletter-modules-x-\u00e9" omitted at page.rows[1].columns[0].modules[2]`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := design.Decode([]byte(designJSON(tc.rows)))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			out, err := PlainText(d)
			if err != nil {
				t.Fatalf("PlainText: %v", err)
			}
			if got := string(out.Body); got != tc.want {
				t.Errorf("text\n got %q\nwant %q", got, tc.want)
			}
			if !slices.Equal(out.Warnings, tc.wantWarnings) {
				t.Errorf("warnings\n got %q\nwant %q", out.Warnings, tc.wantWarnings)
			}
		})
	}
}

func TestPlainTextNilDesign(t *testing.T) {
	if _, err := PlainText(nil); err == nil {
		t.Fatal("want an error for a nil design")
	}
}

// corpusDesigns lists the designs the plain-text goldens cover: the
// project's own (under "fixture-…" and "starter-…") and, when configured,
// the third-party corpus's whole designs with the pairs' popups (under
// "pairs__…"), each design once.
func corpusDesigns(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	seen := map[string]bool{} // contents, so that copies are rendered once
	all := designtest.OwnAndCorpus(t, true)
	for _, name := range designtest.Names(all) {
		data := all[name]
		if seen[string(data)] {
			continue
		}
		seen[string(data)] = true
		out[strings.Replace(name, "pairs-", "pairs__", 1)] = data
	}
	return out
}

// TestPlainTextCorpus renders every design and compares with its golden:
// for the project's own designs the text in testdata/plaintext/<name>.txt,
// for the third-party corpus only a SHA-256 of it in
// testdata/plaintext/corpus.sha256, so that the repository holds none of
// that corpus's text (rewrite both with -update, then read the diff). It
// also checks properties that hold for any design: the output is
// deterministic, carries no markup, and contains the design's texts and
// links in reading order.
func TestPlainTextCorpus(t *testing.T) {
	designs := corpusDesigns(t)
	names := slices.Sorted(maps.Keys(designs))
	digestFile := filepath.Join("testdata", "plaintext", "corpus.sha256")
	digests, err := readDigests(digestFile)
	if err != nil && !*updateGolden {
		t.Fatal(err)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			d, err := design.Decode(designs[name])
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			out, err := PlainText(d)
			if err != nil {
				t.Fatalf("PlainText: %v", err)
			}
			again, _ := PlainText(d)
			if !bytes.Equal(out.Body, again.Body) {
				t.Error("two renderings of the same design differ")
			}
			text := string(out.Body)
			if name != "fixture-sanitize" {
				// That fixture's <plaintext> makes what follows it literal
				// text ("<script>…" shown as written, as the HTML part
				// shows it escaped), which the markup check would flag.
				checkNoMarkup(t, text)
			}
			checkInventoryInText(t, d, text)

			if !ownDesign(name) {
				sum := fmt.Sprintf("%x", sha256.Sum256(out.Body))
				switch {
				case *updateGolden:
					digests[name] = sum
				case digests[name] == "":
					t.Errorf("no digest for %s in %s (run go test ./render -run PlainTextCorpus -update)", name, digestFile)
				case digests[name] != sum:
					// The text stays outside the repository, for a diff
					// against an earlier commit's (cmd/designrender -text).
					now := filepath.Join(os.TempDir(), "designbridge-plaintext-"+name+".txt")
					_ = os.WriteFile(now, out.Body, 0o644)
					t.Errorf("output differs from the digest in %s; it is in %s (compare with an earlier commit's go run ./cmd/designrender -text, then run with -update)", digestFile, now)
				}
				return
			}
			golden := filepath.Join("testdata", "plaintext", name+".txt")
			if *updateGolden {
				if err := os.WriteFile(golden, out.Body, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./render -run PlainTextCorpus -update)", err)
			}
			if text != string(want) {
				t.Errorf("output differs from %s (run with -update and review the diff):\n%s", golden, firstDifference(text, string(want)))
			}
		})
	}
	if *updateGolden && hasCorpus(names) {
		if err := writeDigests(digestFile, digests); err != nil {
			t.Fatal(err)
		}
	}
}

// ownDesign reports whether a design is the project's own (its text may
// be kept in a golden), not the third-party corpus's.
func ownDesign(name string) bool {
	return strings.HasPrefix(name, "fixture-") || strings.HasPrefix(name, "starter-")
}

func hasCorpus(names []string) bool {
	return slices.ContainsFunc(names, func(n string) bool { return !ownDesign(n) })
}

// readDigests reads lines of "<sha256>  <name>" (sha256sum's format).
func readDigests(path string) (map[string]string, error) {
	out := map[string]string{}
	data, err := os.ReadFile(path)
	if err != nil {
		return out, err
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		sum, name, ok := strings.Cut(line, "  ")
		if !ok {
			return out, fmt.Errorf("%s: bad line %q", path, line)
		}
		out[name] = sum
	}
	return out, nil
}

func writeDigests(path string, digests map[string]string) error {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(digests)) {
		fmt.Fprintf(&b, "%s  %s\n", digests[name], name)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// markupLeft matches what would be HTML left in the text: tags and
// entities.
var markupLeft = regexp.MustCompile(`(?i)</?(p|div|span|a|img|br|table|td|tr|strong|em|b|i|u|h[1-6]|ul|ol|li|style|script)\b[^>]*>|&(nbsp|amp|lt|gt|quot|#\d+|#x[0-9a-f]+);`)

func checkNoMarkup(t *testing.T, text string) {
	t.Helper()
	if m := markupLeft.FindString(text); m != "" {
		t.Errorf("markup left in the text: %q", m)
	}
	for i, line := range strings.Split(text, "\n") {
		if strings.TrimRight(line, " \t") != line {
			t.Errorf("line %d has trailing white space: %q", i+1, line)
		}
	}
	if strings.Contains(text, "\n\n\n") {
		t.Error("more than one blank line in a row")
	}
}

// checkInventoryInText cross-checks with testutil/inventory (an independent
// reading of the same design): every text run and every link target of the
// blocks the text part covers appears, block after block in reading order.
// Within a block the order may differ (the inventory lists a link's
// target before its label). White space is compared collapsed, since a
// text run may span a line break in the output.
func checkInventoryInText(t *testing.T, d *design.Design, text string) {
	t.Helper()
	flat := collapseAll(text)
	pos := 0
	for _, r := range d.Page.Rows {
		if r.HideOnDesktop {
			continue
		}
		for _, c := range r.Columns {
			for _, m := range c.Modules {
				if m.HideOnDesktop || m.EffectiveKind() == design.KindForm {
					continue
				}
				one := design.Design{Page: design.Page{Rows: []design.Row{{Columns: []design.Column{{Modules: []design.Module{m}}}}}}}
				items := inventory.Of(&one).Items
				next := -1
				for _, it := range items {
					want := collapseAll(it.Value)
					if want == "" || it.Kind == inventory.ItemSrc || (it.Kind == inventory.ItemHref && !meaningfulHref(it.Value)) {
						continue
					}
					if it.Kind == inventory.ItemHref && slices.ContainsFunc(items, func(label inventory.Item) bool {
						return label.Kind == inventory.ItemText && sameTarget(label.Value, it.Value)
					}) {
						continue // a link labelled with its own URL is printed once
					}
					i := strings.Index(flat[pos:], want)
					if i < 0 {
						if strings.Contains(flat, want) {
							t.Errorf("%s %q (a %s block) appears, but before the blocks preceding it", it.Kind, it.Value, m.Kind)
						} else {
							t.Errorf("%s %q (a %s block) missing from the text", it.Kind, it.Value, m.Kind)
						}
						continue
					}
					if next < 0 || pos+i < next {
						next = pos + i
					}
				}
				if next >= 0 {
					pos = next
				}
			}
		}
	}
}

// collapseAll turns every run of white space (NBSP included) into one
// space and drops zero-width characters, as the text part does.
func collapseAll(s string) string {
	s = strings.Map(func(r rune) rune {
		if isZeroWidth(r) {
			return -1
		}
		return r
	}, s)
	return strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
}

func firstDifference(got, want string) string {
	gl, wl := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := range max(len(gl), len(wl)) {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			return fmt.Sprintf("line %d:\n got %q\nwant %q", i+1, g, w)
		}
	}
	return "(no line differs)"
}

func FuzzPlainText(f *testing.F) {
	f.Add(designJSON("[]"))
	f.Add(designJSON("[" + row("", mods(paragraph(`<p>Hi {{name}} <a href="https://x.test">x</a></p><ul><li>a<ul><li>b</li></ul></li></ul>`)), mods(heading("<b>T</b>"))) + "]"))
	f.Add(designJSON("[" + row("", mods(module("button", `{"button":{"label":"<p>B</p>","href":"https://b.test"}}`), module("image", `{"image":{"alt":"A","href":"https://a.test"}}`))) + "]"))
	f.Add(designJSON("[" + row("", mods(module("html", `{"html":{"html":"<table><tr><td><a href='#'><img alt='i'></a></td></tr></table><style>x</style>"}}`))) + "]"))
	f.Add(`<p>unclosed <a href="x">link<li>item`)
	f.Fuzz(func(t *testing.T, in string) {
		// The input is used twice: as a whole design, and as the HTML of a
		// paragraph, so the fuzzer reaches the markup converter directly.
		for _, doc := range []string{in, designJSON("[" + row("", mods(paragraph(in))) + "]")} {
			d, err := design.Decode([]byte(doc))
			if err != nil {
				continue
			}
			out, err := PlainText(d)
			var pe *design.PathError
			if errors.As(err, &pe) {
				continue // a block the renderer cannot read: refused, as by Decode
			}
			if err != nil {
				t.Fatalf("PlainText: %v", err)
			}
			text := string(out.Body)
			if !utf8.ValidString(text) {
				t.Fatalf("invalid UTF-8 in output %q", text)
			}
			if text != "" && !strings.HasSuffix(text, "\n") {
				t.Fatalf("output does not end in a newline: %q", text)
			}
			if strings.Contains(text, "\n\n\n") || strings.HasPrefix(text, "\n") {
				t.Fatalf("runs of blank lines in %q", text)
			}
			for _, line := range strings.Split(text, "\n") {
				if strings.TrimRight(line, " ") != line {
					t.Fatalf("trailing space in %q", text)
				}
			}
			again, _ := PlainText(d)
			if !bytes.Equal(out.Body, again.Body) {
				t.Fatal("not deterministic")
			}
		}
	})
}

// fragmentText converts one HTML fragment on its own.
func fragmentText(src string) string {
	var w textWriter
	w.fragment(src)
	return strings.TrimSuffix(w.String(), "\n")
}
