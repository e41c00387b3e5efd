package render

import (
	"bytes"
	"strconv"
	"strings"
	"sync"

	"github.com/designbridge/caddy-designbridge/design"
)

// defaultFont is the fallback stack when a design names no font.
const defaultFont = "Arial, 'Helvetica Neue', Helvetica, sans-serif"

func newEmailWriter(d *design.Design, bs blocks, maxOutput int) *emailWriter {
	w := &emailWriter{d: d, blocks: bs, maxOutput: maxOutput, rowIndex: -1}
	b := &d.Page.Body
	w.font = defaultFont
	if f := w.safeCSS("font-family", b.FontFamily); f != "" && !strings.EqualFold(f, "inherit") {
		w.font = withGeneric(f)
		w.useFont(f)
	}
	w.color = w.safeColor("color", b.Color)
	if w.color == "" {
		w.color = "#000000"
	}
	w.linkColor = w.safeColor("linkColor", b.LinkColor)
	if w.linkColor == "" {
		w.linkColor = "#0068A5"
	}
	w.messageBg = w.safeColor("messageBackgroundColor", b.MessageBackgroundColor)
	w.bodyBg = w.safeColor("background-color", b.BackgroundColor)
	// The body's background image is checked here, though the popup
	// layout does not show it, so that every layout warns alike.
	w.bodyImg = w.safeURL("background-image", b.Container.Get("background-image"))
	if w.bodyImg != "" {
		for _, p := range bodyBackgroundProps {
			w.safeCSS(p, b.Container.Get(p))
		}
	}
	// Output is typically 0.25–0.6× the JSON; growing once is cheaper
	// than doubling a small buffer several times. The body is only
	// scratch (assemble copies it behind the head), so HTML recycles it.
	w.bodyBuf = bodyBufs.Get().(*[]byte)
	w.body = *bytes.NewBuffer((*w.bodyBuf)[:0])
	w.body.Grow(d.Size*3/5 + 8<<10)
	return w
}

// bodyBufs holds byte arrays (*[]byte) for bodies and documents between
// renders: HTML's body once assembled, and released Outputs.
var bodyBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBody bounds the arrays kept, so that one huge design does not
// pin its memory.
const maxPooledBody = 1 << 20

// recycle gives the body's array back to bodyBufs once assemble has
// copied it, and the style buffers to styleBufs; it is the last use of w.
func (w *emailWriter) recycle() {
	if buf := w.body.Bytes(); cap(buf) <= maxPooledBody {
		*w.bodyBuf = buf[:0]
		bodyBufs.Put(w.bodyBuf)
	}
	w.bodyBuf = nil
	w.body = bytes.Buffer{}
	for _, bp := range w.styleBufs {
		styleBufs.Put(bp)
	}
	w.styleBufs, w.styles = nil, nil
}

// document writes the <body> content; assemble adds the head once the
// body has said which fonts and mobile rules it needs.
func (w *emailWriter) document() {
	p := &w.d.Page
	b := &p.Body
	bg := w.bodyBg
	st := w.style()
	st.raw("margin:0;padding:0;-webkit-text-size-adjust:none;text-size-adjust:none;")
	if !isTransparent(bg) {
		st.add("background-color", bg)
	}
	w.s("<body")
	w.styleAttr(&st)
	w.s(">")
	w.preheader(p.Meta.Preheader)

	ct := w.style()
	if !isTransparent(bg) {
		ct.add("background-color", bg)
	}
	if w.bodyImg != "" {
		ct.addURL("background-image", w.bodyImg)
		ct.copyProps(b.Container, bodyBackgroundProps[:]...)
	}
	w.s(`<table class="nl-container" width="100%"`)
	w.s(tableAttrs)
	if !isTransparent(bg) {
		w.attr("bgcolor", bg)
	}
	w.styleAttr(&ct)
	w.s("><tr><td")
	tdst := w.style()
	tdst.add("font-family", w.font)
	tdst.add("color", w.color)
	w.styleAttr(&tdst)
	w.s(">")
	for i := range p.Rows {
		w.checkTotal()
		w.rowIndex, w.colIndex = i, -1
		w.row(&p.Rows[i])
	}
	w.rowIndex = -1
	w.s("</td></tr></table></body></html>")
}

// preheader writes the hidden inbox preview text, padded with invisible
// characters so the body's first words do not trail into the preview.
func (w *emailWriter) preheader(text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return
	}
	w.s(`<div style="display:none;font-size:1px;line-height:1px;max-height:0;max-width:0;opacity:0;overflow:hidden;mso-hide:all">`)
	w.text(text)
	w.s(strings.Repeat("&#8199;&#65279;&#847; ", 20))
	w.s("</div>")
}

// bodyBackgroundProps are the properties of the body's background image.
var bodyBackgroundProps = [...]string{"background-position", "background-repeat", "background-size"}

