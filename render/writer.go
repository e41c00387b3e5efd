package render

import (
	"bytes"
	"strconv"
	"strings"

	"github.com/designbridge/caddy-designbridge/design"
)

// emailWriter renders one design into email HTML in a single pass over
// the model. The body is written first (into body) because the head
// depends on what the body used: web fonts and per-block mobile rules.
type emailWriter struct {
	d       *design.Design
	blocks  blocks // every module's decoded content
	body    bytes.Buffer
	bodyBuf *[]byte      // the pooled array behind body (see recycle)
	mobile  bytes.Buffer // rules for the one @media block
	main    bytes.Buffer // rules before it, for every width (a button's :hover)
	styles  []byte       // where style() cuts new styles from
	// styleBufs are the pooled buffers styles were cut from (see recycle).
	styleBufs []*[]byte
	warn      warnings

	// hiddenDepth counts the desktop-hidden sections open, hiddenStart
	// is where the outermost one's content starts in body (see
	// desktopHideOpen).
	hiddenDepth, hiddenStart int

	fontsUsed []string // normalised first family names seen in styles
	hasRev    bool     // some row reverses its columns on mobile
	// kinds whose mobileCSS the document needs, in order of first use
	mobileCSSKinds []string

	// Defaults resolved once from page.body.
	font      string // default font stack
	color     string // default text colour
	linkColor string
	messageBg string // page.body's messageBackgroundColor, made safe
	bodyBg    string // page.body's backgroundColor, made safe
	bodyImg   string // page.body's background-image URL, made safe (checkURL)

	maxOutput int // bytes of body and rules (see checkSize)
	// fluid: a web layout, where a column's width is the screen's to
	// choose (stacked columns take the row), not a fixed desktop width;
	// colNominal is then the column's width in the editor (its grid
	// share less its own frame), which bounds its images.
	fluid bool

	// Per-row/per-column context.
	rowLink    string // row link colour override
	rowColor   string // row text colour (content.style.color), made safe
	colWidth   float64
	colNominal float64
	blockSeq   int // module counter, for per-block mobile classes
	columnSeq  int
	// The current row, column and module, for warning paths: -1 above
	// that level (before the rows, in a row outside its columns, …).
	rowIndex int
	colIndex int
	modIndex int
}

// Table attributes shared by every layout table: a presentation role for
// screen readers and no spacing (Outlook ignores CSS border-spacing; the
// lspace/rspace fix is in the head CSS; border defaults to 0).
const tableAttrs = ` role="presentation" cellpadding="0" cellspacing="0"`

func (w *emailWriter) s(s string) { w.body.WriteString(s) }

// useMobileCSS asks for kind's mobileCSS in the document's @media block.
func (w *emailWriter) useMobileCSS(kind string) {
	for _, k := range w.mobileCSSKinds {
		if k == kind {
			return
		}
	}
	w.mobileCSSKinds = append(w.mobileCSSKinds, kind)
}

// checkSize stops the render once the body so far is over the limit
// (see outputFull). It is called where the renderer writes a style
// attribute, a rich-text tag or an item of a block's list (icons, menu
// items, table rows, form fields), so that between two calls it writes
// at most a few bounded CSS values and one string of the design. It is
// on most elements: it reads the body alone, to stay cheap enough to
// inline; checkTotal counts the mobile rules as well.
func (w *emailWriter) checkSize() {
	if w.body.Len() > w.maxOutput {
		w.full()
	}
}

// checkTotal is checkSize for the body and the rules, called at each
// row, column and module: only they write rules, a bounded amount each.
func (w *emailWriter) checkTotal() {
	if w.body.Len()+w.mobile.Len()+w.main.Len() > w.maxOutput {
		w.full()
	}
}

// full unwinds the render (HTMLWithLimits recovers it). Kept out of
// the checks so that checkSize stays small enough to inline.
//
//go:noinline
func (w *emailWriter) full() { panic(outputFull{}) }

// int writes a decimal integer.
func (w *emailWriter) int(n int) {
	var buf [20]byte
	w.body.Write(strconv.AppendInt(buf[:0], int64(n), 10))
}

// attr writes ` name="value"` with value escaped.
func (w *emailWriter) attr(name, value string) {
	w.body.WriteByte(' ')
	w.body.WriteString(name)
	w.body.WriteString(`="`)
	escape(&w.body, value)
	w.body.WriteByte('"')
}

// attrBytes is attr for a value in bytes.
func (w *emailWriter) attrBytes(name string, value []byte) {
	w.body.WriteByte(' ')
	w.body.WriteString(name)
	w.body.WriteString(`="`)
	escapeBytes(&w.body, value)
	w.body.WriteByte('"')
}

// text writes s as element content, escaped for it (escapeText).
func (w *emailWriter) text(s string) { escapeText(&w.body, s) }

