package render

import (
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// phrasingElements are the elements of rich text that may sit in an
// element holding phrasing content only (a heading, a span, a link):
// anything else there is invalid, takes its own user-agent style (an
// <h2>'s size, a <p>'s margins), and may end the element around it in a
// browser's parser.
var phrasingElements = map[atom.Atom]bool{
	atom.A: true, atom.Abbr: true, atom.B: true, atom.Bdi: true, atom.Bdo: true, atom.Big: true,
	atom.Br: true, atom.Cite: true, atom.Code: true, atom.Del: true, atom.Dfn: true, atom.Em: true,
	atom.Font: true, atom.I: true, atom.Img: true, atom.Ins: true, atom.Kbd: true, atom.Mark: true,
	atom.Q: true, atom.S: true, atom.Samp: true, atom.Small: true, atom.Span: true, atom.Strike: true,
	atom.Strong: true, atom.Sub: true, atom.Sup: true, atom.Tt: true, atom.U: true, atom.Wbr: true,
}

// wrapper picks the renderer's own elements that hold a block's rich
// text, as a browser's parser builds the document.
type wrapper struct {
	name     string
	is       func(n *html.Node) bool
	phrasing bool // it may hold phrasing content only
}

var (
	headingWrapper = wrapper{"the heading element", func(n *html.Node) bool {
		switch n.DataAtom {
		case atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6:
			return hasClass(n, "tx")
		}
		return false
	}, true}
	buttonWrapper = wrapper{"the button's span", func(n *html.Node) bool {
		return n.DataAtom == atom.Span && hasClass(n, "bt")
	}, true}
	buttonLink = wrapper{"the button's link", func(n *html.Node) bool {
		return n.DataAtom == atom.A && attr(n, "href") == "https://x.test/go"
	}, false}
	menuItems = wrapper{"the menu's items", func(n *html.Node) bool {
		return hasClass(n, "mi")
	}, true}
	menuLinks = wrapper{"the menu's links", func(n *html.Node) bool {
		return n.DataAtom == atom.A && hasClass(n, "mi")
	}, false}
)

func buttonModule(label, href string) string {
	return module("button", `{"button":{"label":`+strconv.Quote(label)+`,"href":`+strconv.Quote(href)+
		`,"style":{"background-color":"#3AAEE0","color":"#ffffff","font-size":"16px"}},"style":{}}`)
}

func menuModule(href string, texts ...string) string {
	items := make([]string, len(texts))
	for i, s := range texts {
		items[i] = `{"text":` + strconv.Quote(s) + `,"link":{"href":` + strconv.Quote(href) + `}}`
	}
	return module("menu", `{"menuItemsList":{"items":[`+strings.Join(items, ",")+`]},"style":{"color":"#000000"},"computedStyle":{"separator":"|"}}`)
}

// TestRichTextStaysInItsElement renders rich text holding what its block's
// element cannot hold (a block element in a heading or a label, a link in
// a linked label) and reads the document as a browser's parser does
// (x/net/html): all of the text stays inside the renderer's element, which
// then holds phrasing content only, and no link is inside another.
func TestRichTextStaysInItsElement(t *testing.T) {
	tests := []struct {
		name     string
		module   string
		wrappers []wrapper
		text     string   // the text the wrappers hold, white space aside
		links    []string // links the document has (the label's own where nothing links it)
	}{
		{"heading holding a heading", heading(`Title <h2>Sub</h2> after`),
			[]wrapper{headingWrapper}, "Title Sub after", nil},
		{"heading holding its own tag", heading(`<h1>One</h1><h1>Two</h1>`),
			[]wrapper{headingWrapper}, "One Two", nil},
		{"heading holding a heading in bold", heading(`<b>Big <h3 style="color:red">red</h3> tail</b>`),
			[]wrapper{headingWrapper}, "Big red tail", nil},
		{"heading holding paragraphs", heading(`<p>First</p><p style="font-size:20px">Second</p>`),
			[]wrapper{headingWrapper}, "First Second", nil},
		{"heading holding divs and a list", heading(`<div>A</div><ul><li>B</li><li>C</li></ul>D`),
			[]wrapper{headingWrapper}, "A B C D", nil},
		{"heading holding a table, a quote and a rule", heading(`<table><tr><td>T</td></tr></table><blockquote>Q</blockquote><hr>E<pre>P</pre><center>C</center><dl><dt>K</dt><dd>V</dd></dl>`),
			[]wrapper{headingWrapper}, "T Q E P C K V", nil},
		{"heading holding unbalanced blocks", heading(`a<div>b<p>c</div>d</p>e`),
			[]wrapper{headingWrapper}, "a b c d e", nil},
		{"button label holding a link", buttonModule(`<p>Buy <a href="https://x.test/other">now</a> today</p>`, "https://x.test/go"),
			[]wrapper{buttonWrapper, buttonLink}, "Buy now today", nil},
		{"button label holding links and paragraphs", buttonModule(`<div><p><a href="https://x.test/a">One</a></p><p>Two <a href="https://x.test/b"><b>Three</b></a></p></div>`, "https://x.test/go"),
			[]wrapper{buttonWrapper, buttonLink}, "One Two Three", nil},
		{"button label holding a heading", buttonModule(`<h1>Big</h1> label`, "https://x.test/go"),
			[]wrapper{buttonWrapper, buttonLink}, "Big label", nil},
		{"menu items holding links", menuModule("https://x.test/m", `Home <a href="https://x.test/h">page</a> end`, `<a href="https://x.test/s">Shop</a>`),
			[]wrapper{menuItems, menuLinks}, "Home page end Shop", nil},
		{"menu items holding blocks", menuModule("https://x.test/m", `<p>Home</p>`, `<div>Sh<h2>op</h2></div>`),
			[]wrapper{menuItems, menuLinks}, "Home Shop", nil},
		{"unlinked menu items holding blocks and links", menuModule("", `<p>Home</p>`, `<ul><li><a href="https://x.test/s">Shop</a></li></ul>`),
			[]wrapper{menuItems}, "Home Shop", []string{"https://x.test/s"}},
		{"unlinked button label holding a link", buttonModule(`<p>Buy <a href="https://x.test/b">now</a></p>`, ""),
			[]wrapper{buttonWrapper}, "Buy now", []string{"https://x.test/b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inEachLayout(t, designJSON("["+row("", mods(tt.module))+"]"), func(layout Layout, out *Output) {
				doc := parseLayout(t, out.Body, layout)
				for _, wr := range tt.wrappers {
					checkWrapper(t, layout, doc, wr, tt.text)
				}
				checkLinksNotNested(t, layout, doc)
				for _, href := range tt.links {
					found := false
					walkElements(doc, func(n *html.Node) bool {
						found = found || n.DataAtom == atom.A && attr(n, "href") == href
						return true
					})
					if !found {
						t.Errorf("%s: no link to %s", layout, href)
					}
				}
			})
		})
	}
}

