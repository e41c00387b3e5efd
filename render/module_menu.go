package render

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/designbridge/caddy-designbridge/design"
)

// hamburgerPad is the most side padding, in px, a hamburger menu keeps
// on phones.
const hamburgerPad = 5

// menuBlock is navigation links in a line (or stacked, for a vertical
// layout), with the configured separator between items.
type menuBlock struct{ items []menuItem }

type menuItem struct{ text, href, target, title string }

var menuKind = kind{
	name:    design.KindMenu,
	content: "menuItemsList",
	decode:  decodeMenu,
	// A hamburger menu (class hb) on phones: one item a line, no
	// separators.
	mobileCSS: `.hb .sep{display:none!important}.hb .mi{display:block!important;padding:4px 0!important}`,
}

// decodeMenu: every item an object with text and link.href as text.
func decodeMenu(c *design.Value) (block, error) {
	items := c.Get("items")
	if items.Present() && items.Kind != design.Array {
		return nil, fmt.Errorf("descriptor.menuItemsList.items must be an array, not %s", items.Kind)
	}
	b := &menuBlock{items: make([]menuItem, 0, items.Len())}
	for i := range items.Len() {
		it := items.Index(i)
		if it.Kind != design.Object {
			return nil, fmt.Errorf("descriptor.menuItemsList.items[%d] must be an object, not %s", i, it.Kind)
		}
		if v := it.Get("text"); !isTextOrAbsent(v) {
			return nil, fmt.Errorf("descriptor.menuItemsList.items[%d].text must be a string, not %s", i, v.Kind)
		}
		link := it.Get("link")
		if v := link.Get("href"); !isTextOrAbsent(v) {
			return nil, fmt.Errorf("descriptor.menuItemsList.items[%d].link.href must be a string, not %s", i, v.Kind)
		}
		b.items = append(b.items, menuItem{text: it.Get("text").Text(), href: link.Get("href").Text(),
			target: link.Get("target").Text(), title: link.Get("title").Text()})
	}
	return b, nil
}

// text writes one linked item a line.
func (b *menuBlock) text(w *textWriter) {
	for _, it := range b.items {
		w.lineBreak()
		w.linkedLabel(it.text, "href", it.href)
	}
}

func (b *menuBlock) html(w *emailWriter, m *design.Module) {
	st := m.Style
	align := textAlign(st.Get("text-align"))
	if align == "" || align == "justify" {
		align = "center"
	}
	td := w.style()
	td.raw("text-align:" + align + ";")
	vertical := lower(m.Computed.Get("layout")) == "vertical"
	// A hamburger menu on phones (the vendor's collapsible icon) becomes
	// what it shows when opened, a compact vertical list: email has no
	// script, and the list fits a narrow column where the line did not.
	// Its wide side padding is narrowed too, so that the list's words
	// fit a column a quarter of a phone wide.
	hamburger := !vertical && m.Computed.Value("hamburger").Get("mobile").BoolOr(false)
	padCls := ""
	if _, pr, _, pl := padding(st); hamburger && (pl > hamburgerPad || pr > hamburgerPad) &&
		!m.Mobile.Has("padding-left") && !m.Mobile.Has("padding-right") {
		padCls = "hp" + strconv.Itoa(w.blockSeq)
		w.mobileRule("."+padCls+" td.pad", "padding-left:"+formatPx(min(pl, hamburgerPad))+"px!important;padding-right:"+formatPx(min(pr, hamburgerPad))+"px!important")
	}
	w.blockOpenClass(m, "menu", padCls, &td, align)
	linkColor := w.linkColorFor(m.Computed.Get("linkColor"), st.Get("color"))
	box := w.style()
	box.add("color", w.safeColor("color", st.Get("color")))
	box.add("font-family", w.fontStack(st.Get("font-family")))
	box.add("font-size", st.Get("font-size"))
	box.add("font-weight", st.Get("font-weight"))
	box.add("letter-spacing", st.Get("letter-spacing"))
	box.add("line-height", "1.5")
	// Items wrap between each other in a narrow column; a single word
	// wider than the column breaks rather than spilling into the next.
	box.raw("word-break:break-word;")
	w.s(`<div class="menu-links tx`)
	if hamburger {
		w.s(" hb")
		w.useMobileCSS(design.KindMenu)
	}
	w.s(`"`)
	w.styleAttr(&box)
	w.s(">")
	link := w.style()
	link.raw("text-decoration:none;")
	link.add("color", linkColor)
	link.addPadding(padding(design.StyleOf(m.Computed.Value("menuItemsSpacing"))))
	if vertical {
		link.raw("display:block;")
	} else {
		link.raw("display:inline-block;")
	}
	sep := m.Computed.Get("separator")
	for i := range b.items {
		w.checkSize()
		it := &b.items[i]
		if i > 0 && sep != "" && !vertical {
			w.s(`<span class="sep" aria-hidden="true">`)
			w.text(sep)
			w.s("</span>")
		}
		href := strings.TrimSpace(it.href)
		linked := href != "" && w.allowURL("href", href)
		if linked {
			w.s("<a")
			w.attr("href", href)
			t := lower(it.target)
			if t == "" {
				t = "_blank"
			}
			w.attr("target", t)
			if title := it.title; title != "" {
				w.attr("title", title)
			}
		} else {
			w.s("<span")
		}
		w.s(` class="mi"`)
		w.styleAttr(&link)
		w.s(">")
		// The item holds phrasing content only, and its link no other.
		w.rich(it.text, &richOpts{phrasing: true, inLink: linked})
		if linked {
			w.s("</a>")
		} else {
			w.s("</span>")
		}
	}
	w.s("</div>")
	w.blockClose()
}
