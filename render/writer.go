package render

import (
	"bytes"
	"strconv"
	"strings"
	"unicode"

	"github.com/designbridge/caddy-designbridge/design"
)

// emailWriter renders one design into email HTML in a single pass over
// the model. The body is written first (into body) because the head
// depends on what the body used: web fonts and per-block mobile rules.
type emailWriter struct {
	d         *design.Design
	body      bytes.Buffer
	bodyBuf   *[]byte      // the pooled array behind body (see recycle)
	mobile    bytes.Buffer // rules for the one @media block
	warnings  []string
	warnSeen  map[string]int // warnOnce message → index in warnings
	warnCount []int          // occurrences, parallel to warnings

	fontsUsed []string // normalised first family names seen in styles
	hasRev    bool     // some row reverses its columns on mobile
	// some menu turns into a vertical list on mobile (hamburger)
	hasHamburger bool

	// Defaults resolved once from page.body.
	font      string // default font stack
	color     string // default text colour
	linkColor string

	maxOutput int // bytes of body and mobile rules (see checkSize)

	// Per-row/per-column context.
	rowLink   string // row link colour override
	colWidth  float64
	blockSeq  int // module counter, for per-block mobile classes
	columnSeq int
	rowIndex  int
	colIndex  int // current column and module, for warning paths
	modIndex  int
}

// Table attributes shared by every layout table: a presentation role for
// screen readers and no spacing (Outlook ignores CSS border-spacing; the
// lspace/rspace fix is in the head CSS; border defaults to 0).
const tableAttrs = ` role="presentation" cellpadding="0" cellspacing="0"`

func (w *emailWriter) s(s string) { w.body.WriteString(s) }

// checkSize stops the render once the output so far is over the limit
// (see outputFull). It is called where the renderer starts an element
// with attributes, a rich-text tag, a module, a column or a row, so that
// between two calls it writes at most one such step: a few bounded CSS
// values and at most one string of the design.
func (w *emailWriter) checkSize() {
	if w.body.Len()+w.mobile.Len() > w.maxOutput {
		w.full()
	}
}

// full unwinds the render (HTMLWithLimits recovers it). Kept out of
// checkSize so that the check itself stays small enough to inline.
//
//go:noinline
func (w *emailWriter) full() { panic(outputFull{}) }

// warnOnce reports a problem once per distinct message, naming the first
// place it occurs and, when it recurs, how often: a design with thousands
// of unknown modules yields one warning, not thousands.
func (w *emailWriter) warnOnce(msg, path string) {
	if w.warnSeen == nil {
		w.warnSeen = map[string]int{}
	}
	if i, ok := w.warnSeen[msg]; ok {
		w.warnCount[i]++
		return
	}
	w.warnSeen[msg] = len(w.warnings)
	w.warnings = append(w.warnings, msg+" at "+path)
	w.warnCount = append(w.warnCount, 1)
}

// finishWarnings appends the repeat counts to deduplicated warnings.
func (w *emailWriter) finishWarnings() {
	for i, n := range w.warnCount {
		if n > 1 && i < len(w.warnings) {
			w.warnings[i] += " (and " + strconv.Itoa(n-1) + " more)"
		}
	}
}

// int writes a decimal integer.
func (w *emailWriter) int(n int) {
	var buf [20]byte
	w.body.Write(strconv.AppendInt(buf[:0], int64(n), 10))
}