// checkWrapper fails t unless the elements wr picks in doc hold text,
// white space aside, and, when they hold phrasing content only, no
// other element.
func checkWrapper(t *testing.T, layout Layout, doc *html.Node, wr wrapper, text string) {
	t.Helper()
	var got strings.Builder
	found := 0
	walkElements(doc, func(n *html.Node) bool {
		if !wr.is(n) {
			return true
		}
		found++
		walkElements(n, func(c *html.Node) bool {
			if wr.phrasing && !phrasingElements[c.DataAtom] {
				t.Errorf("%s: %s holds a <%s>", layout, wr.name, c.Data)
			}
			return true
		})
		got.WriteString(nodeText(n))
		return false
	})
	if found == 0 {
		t.Fatalf("%s: no %s in the document", layout, wr.name)
	}
	if g, w := strings.Join(strings.Fields(got.String()), ""), strings.Join(strings.Fields(text), ""); g != w {
		t.Errorf("%s: %s hold %q, want %q (the rest is outside)", layout, wr.name, g, w)
	}
}

// checkLinksNotNested fails t for a link inside a link (a browser's
// parser never builds one: it ends the outer link).
func checkLinksNotNested(t *testing.T, layout Layout, doc *html.Node) {
	t.Helper()
	walkElements(doc, func(n *html.Node) bool {
		if n.DataAtom != atom.A {
			return true
		}
		walkElements(n, func(c *html.Node) bool {
			if c.DataAtom == atom.A {
				t.Errorf("%s: a link inside a link (%s)", layout, attr(c, "href"))
			}
			return true
		})
		return true
	})
}

