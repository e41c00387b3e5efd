// Package inventory lists the content a rendering of a design must
// contain, for tests: a second reading of the design, written apart from
// the renderer (it knows the block kinds on its own), so that tests can
// hold the renderer's output against it.
// Test-only: no product package imports it.
package inventory

import (
	"strings"

	"golang.org/x/net/html"

	"github.com/designbridge/caddy-designbridge/design"
)

// ItemKind says what an inventory item is.
type ItemKind uint8

// Inventory item kinds.
const (
	ItemText ItemKind = iota + 1 // a visible text run
	ItemHref                     // a link target
	ItemSrc                      // an image source
)

func (k ItemKind) String() string {
	switch k {
	case ItemText:
		return "text"
	case ItemHref:
		return "href"
	case ItemSrc:
		return "src"
	}
	return "?"
}

// Item is one piece of content of a design.
type Item struct {
	Kind  ItemKind
	Value string
}

// Inventory lists the content a rendering of the design must contain:
// every visible text run, link target and image source, in reading order
// (rows top to bottom, columns left to right, modules top to bottom).
//
// Texts are HTML-unescaped with runs of ASCII white space collapsed to one
// space and trimmed; empty runs are left out, as is text inside elements
// whose content is never shown (script, style, …). Hrefs and srcs are the
// values as written (trimmed), without empty ones and without those
// design.SafeURL rejects. Modules of unknown kinds contribute nothing
// (renderers skip them).
type Inventory struct {
	Items []Item // all of them, in reading order
	Texts []string
	Hrefs []string
	Srcs  []string
}

func (inv *Inventory) add(k ItemKind, s string) {
	switch k {
	case ItemText:
		s = design.CollapseSpace(s)
	default:
		s = strings.TrimSpace(s)
		if !design.SafeURL(s) {
			return
		}
	}
	if s == "" {
		return
	}
	inv.Items = append(inv.Items, Item{k, s})
	switch k {
	case ItemText:
		inv.Texts = append(inv.Texts, s)
	case ItemHref:
		inv.Hrefs = append(inv.Hrefs, s)
	case ItemSrc:
		inv.Srcs = append(inv.Srcs, s)
	}
}

// Of lists d's content in reading order; see the Inventory type.
func Of(d *design.Design) *Inventory {
	inv := &Inventory{}
	for ri := range d.Page.Rows {
		r := &d.Page.Rows[ri]
		for ci := range r.Columns {
			c := &r.Columns[ci]
			for mi := range c.Modules {
				inv.module(&c.Modules[mi])
			}
		}
	}
	return inv
}

// module adds a block's content. The kinds are spelt out as the format
// names them (the type without its prefix), not through the design or
// render packages: this is an independent reading. Dividers, spacers,
// empty and unknown blocks have no content.
func (inv *Inventory) module(m *design.Module) {
	kind := m.EffectiveKind()
	content := func(key string) *design.Value { return m.Descriptor.Get(key) }
	switch kind {
	case "text", "paragraph", "list", "html":
		inv.richHTML(content(kind).Get("html").Text())
	case "heading":
		inv.richHTML(content("heading").Get("text").Text())
	case "button":
		c := content("button")
		inv.label(c.Get("label").Text(), c.Get("href").Text())
		inv.add(ItemHref, c.Get("href").Text())
	case "image":
		c := content("image")
		inv.add(ItemSrc, design.ImageSrc(c))
		inv.add(ItemHref, c.Get("href").Text())
	case "video":
		c := content("video")
		inv.add(ItemSrc, c.Get("thumbSrc").Text())
		inv.add(ItemHref, c.Get("src").Text())
	case "social":
		icons := content("iconsList").Get("icons")
		for i := range icons.Len() {
			img := icons.Index(i).Get("image")
			inv.add(ItemSrc, img.Get("src").Text())
			inv.add(ItemHref, img.Get("href").Text())
			inv.add(ItemText, icons.Index(i).Get("text").Text())
		}
	case "icons":
		icons := content("iconsList").Get("icons")
		for i := range icons.Len() {
			ic := icons.Index(i)
			inv.add(ItemSrc, ic.Get("image").Text())
			inv.add(ItemHref, ic.Get("href").Text())
			inv.add(ItemText, ic.Get("text").Text())
		}
	case "menu":
		items := content("menuItemsList").Get("items")
		for i := range items.Len() {
			it := items.Index(i)
			inv.label(it.Get("text").Text(), it.At("link", "href").Text()) // may hold inline markup
			inv.add(ItemHref, it.At("link", "href").Text())
		}
	case "table":
		table := content("table").Get("content")
		for _, part := range [...]string{"headers", "rows"} {
			rows := table.Get(part)
			for i := range rows.Len() {
				cells := rows.Index(i).Get("cells")
				for j := range cells.Len() {
					inv.richHTML(cells.Index(j).Get("html").Text())
				}
			}
		}
	case "form":
		for _, f := range design.FormFields(content("form")) {
			inv.add(ItemText, f.Label)
			for _, o := range f.Options {
				inv.add(ItemText, o)
			}
		}
	}
}

// label adds a button's or a menu item's label, linked to href. A link
// cannot hold another (a browser ends the outer one at an <a>), so when
// href is a link the label's own links are not part of the rendering.
func (inv *Inventory) label(s, href string) {
	href = strings.TrimSpace(href)
	inv.rich(s, href == "" || !design.SafeURL(href))
}

// richHTML adds the text runs, link targets and image sources of an HTML
// fragment, in document order.
func (inv *Inventory) richHTML(s string) { inv.rich(s, true) }

// rich is richHTML, leaving out the link targets unless links.
func (inv *Inventory) rich(s string, links bool) {
	if strings.TrimSpace(s) == "" {
		return
	}
	z := html.NewTokenizer(strings.NewReader(s))
	skip := 0
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return
		case html.TextToken:
			if skip == 0 {
				inv.add(ItemText, string(z.Text()))
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			tag := string(name)
			if design.DropsContent(tag) {
				if tt == html.StartTagToken {
					skip++
				}
				continue
			}
			if skip > 0 || !hasAttr {
				continue
			}
			for {
				k, v, more := z.TagAttr()
				key := string(k)
				switch {
				case key == "href" && (tag == "a" || tag == "area") && links:
					inv.add(ItemHref, string(v))
				case key == "src" && tag == "img":
					inv.add(ItemSrc, string(v))
				}
				if !more {
					break
				}
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if design.DropsContent(string(name)) && skip > 0 {
				skip--
			}
		}
	}
}