// attr writes ` name="value"` with value escaped.
func (w *emailWriter) attr(name, value string) {
	w.checkSize()
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

// text writes escaped text.
func (w *emailWriter) text(s string) { escape(&w.body, s) }

// escape escapes text for HTML content or a double-quoted attribute:
// & < > and " (not '). Merge tags ({{…}}, $…$) contain none of these
// except in rare quoted arguments, which escaping keeps equivalent.
func escape(b *bytes.Buffer, s string) {
	start := 0
	for i := 0; i < len(s); i++ {
		if r := escapes[s[i]]; r != "" {
			b.WriteString(s[start:i])
			b.WriteString(r)
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

// escapes are the replacements escape makes.
var escapes = [256]string{'&': "&amp;", '<': "&lt;", '>': "&gt;", '"': "&quot;"}

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

// Bounds on CSS values copied from a design (docs/renderer.md). A value
// over its bound is dropped, like an unsafe one: cutting it would leave
// broken CSS, and refusing the design for one junk value would refuse
// designs an editor produced. Real values are far shorter (the longest
// in the corpus is a 164-byte background url(), font stacks ~100 bytes).
const (
	// maxCSSValue bounds any value: font stacks, borders, url()s.
	maxCSSValue = 512
	// maxCSSRepeated bounds colours and the values the renderer repeats
	// on every element of a block's rich text (link colour on each <a>,
	// list settings on each <ul>): there, each byte of the value is
	// copied once per tag of the text, so the bound caps how much a few
	// bytes of input can grow.
	maxCSSRepeated = 64
)

// cssValue returns v if it is safe inside a style attribute or the
// <style> block: no declaration or rule breaks, no markup, no script
// URLs or legacy IE expressions, at most maxCSSValue bytes. Design values
// are plain CSS values, so anything else is dropped rather than repaired.
func cssValue(v string) string {
	v = strings.TrimSpace(v)
	if v == "" || len(v) > maxCSSValue {
		return ""
	}
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case ';', '{', '}', '<', '>', '\\', '\n', '\r':
			return ""
		}
	}
	if strings.Contains(v, "(") {
		l := strings.ToLower(v)
		if strings.Contains(l, "expression") || strings.Contains(l, "javascript:") || strings.Contains(l, "vbscript:") {
			return ""
		}
	}
	return v
}

// style accumulates declarations for a style attribute.
type style struct{ b []byte }

// style returns an empty style, with room for most style attributes
// (growing from nothing would allocate 8, 16, 32… bytes in turn).
func (w *emailWriter) style() style { return style{b: make([]byte, 0, 192)} }

func (s *style) add(prop, value string) {
	value = cssValue(value)
	if value == "" {
		return
	}
	s.b = append(s.b, prop...)
	s.b = append(s.b, ':')
	s.b = append(s.b, value...)
	s.b = append(s.b, ';')
}

// addPx adds a pixel length.
func (s *style) addPx(prop string, px float64) {
	s.b = append(s.b, prop...)
	s.b = append(s.b, ':')
	s.b = appendPx(s.b, px)
	s.b = append(s.b, "px;"...)
}

// raw adds pre-formed, trusted declarations.
func (s *style) raw(decl string) {
	s.b = append(s.b, decl...)
}

// copyProps copies the listed properties from a design style.
func (s *style) copyProps(st design.Style, props ...string) {
	for _, p := range props {
		s.add(p, st.Get(p))
	}
}

func (s *style) String() string {
	if len(s.b) > 0 && s.b[len(s.b)-1] == ';' {
		return string(s.b[:len(s.b)-1])
	}
	return string(s.b)
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

// path is the JSON path of the module being rendered, for warnings.
func (w *emailWriter) path() string {
	return "page.rows[" + strconv.Itoa(w.rowIndex) + "].columns[" + strconv.Itoa(w.colIndex) + "].modules[" + strconv.Itoa(w.modIndex) + "]"
}

// cssColor returns a usable colour ("" for empty or junk, and for a
// value over maxCSSRepeated bytes: no colour notation is that long).
func cssColor(c string) string { return cssRepeated(c) }

// repeatable is v, or "" when v is over maxCSSRepeated bytes once
// trimmed (for values made safe later, by style.add).
func repeatable(v string) string {
	if len(strings.TrimSpace(v)) > maxCSSRepeated {
		return ""
	}
	return v
}

// cssRepeated is cssValue for a value written on every element of a
// block's rich text: at most maxCSSRepeated bytes.
func cssRepeated(v string) string {
	v = cssValue(v)
	if len(v) > maxCSSRepeated {
		return ""
	}
	return v
}

// isTransparent reports whether a colour paints nothing.
func isTransparent(c string) bool {
	return c == "" || strings.EqualFold(c, "transparent") || strings.EqualFold(c, "none")
}

// padding reads padding-top/right/bottom/left (tolerating the
// "padding-buttom" misspelling and a "padding" shorthand) in pixels.
func padding(st design.Style) (top, right, bottom, left float64) {
	// One pass over the style for the six names (the last occurrence of
	// a name wins, as with Get): styles are read for every block.
	var sh, t, r, b, bt, l *design.Value
	if st.V != nil && st.V.Kind == design.Object {
		for i := range st.V.Members {
			m := &st.V.Members[i]
			if len(m.Key) < len("padding") || m.Key[:len("padding")] != "padding" {
				continue
			}
			switch m.Key {
			case "padding":
				sh = &m.Value
			case "padding-top":
				t = &m.Value
			case "padding-right":
				r = &m.Value
			case "padding-bottom":
				b = &m.Value
			case "padding-buttom": // a misspelling some designs carry
				bt = &m.Value
			case "padding-left":
				l = &m.Value
			}
		}
	}
	if v := strings.TrimSpace(sh.Text()); v != "" {
		top, right, bottom, left = shorthand(v)
	}
	if v, ok := t.Px(); ok {
		top = v
	}
	if v, ok := r.Px(); ok {
		right = v
	}
	if v, ok := b.Px(); ok {
		bottom = v
	} else if v, ok := bt.Px(); ok {
		bottom = v
	}
	if v, ok := l.Px(); ok {
		left = v
	}
	return max(top, 0), max(right, 0), max(bottom, 0), max(left, 0)
}

// shorthand parses a 1–4 value px shorthand like "0 5px 0 0".
func shorthand(s string) (top, right, bottom, left float64) {
	var v [4]float64
	count := 0
	for rest := s; ; count++ {
		var p string
		if p, rest = nextField(rest); p == "" {
			break
		}
		if count < len(v) {
			n, unit, ok := design.ParseLength(p)
			if !ok || (unit != "" && unit != "px") {
				n = 0
			}
			v[count] = n
		}
	}
	switch count {
	case 1:
		return v[0], v[0], v[0], v[0]
	case 2:
		return v[0], v[1], v[0], v[1]
	case 3:
		return v[0], v[1], v[2], v[1]
	case 4:
		return v[0], v[1], v[2], v[3]
	}
	return 0, 0, 0, 0
}

// addPadding adds the padding declarations in the shortest shorthand.
func (s *style) addPadding(top, right, bottom, left float64) {
	if top == 0 && right == 0 && bottom == 0 && left == 0 {
		return
	}
	vals := []float64{top, right, bottom, left}
	switch {
	case right == left && top == bottom && top == right:
		vals = vals[:1]
	case right == left && top == bottom:
		vals = vals[:2]
	case right == left:
		vals = vals[:3]
	}
	s.b = append(s.b, "padding:"...)
	for i, v := range vals {
		if i > 0 {
			s.b = append(s.b, ' ')
		}
		s.b = appendPx(s.b, v)
		if v != 0 {
			s.b = append(s.b, "px"...)
		}
	}
	s.b = append(s.b, ';')
}

// borderWidth is the width in px of a border like "1px solid #ccc"
// (0 for none/transparent-free junk).
func borderWidth(b string) float64 {
	first := firstField(b)
	if first == "" {
		return 0
	}
	if strings.EqualFold(first, "none") || first == "0" {
		return 0
	}
	n, unit, ok := design.ParseLength(first)
	if !ok || (unit != "px" && unit != "") {
		switch strings.ToLower(first) {
		case "thin":
			return 1
		case "medium":
			return 3
		case "thick":
			return 5
		}
		return 0
	}
	return n
}

// firstField is strings.Fields(s)[0] (or ""), without the slice.
func firstField(s string) string {
	f, _ := nextField(s)
	return f
}

// nextField returns the first space-separated field of s (as
// strings.Fields splits) and what follows it.
func nextField(s string) (field, rest string) {
	start := -1
	for i, r := range s {
		switch {
		case !unicode.IsSpace(r):
			if start < 0 {
				start = i
			}
		case start >= 0:
			return s[start:i], s[i:]
		}
	}
	if start < 0 {
		return "", ""
	}
	return s[start:], ""
}

// addBorders copies border-* sides, skipping invisible ones to keep markup
// lean; it returns the horizontal and vertical border widths.
func (s *style) addBorders(st design.Style) (horiz, vert float64) {
	sides := [4]string{st.Get("border-top"), st.Get("border-right"), st.Get("border-bottom"), st.Get("border-left")}
	if all := st.Get("border"); all != "" {
		for i := range sides {
			if sides[i] == "" {
				sides[i] = all
			}
		}
	}
	if sides[0] != "" && sides[0] == sides[1] && sides[1] == sides[2] && sides[2] == sides[3] {
		if borderVisible(sides[0]) {
			s.add("border", sides[0])
			bw := borderWidth(sides[0])
			return 2 * bw, 2 * bw
		}
		return 0, 0
	}
	names := [4]string{"border-top", "border-right", "border-bottom", "border-left"}
	for i, v := range sides {
		if !borderVisible(v) {
			continue
		}
		s.add(names[i], v)
		if i == 1 || i == 3 {
			horiz += borderWidth(v)
		} else {
			vert += borderWidth(v)
		}
	}
	return horiz, vert
}

// borderVisible reports whether a border declaration draws anything.
func borderVisible(b string) bool {
	if b == "" || borderWidth(b) == 0 {
		return false
	}
	l := strings.ToLower(b)
	return !strings.Contains(l, "transparent") && !strings.Contains(l, "none")
}

// textAlign normalises a text alignment.
func textAlign(a string) string {
	switch strings.ToLower(strings.TrimSpace(a)) {
	case "left":
		return "left"
	case "right":
		return "right"
	case "center", "-webkit-center", "middle":
		return "center"
	case "justify":
		return "justify"
	}
	return ""
}

// font resolves a module font stack: "inherit" or empty means the body
// default; the result always ends with a generic family, so a missing web
// font degrades to a sensible local one. It records the font as used.
func (w *emailWriter) fontStack(f string) string {
	f = cssValue(f)
	if f == "" || strings.EqualFold(f, "inherit") {
		return w.font
	}
	w.useFont(f)
	return withGeneric(f)
}

func withGeneric(f string) string {
	generics := [...]string{"sans-serif", "serif", "monospace", "cursive", "fantasy", "system-ui"}
	if isASCII(f) {
		// No lower-cased copy: compare the tail ignoring ASCII case.
		t := strings.TrimRight(f, " '\"")
		for _, g := range generics {
			if len(t) >= len(g) && strings.EqualFold(t[len(t)-len(g):], g) {
				return f
			}
		}
		return f + ", sans-serif"
	}
	// Unicode lower-casing can change lengths: compare the lowered copy.
	l := strings.TrimRight(strings.ToLower(f), " '\"")
	for _, g := range generics {
		if strings.HasSuffix(l, g) {
			return f
		}
	}
	return f + ", sans-serif"
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// familyKey normalises a font family name for matching: the first
// family of a stack, lower-case, without quotes or spaces.
func familyKey(stack string) string {
	var buf [64]byte
	return string(appendFamilyKey(buf[:0], stack))
}

// appendFamilyKey appends familyKey(stack) to b.
func appendFamilyKey(b []byte, stack string) []byte {
	first := stack
	if i := strings.IndexByte(first, ','); i >= 0 {
		first = first[:i]
	}
	for i := 0; i < len(first); i++ {
		c := first[i]
		switch {
		case c == '\'' || c == '"' || c == ' ':
		case c >= 'A' && c <= 'Z':
			b = append(b, c+32)
		default:
			b = append(b, c)
		}
	}
	return b
}

func (w *emailWriter) useFont(stack string) {
	// The key is built on the stack and becomes a string only when it is
	// new: most modules repeat the page's font.
	var buf [64]byte
	k := appendFamilyKey(buf[:0], stack)
	if len(k) == 0 {
		return
	}
	for _, f := range w.fontsUsed {
		if f == string(k) {
			return
		}
	}
	w.fontsUsed = append(w.fontsUsed, string(k))
}

// scanFonts records font-family declarations found in an inline style.
func (w *emailWriter) scanFonts(style string) {
	for {
		i := strings.Index(style, "font-family")
		if i < 0 {
			return
		}
		style = style[i+len("font-family"):]
		j := strings.IndexByte(style, ':')
		if j < 0 {
			return
		}
		style = style[j+1:]
		end := strings.IndexByte(style, ';')
		val := style
		if end >= 0 {
			val = style[:end]
		}
		w.useFont(strings.TrimSpace(strings.ReplaceAll(val, "&quot;", "")))
	}
}

// mobileRule appends one rule to the @media block.
func (w *emailWriter) mobileRule(selector string, decls string) {
	if decls == "" {
		return
	}
	w.mobile.WriteString(selector)
	w.mobile.WriteByte('{')
	w.mobile.WriteString(decls)
	w.mobile.WriteByte('}')
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
	var b strings.Builder
	for _, side := range [...]string{"padding-top", "padding-right", "padding-bottom", "padding-left"} {
		if v, ok := st.Px(side); ok {
			b.WriteString(side)
			b.WriteByte(':')
			b.WriteString(formatPx(max(v, 0)))
			b.WriteString("px!important;")
		}
	}
	return b.String()
}
