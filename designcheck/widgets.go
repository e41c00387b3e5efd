package designcheck

import (
	"net/url"
	"path"
	"strings"
	"sync"

	"golang.org/x/net/html"

	"github.com/designbridge/caddy-designbridge/design"
)

// Widget types of the answer's targets.
const (
	widgetImage   = "image"
	widgetGIF     = "gif"
	widgetSticker = "sticker"
	widgetIcon    = "icon"
	widgetSocial  = "social"
	widgetButton  = "button"
	widgetMenu    = "menu"
)

// widget is one element a check looks at: an image block, one icon of an
// icons or social block, a button, one menu item.
type widget struct {
	typ            string
	uuid           string
	locked, synced bool

	elem *design.Value // the element's object in the design
	// trans is the element's object in the translations of a language
	// (absent when the language does not change it).
	trans func(lang string) *design.Value

	src, alt, href []string // member paths inside elem; nil when none
}

// get reads the member at p for lang: the translation when it has one,
// else the design's own copy.
func (w *widget) get(lang string, p []string) string {
	if p == nil {
		return ""
	}
	if lang != DefaultLanguage && w.trans != nil {
		if v := w.trans(lang).At(p...); v.Present() {
			return strings.TrimSpace(v.Text())
		}
	}
	return strings.TrimSpace(w.elem.At(p...).Text())
}

// source is the element's image URL for lang ("" when it has none).
func (w *widget) source(lang string) string {
	s := w.get(lang, w.src)
	if s == "" && w.typ != widgetIcon && w.typ != widgetSocial {
		// An image block with a merge expression instead of a URL.
		s = w.get(lang, []string{"dynamicSrc"})
	}
	return s
}

// label is what the answer calls the element: the file name of an image
// or icon, the URL of a gif or sticker, the name of a social icon, the
// text of a button or menu item.
func (w *widget) label(lang string) string {
	switch w.typ {
	case widgetGIF, widgetSticker:
		return w.source(lang)
	case widgetImage, widgetIcon:
		return fileName(w.source(lang))
	case widgetSocial:
		if n := strings.TrimSpace(w.elem.Get("name").Text()); n != "" {
			return n
		}
		return strings.TrimSpace(w.elem.Get("id").Text())
	case widgetButton:
		return plainText(w.get(lang, []string{"label"}))
	case widgetMenu:
		return plainText(w.get(lang, []string{"text"}))
	}
	return ""
}

// target is the answer's description of w.
func (w *widget) target(lang string) Target {
	label, locked, synced := w.label(lang), w.locked, w.synced
	return Target{UUID: w.uuid, WidgetType: w.typ, WidgetLabel: &label, Locked: &locked, Synced: &synced}
}

// collect lists the widgets of d in reading order.
func collect(d *design.Design) []widget {
	var out []widget
	for ri := range d.Page.Rows {
		r := &d.Page.Rows[ri]
		rowLocked := r.Raw.Get("locked").BoolOr(false)
		synced := r.Raw.Get("synced").BoolOr(false)
		for ci := range r.Columns {
			for mi := range r.Columns[ci].Modules {
				m := &r.Columns[ci].Modules[mi]
				base := widget{uuid: m.UUID, locked: rowLocked || m.Locked, synced: synced}
				if base.uuid == "" {
					// The vendor locates a widget by its row when the
					// block has no id of its own.
					base.uuid = r.UUID
				}
				out = appendModule(out, m, base)
			}
		}
	}
	return out
}

func appendModule(out []widget, m *design.Module, base widget) []widget {
	kind := m.EffectiveKind()
	switch kind {
	case design.KindImage, "gif", "gifs", "sticker", "stickers":
		c := m.Descriptor.Get("image")
		if !c.IsObjectLike() {
			return out
		}
		w := base
		w.typ = imageWidgetType(kind, c)
		w.elem, w.trans = c, contentTranslation(c)
		w.src, w.alt, w.href = []string{"src"}, []string{"alt"}, []string{"href"}
		return append(out, w)
	case design.KindButton:
		c := m.Descriptor.Get("button")
		if !c.IsObjectLike() {
			return out
		}
		w := base
		w.typ, w.elem, w.trans = widgetButton, c, contentTranslation(c)
		w.href = []string{"href"}
		return append(out, w)
	case design.KindIcons, design.KindSocial:
		list := m.Descriptor.Get("iconsList")
		icons, t := list.Get("icons"), translations(list)
		for i := 0; i < icons.Len(); i++ {
			ic := icons.Index(i)
			if !ic.IsObjectLike() {
				continue
			}
			w := base
			w.elem, w.trans = ic, itemTranslation(t, "icons", i)
			if kind == design.KindSocial {
				w.typ = widgetSocial
				w.src, w.alt, w.href = []string{"image", "src"}, []string{"image", "alt"}, []string{"image", "href"}
			} else {
				w.typ = widgetIcon
				w.src, w.alt, w.href = []string{"image"}, []string{"alt"}, []string{"href"}
			}
			out = append(out, w)
		}
	case design.KindMenu:
		list := m.Descriptor.Get("menuItemsList")
		items, t := list.Get("items"), translations(list)
		for i := 0; i < items.Len(); i++ {
			it := items.Index(i)
			if !it.IsObjectLike() {
				continue
			}
			w := base
			w.typ, w.elem, w.trans = widgetMenu, it, itemTranslation(t, "items", i)
			w.href = []string{"link", "href"}
			out = append(out, w)
		}
	}
	return out
}