// attrText writes s escaped for a double-quoted attribute value, for a
// value the renderer writes inside an attribute it opened (a colour in a
// style).
func (w *emailWriter) attrText(s string) { escape(&w.body, s) }

// escape escapes text for a double-quoted attribute (or HTML content):
// & < > and " (not '). Merge tags ({{…}}, $…$) contain none of these
// except in rare quoted arguments, which escaping keeps equivalent.
func escape(b *bytes.Buffer, s string) { escapeWith(b, s, &escapes) }

// escapeText escapes text for element content, <title> included: & < >
// only. A quote ends nothing there, so a merge tag's quoted argument
// ({{ name | default: "you" }}) is written as it is, as the contract asks
// of merge tags; a '<' is always escaped, so no end tag (</title>) can
// be spelt.
func escapeText(b *bytes.Buffer, s string) { escapeWith(b, s, &textEscapes) }

// escapeWith writes s with the bytes r names replaced.
func escapeWith(b *bytes.Buffer, s string, r *[256]string) {
	start := 0
	for i := 0; i < len(s); i++ {
		if e := r[s[i]]; e != "" {
			b.WriteString(s[start:i])
			b.WriteString(e)
			start = i + 1
		}
	}
	b.WriteString(s[start:])
}

// escapeBytes is escape for a byte slice.
func escapeBytes(b *bytes.Buffer, s []byte) {
	start := 0
	for i := 0; i < len(s); i++ {
		if r := escapes[s[i]]; r != "" {
			b.Write(s[start:i])
			b.WriteString(r)
			start = i + 1
		}
	}
	b.Write(s[start:])
}

// escapes are the replacements escape makes, textEscapes escapeText's.
var (
	escapes     = [256]string{'&': "&amp;", '<': "&lt;", '>': "&gt;", '"': "&quot;"}
	textEscapes = [256]string{'&': "&amp;", '<': "&lt;", '>': "&gt;"}
)

// formatPx formats a pixel amount compactly: 12, 12.5, 0.33.
func formatPx(f float64) string {
	if f == float64(int64(f)) {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// appendPx appends formatPx(f) to b without an intermediate string.
func appendPx(b []byte, f float64) []byte {
	if f == float64(int64(f)) {
		return strconv.AppendInt(b, int64(f), 10)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

// styleAttr writes ` style="…"` unless empty.
func (w *emailWriter) styleAttr(s *style) {
	b := s.b
	if len(b) == 0 {
		return
	}
	w.checkSize()
	if b[len(b)-1] == ';' {
		b = b[:len(b)-1]
	}
	w.body.WriteString(` style="`)
	escapeBytes(&w.body, b)
	w.body.WriteByte('"')
}

// path is the JSON path of the module, column, row or body being
// rendered, for warnings.
func (w *emailWriter) path() string {
	switch {
	case w.rowIndex < 0:
		return "page.body"
	case w.colIndex < 0:
		return "page.rows[" + strconv.Itoa(w.rowIndex) + "]"
	case w.modIndex < 0:
		return "page.rows[" + strconv.Itoa(w.rowIndex) + "].columns[" + strconv.Itoa(w.colIndex) + "]"
	}
	return modulePath(w.rowIndex, w.colIndex, w.modIndex)
}

// mobileRule appends one rule to the @media block.
func (w *emailWriter) mobileRule(selector string, decls string) {
	appendRule(&w.mobile, selector, decls)
}

// mainRule appends one rule to the <style> element, before the @media
// block: a rule for every width.
func (w *emailWriter) mainRule(selector string, decls string) {
	appendRule(&w.main, selector, decls)
}

// appendRule appends selector{decls} to b, nothing for no declarations.
func appendRule(b *bytes.Buffer, selector, decls string) {
	if decls == "" {
		return
	}
	b.WriteString(selector)
	b.WriteByte('{')
	b.WriteString(decls)
	b.WriteByte('}')
}

// important turns "a:1;b:2" into "a:1!important;b:2!important".
func important(decls string) string {
	if decls == "" {
		return ""
	}
	parts := strings.Split(decls, ";")
	var b strings.Builder
	for _, p := range parts {
		if p == "" {
			continue
		}
		b.WriteString(p)
		b.WriteString("!important;")
	}
	return b.String()
}

// mobilePadding turns the padding sides a mobileStyle sets (and only
// those) into !important declarations.
func mobilePadding(st design.Style) string {
	// Built on the stack, with room for the four sides: one allocation,
	// the string (a Builder grew five times).
	var buf [160]byte
	b := buf[:0]
	for _, side := range [...]string{"padding-top", "padding-right", "padding-bottom", "padding-left"} {
		if v, ok := st.Px(side); ok {
			b = append(b, side...)
			b = append(b, ':')
			b = appendPx(b, max(v, 0))
			b = append(b, "px!important;"...)
		}
	}
	return string(b)
}
