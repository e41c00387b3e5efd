// Package mjml exports a design as MJML, for the benchmarks that time the
// renderer against mjml (bench/mjmlcompare) on the same document. It is not
// part of the product: it reads the design only through the design
// package's exported API.
package mjml

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/designbridge/caddy-designbridge/design"
)

// Export exports d as an MJML document (mj-section / mj-column / mj-text /
// mj-image / mj-button / mj-divider / mj-spacer / mj-social / mj-navbar /
// mj-table), one component per module, with the design's widths, colours,
// paddings and fonts as attributes. It exists so that the benchmarks can
// render the same document with MJML and with HTML.
//
// It is an approximation of the design, not a second renderer: forms and
// modules of unknown kinds are left out, and row/column decoration that
// MJML has no attribute for is dropped. Rich-text HTML (text, paragraph,
// list, html modules, button labels) is passed through as the content of
// the MJML component, as MJML expects.
func Export(d *design.Design) ([]byte, error) {
	if d == nil {
		return nil, errors.New("mjml: nil design")
	}
	w := &mjmlWriter{}
	w.document(d)
	return w.buf.Bytes(), nil
}

type mjmlWriter struct {
	buf    bytes.Buffer
	hidden bool // some block is hidden on mobile or desktop: emit the classes
}

func (w *mjmlWriter) document(d *design.Design) {
	page := &d.Page
	body := &page.Body

	// The rows go first into their own buffer: the head depends on what
	// they use (the hide classes).
	rows := &mjmlWriter{}
	for i := range page.Rows {
		rows.row(&page.Rows[i], body)
	}
	w.hidden = rows.hidden

	w.buf.WriteString("<mjml")
	if lang := page.Meta.Lang; lang != "" {
		w.attr("lang", lang)
	}
	if body.Direction == "rtl" {
		w.attr("dir", "rtl")
	}
	w.buf.WriteString(">\n<mj-head>\n")
	title := page.Meta.Title
	if title == "" {
		title = page.Title
	}
	w.buf.WriteString("<mj-title>")
	w.buf.WriteString(mjmlText(title))
	w.buf.WriteString("</mj-title>\n")
	if page.Meta.Preheader != "" {
		w.buf.WriteString("<mj-preview>")
		w.buf.WriteString(mjmlText(page.Meta.Preheader))
		w.buf.WriteString("</mj-preview>\n")
	}
	w.buf.WriteString("<mj-breakpoint")
	w.attr("width", strconv.Itoa(body.Width+20)+"px")
	w.buf.WriteString(" />\n")
	for _, f := range body.WebFonts {
		if f.URL == "" || f.Name == "" {
			continue
		}
		w.buf.WriteString("<mj-font")
		w.attr("name", f.Name)
		w.attr("href", f.URL)
		w.buf.WriteString(" />\n")
	}
	w.buf.WriteString("<mj-attributes>\n<mj-all")
	w.attrIf("font-family", body.FontFamily)
	w.buf.WriteString(" />\n<mj-text")
	w.attrIf("color", body.Color)
	w.buf.WriteString(" padding=\"0\" />\n<mj-section padding=\"0\" />\n<mj-column padding=\"0\" />\n</mj-attributes>\n")
	if w.hidden {
		w.buf.WriteString("<mj-style>.mobile_hide,.desktop_hide{}\n@media (max-width:")
		w.buf.WriteString(strconv.Itoa(body.Width + 20))
		w.buf.WriteString("px){.mobile_hide{display:none!important;max-height:0;overflow:hidden}}\n@media (min-width:")
		w.buf.WriteString(strconv.Itoa(body.Width + 21))
		w.buf.WriteString("px){.desktop_hide{display:none!important;max-height:0;overflow:hidden}}</mj-style>\n")
	}
	// Rich text comes with its own inline styles; the head style only sets
	// what the editor shows by default. It is not inlined (mj-style
	// inline="inline" would run MJML's CSS inliner over the whole document).
	w.buf.WriteString("<mj-style>p{margin:0}")
	if body.LinkColor != "" {
		w.buf.WriteString(" a{color:")
		w.buf.WriteString(mjmlText(body.LinkColor))
		w.buf.WriteString("}")
	}
	w.buf.WriteString("</mj-style>\n")
	w.buf.WriteString("</mj-head>\n<mj-body")
	w.attr("width", strconv.Itoa(body.Width)+"px")
	w.attrIf("background-color", mjmlColor(body.BackgroundColor))
	w.buf.WriteString(">\n")
	w.buf.Write(rows.buf.Bytes())
	w.buf.WriteString("</mj-body>\n</mjml>\n")
}

