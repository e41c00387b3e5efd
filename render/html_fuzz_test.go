package render

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// FuzzHTML feeds arbitrary documents through Decode and HTML: rendering
// must never panic, must be deterministic, and must yield parseable HTML
// whose head keeps exactly one <style> (rich text cannot inject another)
// and no other <style> or <script> outside the design's html blocks,
// which are told by where they are, not by their class
// (checkStyleElements).
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
		if err := checkStyleElements(doc, d); err != nil {
			t.Fatal(err)
		}
	})
}

// checkStyleElements reports a document of d that holds another <style>
// or <script> element than the head's <style>, outside d's html blocks
// (passed through as written), or another number of html blocks than d
// has.
func checkStyleElements(doc *html.Node, d *design.Design) error {
	styles, blocks := styleElements(doc)
	if styles != 1 {
		return fmt.Errorf("%d style/script elements outside HTML blocks, want the one head <style>", styles)
	}
	if want := htmlModules(d); blocks != want {
		return fmt.Errorf("%d HTML blocks in the document, the design has %d", blocks, want)
	}
	return nil
}

// styleElements counts the <style> and <script> elements of doc outside
// the design's html blocks, and those blocks (renderedHTMLBlock).
func styleElements(doc *html.Node) (styles, htmlBlocks int) {
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if renderedHTMLBlock(n) {
			htmlBlocks++
			return
		}
		if n.Type == html.ElementNode && (n.Data == "style" || n.Data == "script") {
			styles++
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return styles, htmlBlocks
}

// renderedHTMLBlock reports whether n is the table the renderer writes
// around an html block, whose markup is the design's, passed through as
// written: a table whose class list starts with html_block and which is
// inside no other block. The class alone does not tell: rich text may
// give it to any of its elements (the sanitiser keeps classes), but they
// are all inside its own block; one outside every block would be more
// html blocks than the design has (checkStyleElements).
func renderedHTMLBlock(n *html.Node) bool {
	if n.Type != html.ElementNode || n.DataAtom != atom.Table || firstClass(n) != "html_block" {
		return false
	}
	for p := n.Parent; p != nil; p = p.Parent {
		if strings.HasSuffix(firstClass(p), "_block") {
			return false
		}
	}
	return true
}

// firstClass is the first name of n's class list ("" for none): a
// block's outer element's is <kind>_block (blockClass).
func firstClass(n *html.Node) string {
	f, _, _ := strings.Cut(strings.TrimSpace(attr(n, "class")), " ")
	return f
}

// htmlModules is the number of html blocks of d, each of which the
// renderer writes once.
func htmlModules(d *design.Design) int {
	n := 0
	for _, r := range d.Page.Rows {
		for _, c := range r.Columns {
			for i := range c.Modules {
				if c.Modules[i].EffectiveKind() == design.KindHTML {
					n++
				}
			}
		}
	}
	return n
}

// TestStyleCheckNotFooled: FuzzHTML's check leaves out only the html
// blocks the renderer writes, not an element of rich text that claims
// their class (the sanitiser keeps classes), so a <style> that got
// through the sanitiser there is still found. Each document is a render
// with a <style> put where the sanitiser would have let it through.
func TestStyleCheckNotFooled(t *testing.T) {
	para := func(s string) string {
		return module("paragraph", `{"paragraph":{"html":`+strconv.Quote(s)+`},"style":{}}`)
	}
	htmlBlock := module("html", `{"html":{"html":"<div>OWN</div>"},"style":{}}`)
	const style = `<style>p{color:red}</style>`
	tests := []struct {
		name   string
		mods   string
		inject func(doc string) string // where the <style> goes
		fooled bool                    // the document keeps the check's promise
	}{
		{"in an html block", mods(htmlBlock), func(doc string) string {
			return strings.Replace(doc, "OWN", style, 1)
		}, true},
		{"in rich text claiming the class beside an html block", mods(htmlBlock, para(`<p class="x html_block">HERE</p>`)), func(doc string) string {
			return strings.Replace(doc, "HERE", style, 1)
		}, false},
		{"in rich text claiming the html block's class", mods(para(`<div class="html_block">HERE</div>`)), func(doc string) string {
			return strings.Replace(doc, "HERE", style, 1)
		}, false},
		{"in rich text claiming the html block's table", mods(para(`<table class="html_block" role="presentation"><tr><td class="pad">HERE</td></tr></table>`)), func(doc string) string {
			return strings.Replace(doc, "HERE", style, 1)
		}, false},
		{"in a table claiming the class among the blocks", mods(para(`x`), htmlBlock), func(doc string) string {
			// As if rich text had ended its block: a second table
			// claiming the class where the renderer writes blocks.
			return strings.Replace(doc, `<table class="paragraph_block"`, `<table class="html_block"><tr><td>`+style+`</td></tr></table><table class="paragraph_block"`, 1)
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := design.Decode([]byte(designJSON("[" + row("", tt.mods) + "]")))
			if err != nil {
				t.Fatal(err)
			}
			out, err := HTML(d)
			if err != nil {
				t.Fatal(err)
			}
			src := tt.inject(string(out.Body))
			if src == string(out.Body) {
				t.Fatal("nothing injected")
			}
			doc, err := html.Parse(strings.NewReader(src))
			if err != nil {
				t.Fatal(err)
			}
			err = checkStyleElements(doc, d)
			if tt.fooled && err != nil {
				t.Errorf("a <style> of the html block's own: %v", err)
			}
			if !tt.fooled && err == nil {
				t.Error("a <style> outside the html blocks is not found")
			}
		})
	}
}

// TestHTMLBlocksFound: renderedHTMLBlock finds each html block of every
// own and corpus design once, in every layout, as checkStyleElements
// counts on.
func TestHTMLBlocksFound(t *testing.T) {
	found := 0
	for name, data := range designtest.OwnAndCorpus(t, true) {
		d, err := design.Decode(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := htmlModules(d)
		found += want
		for _, layout := range []Layout{LayoutEmail, LayoutPage, LayoutPopup} {
			out, err := HTMLWithLimits(d, Limits{Layout: layout})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if _, blocks := styleElements(parseLayout(t, out.Body, layout)); blocks != want {
				t.Errorf("%s, %s: %d html blocks found, the design has %d", name, layout, blocks, want)
			}
		}
	}
	if found == 0 {
		t.Fatal("no design with an html block: nothing was checked")
	}
}
