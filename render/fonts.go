package render

import "strings"

// Font stacks: the default family, generic fallbacks, and the web fonts a
// design uses (for the head's stylesheet links).

// font resolves a module font stack: "inherit" or empty means the body
// default; the result always ends with a generic family, so a missing web
// font degrades to a sensible local one. It records the font as used.
func (w *emailWriter) fontStack(f string) string {
	f = w.safeCSS("font-family", f)
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

// maxFamilyKey and maxFontsUsed bound the family names recorded as used:
// no font a design can link (webFonts) has a longer name, designs use a
// handful, and each one met is looked for among those recorded (a style
// may hold megabytes of "font-family:", rich text thousands of families).
const (
	maxFamilyKey = 128
	maxFontsUsed = 64
)

// usesFont reports whether the family key k was recorded as used.
func (w *emailWriter) usesFont(k string) bool {
	for _, f := range w.fontsUsed {
		if f == k {
			return true
		}
	}
	return false
}

// useFont records the first family of stack as used, for fontLinks.
func (w *emailWriter) useFont(stack string) {
	if len(w.fontsUsed) == maxFontsUsed {
		return
	}
	// The key is built on the stack and becomes a string only when it is
	// new: most modules repeat the page's font.
	var buf [64]byte
	k := appendFamilyKey(buf[:0], stack)
	if len(k) == 0 || len(k) > maxFamilyKey || w.usesFont(string(k)) {
		return
	}
	w.fontsUsed = append(w.fontsUsed, string(k))
}

// scanFonts records font-family declarations found in an inline style.
// Each declaration's value is read once: the scan goes on after it.
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
		val, rest, more := strings.Cut(style, ";")
		w.useFont(strings.TrimSpace(strings.ReplaceAll(val, "&quot;", "")))
		if !more {
			return
		}
		style = rest
	}
}