func (w *mjmlWriter) row(r *design.Row, body *design.Body) {
	band := mjmlColor(r.ContainerStyle.Get("background-color"))
	box := mjmlColor(r.ContentStyle.Get("background-color"))
	// A coloured full-width band around a differently coloured box needs a
	// wrapper; otherwise one section carries whichever colour there is.
	wrapped := band != "" && box != "" && band != box
	if wrapped {
		w.buf.WriteString("<mj-wrapper full-width=\"full-width\" padding=\"0\"")
		w.attr("background-color", band)
		w.backgroundImage(r.ContainerStyle)
		w.buf.WriteString(">\n")
	}
	w.buf.WriteString("<mj-section")
	if box == "" && band != "" {
		// Only the band is coloured: a full-width section paints it.
		box = band
		w.attr("full-width", "full-width")
	}
	w.attrIf("background-color", box)
	if wrapped {
		w.backgroundImage(r.ContentStyle)
	} else if !w.backgroundImage(r.ContentStyle) {
		w.backgroundImage(r.ContainerStyle)
	}
	w.attr("padding", mjmlPadding(r.ContentStyle))
	w.attrIf("border-radius", r.ContentStyle.Get("border-radius"))
	if r.ReverseOnMobile {
		w.attr("direction", "rtl")
	}
	w.attrIf("css-class", w.hideClass(r.HideOnMobile, r.HideOnDesktop))
	w.buf.WriteString(">\n")
	// mj-group keeps columns side by side on mobile.
	group := !r.StackOnMobile && len(r.Columns) > 1
	if group {
		w.buf.WriteString("<mj-group>\n")
	}
	total := r.GridTotal()
	if total <= 0 {
		total = 12
	}
	if r.ReverseOnMobile {
		// direction="rtl" lays the columns out right to left: write them
		// reversed so desktop order is kept and mobile order is reversed.
		for i := len(r.Columns) - 1; i >= 0; i-- {
			w.column(&r.Columns[i], r, total, body)
		}
	} else {
		for i := range r.Columns {
			w.column(&r.Columns[i], r, total, body)
		}
	}
	if group {
		w.buf.WriteString("</mj-group>\n")
	}
	w.buf.WriteString("</mj-section>\n")
	if wrapped {
		w.buf.WriteString("</mj-wrapper>\n")
	}
}

// backgroundImage writes background-url and friends from a style with a
// url(...) background-image; it reports whether it wrote one.
func (w *mjmlWriter) backgroundImage(s design.Style) bool {
	u := mjmlCSSURL(s.Get("background-image"))
	if u == "" {
		return false
	}
	w.attr("background-url", u)
	w.attrIf("background-position", s.Get("background-position"))
	w.attrIf("background-repeat", s.Get("background-repeat"))
	w.attrIf("background-size", s.Get("background-size"))
	return true
}

