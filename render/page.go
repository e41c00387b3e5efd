package render

import (
	"bytes"
	"strconv"
	"strings"
)

// webWriter lays a design out as a web page or a popup (LayoutPage,
// LayoutPopup). Rows and columns are divs laid out with flexbox
// (page_row.go); the blocks are the email layout's (module_*.go, through
// the embedded emailWriter), with the same sanitising and the same
// per-block mobile rules. Web pages and popups are shown by browsers, so
// none of the email layout's workarounds for mail clients (ghost tables
// for Outlook, table rows) frame the blocks.
type webWriter struct {
	*emailWriter
	popup bool // LayoutPopup: a fragment whose CSS applies inside it only
}

// popupContainer is the class of the popup fragment's outer div; every
// rule of the popup's <style> element starts with it, so that embedding
// the popup restyles nothing of the host page.
const popupContainer = "db-popup"

// document writes what follows the head: for a page the <body>, for a
// popup the rows and the end of the container div that assemble opens.
func (w *webWriter) document() {
	if w.popup {
		w.s(`<div class="db-rows">`)
		w.rows()
		w.s(`</div></div>`)
		return
	}
	b := &w.d.Page.Body
	st := w.style()
	st.raw("margin:0;padding:0;")
	if bg := w.bodyBg; !isTransparent(bg) {
		st.add("background-color", bg)
	}
	w.s("<body")
	w.styleAttr(&st)
	w.s(`><div class="db-page"`)
	ct := w.containerStyle()
	if img := w.bodyImg; img != "" {
		ct.addURL("background-image", img)
		ct.copyProps(b.Container, bodyBackgroundProps[:]...)
	}
	w.styleAttr(&ct)
	w.s(">")
	w.rows()
	w.s("</div></body></html>")
}

// containerStyle is the outer div's default font and text colour, which
// the blocks inherit.
func (w *webWriter) containerStyle() style {
	st := w.style()
	st.add("font-family", w.font)
	st.add("color", w.color)
	return st
}

func (w *webWriter) rows() {
	for i := range w.d.Page.Rows {
		w.checkTotal()
		w.rowIndex, w.colIndex = i, -1
		w.row(&w.d.Page.Rows[i])
	}
	w.rowIndex = -1
}

// assemble writes the document (page) or the fragment (popup) in front of
// the already rendered rows: the head, or the popup's container with its
// font links and <style> element.
func (w *webWriter) assemble() ([]byte, *[]byte) {
	pooled := bodyBufs.Get().(*[]byte)
	out := bytes.NewBuffer((*pooled)[:0])
	out.Grow(w.body.Len() + 4096)
	if w.popup {
		out.WriteString(`<div class="` + popupContainer + `"`)
		if l := w.lang(); l != "und" {
			// Without a language of its own, the popup's is the host
			// page's, which an "und" would hide from screen readers.
			out.WriteString(` lang="`)
			escape(out, l)
			out.WriteByte('"')
		}
		w.dirAttr(out)
		if st := w.containerStyle(); len(st.b) > 0 {
			out.WriteString(` style="`)
			escapeBytes(out, bytes.TrimSuffix(st.b, []byte(";")))
			out.WriteByte('"')
		}
		out.WriteByte('>')
		w.fontLinks(out)
		w.css(out)
	} else {
		out.WriteString(`<!DOCTYPE html><html lang="`)
		escape(out, w.lang())
		out.WriteByte('"')
		w.dirAttr(out)
		out.WriteString(`><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1.0"><title>`)
		escapeText(out, w.title())
		out.WriteString(`</title>`)
		if d := strings.TrimSpace(w.d.Page.Meta.Description); d != "" {
			out.WriteString(`<meta name="description" content="`)
			escape(out, d)
			out.WriteString(`">`)
		}
		w.fontLinks(out)
		w.css(out)
		out.WriteString(`</head>`)
	}
	out.Write(w.body.Bytes())
	return out.Bytes(), pooled
}

func (w *webWriter) dirAttr(out *bytes.Buffer) {
	if w.d.Page.Body.Direction == "rtl" {
		out.WriteString(` dir="rtl"`)
	}
}

// The web layouts' fixed rules. Rows are flex containers (inline styles,
// page_row.go); on phones a stacking row (.db-stack) becomes a block, so
// its columns take the full width one under the other, or a reversed flex
// column (.db-reverse). The block classes (.mh, .dh, .fw) mean what they
// mean in the email layout. The layout's own classes start with "db-", so
// that a popup's host page is unlikely to style them (a .row or .col of a
// CSS framework would).
const (
	webBaseCSS   = `*{box-sizing:border-box}p{line-height:inherit}sup,sub{font-size:75%;line-height:0}`
	pageBaseCSS  = `body{margin:0;padding:0}`
	webMobileCSS = `.db-stack{display:block!important}.db-stack.db-reverse{display:flex!important;flex-direction:column-reverse!important}.mh{display:none!important}.dh{display:block!important;max-height:none!important;overflow:visible!important}.fw{max-width:100%!important;width:100%!important}`
)

// css writes the <style> element: the fixed rules and the blocks' rules
// for every width, then the @media block for phones with the rules the
// rows and blocks asked for. The breakpoint is 20 px over the design's
// width, as in the email layout and the vendor's page and popup exports.
func (w *webWriter) css(out *bytes.Buffer) {
	out.WriteString("<style>")
	w.rules(out, webBaseCSS)
	if !w.popup {
		out.WriteString(pageBaseCSS)
	}
	w.rules(out, w.main.String())
	out.WriteString(`@media (max-width:`)
	out.WriteString(strconv.Itoa(w.d.Page.Body.Width + 20))
	out.WriteString(`px){`)
	w.rules(out, webMobileCSS)
	if mw := w.mobileWidth(); mw > 0 {
		w.rules(out, `.db-narrow{max-width:`+strconv.Itoa(mw)+`px!important}`)
	}
	for _, k := range w.mobileCSSKinds {
		w.rules(out, kinds[k].mobileCSS)
	}
	w.rules(out, w.mobile.String())
	out.WriteString("}</style>")
}

// rules writes css, a list of rules of this package's own making, scoped
// to the popup's container in a popup.
func (w *webWriter) rules(out *bytes.Buffer, css string) {
	if !w.popup {
		out.WriteString(css)
		return
	}
	scopeRules(out, "."+popupContainer, css)
}

// scopeRules writes css ("sel,sel{decls}sel{decls}…", no at-rules) with
// prefix and a space in front of every selector. Only the renderer's own
// rules go through it: their selectors are its class names, and the
// design values in their declarations have passed cssValue, which lets
// no brace through, so every brace ends a selector list or a rule.
func scopeRules(out *bytes.Buffer, prefix, css string) {
	for css != "" {
		open := strings.IndexByte(css, '{')
		end := strings.IndexByte(css, '}')
		if open < 0 || end < open {
			return
		}
		for i, sel := range strings.Split(css[:open], ",") {
			if i > 0 {
				out.WriteByte(',')
			}
			out.WriteString(prefix)
			out.WriteByte(' ')
			out.WriteString(strings.TrimSpace(sel))
		}
		out.WriteString(css[open : end+1])
		css = css[end+1:]
	}
}
