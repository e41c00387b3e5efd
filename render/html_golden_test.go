package render

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// The -update flag is shared with the plain-text golden tests of this
// package. Package variables are initialised before init functions, so
// this defines it only when no other test file does.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite golden files under testdata/")
	}
}

func update() bool {
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

// TestGolden renders every testdata/fixtures/*.json and compares the HTML
// (and warnings) with testdata/golden/. Run with -update after an
// intended change, then look at the diff and the screenshots (-shots).
func TestGolden(t *testing.T) {
	eachFixture(t, "testdata/fixtures/*.json", func(t *testing.T, name string, data []byte) {
		d, out := renderDesign(t, data, Limits{})
		// Every fixture must also satisfy the corpus properties.
		checkInventoryInOutput(t, d, out.Body)
		checkDocument(t, out.Body)

		warnings := strings.Join(out.Warnings, "\n")
		if warnings != "" {
			warnings += "\n"
		}
		golden := filepath.Join("testdata/golden", name+".html")
		goldenWarn := filepath.Join("testdata/golden", name+".warnings.txt")
		matchGolden(t, golden, out.Body)
		if update() {
			if warnings != "" {
				if err := os.WriteFile(goldenWarn, []byte(warnings), 0o644); err != nil {
					t.Fatal(err)
				}
			} else {
				os.Remove(goldenWarn)
			}
			return
		}
		wantWarn, _ := os.ReadFile(goldenWarn)
		if warnings != string(wantWarn) {
			t.Errorf("warnings:\n%s\nwant:\n%s", warnings, wantWarn)
		}
	})
}

// eachFixture runs fn as a subtest on each file that the glob pattern
// matches, with the file's name less ".json" and its content.
func eachFixture(t *testing.T, pattern string, fn func(t *testing.T, name string, data []byte)) {
	fixtures, err := filepath.Glob(pattern)
	if err != nil || len(fixtures) == 0 {
		t.Fatalf("no fixtures match %s", pattern)
	}
	for _, f := range fixtures {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			fn(t, name, data)
		})
	}
}

// matchGolden compares got with the golden file at path, or with -update
// writes it there.
func matchGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if update() {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("HTML differs from %s (run with -update and review the diff)\n%s", path, firstDiff(got, want))
	}
}

func firstDiff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	lo := max(i-80, 0)
	return "at byte " + itoaTest(i) + ":\n got: " + string(got[lo:min(i+80, len(got))]) + "\nwant: " + string(want[lo:min(i+80, len(want))])
}

func itoaTest(n int) string {
	var b []byte
	if n == 0 {
		return "0"
	}
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	return string(b)
}

// checkDocument checks properties every rendering must have: the
// document frame, role="presentation" on layout tables, alt on images,
// and nothing able to run script outside the HTML block.
func checkDocument(t *testing.T, body []byte) {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var hasTitle, hasLang, hasViewport, hasCharset bool
	var walk func(n *html.Node, inHTMLBlock bool)
	walk = func(n *html.Node, inHTMLBlock bool) {
		if n.Type == html.ElementNode {
			attrs := map[string]string{}
			for _, a := range n.Attr {
				attrs[a.Key] = a.Val
			}
			if renderedHTMLBlock(n) {
				inHTMLBlock = true
			}
			switch n.Data {
			case "html":
				hasLang = attrs["lang"] != ""
			case "title":
				hasTitle = true
			case "meta":
				hasViewport = hasViewport || attrs["name"] == "viewport"
				hasCharset = hasCharset || attrs["charset"] != ""
			case "table":
				// Data tables (the table module) are the only tables
				// allowed to keep their role.
				if attrs["role"] != "presentation" && !inHTMLBlock && !strings.Contains(attrs["class"], "tx") {
					t.Errorf("layout table without role=presentation: %v", n.Attr)
				}
			case "img":
				if _, ok := attrs["alt"]; !ok {
					t.Errorf("img without alt: %v", n.Attr)
				}
			}
			if !inHTMLBlock {
				checkInert(t, n)
				if n.Data == "style" && (n.Parent == nil || n.Parent.Data != "head") {
					t.Errorf("<style> outside head")
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inHTMLBlock)
		}
	}
	walk(doc, false)
	if !hasTitle || !hasLang || !hasViewport || !hasCharset {
		t.Errorf("document frame: title=%v lang=%v viewport=%v charset=%v", hasTitle, hasLang, hasViewport, hasCharset)
	}
}