func (w *mjmlWriter) column(c *design.Column, r *design.Row, total int, body *design.Body) {
	w.buf.WriteString("<mj-column")
	w.attr("width", mjmlNumber(float64(c.Grid)*100/float64(total))+"%")
	w.attrIf("background-color", mjmlColor(c.Style.Get("background-color")))
	w.attr("padding", mjmlPadding(c.Style))
	for _, side := range [...]string{"border-top", "border-right", "border-bottom", "border-left"} {
		if b := c.Style.Get(side); mjmlVisibleBorder(b) {
			w.attr(side, b)
		}
	}
	if va := r.VerticalAlign; va == "middle" || va == "bottom" {
		w.attr("vertical-align", va)
	}
	w.buf.WriteString(">\n")
	for i := range c.Modules {
		w.module(&c.Modules[i], body)
	}
	w.buf.WriteString("</mj-column>\n")
}

func (w *mjmlWriter) module(m *design.Module, body *design.Body) {
	c := m.Descriptor.Get(contentKey(m.EffectiveKind()))
	hide := w.hideClass(m.HideOnMobile, m.HideOnDesktop)
	switch m.EffectiveKind() {
	case design.KindText, design.KindParagraph, design.KindList:
		w.text(m, design.StyleOf(c.Get("style")), c.Get("html").Text(), hide)
	case design.KindHTML:
		w.text(m, design.Style{}, c.Get("html").Text(), hide)
	case design.KindHeading:
		tag := strings.ToLower(strings.TrimSpace(c.Get("title").Text()))
		if tag != "h1" && tag != "h2" && tag != "h3" {
			tag = "h1"
		}
		st := design.StyleOf(c.Get("style"))
		var h strings.Builder
		h.WriteString("<" + tag + " style=\"margin:0;font-size:inherit;font-weight:")
		if fw := st.Get("font-weight"); fw != "" {
			h.WriteString(mjmlText(fw))
		} else {
			h.WriteString("bold")
		}
		h.WriteString("\">")
		h.WriteString(c.Get("text").Text())
		h.WriteString("</" + tag + ">")
		w.text(m, st, h.String(), hide)
	case design.KindImage:
		w.image(m, c, design.ImageSrc(c), c.Get("alt").Text(), c.Get("href").Text(), c.Get("target").Text(), hide)
	case design.KindVideo:
		w.image(m, c, c.Get("thumbSrc").Text(), c.Get("thumbAlt").Text(), c.Get("src").Text(), "_blank", hide)
	case design.KindButton:
		w.button(m, c, hide)
	case design.KindDivider:
		w.divider(m, c, hide)
	case design.KindSpacer:
		w.buf.WriteString("<mj-spacer")
		h := design.StyleOf(c.Get("style")).Get("height")
		if h == "" {
			h = "20px"
		}
		w.attr("height", h)
		w.attrIf("container-background-color", mjmlColor(design.StyleOf(c.Get("style")).Get("background-color")))
		w.attrIf("css-class", hide)
		w.buf.WriteString(" />\n")
	case design.KindSocial, design.KindIcons:
		w.social(m, c, hide)
	case design.KindMenu:
		w.menu(m, c, body, hide)
	case design.KindTable:
		w.table(m, c, hide)
	}
	// Forms (email cannot submit them), empty modules and unknown kinds
	// have no MJML counterpart.
}

// contentKey names the descriptor member that holds a kind's content.
func contentKey(kind string) string {
	switch kind {
	case design.KindSocial, design.KindIcons:
		return "iconsList"
	case design.KindMenu:
		return "menuItemsList"
	}
	return kind
}

func (w *mjmlWriter) text(m *design.Module, st design.Style, content, hide string) {
	w.buf.WriteString("<mj-text")
	w.attr("padding", mjmlPadding(m.Style))
	w.fontAttrs(st, true)
	align := st.Get("text-align")
	if align == "" {
		align = m.Style.Get("text-align")
	}
	w.attrIf("align", mjmlAlign(align))
	w.attrIf("css-class", hide)
	w.buf.WriteString(">")
	w.buf.WriteString(mjmlContent(content))
	w.buf.WriteString("</mj-text>\n")
}

