package render

import (
	"fmt"
	"strings"

	"github.com/designbridge/caddy-designbridge/design"
)

// iconsBlock is a row of icons, each with optional text to its left,
// right or below, optionally linked.
type iconsBlock struct{ icons []icon }

type icon struct {
	image                    string // the image's URL
	alt, title, href, target string
	text, textPosition       string // textPosition lower-cased
	width, height            *design.Value
}

var iconsKind = kind{
	name:    design.KindIcons,
	content: "iconsList",
	decode: func(c *design.Value) (block, error) {
		b := &iconsBlock{icons: make([]icon, 0, c.Get("icons").Len())}
		err := iconList(c, func(i int, ic *design.Value) error {
			img := ic.Get("image")
			if !isTextOrAbsent(img) {
				return fmt.Errorf("descriptor.iconsList.icons[%d].image must be a string, not %s", i, img.Kind)
			}
			b.icons = append(b.icons, icon{image: img.Text(), alt: ic.Get("alt").Text(), title: ic.Get("title").Text(),
				href: ic.Get("href").Text(), target: ic.Get("target").Text(),
				text: ic.Get("text").Text(), textPosition: lower(ic.Get("textPosition").Text()),
				width: ic.Get("width"), height: ic.Get("height")})
			return nil
		})
		return b, err
	},
}

// iconList reads the iconsList that the icons and social blocks share:
// an array of objects, each read by item.
func iconList(c *design.Value, item func(i int, ic *design.Value) error) error {
	icons := c.Get("icons")
	if icons.Present() && icons.Kind != design.Array {
		return fmt.Errorf("descriptor.iconsList.icons must be an array, not %s", icons.Kind)
	}
	for i := range icons.Len() {
		ic := icons.Index(i)
		if ic.Kind != design.Object {
			return fmt.Errorf("descriptor.iconsList.icons[%d] must be an object, not %s", i, ic.Kind)
		}
		if err := item(i, ic); err != nil {
			return err
		}
	}
	return nil
}

// text writes one linked icon a line, by its text or alt text.
func (b *iconsBlock) text(w *textWriter) {
	for i := range b.icons {
		ic := &b.icons[i]
		w.lineBreak()
		w.linkedLabel(firstNonBlank(ic.text, ic.alt), "href", ic.href)
	}
}

func (b *iconsBlock) html(w *emailWriter, m *design.Module) {
	st := m.Style
	align := textAlign(st.Get("text-align"))
	if align == "" || align == "justify" {
		align = "center"
	}
	td := w.style()
	td.raw("text-align:" + align + ";")
	w.blockOpen(m, "icons", &td, align)
	iconH, ok := m.Computed.Px("iconHeight")
	if !ok || iconH <= 0 {
		iconH = 32
	}
	item := w.style()
	item.addPadding(padding(design.StyleOf(m.Computed.Value("iconSpacing"))))
	txt := w.style()
	txt.add("color", w.safeColor("color", st.Get("color")))
	txt.add("font-family", w.fontStack(st.Get("font-family")))
	txt.add("font-size", st.Get("font-size"))
	txt.add("font-weight", st.Get("font-weight"))
	txt.add("letter-spacing", st.Get("letter-spacing"))
	txt.raw("text-decoration:none;")
	// Items are inline-block boxes so that a row of icons too wide for a
	// narrow column wraps onto further lines instead of spilling out;
	// Outlook for Windows, which ignores inline-block, gets a ghost table
	// keeping them on one line (it has no narrow screens).
	w.s(`<div class="icons-inner" style="text-align:`)
	w.s(align)
	w.s(`"><!--[if mso]><table align="`)
	w.s(align)
	w.s(`"`)
	w.s(tableAttrs)
	w.s(`><tr><![endif]-->`)
	for i := range b.icons {
		w.checkSize()
		ic := &b.icons[i]
		iw := iconH
		nw, okW := ic.width.Px()
		nh, okH := ic.height.Px()
		if okW && okH && nw > 0 && nh > 0 {
			iw = float64(int(iconH*nw/nh + 0.5))
		}
		text := ic.text
		pos := ic.textPosition
		// The spacing sits on a cell: Outlook ignores padding on divs.
		w.s(`<!--[if mso]><td valign="middle"><![endif]--><div class="ic" style="display:inline-block;vertical-align:middle"><table`)
		w.s(tableAttrs)
		w.s("><tr><td")
		w.styleAttr(&item)
		w.s("><table")
		w.s(tableAttrs)
		w.s(` align="center"><tr>`)
		textCell := func() {
			if text == "" {
				return
			}
			w.s(`<td valign="middle" style="padding:0 5px;text-align:center">`)
			w.iconText(ic, text, &txt)
			w.s("</td>")
		}
		if pos == "left" {
			textCell()
		}
		w.s(`<td valign="middle">`)
		w.imageTag(w.keptURL("image", strings.TrimSpace(ic.image)), ic.alt, ic.title, w.keptURL("href", strings.TrimSpace(ic.href)), ic.target, iw, iw, "center", "", false)
		w.s("</td>")
		switch pos {
		case "left":
		case "bottom":
			if text != "" {
				w.s(`</tr><tr>`)
				textCell()
			}
		default:
			textCell()
		}
		w.s("</tr></table></td></tr></table></div><!--[if mso]></td><![endif]-->")
	}
	w.s("<!--[if mso]></tr></table><![endif]--></div>")
	w.blockClose()
}

func (w *emailWriter) iconText(ic *icon, text string, st *style) {
	href := ic.href
	if href != "" && w.allowURL("href", href) {
		w.s("<a")
		w.attr("href", href)
		w.s(` target="_blank"`)
		w.styleAttr(st)
		w.s(">")
		w.text(text)
		w.s("</a>")
		return
	}
	w.s("<span")
	w.styleAttr(st)
	w.s(">")
	w.text(text)
	w.s("</span>")
}
