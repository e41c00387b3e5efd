package render

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/net/html"

	"github.com/designbridge/caddy-designbridge/design"
)

// FuzzHTML feeds arbitrary documents through Decode and HTML: rendering
// must never panic, must be deterministic, and must yield parseable HTML
// whose head keeps exactly one <style> (rich text cannot inject another).
func FuzzHTML(f *testing.F) {
	fixtures, _ := filepath.Glob("testdata/fixtures/*.json")
	for _, p := range fixtures {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`{"page":{"rows":[{"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-text","descriptor":{"text":{"html":"<p><style>x</style><script>y</script></p>"}}}]}]}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := design.Decode(data)
		if err != nil {
			return
		}
		out, err := HTML(d)
		var pe *design.PathError
		if errors.As(err, &pe) {
			return // a block the renderer cannot read: refused, as by Decode
		}
		if err != nil {
			t.Fatalf("HTML: %v", err)
		}
		again, _ := HTML(d)
		if !bytes.Equal(out.Body, again.Body) {
			t.Fatal("not deterministic")
		}
		doc, err := html.Parse(bytes.NewReader(out.Body))
		if err != nil {
			t.Fatal(err)
		}
		styles := 0
		var walk func(n *html.Node, inHTMLBlock bool)
		walk = func(n *html.Node, inHTMLBlock bool) {
			if n.Type == html.ElementNode {
				for _, a := range n.Attr {
					if a.Key == "class" && bytes.Contains([]byte(a.Val), []byte("html_block")) {
						inHTMLBlock = true
					}
				}
				if !inHTMLBlock && (n.Data == "style" || n.Data == "script") {
					styles++
				}
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c, inHTMLBlock)
			}
		}
		walk(doc, false)
		if styles != 1 {
			t.Fatalf("%d style/script elements outside HTML blocks, want the one head <style>", styles)
		}
	})
}