// nodeText is the text of the nodes under n, in order.
func nodeText(n *html.Node) string {
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return b.String()
}

// TestNoParagraphOfTheParser renders rich text where a block element
// starts inside a paragraph (<p>a<div>b</div></p>, a table or another
// paragraph in it). A browser's parser ends the paragraph there, and an
// end tag </p> written after that would make a new, empty paragraph with
// the browser's default margins (a gap of a line under the text): every
// paragraph of the parsed document must be one the renderer wrote.
func TestNoParagraphOfTheParser(t *testing.T) {
	table := func(cell string) string {
		return module("table", `{"table":{"content":{"headers":[],"rows":[{"cells":[{"html":`+strconv.Quote(cell)+`}]}]}},"style":{}}`)
	}
	text := func(s string) string {
		return module("text", `{"text":{"html":`+strconv.Quote(s)+`},"style":{}}`)
	}
	list := func(s string) string {
		return module("list", `{"list":{"tag":"ul","html":`+strconv.Quote(s)+`},"style":{}}`)
	}
	tests := []struct {
		name, module string
		bold         string // text a browser shows bold, as it reads the design's
	}{
		{"a div in a paragraph", paragraph(`<p style="word-break:break-word;"><div><strong>Any device</strong></div></p>`), ""},
		{"a table in a paragraph", paragraph(`<p>a<table><tr><td>b</td></tr></table>c</p><p>d</p>`), ""},
		{"a paragraph in a paragraph", text(`<p>a<p>b</p>c</p>`), ""},
		{"a list in a paragraph, formatting across", paragraph(`<p><b>a<ul><li>b</li></ul>c</b>d</p>e`), "abc"},
		{"a heading and a rule in a paragraph", paragraph(`<p>a<h2>b</h2>c<hr>d</p>`), ""},
		{"a paragraph in a cell of a paragraph's table", paragraph(`<p>a<table><tr><td><p>b<div>c</div></p></td></tr></table></p>`), ""},
		{"a div in a list item's paragraph", list(`<ul><li><p>a<div>b</div></p></li></ul>`), ""},
		{"a div in a table cell's paragraph", table(`<p>a<div>b</div>c</p>`), ""},
		{"paragraphs closed in order", paragraph(`<p>a</p><div><p>b</p></div><p>c<span>d</span></p>`), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inEachLayout(t, designJSON("["+row("", mods(tt.module))+"]"), func(layout Layout, out *Output) {
				written := strings.Count(string(out.Body), "<p ") + strings.Count(string(out.Body), "<p>")
				parsed := 0
				walkElements(parseLayout(t, out.Body, layout), func(n *html.Node) bool {
					if n.DataAtom == atom.P {
						parsed++
					}
					return true
				})
				if parsed != written {
					t.Errorf("%s: %d paragraphs parsed, %d written", layout, parsed, written)
				}
				if tt.bold != "" {
					var b strings.Builder
					walkElements(parseLayout(t, out.Body, layout), func(n *html.Node) bool {
						if n.DataAtom == atom.B {
							b.WriteString(nodeText(n))
						}
						return true
					})
					if b.String() != tt.bold {
						t.Errorf("%s: %q bold, want %q", layout, b.String(), tt.bold)
					}
				}
			})
		})
	}
}