// imageWidgetType tells an image from a gif or a sticker, by the block's
// kind or the image's own "type".
func imageWidgetType(kind string, img *design.Value) string {
	t := strings.ToLower(kind + " " + strings.TrimSpace(img.Get("type").Text()))
	switch {
	case strings.Contains(t, "sticker"):
		return widgetSticker
	case strings.Contains(t, "gif"):
		return widgetGIF
	}
	return widgetImage
}

// contentTranslation finds a block's translated copy in
// <content>.translations.<lang> (nil when there is none).
func contentTranslation(c *design.Value) func(string) *design.Value {
	t := translations(c)
	return func(lang string) *design.Value { return t()[lang] }
}

// itemTranslation finds item i of a list's translated copy in
// <list>.translations.<lang>.<key>[i], t being translations(list).
func itemTranslation(t func() map[string]*design.Value, key string, i int) func(string) *design.Value {
	return func(lang string) *design.Value { return t()[lang].Get(key).Index(i) }
}

// translations returns v's translations by language, decoded on first use
// (once for a list's items): the design keeps them as JSON text
// (design.Raw), since the HTML never reads them. They are indexed once:
// looked up by Value.Get, each of a list's items scanned every key of the
// object, items × keys × languages (a 250 KB menu took 19 s).
func translations(v *design.Value) func() map[string]*design.Value {
	return sync.OnceValue(func() map[string]*design.Value {
		t := v.Get("translations").Expand()
		if t.Kind != design.Object {
			return nil
		}
		byLang := make(map[string]*design.Value, len(t.Members))
		for i := range t.Members {
			byLang[t.Members[i].Key] = &t.Members[i].Value // the last wins, as in Get
		}
		return byLang
	})
}

// missingAlt: an image, gif, sticker, icon or social icon showing an
// image without alternative text.
func missingAlt(w *widget, lang string) bool {
	switch w.typ {
	case widgetImage, widgetGIF, widgetSticker, widgetIcon, widgetSocial:
		return w.source(lang) != "" && w.get(lang, w.alt) == ""
	}
	return false
}

// missingImageLink: an image, gif, sticker or icon that links nowhere.
func missingImageLink(w *widget, lang string) bool {
	switch w.typ {
	case widgetImage, widgetGIF, widgetSticker, widgetIcon:
		return w.source(lang) != "" && w.get(lang, w.href) == ""
	}
	return false
}

// missingCopyLink: a button, social icon or menu item that links nowhere.
func missingCopyLink(w *widget, lang string) bool {
	switch w.typ {
	case widgetButton, widgetSocial, widgetMenu:
		return w.get(lang, w.href) == ""
	}
	return false
}

// widgetCheck answers a check that flags widgets one by one.
func widgetCheck(category, status string, widgets []widget, lang string, flagged func(*widget, string) bool) Result {
	r := Result{Type: category, CheckStatus: status}
	for i := range widgets {
		if flagged(&widgets[i], lang) {
			r.Targets = append(r.Targets, widgets[i].target(lang))
		}
	}
	return r
}

// fileName is the last path segment of an image URL, unescaped; the URL
// itself when it has none.
func fileName(src string) string {
	u, err := url.Parse(src)
	if err != nil || u.Path == "" || strings.HasSuffix(u.Path, "/") {
		return src
	}
	return path.Base(u.Path)
}

// plainText is the text of an HTML fragment (labels are rich text), with
// white space collapsed.
func plainText(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return design.CollapseSpace(s)
	}
	var b strings.Builder
	z := html.NewTokenizer(strings.NewReader(s))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return design.CollapseSpace(b.String())
		case html.TextToken:
			b.Write(z.Text())
		case html.StartTagToken, html.EndTagToken, html.SelfClosingTagToken:
			b.WriteByte(' ')
		}
	}
}
