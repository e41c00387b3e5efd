package render

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/net/html"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// The vendor's JSON+HTML pairs (the corpus's pairs/ folder): the same design as
// JSON and as the HTML the vendor's own renderer made of it. Our HTML is
// built differently (email tables rather than the popup builder's divs),
// so the markup is not compared; the content is: the words, link targets
// and image sources that both documents contain must come in the same
// order in both.
//
// Tolerances, and why:
//   - Words rather than text runs: the two renderers split text into
//     elements differently (a heading's <span>, a button's wrapper), which
//     changes run boundaries but not the words or their order.
//   - White space is collapsed, U+00A0 counts as a space and zero-width
//     characters are dropped: they are layout, not content.
//   - Only the common items are compared for order (the longest common
//     subsequence must contain every item both sides have, counted with
//     multiplicity). Items only the vendor has are reported and must be
//     explained by knownVendorOnly: popup forms, which an email cannot
//     submit, are left out by our renderer on purpose.
//   - Items only we have are allowed (none are expected; they are logged).
type pairItems struct {
	words, hrefs, srcs []string
}

// extractItems lists, in document order, the words of the visible text,
// the href of every <a> and the src of every <img> of an HTML document or
// fragment. Content that is never shown (head, style, script…) is
// skipped; conditional comments are comments and skipped too.
func extractItems(doc string) pairItems {
	var it pairItems
	z := html.NewTokenizer(strings.NewReader(doc))
	skip := ""
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return it
		case html.TextToken:
			if skip == "" {
				it.words = append(it.words, normWords(string(z.Text()))...)
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			tag := string(name)
			if skip != "" {
				continue
			}
			if design.DropsContent(tag) {
				if tt == html.StartTagToken {
					skip = tag
				}
				continue
			}
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				val := strings.TrimSpace(string(v))
				switch {
				case tag == "a" && string(k) == "href" && val != "":
					it.hrefs = append(it.hrefs, val)
				case tag == "img" && string(k) == "src" && val != "":
					it.srcs = append(it.srcs, val)
				}
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if skip != "" && string(name) == skip {
				skip = ""
			}
		}
	}
}

func normWords(s string) []string {
	s = strings.Map(func(r rune) rune {
		switch r {
		case '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00ad':
			return -1
		}
		return r
	}, s)
	return strings.FieldsFunc(s, unicode.IsSpace)
}

// lcs returns the longest common subsequence of a and b.
func lcs(a, b []string) []string {
	n, m := len(a), len(b)
	t := make([][]int32, n+1)
	for i := range t {
		t[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	var out []string
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case a[i] == b[j]:
			out = append(out, a[i])
			i++
			j++
		case t[i+1][j] >= t[i][j+1]:
			i++
		default:
			j++
		}
	}
	return out
}

// multisetDiff returns the items of a not matched by an equal item of b
// (with multiplicity), in a's order, and the size of the intersection.
func multisetDiff(a, b []string) (onlyA []string, common int) {
	count := map[string]int{}
	for _, s := range b {
		count[s]++
	}
	for _, s := range a {
		if count[s] > 0 {
			count[s]--
			common++
			continue
		}
		onlyA = append(onlyA, s)
	}
	return onlyA, common
}

// knownVendorOnly returns the words the vendor's HTML may have that ours
// leaves out on purpose: the visible text of form modules (labels, options,
// submit buttons, titles), which the email renderer omits with a warning.
func knownVendorOnly(d *design.Design) map[string]int {
	allowed := map[string]int{}
	for _, r := range d.Page.Rows {
		for _, c := range r.Columns {
			for _, m := range c.Modules {
				if m.EffectiveKind() != design.KindForm {
					continue
				}
				form := m.Descriptor.Get("form")
				texts := []string{form.At("structure", "title").Text(), form.At("structure", "description").Text()}
				for _, f := range design.FormFields(form) {
					texts = append(texts, f.Label)
					texts = append(texts, f.Options...)
				}
				for _, s := range texts {
					for _, w := range normWords(s) {
						allowed[w]++
					}
				}
			}
		}
	}
	return allowed
}