// cssURL extracts the URL of "url('x')", "url(x)" or a bare URL.
func cssURL(v string) string {
	u, _ := checkURL(v)
	return u
}

// checkURL is cssURL; for a dropped URL it also says why, for the
// render's warnings. The URL is for url('…') (style.addURL), in a style
// attribute: inside the quotes, braces, spaces and parentheses end
// nothing, so merge tags ({{ hero_bg }}, $bg image$) stay as written.
// It is never put in a rule of the <style> element, whose braces
// scopeRules reads as the rules' ends.
func checkURL(v string) (u, why string) {
	v = strings.TrimSpace(v)
	if v == "" || strings.EqualFold(v, "none") {
		return "", ""
	}
	if len(v) > 4 && strings.EqualFold(v[:4], "url(") {
		v = strings.TrimSuffix(v[4:], ")")
		v = strings.Trim(strings.TrimSpace(v), `'"`)
	}
	switch {
	case v == "":
		return "", ""
	case !design.SafeURL(v):
		return "", urlRefusal(v)
	}
	if i := strings.IndexByte(v, ';'); i >= 0 {
		// Harmless in quotes, but mail clients' CSS filters split
		// declarations at it.
		return "", "contains ';'"
	}
	// As for any CSS value with parentheses (checkCSS).
	if why := scriptWords(v); why != "" {
		return "", why
	}
	// What could end the quoted string (a quote, a backslash escape, a
	// line break), and the other quote and markup brackets, are
	// percent-encoded: browsers encode them in URLs anyway, and none is
	// left to end the string, the declaration, the attribute or a
	// <style> element.
	v = urlInCSS.Replace(v)
	if len(v)+len("url('')") > maxCSSValue {
		return "", "over " + strconv.Itoa(maxCSSValue) + " bytes"
	}
	return v, ""
}

var urlInCSS = strings.NewReplacer("'", "%27", `"`, "%22", `\`, "%5C", "<", "%3C", ">", "%3E",
	"\n", "%0A", "\r", "%0D", "\f", "%0C")

// lang is the document language: the design's head.meta.lang, else the
// top-level "language" member, else "und" (BCP 47 "undetermined"). The
// attribute stays, as accessibility checkers and docs/contracts.md require, but
// a design that names no language is not claimed to be English.
func (w *emailWriter) lang() string {
	for _, l := range [...]string{w.d.Page.Meta.Lang, w.d.Root.Get("language").Text()} {
		if tag, ok := langTag(l); ok {
			return tag
		}
	}
	return "und"
}

// langTag checks that s looks like a BCP 47 language tag ("en",
// "pt-BR", "zh-Hant-TW"; "it_IT" is accepted as "it-IT"): a 2–8 letter
// primary subtag, then alphanumeric subtags of 1–8 characters.
func langTag(s string) (string, bool) {
	s = strings.ReplaceAll(strings.TrimSpace(s), "_", "-")
	if s == "" || len(s) > 35 {
		return "", false
	}
	for i, sub := range strings.Split(s, "-") {
		if len(sub) == 0 || len(sub) > 8 || (i == 0 && len(sub) < 2) {
			return "", false
		}
		for j := 0; j < len(sub); j++ {
			c := sub[j] | 0x20
			letter := c >= 'a' && c <= 'z'
			digit := sub[j] >= '0' && sub[j] <= '9'
			if !letter && !(digit && i > 0) {
				return "", false
			}
		}
	}
	return s, true
}

// mobileWidth is the content width on phones a popup asks for
// (messageWidthMobile), 0 when none or when it would not narrow anything.
func (w *emailWriter) mobileWidth() int {
	b := &w.d.Page.Body
	if b.WidthMobile < design.MinWidth || b.WidthMobile >= b.Width {
		return 0
	}
	return b.WidthMobile
}

func (w *emailWriter) title() string {
	m := &w.d.Page.Meta
	for _, t := range [...]string{m.Title, m.Subject} {
		if t = strings.TrimSpace(t); t != "" {
			return t
		}
	}
	return ""
}

// assemble writes the document: doctype, head (title, fonts, CSS) and the
// already rendered body.
func (w *emailWriter) assemble() ([]byte, *[]byte) {
	pooled := bodyBufs.Get().(*[]byte)
	out := bytes.NewBuffer((*pooled)[:0])
	out.Grow(w.body.Len() + 4096)
	width := w.d.Page.Body.Width
	out.WriteString(`<!DOCTYPE html><html xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office" lang="`)
	escape(out, w.lang())
	out.WriteByte('"')
	if w.d.Page.Body.Direction == "rtl" {
		out.WriteString(` dir="rtl"`)
	}
	out.WriteString(`><head><meta charset="utf-8"><meta http-equiv="Content-Type" content="text/html; charset=utf-8"><meta name="viewport" content="width=device-width, initial-scale=1.0"><meta name="x-apple-disable-message-reformatting"><meta name="format-detection" content="telephone=no, date=no, address=no, email=no"><title>`)
	escapeText(out, w.title())
	out.WriteString(`</title><!--[if mso]><xml><o:OfficeDocumentSettings><o:PixelsPerInch>96</o:PixelsPerInch><o:AllowPNG/></o:OfficeDocumentSettings></xml><![endif]-->`)
	w.fontLinks(out)
	// .dh is the div around content hidden on desktop (desktopHideOpen):
	// only the div is hidden and shown. The tables inside keep their own
	// display (the vendor's ".desktop_hide table" is for its class on
	// tables); shown as blocks, their cells shrank to their content on
	// phones, leaving a centred image at the left and text squeezed.
	out.WriteString(`<style>*{box-sizing:border-box}body{margin:0;padding:0}table,td{mso-table-lspace:0pt;mso-table-rspace:0pt}img{-ms-interpolation-mode:bicubic}a[x-apple-data-detectors]{color:inherit!important;text-decoration:inherit!important}#MessageViewBody a{color:inherit;text-decoration:none}p{line-height:inherit}sup,sub{font-size:75%;line-height:0}.dh{mso-hide:all;display:none;max-height:0;overflow:hidden}`)
	out.Write(w.main.Bytes())
	out.WriteString(`@media (max-width:`)
	out.WriteString(strconv.Itoa(width + 20))
	out.WriteString(`px){.rc{width:100%!important}.st .col{max-width:100%!important;width:100%!important;display:block!important}.st .sp{padding-left:0!important;padding-right:0!important}.mh{display:none!important;max-height:0!important;overflow:hidden!important;font-size:0!important}.dh{display:block!important;max-height:none!important;overflow:visible!important}.fw{max-width:100%!important;width:100%!important}`)
	if w.hasRev {
		out.WriteString(`.rv{display:table!important;width:100%!important}.rv .cf{display:table-footer-group!important}.rv .cl{display:table-header-group!important}`)
	}
	if mw := w.mobileWidth(); mw > 0 {
		out.WriteString(`.mw{max-width:`)
		out.WriteString(strconv.Itoa(mw))
		out.WriteString(`px!important}`)
	}
	for _, k := range w.mobileCSSKinds {
		out.WriteString(kinds[k].mobileCSS)
	}
	out.Write(w.mobile.Bytes())
	out.WriteString(`}</style><!--[if mso]><style>sup,sub{font-size:100%!important}sup{mso-text-raise:10%}sub{mso-text-raise:-10%}</style><![endif]--></head>`)
	out.Write(w.body.Bytes())
	return out.Bytes(), pooled
}

