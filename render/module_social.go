package render

import (
	"fmt"
	"strings"

	"github.com/designbridge/caddy-designbridge/design"
)

// socialBlock is a row of linked social network icons.
type socialBlock struct{ icons []socialIcon }

type socialIcon struct {
	src, href, alt, title, target string // the image's
	width                         *design.Value
	name, text                    string
}

var socialKind = kind{
	name:    design.KindSocial,
	content: "iconsList",
	decode: func(c *design.Value) (block, error) {
		b := &socialBlock{icons: make([]socialIcon, 0, c.Get("icons").Len())}
		err := iconList(c, func(i int, ic *design.Value) error {
			img := ic.Get("image")
			if img.Present() && !img.IsObjectLike() {
				return fmt.Errorf("descriptor.iconsList.icons[%d].image must be an object, not %s", i, img.Kind)
			}
			for _, n := range [...]string{"src", "href", "alt"} {
				if v := img.Get(n); !isTextOrAbsent(v) {
					return fmt.Errorf("descriptor.iconsList.icons[%d].image.%s must be a string, not %s", i, n, v.Kind)
				}
			}
			b.icons = append(b.icons, socialIcon{src: img.Get("src").Text(), href: img.Get("href").Text(),
				alt: img.Get("alt").Text(), title: img.Get("title").Text(), target: img.Get("target").Text(),
				width: img.Get("width"), name: ic.Get("name").Text(), text: ic.Get("text").Text()})
			return nil
		})
		return b, err
	},
}

// text writes one linked network a line, by the first label it has.
func (b *socialBlock) text(w *textWriter) {
	for i := range b.icons {
		ic := &b.icons[i]
		w.lineBreak()
		w.linkedLabel(firstNonBlank(ic.alt, ic.text, ic.title, ic.name), "href", ic.href)
	}
}

func (b *socialBlock) html(w *emailWriter, m *design.Module) {
	align := textAlign(m.Style.Get("text-align"))
	if align == "" || align == "justify" {
		align = "center"
	}
	td := w.style()
	td.raw("text-align:" + align + ";")
	w.blockOpen(m, "social", &td, align)
	size := 32.0
	if n, ok := m.Computed.Px("iconsDefaultWidth"); ok && n > 0 {
		size = n
	}
	pt, pr, pb, pl := shorthand(m.Computed.Get("padding"))
	if m.Computed.Get("padding") == "" {
		pr = 5
	}
	// The padding around each icon spaces them; on the group's outer
	// edges only as much as both sides have, so that a one-sided spacing
	// ("0 5px 0 0") does not push the group off its alignment (the last
	// icon's right padding put a centred group 2.5 px left of centre).
	edge := min(pl, pr)
	cell := func(l, r float64) style {
		s := w.style()
		s.addPadding(pt, r, pb, l)
		return s
	}
	inner, first, last, only := cell(pl, pr), cell(edge, pr), cell(pl, edge), cell(edge, edge)
	// Inline-block items wrap in a column too narrow for the whole row of
	// icons; Outlook for Windows gets them in one ghost-table row.
	w.s(`<div class="social-inner" style="text-align:`)
	w.s(align)
	w.s(`"><!--[if mso]><table align="`)
	w.s(align)
	w.s(`"`)
	w.s(tableAttrs)
	w.s(`><tr><![endif]-->`)
	for i := range b.icons {
		w.checkSize()
		ic := &b.icons[i]
		iw := size
		if n, ok := ic.width.Px(); ok && n > 0 && n < size*4 {
			iw = n
		}
		alt := ic.alt
		if alt == "" {
			alt = ic.name
		}
		w.s(`<!--[if mso]><td><![endif]--><div class="si" style="display:inline-block;vertical-align:top"><table`)
		w.s(tableAttrs)
		w.s("><tr><td")
		switch {
		case len(b.icons) == 1:
			w.styleAttr(&only)
		case i == 0:
			w.styleAttr(&first)
		case i == len(b.icons)-1:
			w.styleAttr(&last)
		default:
			w.styleAttr(&inner)
		}
		w.s(">")
		w.imageTag(w.keptURL("src", strings.TrimSpace(ic.src)), alt, ic.title, w.keptURL("href", strings.TrimSpace(ic.href)), ic.target, iw, iw, "", "", false)
		if t := ic.text; t != "" {
			w.s(`<span class="tx">`)
			w.text(t)
			w.s("</span>")
		}
		w.s("</td></tr></table></div><!--[if mso]></td><![endif]-->")
	}
	w.s("<!--[if mso]></tr></table><![endif]--></div>")
	w.blockClose()
}
