package render

import (
	"bytes"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// gmailClip is the size above which Gmail clips a message.
const gmailClip = 102 * 1024

// docContent is what a parsed HTML document shows: its text (collapsed
// like inventory.Of texts) and its href/src/background attribute values.
type docContent struct {
	text  string
	hrefs map[string]bool
	srcs  map[string]bool
}

func parseDoc(t *testing.T, body []byte) *docContent {
	t.Helper()
	doc, err := html.Parse(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("output does not parse as HTML: %v", err)
	}
	c := &docContent{hrefs: map[string]bool{}, srcs: map[string]bool{}}
	var text strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			if p := n.Parent; p != nil && (p.Data == "style" || p.Data == "title") {
				break
			}
			text.WriteString(n.Data)
			text.WriteByte(' ')
		case html.ElementNode:
			for _, a := range n.Attr {
				switch a.Key {
				case "href":
					c.hrefs[a.Val] = true
				case "src", "background":
					c.srcs[a.Val] = true
				}
			}
		}
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			walk(ch)
		}
	}
	walk(doc)
	c.text = design.CollapseSpace(text.String())
	return c
}

func TestCorpusHTML(t *testing.T) {
	corpus := designtest.OwnAndCorpus(t, true)
	if dir, _ := designtest.Lookup(); dir != "" && len(corpus) < 40 {
		t.Errorf("only %d designs found", len(corpus))
	}
	for name, data := range corpus {
		t.Run(name, func(t *testing.T) {
			d, out := renderDesign(t, data, Limits{})
			if len(out.Body) >= gmailClip {
				t.Errorf("output is %d bytes, at or over Gmail's clipping size", len(out.Body))
			}
			if !bytes.HasPrefix(out.Body, []byte("<!DOCTYPE html>")) {
				t.Error("no doctype")
			}
			checkInventoryInOutput(t, d, out.Body)
			again, _ := HTML(d)
			if !bytes.Equal(again.Body, out.Body) {
				t.Error("output differs between two runs")
			}
		})
	}
}