func TestVendorPairsSameContentOrder(t *testing.T) {
	dir := filepath.Join(designtest.CorpusDir(t), "pairs")
	pairs := map[string]string{ // design JSON -> the vendor's HTML of it
		"beefree-clients__message.json": "beefree-clients__message.email.html",
	}
	popups, err := filepath.Glob(filepath.Join(dir, "popup-*.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range popups {
		base := strings.TrimSuffix(filepath.Base(h), ".html")
		pairs[base+".json"] = base + ".html"
	}
	if len(pairs) < 9 {
		t.Fatalf("found %d pairs under %s; the corpus is incomplete", len(pairs), dir)
	}
	for jsonName, htmlName := range pairs {
		t.Run(strings.TrimSuffix(jsonName, ".json"), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, jsonName))
			if err != nil {
				t.Fatal(err)
			}
			vendorHTML, err := os.ReadFile(filepath.Join(dir, htmlName))
			if err != nil {
				t.Fatal(err)
			}
			d, out := renderDesign(t, data, Limits{})
			vendor := extractItems(string(vendorHTML))
			ours := extractItems(string(out.Body))
			comparePairSequence(t, "word", vendor.words, ours.words, knownVendorOnly(d))
			comparePairSequence(t, "href", vendor.hrefs, ours.hrefs, nil)
			comparePairSequence(t, "src", vendor.srcs, ours.srcs, nil)
		})
	}
}

// comparePairSequence checks one kind of item: the common items are in
// the same order on both sides, and every vendor item we lack is allowed.
func comparePairSequence(t *testing.T, kind string, vendor, ours []string, allowed map[string]int) {
	t.Helper()
	vendorOnly, common := multisetDiff(vendor, ours)
	oursOnly, _ := multisetDiff(ours, vendor)
	if got := len(lcs(vendor, ours)); got != common {
		t.Errorf("%ss: %d in common, but only %d of them in the same order\n vendor: %s\n ours:   %s",
			kind, common, got, clip(vendor), clip(ours))
	}
	var unexplained []string
	for _, s := range vendorOnly {
		if allowed[s] > 0 {
			allowed[s]--
			continue
		}
		unexplained = append(unexplained, s)
	}
	if len(unexplained) > 0 {
		t.Errorf("%ss in the vendor's HTML but not in ours: %q", kind, unexplained)
	}
	if len(oursOnly) > 0 {
		t.Logf("%ss only in ours: %q", kind, oursOnly)
	}
	t.Logf("%ss: vendor %d, ours %d, common %d", kind, len(vendor), len(ours), common)
}

func clip(s []string) string {
	const n = 60
	if len(s) > n {
		return strings.Join(s[:n], " ") + " …"
	}
	return strings.Join(s, " ")
}

// TestVendorPopupImageBounds renders every popup pair in the popup layout
// and checks that each image the vendor's export shows (by its src) gets
// the vendor's max-width: a stacked column takes the whole row on a
// phone, so the bound must be the column's width in the editor, not what
// the column gets on the desktop (which left 15-Off-Brandname's image at
// 245 px where the vendor's grows to 250).
func TestVendorPopupImageBounds(t *testing.T) {
	dir := filepath.Join(designtest.CorpusDir(t), "pairs")
	popups, err := filepath.Glob(filepath.Join(dir, "popup-*.html"))
	if err != nil || len(popups) < 8 {
		t.Fatalf("found %d popup pairs under %s (%v); the corpus is incomplete", len(popups), dir, err)
	}
	compared := 0
	for _, h := range popups {
		base := strings.TrimSuffix(filepath.Base(h), ".html")
		t.Run(base, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(dir, base+".json"))
			if err != nil {
				t.Fatal(err)
			}
			vendorHTML, err := os.ReadFile(h)
			if err != nil {
				t.Fatal(err)
			}
			_, out := renderDesign(t, data, Limits{Layout: LayoutPopup})
			ours := imageMaxWidths(string(out.Body))
			for src, want := range imageMaxWidths(string(vendorHTML)) {
				got, ok := ours[src]
				if !ok {
					continue // an icon the vendor draws another way
				}
				compared++
				if got != want {
					t.Errorf("image %.60s: max-width %s, the vendor's %s", src, got, want)
				}
			}
		})
	}
	if compared < 10 {
		t.Errorf("compared %d images; want the popups' images", compared)
	}
}

// imageMaxWidths maps the src of each <img> of doc to the max-width of
// its style attribute.
func imageMaxWidths(doc string) map[string]string {
	widths := map[string]string{}
	z := html.NewTokenizer(strings.NewReader(doc))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return widths
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if string(name) != "img" {
				continue
			}
			var src, style string
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				switch string(k) {
				case "src":
					src = string(v)
				case "style":
					style = string(v)
				}
			}
			for _, decl := range strings.Split(style, ";") {
				if p, v, ok := strings.Cut(decl, ":"); ok && strings.TrimSpace(p) == "max-width" {
					widths[src] = strings.TrimSpace(v)
				}
			}
		}
	}
}
