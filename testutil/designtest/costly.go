package designtest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Costly is a design shaped to cost the renderer or the Check API far more
// than its size where an algorithm reads something once per other thing:
// Build makes it about size bytes, for benchmarks that show the cost
// growing with the size (docs/benchmarks.md, "Hostile designs") and tests
// of the bounds that keep it linear.
type Costly struct {
	Name  string
	Check bool // costly for the Check API, not for the renderer
	Build func(size int) []byte
}

// CostlyDesigns returns the shapes:
//
//   - stray-end-tags: rich text of many start tags, then many end tags
//     that close none of them (each looked for among the open ones);
//   - many-attributes: one tag of thousands of attributes (each compared
//     with those before it);
//   - font-family-run: a style of "font-family:" again and again, without
//     a ';' (each value read to the end of the style);
//   - distinct-fonts: thousands of spans of a font family each (each
//     looked for among those met);
//   - web-fonts: thousands of web fonts of the body's family, each at
//     its own URL (each URL looked for among those linked);
//   - hidden-unended-comments: an html block hidden on desktop of
//     "<!--" again and again, none ended (each end looked for in the rest);
//   - style-url-run: a style of "url(" again and again (each URL read to
//     the end of the style);
//   - style-quote-run: a style of an image-set( and then quotes (each
//     quoted URL read to the end of the style);
//   - menu-translations: menus of thousands of items whose translations
//     object has thousands of keys, none of the languages asked for
//     (each item's language looked for among the keys).
func CostlyDesigns() []Costly {
	return []Costly{
		{Name: "stray-end-tags", Build: func(n int) []byte {
			return costlyRichText(n, func(m int) string {
				return strings.Repeat("<b>", m*3/7/3) + strings.Repeat("</i>", m*4/7/4)
			})
		}},
		{Name: "many-attributes", Build: func(n int) []byte {
			return costlyRichText(n, func(m int) string {
				var b strings.Builder
				b.WriteString("<span")
				for i := 0; b.Len() < m; i++ {
					fmt.Fprintf(&b, " a%d", i)
				}
				return b.String() + ">x</span>"
			})
		}},
		{Name: "font-family-run", Build: func(n int) []byte {
			return costlyRichText(n, func(m int) string {
				return `<span style="` + strings.Repeat("font-family:", m/12) + `">x</span>`
			})
		}},
		{Name: "distinct-fonts", Build: func(n int) []byte {
			return costlyRichText(n, func(m int) string {
				var b strings.Builder
				for i := 0; b.Len() < m; i++ {
					fmt.Fprintf(&b, `<i style="font-family:f%d">.</i>`, i)
				}
				return b.String()
			})
		}},
		{Name: "web-fonts", Build: func(n int) []byte {
			var b strings.Builder
			for i := 0; b.Len() < n; i++ {
				fmt.Fprintf(&b, `{"name":"Arial","fontFamily":"Arial","url":"https://fonts.example/%d"},`, i)
			}
			fonts := strings.TrimSuffix(b.String(), ",")
			return costlyDoc(`"webFonts":[`+fonts+`],`, costlyModule("paragraph", `"paragraph":{"html":"<p>x</p>"}`))
		}},
		{Name: "hidden-unended-comments", Build: func(n int) []byte {
			k := (n + 1<<20 - 1) / (1 << 20)
			text, _ := json.Marshal(strings.Repeat("<!--", n/k/4))
			mods := make([]string, k)
			for i := range mods {
				mods[i] = costlyModule("html", `"html":{"html":`+string(text)+`},"computedStyle":{"hideContentOnDesktop":true}`)
			}
			return costlyDoc("", mods...)
		}},
		{Name: "style-url-run", Build: func(n int) []byte {
			return costlyRichText(n, func(m int) string {
				return `<span style="background:` + strings.Repeat("url(", m/4) + `">x</span>`
			})
		}},
		{Name: "style-quote-run", Build: func(n int) []byte {
			return costlyRichText(n, func(m int) string {
				return `<span style="background:image-set(` + strings.Repeat("'", m) + `">x</span>`
			})
		}},
		{Name: "menu-translations", Check: true, Build: func(n int) []byte {
			var mods []string
			for left := n; left > 0; left -= 1 << 20 {
				w := min(left, 1<<20) / 13 // {}, and "i":0, about 13 bytes an item
				var b strings.Builder
				b.WriteString(`"menuItemsList":{"items":[`)
				b.WriteString(strings.TrimSuffix(strings.Repeat("{},", w), ","))
				b.WriteString(`],"translations":{`)
				for i := range w {
					if i > 0 {
						b.WriteByte(',')
					}
					fmt.Fprintf(&b, `"%d":0`, i)
				}
				b.WriteString(`}}`)
				mods = append(mods, costlyModule("menu", b.String()))
			}
			return costlyDoc("", mods...)
		}},
	}
}

// costlyRichText is a design whose paragraphs' HTML, about n bytes in
// all, is made by html (given each paragraph's size): a JSON string is
// at most 2 MiB.
func costlyRichText(n int, html func(size int) string) []byte {
	k := (n + 1<<20 - 1) / (1 << 20)
	text, _ := json.Marshal(html(n / k))
	mods := make([]string, k)
	for i := range mods {
		mods[i] = costlyModule("paragraph", `"paragraph":{"html":`+string(text)+`}`)
	}
	return costlyDoc("", mods...)
}

func costlyDoc(body string, modules ...string) []byte {
	return []byte(`{"page":{"body":{` + body + `"content":{"style":{"font-family":"Arial, sans-serif"}}},"rows":[{"columns":[{"modules":[` + strings.Join(modules, ",") + `]}]}]}}`)
}

func costlyModule(kind, descriptor string) string {
	return `{"type":"mailup-bee-newsletter-modules-` + kind + `","descriptor":{` + descriptor + `}}`
}
