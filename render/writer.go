package render

import (
	"bytes"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"golang.org/x/net/html/atom"

	"github.com/designbridge/caddy-designbridge/design"
)

// emailWriter renders one design into email HTML in a single pass over
// the model. The body is written first (into body) because the head
// depends on what the body used: web fonts and per-block mobile rules.
type emailWriter struct {
	d       *design.Design
	body    bytes.Buffer
	bodyBuf *[]byte // the pooled buffer behind body (see recycle)
	// styleChunk is where style() cuts the styles' arrays from; it is
	// styleChunks[styleChunksUsed-1], and the chunks come back between
	// renders through scratchPool.
	styleChunk      []byte
	styleChunks     [][]byte
	styleChunksUsed int
	mobile          bytes.Buffer // rules for the one @media block
	warnings        []string
	warnSeen        map[string]int // warnOnce message → index in warnings
	warnCount       []int          // occurrences, parallel to warnings

	fontsUsed []string // normalised first family names seen in styles
	hasRev    bool     // some row reverses its columns on mobile
	// some menu turns into a vertical list on mobile (hamburger)
	hasHamburger bool

	// Defaults resolved once from page.body.
	font      string // default font stack
	color     string // default text colour
	linkColor string

	// Per-row/per-column context.
	rowLink   string // row link colour override
	colWidth  float64
	blockSeq  int // module counter, for per-block mobile classes
	columnSeq int
	rowIndex  int
	colIndex  int // current column and module, for warning paths
	modIndex  int

	// Rich-text scratch reused by every rich block (see richlex.go),
	// and between renders through scratchPool.
	richToks  []richToken
	richAttrs []richAttr
	richStack []atom.Atom
	richSrc   string   // the block being written
	richStrs  []string // its strings that are not slices of it
	// the most strings any block kept: what to clear
	richStrsUsed int
	tagMemo      *tagMemo    // see lexRichSimple
	tagOuts      []tagOutput // the sanitiser's output for remembered tags, by their number
	richOptsSeen []richOpts  // see optsID
	// styleMemo remembers the facts of recent inline styles (see
	// styleFacts): editors repeat a few styles on every paragraph and span.
	styleMemo [16]styleMemoEntry
}

type styleMemoEntry struct {
	style string // "" for an empty slot
	facts styleFacts
}

// scratch is an emailWriter's scratch between renders: the rich-text
// buffers and the style chunks. Every style is copied into the output
// (or into a string) before the render ends, so a chunk is free once
// its render is.
type scratch struct {
	toks        []richToken
	attrs       []richAttr
	stack       []atom.Atom
	strs        []string
	styleChunks [][]byte
	tagMemo     tagMemo
	tagOuts     []tagOutput
	richOpts    []richOpts
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// maxPooledTokens bounds the token buffers kept between renders.
const maxPooledTokens = 1 << 14

// maxPooledStyleChunks bounds the style chunks kept (a design with many
// more styles than most allocates the rest each time).
const maxPooledStyleChunks = 64

// takeScratch gives w the buffers of an earlier render.
func (w *emailWriter) takeScratch() *scratch {
	sc := scratchPool.Get().(*scratch)
	w.richToks, w.richAttrs, w.richStack, w.richStrs = sc.toks[:0], sc.attrs[:0], sc.stack[:0], sc.strs[:0]
	w.styleChunks, w.styleChunksUsed = sc.styleChunks, 0
	w.tagMemo, w.tagOuts, w.richOptsSeen = &sc.tagMemo, sc.tagOuts[:0], sc.richOpts[:0]
	return sc
}

// returnScratch gives the buffers back in sc, the strings cleared so that
// the pool holds none of this design (tokens and attributes are spans,
// and style chunks bytes, which hold none). w must not write a style
// afterwards.
func (w *emailWriter) returnScratch(sc *scratch) {
	chunks := w.styleChunks[:min(len(w.styleChunks), maxPooledStyleChunks)]
	w.styleChunk, w.styleChunks, w.styleChunksUsed = nil, nil, 0
	for k := range w.tagMemo.slots {
		w.tagMemo.slots[k].text = "" // the design's; the spans are numbers
	}
	w.tagMemo.gens = 0
	w.tagMemo = nil
	clear(w.richOptsSeen) // the design's strings
	sc.tagOuts, sc.richOpts = w.tagOuts[:0], w.richOptsSeen[:0]
	w.tagOuts, w.richOptsSeen = nil, nil
	if cap(w.richToks) > maxPooledTokens || cap(w.richAttrs) > maxPooledTokens || cap(w.richStrs) > maxPooledTokens {
		return
	}
	clear(w.richStrs[:max(w.richStrsUsed, len(w.richStrs))])
	sc.toks, sc.attrs, sc.stack, sc.strs = w.richToks[:0], w.richAttrs[:0], w.richStack[:0], w.richStrs[:0]
	sc.styleChunks = chunks
	w.richToks, w.richAttrs, w.richStack, w.richStrs, w.richSrc = nil, nil, nil, nil, ""
	scratchPool.Put(sc)
}

// Table attributes shared by every layout table: a presentation role for
// screen readers and no spacing (Outlook ignores CSS border-spacing; the
// lspace/rspace fix is in the head CSS; border defaults to 0).
const emTableAttrs = ` role="presentation" cellpadding="0" cellspacing="0"`

func (w *emailWriter) s(s string) { w.body.WriteString(s) }

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
	w.body.WriteByte(' ')
	w.body.WriteString(name)
	w.body.WriteString(`="`)
	emEscape(&w.body, value)
	w.body.WriteByte('"')
}