// fontLinks emits a stylesheet link for each web font the design uses,
// hidden from Outlook (which would stall on it and then ignore it). A
// font whose URL is not one to link (fontURLRefusal) is left out with a
// warning, as a link is.
func (w *emailWriter) fontLinks(out *bytes.Buffer) {
	var seen map[string]bool // URLs linked: a design may list thousands
	body := &w.d.Page.Body
	for _, f := range body.WebFonts {
		if f.URL == "" {
			continue
		}
		if !w.usesFont(familyKey(f.FontFamily)) && !w.usesFont(familyKey(f.Name)) {
			continue
		}
		if why := fontURLRefusal(f.URL); why != "" {
			key, msg := droppedURL("url", why)
			w.warn.onceAs(key, msg, body.WebFontsPath+"["+strconv.Itoa(f.Index)+"]")
			continue
		}
		if seen[f.URL] {
			continue
		}
		if seen == nil {
			seen = map[string]bool{}
		}
		seen[f.URL] = true
		out.WriteString(`<!--[if !mso]><!--><link href="`)
		escape(out, f.URL)
		out.WriteString(`" rel="stylesheet" type="text/css"><!--<![endif]-->`)
	}
}

// fontURLRefusal says why a web font's stylesheet URL u is not linked ("" when
// it is): only an http or https URL design.SafeURL allows is. A
// stylesheet of any other scheme is no web font, and an email has no
// address to read a URL without a scheme against.
func fontURLRefusal(u string) string {
	if hasPrefixFold(u, "https:") || hasPrefixFold(u, "http:") {
		return "" // all SafeURL allows of these, without reading them again
	}
	if !design.SafeURL(u) {
		return urlRefusal(u)
	}
	switch scheme := design.Scheme(u); scheme {
	case "http", "https":
		return "" // as browsers read it (" https:", "ht\ttps:"), as a link's
	case "":
		return "URL without a scheme not allowed"
	default:
		return "URL scheme " + quoteScheme(scheme) + " not allowed"
	}
}

// hasPrefixFold reports whether s starts with prefix in any ASCII case.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