// fontAttrs writes the typography properties that MJML components take;
// full adds those only mj-text and mj-button accept (MJML reports the
// others as illegal attributes).
func (w *mjmlWriter) fontAttrs(st design.Style, full bool) {
	w.attrIf("color", mjmlColor(st.Get("color")))
	if ff := st.Get("font-family"); ff != "" && ff != "inherit" {
		w.attr("font-family", ff)
	}
	w.attrIf("font-size", st.Get("font-size"))
	w.attrIf("line-height", st.Get("line-height"))
	if full {
		w.attrIf("font-weight", st.Get("font-weight"))
		w.attrIf("letter-spacing", st.Get("letter-spacing"))
	}
}

func (w *mjmlWriter) image(m *design.Module, c *design.Value, src, alt, href, target, hide string) {
	w.buf.WriteString("<mj-image")
	w.attr("src", src)
	w.attrIf("alt", alt)
	w.attrIf("href", href)
	if href != "" {
		w.attrIf("target", target)
	}
	class := strings.Fields(m.Computed.Get("class"))
	fullWidth := false
	align := ""
	for _, tok := range class {
		switch tok {
		case "left", "center", "right":
			align = tok
		case "fullwidth":
			fullWidth = true
		}
	}
	if px, ok := m.Computed.Px("width"); ok && px > 0 && !fullWidth {
		w.attr("width", mjmlNumber(px)+"px")
	} else if px, ok := c.Get("width").Px(); ok && px > 0 && !fullWidth {
		w.attr("width", mjmlNumber(px)+"px")
	}
	w.attrIf("align", align)
	w.attr("padding", mjmlPadding(m.Style))
	w.attrIf("border-radius", m.Style.Get("border-radius"))
	w.attrIf("css-class", hide)
	w.buf.WriteString(" />\n")
}

func (w *mjmlWriter) button(m *design.Module, c *design.Value, hide string) {
	st := design.StyleOf(c.Get("style"))
	w.buf.WriteString("<mj-button")
	w.attrIf("href", c.Get("href").Text())
	if c.Get("href").Text() != "" {
		w.attrIf("target", c.Get("target").Text())
	}
	w.attrIf("background-color", mjmlColor(st.Get("background-color")))
	w.fontAttrs(st, true)
	w.attrIf("border-radius", st.Get("border-radius"))
	top := st.Get("border-top")
	if mjmlVisibleBorder(top) && top == st.Get("border-right") && top == st.Get("border-bottom") && top == st.Get("border-left") {
		w.attr("border", top)
	} else {
		for _, side := range [...]string{"border-top", "border-right", "border-bottom", "border-left"} {
			if b := st.Get(side); mjmlVisibleBorder(b) {
				w.attr(side, b)
			}
		}
	}
	if width := st.Get("width"); width != "" && width != "auto" {
		w.attr("width", width)
	}
	w.attr("inner-padding", mjmlPadding(st))
	w.attr("padding", mjmlPadding(m.Style))
	w.attrIf("align", mjmlAlign(m.Style.Get("text-align")))
	w.attrIf("css-class", hide)
	w.buf.WriteString(">")
	w.buf.WriteString(mjmlContent(c.Get("label").Text()))
	w.buf.WriteString("</mj-button>\n")
}

func (w *mjmlWriter) divider(m *design.Module, c *design.Value, hide string) {
	st := design.StyleOf(c.Get("style"))
	width, style, color := mjmlBorderParts(st.Get("border-top"))
	w.buf.WriteString("<mj-divider")
	w.attr("border-width", width)
	w.attr("border-style", style)
	w.attr("border-color", color)
	w.attrIf("width", st.Get("width"))
	w.attrIf("align", mjmlAlign(m.Computed.Get("align")))
	w.attr("padding", mjmlPadding(m.Style))
	w.attrIf("css-class", hide)
	w.buf.WriteString(" />\n")
}

