package render

import (
	"strconv"
	"strings"
	"sync"
	"unicode"

	"github.com/designbridge/caddy-designbridge/design"
)

// CSS values taken from a design, made safe and bounded, and the style
// attributes built from them.

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
	v, _ = checkCSS(v, maxCSSValue)
	return v
}

// checkCSS is cssValue with a bound of max bytes; for a dropped value it
// also says why, for the render's warnings.
func checkCSS(v string, max int) (safe, why string) {
	v = strings.TrimSpace(v)
	if v == "" {
		return "", ""
	}
	if len(v) > max {
		return "", "over " + strconv.Itoa(max) + " bytes"
	}
	var quote byte // the quote of the string v is in at i, or 0
	// The ends of the ( and [ blocks open at i, innermost last: CSS ends
	// such a block only at its own end, never at a ';' or a '}'.
	var room [16]byte
	blocks := room[:0]
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !cssMarks[c] {
			continue
		}
		switch {
		case c == ';', c == '{', c == '}', c == '<', c == '>', c == '\\', c == '\n', c == '\r':
			return "", "contains " + strconv.QuoteRune(rune(c))
		case c == quote:
			quote = 0
		case quote != 0:
		case c == '"' || c == '\'':
			quote = c
		case c == '(':
			blocks = append(blocks, ')')
		case c == '[':
			blocks = append(blocks, ']')
		case len(blocks) > 0 && c == blocks[len(blocks)-1]:
			blocks = blocks[:len(blocks)-1]
		}
	}
	// In the <style> element an open string, comment or block would run
	// on over the rules after it (the whole @media block), and in a style
	// attribute over the declarations after it.
	if quote != 0 {
		return "", "contains an unclosed " + strconv.QuoteRune(rune(quote))
	}
	if len(blocks) > 0 {
		return "", "contains an unclosed " + strconv.QuoteRune(rune(opening(blocks[len(blocks)-1])))
	}
	if strings.Contains(v, "/*") || strings.Contains(v, "*/") {
		return "", "contains a CSS comment"
	}
	if strings.Contains(v, "(") {
		if why := scriptWords(v); why != "" {
			return "", why
		}
		if u := refusedStyleURL(asciiLower(v)); u != "" {
			return "", urlRefusal(u)
		}
	}
	return v, ""
}

// cssMarks are the bytes checkCSS's loop acts on; it passes over any
// other byte at the cost of one look-up, where the tests of its switch
// took about four times as long.
var cssMarks = [256]bool{
	';': true, '{': true, '}': true, '<': true, '>': true, '\\': true, '\n': true, '\r': true,
	'"': true, '\'': true, '(': true, ')': true, '[': true, ']': true,
}

// scriptWords says why a CSS value with parentheses is dropped for what
// it names: a legacy IE expression or a script URL ("" when neither).
func scriptWords(v string) string {
	l := strings.ToLower(v)
	if strings.Contains(l, "expression") {
		return "contains an expression"
	}
	if strings.Contains(l, "javascript:") || strings.Contains(l, "vbscript:") {
		return "contains a script URL"
	}
	return ""
}

// refusedStyleURL is the first URL that a CSS value or declaration l
// (ASCII lower-cased) loads and design.SafeURL refuses ("" when there is
// none): each url()'s and, with an image-set(), each quoted string's
// (which it reads as a URL). Each is read up to where CSS ends it
// (styleURLEnd): so every byte of l is read about once, whatever the
// number of url()s and quotes (read to the end of l, a style of a
// quote or url( after another took a minute a megabyte).
func refusedStyleURL(l string) string {
	for rest := l; ; {
		i := strings.Index(rest, "url(")
		if i < 0 {
			break
		}
		rest = strings.TrimLeft(rest[i+len("url("):], " \t\n\r\f")
		arg := strings.TrimLeft(rest, `"'`)
		var quote byte
		if len(arg) < len(rest) {
			quote = rest[len(rest)-len(arg)-1]
		}
		if arg = arg[:styleURLEnd(arg, quote)]; !design.SafeURL(arg) {
			return arg
		}
	}
	if strings.Contains(l, "image-set(") {
		for i := 0; i < len(l); i++ {
			if q := l[i]; q == '"' || q == '\'' {
				arg := l[i+1:]
				if arg = arg[:styleURLEnd(arg, q)]; !design.SafeURL(arg) {
					return arg
				}
			}
		}
	}
	return ""
}

// styleURLEnd is the length of the URL that s begins with in a CSS
// url() or string: up to the closing quote in a string of quote; in an
// unquoted url() (quote 0), up to its ')', or up to a '(' or a quote,
// which make it no URL (CSS's bad URL) and which no scheme holds.
func styleURLEnd(s string, quote byte) int {
	var end int
	if quote != 0 {
		end = strings.IndexByte(s, quote)
	} else {
		end = strings.IndexAny(s, `()"'`)
	}
	if end < 0 {
		return len(s)
	}
	return end
}