// text writes escaped text.
func (w *emailWriter) text(s string) { emEscape(&w.body, s) }

// emEscape escapes text for HTML content or a double-quoted attribute.
// Merge tags ({{…}}, $…$) contain none of the escaped characters except
// in rare quoted arguments, which escaping keeps equivalent.
func emEscape(b *bytes.Buffer, s string) {
	start := 0
	for i := emNextEscaped(s, 0); i < len(s); i = emNextEscaped(s, i+1) {
		b.WriteString(s[start:i])
		b.WriteString(emEscapes[s[i]])
		start = i + 1
	}
	b.WriteString(s[start:])
}

// emEscapeBytes is emEscape for a byte slice.
func emEscapeBytes(b *bytes.Buffer, s []byte) {
	start := 0
	for i := emNextEscaped(s, 0); i < len(s); i = emNextEscaped(s, i+1) {
		b.Write(s[start:i])
		b.WriteString(emEscapes[s[i]])
		start = i + 1
	}
	b.Write(s[start:])
}

// emEscapes are the replacements emEscape makes.
var emEscapes = [256]string{'&': "&amp;", '<': "&lt;", '>': "&gt;", '"': "&quot;"}

// emWord reads the eight bytes of s at i as a little-endian word (the
// compiler merges the loads).
func emWord[T string | []byte](s T, i int) uint64 {
	w := s[i : i+8]
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}

// emNextEscaped returns the index of the first byte of s at or after i
// that emEscape replaces, or len(s). Text is mostly plain, so it looks
// eight bytes at a time ("has a zero byte", Hacker's Delight 6-1; the
// lowest flag is exact). The four bytes come in pairs one bit apart, '<'
// and '>' (bit 1), '"' and '&' (bit 2): setting that bit maps each pair
// onto one value, so two tests do the work of four.
func emNextEscaped[T string | []byte](s T, i int) int {
	const lows, highs = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(s); i += 8 {
		x := emWord(s, i)
		angle := (x | lows*0x02) ^ lows*'>'
		quoteAmp := (x | lows*0x04) ^ lows*'&'
		if m := ((angle-lows)&^angle | (quoteAmp-lows)&^quoteAmp) & highs; m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
	}
	for ; i < len(s); i++ {
		if emEscapes[s[i]] != "" {
			break
		}
	}
	return i
}

