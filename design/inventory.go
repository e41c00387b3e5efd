package design

import (
	"strings"

	"golang.org/x/net/html"
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
// SafeURL rejects. Modules of unknown kinds contribute nothing (renderers
// skip them).
type Inventory struct {
	Items []Item // all of them, in reading order
	Texts []string
	Hrefs []string
	Srcs  []string
}

func (inv *Inventory) add(k ItemKind, s string) {
	switch k {
	case ItemText:
		s = CollapseSpace(s)
	default:
		s = strings.TrimSpace(s)
		if !SafeURL(s) {
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

// CollapseSpace collapses runs of ASCII white space to one space and trims
// the ends (U+00A0 from &nbsp; is kept: it is not collapsible in HTML).
func CollapseSpace(s string) string {
	var b strings.Builder
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteByte(c)
	}
	return b.String()
}

// SafeURL reports whether a link or source URL may be emitted: anything
// but script-capable schemes (javascript:, vbscript:, data: other than
// images). Scheme-less values ("www.example.com", "{{link}}",
// "$url$") are safe.
func SafeURL(u string) bool {
	colon := strings.IndexByte(u, ':')
	if colon < 0 || strings.ContainsAny(u[:colon], "/?#") {
		return true
	}
	// Browsers ignore ASCII control characters and spaces inside a scheme
	// ("java\tscript:"), so compare without them.
	scheme := make([]byte, 0, colon)
	for i := 0; i < colon; i++ {
		if c := u[i]; c > ' ' {
			scheme = append(scheme, c|0x20)
		}
	}
	switch string(scheme) {
	case "javascript", "vbscript", "livescript", "mocha":
		return false
	case "data":
		rest := strings.ToLower(strings.TrimSpace(u[colon+1:]))
		return strings.HasPrefix(rest, "image/") && !strings.HasPrefix(rest, "image/svg")
	}
	return true
}

// DropsContent reports whether an element's content is never shown as
// text, so sanitisers drop it and inventories skip it.
func DropsContent(tag string) bool {
	switch tag {
	case "script", "style", "template", "iframe", "object", "applet",
		"noscript", "noembed", "noframes", "frameset", "title",
		"head", "xmp", "select", "textarea", "svg", "math", "canvas", "audio", "video":
		return true
	}
	return false
}

// KnownKind reports whether renderers are expected to render a module
// kind (an addon counts when its ContentType is known).
func KnownKind(kind string) bool {
	switch kind {
	case KindText, KindParagraph, KindHeading, KindList, KindImage, KindButton,
		KindDivider, KindSpacer, KindSocial, KindIcons, KindMenu, KindHTML,
		KindVideo, KindTable, KindForm, KindEmpty:
		return true
	}
	return false
}

// Inventory lists d's content in reading order; see the Inventory type.
func (d *Design) Inventory() *Inventory {
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

// InventoryOf is Inventory as a function, for callers that prefer one.
func InventoryOf(d *Design) *Inventory { return d.Inventory() }

func (inv *Inventory) module(m *Module) {
	kind := m.EffectiveKind()
	if !KnownKind(kind) {
		return
	}
	c := m.Content()
	switch kind {
	case KindText, KindParagraph, KindList, KindHTML:
		inv.richHTML(c.Get("html").Text())
	case KindHeading:
		inv.richHTML(c.Get("text").Text())
	case KindButton:
		inv.richHTML(c.Get("label").Text())
		inv.add(ItemHref, c.Get("href").Text())
	case KindImage:
		inv.add(ItemSrc, ImageSrc(c))
		inv.add(ItemHref, c.Get("href").Text())
	case KindVideo:
		inv.add(ItemSrc, c.Get("thumbSrc").Text())
		inv.add(ItemHref, c.Get("src").Text())
	case KindSocial:
		icons := c.Get("icons")
		for i := range icons.Len() {
			img := icons.Index(i).Get("image")
			inv.add(ItemSrc, img.Get("src").Text())
			inv.add(ItemHref, img.Get("href").Text())
			inv.add(ItemText, icons.Index(i).Get("text").Text())
		}
	case KindIcons:
		icons := c.Get("icons")
		for i := range icons.Len() {
			ic := icons.Index(i)
			inv.add(ItemSrc, ic.Get("image").Text())
			inv.add(ItemHref, ic.Get("href").Text())
			inv.add(ItemText, ic.Get("text").Text())
		}
	case KindMenu:
		items := c.Get("items")
		for i := range items.Len() {
			it := items.Index(i)
			inv.richHTML(it.Get("text").Text()) // may hold inline markup
			inv.add(ItemHref, it.At("link", "href").Text())
		}
	case KindTable:
		content := c.Get("content")
		for _, part := range [...]string{"headers", "rows"} {
			rows := content.Get(part)
			for i := range rows.Len() {
				cells := rows.Index(i).Get("cells")
				for j := range cells.Len() {
					inv.richHTML(cells.Index(j).Get("html").Text())
				}
			}
		}
	case KindForm:
		for _, f := range FormFields(c) {
			inv.add(ItemText, f.Label)
			for _, o := range f.Options {
				inv.add(ItemText, o)
			}
		}
	}
}

// ImageSrc is an image content's source: src, or dynamicSrc (a merge
// expression) when src is empty.
func ImageSrc(img *Value) string {
	if s := strings.TrimSpace(img.Get("src").Text()); s != "" {
		return s
	}
	return strings.TrimSpace(img.Get("dynamicSrc").Text())
}

// FormField is one visible field of a form module, in layout order.
type FormField struct {
	ID       string
	Type     string // "text", "email", "checkbox", "radio", "submit", …
	Label    string // for submit: the button text
	Options  []string
	Required bool
}

// FormFields lists a form's visible fields in layout order (fields marked
// removeFromLayout are left out).
func FormFields(form *Value) []FormField {
	st := form.Get("structure")
	fields := st.Get("fields")
	layout := st.Get("layout")
	var out []FormField
	seen := map[string]bool{}
	addField := func(id string) {
		if seen[id] {
			return
		}
		seen[id] = true
		f := fields.Get(id)
		if f.Kind != Object || f.Get("removeFromLayout").Truthy() {
			return
		}
		ff := FormField{ID: id, Type: strings.ToLower(f.Get("type").Text()), Label: f.Get("label").Text()}
		ff.Required = f.At("attributes", "required").Truthy()
		if ff.Type == "submit" {
			if v := f.At("attributes", "value").Text(); v != "" {
				ff.Label = v
			}
		}
		opts := f.Get("options")
		for i := range opts.Len() {
			if l := opts.Index(i).Get("label").Text(); l != "" {
				ff.Options = append(ff.Options, l)
			}
		}
		out = append(out, ff)
	}
	if layout.Kind == Array {
		for i := range layout.Members {
			line := &layout.Members[i].Value
			if line.Kind == String {
				addField(line.Str)
				continue
			}
			for j := range line.Len() {
				addField(line.Index(j).Text())
			}
		}
	} else if fields.Kind == Object {
		for i := range fields.Members {
			addField(fields.Members[i].Key)
		}
	}
	return out
}

// richHTML adds the text runs, link targets and image sources of an HTML
// fragment, in document order.
func (inv *Inventory) richHTML(s string) {
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
			if DropsContent(tag) {
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
				case key == "href" && (tag == "a" || tag == "area"):
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
			if DropsContent(string(name)) && skip > 0 {
				skip--
			}
		}
	}
}