// The writer's checked values: cssValue, cssColor, cssURL and repeatable
// for the value of property prop, with a warning at the current place
// (see path) when the design's value is dropped, so that a designer
// learns why a background or font is missing. The warning names the
// property and the reason, never the value: the design holds it, and
// keeping values out keeps the warnings few and short. A URL the value
// loads is refused as a link is (urlRefusal): the reason names its
// scheme, and a property has one such warning, whatever the schemes.

// safeCSS is cssValue(v) for property prop.
func (w *emailWriter) safeCSS(prop, v string) string {
	v, why := checkCSS(v, maxCSSValue)
	w.dropped(prop, why)
	return v
}

// safeColor is cssColor(v) for property prop.
func (w *emailWriter) safeColor(prop, v string) string {
	v, why := checkCSS(v, maxCSSRepeated)
	w.dropped(prop, why)
	return v
}

// safeURL is cssURL(v) for property prop.
func (w *emailWriter) safeURL(prop, v string) string {
	u, why := checkURL(v)
	w.dropped(prop, why)
	return u
}

// safeRepeated is repeatable(v) for property prop.
func (w *emailWriter) safeRepeated(prop, v string) string {
	if repeatable(v) == "" && strings.TrimSpace(v) != "" {
		w.dropped(prop, "over "+strconv.Itoa(maxCSSRepeated)+" bytes")
		return ""
	}
	return v
}

// dropped warns that the value of prop was left out, for reason why
// ("" when it was kept).
func (w *emailWriter) dropped(prop, why string) {
	// A style without a writer (columnFrame's, which only measures)
	// warns nothing: the column's own style does.
	if why == "" || w == nil {
		return
	}
	what := "CSS value of " + quoteBounded(prop) + " dropped ("
	msg := what + why + ")"
	key := msg
	if isURLRefusal(why) {
		key = what + "URL not allowed)"
	}
	w.warn.onceAs(key, msg, w.path())
}

// style accumulates declarations for a style attribute, checking each
// value from the design with its writer (safeCSS).
type style struct {
	b []byte
	w *emailWriter
}

// style returns an empty style with room for most style attributes,
// cut from the writer's style buffer: no allocation per style (a third
// of all the renderer allocated), and with the buffers pooled between
// renders, none per render. A style that outgrows its room moves to a
// slice of its own, as append does; a style is never reused within a
// render, so none can see another's bytes, and none outlives it.
func (w *emailWriter) style() style {
	if cap(w.styles)-len(w.styles) < styleRoom {
		bp := styleBufs.Get().(*[]byte)
		w.styleBufs = append(w.styleBufs, bp)
		w.styles = (*bp)[:0]
	}
	i := len(w.styles)
	w.styles = w.styles[:i+styleRoom]
	return style{b: w.styles[i : i : i+styleRoom], w: w}
}

// styleRoom is the room of a new style (growing from nothing would
// allocate 8, 16, 32… bytes in turn); a style buffer holds 128 styles.
const (
	styleRoom   = 192
	styleBuffer = 128 * styleRoom
)

// styleBufs holds style buffers (*[]byte, styleBuffer bytes) between
// renders; recycle gives a render's back.
var styleBufs = sync.Pool{New: func() any { b := make([]byte, 0, styleBuffer); return &b }}

func (s *style) add(prop, value string) {
	value, why := checkCSS(value, maxCSSValue)
	if value == "" {
		s.w.dropped(prop, why)
		return
	}
	s.b = append(s.b, prop...)
	s.b = append(s.b, ':')
	s.b = append(s.b, value...)
	// Editors write some lengths as bare numbers (16 for 16px), which
	// CSS ignores for these properties.
	if bareNumber(value) && pxWhenBare[prop] {
		s.b = append(s.b, "px"...)
	}
	s.b = append(s.b, ';')
}

// pxWhenBare are the length properties whose bare numbers mean pixels.
var pxWhenBare = map[string]bool{"font-size": true, "letter-spacing": true, "border-radius": true}

// bareNumber reports whether v is a number without a unit ("16", "1.5").
func bareNumber(v string) bool {
	digits := false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c >= '0' && c <= '9':
			digits = true
		case c == '.' || (c == '-' && i == 0):
		default:
			return false
		}
	}
	return digits
}

// addURL adds url('u') for u a URL checkURL gave, which is safe there
// but may hold braces, which add refuses.
func (s *style) addURL(prop, u string) {
	s.b = append(s.b, prop...)
	s.b = append(s.b, ":url('"...)
	s.b = append(s.b, u...)
	s.b = append(s.b, "');"...)
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
	v, _ = checkCSS(v, maxCSSRepeated)
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

// opening is the character that opens a CSS block ended by end.
func opening(end byte) byte {
	if end == ']' {
		return '['
	}
	return '('
}