// emFmt formats a pixel amount compactly: 12, 12.5, 0.33.
func emFmt(f float64) string {
	if f == float64(int64(f)) {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// emAppendFmt appends emFmt(f) to b without an intermediate string.
func emAppendFmt(b []byte, f float64) []byte {
	if f == float64(int64(f)) {
		return strconv.AppendInt(b, int64(f), 10)
	}
	return strconv.AppendFloat(b, f, 'f', -1, 64)
}

// emCSSValue returns v if it is safe inside a style attribute or the
// <style> block: no declaration or rule breaks, no markup, no script
// URLs or legacy IE expressions. Design values are plain CSS values, so
// anything else is dropped rather than repaired.
func emCSSValue(v string) string {
	v = strings.TrimSpace(v)
	if v == "" {
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

// emStyle accumulates declarations for a style attribute.
type emStyle struct{ b []byte }

// emStyleCap is a style's first allocation: most style attributes fit,
// where growing from nil would allocate 8, 16, 32, … bytes in turn.
const emStyleCap = 192

// style returns an empty style whose first emStyleCap bytes come from a
// chunk shared by the render's styles: one allocation per
// emStyleChunk/emStyleCap styles instead of one each. A style that
// outgrows its share moves to its own array (the slice's capacity is
// capped), so styles never overwrite each other.
func (w *emailWriter) style() emStyle {
	if cap(w.styleChunk)-len(w.styleChunk) < emStyleCap {
		w.styleChunk = w.nextStyleChunk()
	}
	n := len(w.styleChunk)
	w.styleChunk = w.styleChunk[:n+emStyleCap]
	return emStyle{b: w.styleChunk[n : n : n+emStyleCap]}
}

const emStyleChunk = 32 * emStyleCap

// nextStyleChunk returns an empty chunk: the next one an earlier render
// left (see scratch), or a new one.
func (w *emailWriter) nextStyleChunk() []byte {
	if w.styleChunksUsed == len(w.styleChunks) {
		w.styleChunks = append(w.styleChunks, make([]byte, 0, emStyleChunk))
	}
	w.styleChunksUsed++
	return w.styleChunks[w.styleChunksUsed-1][:0]
}

func (s *emStyle) ensure() {
	if s.b == nil {
		s.b = make([]byte, 0, emStyleCap)
	}
}

func (s *emStyle) add(prop, value string) {
	value = emCSSValue(value)
	if value == "" {
		return
	}
	s.ensure()
	s.b = append(s.b, prop...)
	s.b = append(s.b, ':')
	s.b = append(s.b, value...)
	s.b = append(s.b, ';')
}

// addPx adds a pixel length.
func (s *emStyle) addPx(prop string, px float64) {
	s.ensure()
	s.b = append(s.b, prop...)
	s.b = append(s.b, ':')
	s.b = emAppendFmt(s.b, px)
	s.b = append(s.b, "px;"...)
}

// raw adds pre-formed, trusted declarations.
func (s *emStyle) raw(decl string) {
	if decl == "" {
		return // b stays nil: callers test b != nil for "anything added"
	}
	s.ensure()
	s.b = append(s.b, decl...)
}

// copyProps copies the listed properties from a design style.
func (s *emStyle) copyProps(st design.Style, props ...string) {
	for _, p := range props {
		s.add(p, st.Get(p))
	}
}

func (s *emStyle) String() string {
	if len(s.b) > 0 && s.b[len(s.b)-1] == ';' {
		return string(s.b[:len(s.b)-1])
	}
	return string(s.b)
}

// styleAttr writes ` style="…"` unless empty.
func (w *emailWriter) styleAttr(s *emStyle) {
	b := s.b
	if len(b) == 0 {
		return
	}
	if b[len(b)-1] == ';' {
		b = b[:len(b)-1]
	}
	w.body.WriteString(` style="`)
	emEscapeBytes(&w.body, b)
	w.body.WriteByte('"')
}

// path is the JSON path of the module being rendered, for warnings.
func (w *emailWriter) path() string {
	return "page.rows[" + strconv.Itoa(w.rowIndex) + "].columns[" + strconv.Itoa(w.colIndex) + "].modules[" + strconv.Itoa(w.modIndex) + "]"
}

// emColor returns a usable colour ("" for empty or junk).
func emColor(c string) string {
	c = emCSSValue(c)
	if c == "" {
		return ""
	}
	return c
}

// emIsTransparent reports whether a colour paints nothing.
func emIsTransparent(c string) bool {
	return c == "" || strings.EqualFold(c, "transparent") || strings.EqualFold(c, "none")
}

// emPadding reads padding-top/right/bottom/left (tolerating the
// "padding-buttom" misspelling and a "padding" shorthand) in pixels.
func emPadding(st design.Style) (top, right, bottom, left float64) {
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
		top, right, bottom, left = emShorthand(v)
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

// emShorthand parses a 1–4 value px shorthand like "0 5px 0 0".
func emShorthand(s string) (top, right, bottom, left float64) {
	var v [4]float64
	count := 0
	for rest := s; ; count++ {
		var p string
		if p, rest = emNextField(rest); p == "" {
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
func (s *emStyle) addPadding(top, right, bottom, left float64) {
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
	s.ensure()
	s.b = append(s.b, "padding:"...)
	for i, v := range vals {
		if i > 0 {
			s.b = append(s.b, ' ')
		}
		s.b = emAppendFmt(s.b, v)
		if v != 0 {
			s.b = append(s.b, "px"...)
		}
	}
	s.b = append(s.b, ';')
}

// emBorderWidth is the width in px of a border like "1px solid #ccc"
// (0 for none/transparent-free junk).
func emBorderWidth(b string) float64 {
	first := emFirstField(b)
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

// emFirstField is strings.Fields(s)[0] (or ""), without the slice.
func emFirstField(s string) string {
	f, _ := emNextField(s)
	return f
}

// emNextField returns the first space-separated field of s (as
// strings.Fields splits) and what follows it.
func emNextField(s string) (field, rest string) {
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
func (s *emStyle) addBorders(st design.Style) (horiz, vert float64) {
	sides := [4]string{st.Get("border-top"), st.Get("border-right"), st.Get("border-bottom"), st.Get("border-left")}
	if all := st.Get("border"); all != "" {
		for i := range sides {
			if sides[i] == "" {
				sides[i] = all
			}
		}
	}
	if sides[0] != "" && sides[0] == sides[1] && sides[1] == sides[2] && sides[2] == sides[3] {
		if emBorderVisible(sides[0]) {
			s.add("border", sides[0])
			bw := emBorderWidth(sides[0])
			return 2 * bw, 2 * bw
		}
		return 0, 0
	}
	names := [4]string{"border-top", "border-right", "border-bottom", "border-left"}
	for i, v := range sides {
		if !emBorderVisible(v) {
			continue
		}
		s.add(names[i], v)
		if i == 1 || i == 3 {
			horiz += emBorderWidth(v)
		} else {
			vert += emBorderWidth(v)
		}
	}
	return horiz, vert
}

// emBorderVisible reports whether a border declaration draws anything.
func emBorderVisible(b string) bool {
	if b == "" || emBorderWidth(b) == 0 {
		return false
	}
	l := strings.ToLower(b)
	return !strings.Contains(l, "transparent") && !strings.Contains(l, "none")
}

// emAlign normalises a text alignment.
func emAlign(a string) string {
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
	f = emCSSValue(f)
	if f == "" || strings.EqualFold(f, "inherit") {
		return w.font
	}
	w.useFont(f)
	return emWithGeneric(f)
}

func emWithGeneric(f string) string {
	generics := [...]string{"sans-serif", "serif", "monospace", "cursive", "fantasy", "system-ui"}
	if emIsASCII(f) {
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

func emIsASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// emFamilyKey normalises a font family name for matching: the first
// family of a stack, lower-case, without quotes or spaces.
func emFamilyKey(stack string) string {
	var buf [64]byte
	return string(emAppendFamilyKey(buf[:0], stack))
}

// emAppendFamilyKey appends emFamilyKey(stack) to b.
func emAppendFamilyKey(b []byte, stack string) []byte {
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
	k := emAppendFamilyKey(buf[:0], stack)
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

// emImportant turns "a:1;b:2" into "a:1!important;b:2!important".
func emImportant(decls string) string {
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

// emMobilePadding turns the padding sides a mobileStyle sets (and only
// those) into !important declarations.
func emMobilePadding(st design.Style) string {
	var b strings.Builder
	for _, side := range [...]string{"padding-top", "padding-right", "padding-bottom", "padding-left"} {
		if v, ok := st.Px(side); ok {
			b.WriteString(side)
			b.WriteByte(':')
			b.WriteString(emFmt(max(v, 0)))
			b.WriteString("px!important;")
		}
	}
	return b.String()
}