func (w *mjmlWriter) social(m *design.Module, c *design.Value, hide string) {
	icons := c.Get("icons")
	w.buf.WriteString("<mj-social mode=\"horizontal\"")
	w.attrIf("align", mjmlAlign(m.Style.Get("text-align")))
	w.attr("padding", mjmlPadding(m.Style))
	size := ""
	if px, ok := m.Computed.Px("iconsDefaultWidth"); ok && px > 0 {
		size = mjmlNumber(px) + "px"
	} else if h := m.Computed.Get("iconHeight"); h != "" {
		size = h
	}
	w.attrIf("icon-size", size)
	w.attrIf("inner-padding", m.Computed.Get("padding"))
	w.fontAttrs(m.Style, false)
	w.attrIf("font-weight", m.Style.Get("font-weight"))
	w.attrIf("css-class", hide)
	w.buf.WriteString(">\n")
	for i := range icons.Len() {
		ic := icons.Index(i)
		var src, href, alt string
		if img := ic.Get("image"); img.Kind == design.Object {
			src, href, alt = img.Get("src").Text(), img.Get("href").Text(), img.Get("alt").Text()
		} else {
			src, href, alt = img.Text(), ic.Get("href").Text(), ic.Get("alt").Text()
		}
		w.buf.WriteString("<mj-social-element")
		w.attr("src", src)
		w.attrIf("href", href)
		w.attrIf("alt", alt)
		w.attr("background-color", "transparent")
		w.buf.WriteString(">")
		w.buf.WriteString(mjmlText(ic.Get("text").Text()))
		w.buf.WriteString("</mj-social-element>\n")
	}
	w.buf.WriteString("</mj-social>\n")
}

func (w *mjmlWriter) menu(m *design.Module, c *design.Value, body *design.Body, hide string) {
	items := c.Get("items")
	w.buf.WriteString("<mj-navbar")
	w.attrIf("align", mjmlAlign(m.Style.Get("text-align")))
	w.attrIf("css-class", hide)
	w.buf.WriteString(">\n")
	linkColor := m.Computed.Get("linkColor")
	if linkColor == "" {
		linkColor = body.LinkColor
	}
	for i := range items.Len() {
		it := items.Index(i)
		w.buf.WriteString("<mj-navbar-link")
		w.attrIf("href", it.At("link", "href").Text())
		w.attrIf("target", it.At("link", "target").Text())
		w.attrIf("color", mjmlColor(linkColor))
		if ff := m.Style.Get("font-family"); ff != "" && ff != "inherit" {
			w.attr("font-family", ff)
		}
		w.attrIf("font-size", m.Style.Get("font-size"))
		w.buf.WriteString(">")
		w.buf.WriteString(mjmlText(it.Get("text").Text()))
		w.buf.WriteString("</mj-navbar-link>\n")
	}
	w.buf.WriteString("</mj-navbar>\n")
}

func (w *mjmlWriter) table(m *design.Module, c *design.Value, hide string) {
	st := design.StyleOf(c.Get("style"))
	w.buf.WriteString("<mj-table")
	w.attr("padding", mjmlPadding(m.Style))
	w.fontAttrs(st, false)
	w.attrIf("css-class", hide)
	w.buf.WriteString(">")
	content := c.Get("content")
	for _, part := range [...]struct{ key, cell string }{{"headers", "th"}, {"rows", "td"}} {
		rows := content.Get(part.key)
		for i := range rows.Len() {
			w.buf.WriteString("<tr>")
			cells := rows.Index(i).Get("cells")
			for j := range cells.Len() {
				w.buf.WriteString("<" + part.cell + ">")
				w.buf.WriteString(mjmlContent(cells.Index(j).Get("html").Text()))
				w.buf.WriteString("</" + part.cell + ">")
			}
			w.buf.WriteString("</tr>")
		}
	}
	w.buf.WriteString("</mj-table>\n")
}

func (w *mjmlWriter) hideClass(onMobile, onDesktop bool) string {
	switch {
	case onMobile:
		w.hidden = true
		return "mobile_hide"
	case onDesktop:
		w.hidden = true
		return "desktop_hide"
	}
	return ""
}

// attr writes ` name="value"` with the value escaped for an attribute.
func (w *mjmlWriter) attr(name, value string) {
	w.buf.WriteByte(' ')
	w.buf.WriteString(name)
	w.buf.WriteString(`="`)
	w.buf.WriteString(mjmlText(value))
	w.buf.WriteByte('"')
}

func (w *mjmlWriter) attrIf(name, value string) {
	if value != "" {
		w.attr(name, value)
	}
}

// mjmlEscaper escapes text and attribute values. Single quotes are left
// alone: attributes are double-quoted, and font stacks are full of them.
var mjmlEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")

func mjmlText(s string) string { return mjmlEscaper.Replace(s) }

// mjmlContent is rich-text HTML placed inside an ending tag (mj-text,
// mj-button, …): passed through, except that nothing in it may close or
// open an MJML component.
func mjmlContent(html string) string {
	if !strings.Contains(html, "<mj") && !strings.Contains(html, "</mj") {
		return html
	}
	html = strings.ReplaceAll(html, "</mj", "&lt;/mj")
	return strings.ReplaceAll(html, "<mj", "&lt;mj")
}

// mjmlPadding is the CSS padding shorthand of a style's padding-* (0 where
// missing).
func mjmlPadding(s design.Style) string {
	var parts [4]string
	for i, side := range [...]string{"padding-top", "padding-right", "padding-bottom", "padding-left"} {
		v := s.Get(side)
		if v == "" {
			v = "0px"
		} else if n, unit, ok := design.ParseLength(v); ok && unit == "" {
			v = mjmlNumber(n) + "px"
		}
		parts[i] = v
	}
	switch {
	case parts[0] == parts[2] && parts[1] == parts[3] && parts[0] == parts[1]:
		return parts[0]
	case parts[0] == parts[2] && parts[1] == parts[3]:
		return parts[0] + " " + parts[1]
	}
	return strings.Join(parts[:], " ")
}

// mjmlColor drops empty and transparent colours, which MJML would only
// write out as noise.
func mjmlColor(c string) string {
	if c == "" || strings.EqualFold(c, "transparent") {
		return ""
	}
	return c
}

func mjmlAlign(a string) string {
	switch a = strings.ToLower(strings.TrimSpace(a)); a {
	case "left", "center", "right", "justify":
		return a
	case "-webkit-center":
		return "center"
	}
	return ""
}

// mjmlVisibleBorder reports whether a CSS border shorthand draws anything.
func mjmlVisibleBorder(b string) bool {
	if b == "" || strings.Contains(b, "transparent") || strings.Contains(b, "none") {
		return false
	}
	width, _, _ := mjmlBorderParts(b)
	n, _, ok := design.ParseLength(width)
	return ok && n > 0
}

// mjmlBorderParts splits "1px solid #BBBBBB" into width, style and colour,
// with MJML's defaults for what is missing.
func mjmlBorderParts(b string) (width, style, color string) {
	width, style, color = "1px", "solid", "#000000"
	for _, f := range strings.Fields(b) {
		switch {
		case f[0] >= '0' && f[0] <= '9':
			if _, unit, ok := design.ParseLength(f); ok && unit == "" {
				f += "px"
			}
			width = f
		case f == "solid" || f == "dashed" || f == "dotted" || f == "double" || f == "none":
			style = f
		default:
			color = f
		}
	}
	return width, style, color
}

// mjmlCSSURL extracts the address of a CSS url(...) value ("" for none).
func mjmlCSSURL(v string) string {
	start := strings.Index(v, "url(")
	if start < 0 {
		return ""
	}
	rest := v[start+4:]
	end := strings.LastIndexByte(rest, ')')
	if end < 0 {
		return ""
	}
	return strings.Trim(strings.TrimSpace(rest[:end]), `'"`)
}

// mjmlNumber formats a length without float noise (33.3333, not
// 33.333333333333336).
func mjmlNumber(f float64) string {
	return strconv.FormatFloat(math.Round(f*10000)/10000, 'f', -1, 64)
}
