package render

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/designbridge/caddy-designbridge/design"
)

// warnings collects what a render left out, for Output.Warnings, alike
// for HTML and plain text: one warning per distinct message, naming the
// first place it occurs and, when it recurs, how often, so that a design
// with thousands of unknown modules yields one warning (they travel in a
// response header).
type warnings struct {
	msgs  []string
	count []int          // places, parallel to msgs
	last  []string       // the last place of each, parallel to msgs
	index map[string]int // message → index in msgs
}

// once reports msg at path, or counts it when already reported. Counts
// are of places: a message again at the place it was last reported (a
// value read twice, as the body's background is, once for every layout
// and again by the layouts that show it) is not counted again, so that
// every layout counts alike.
func (t *warnings) once(msg, path string) { t.onceAs(msg, msg, path) }

// onceAs is once for a message whose words vary with its first place (a
// dropped URL's scheme): key, not msg, tells messages apart, so that
// their number stays bounded by the renderer's fields and reasons
// whatever the design holds.
func (t *warnings) onceAs(key, msg, path string) {
	if t.index == nil {
		t.index = map[string]int{}
	}
	if i, ok := t.index[key]; ok {
		if t.last[i] != path {
			t.count[i]++
			t.last[i] = path
		}
		return
	}
	t.index[key] = len(t.msgs)
	t.msgs = append(t.msgs, msg+" at "+path)
	t.count = append(t.count, 1)
	t.last = append(t.last, path)
}

// list is the warnings with their repeat counts; nil when there is none.
func (t *warnings) list() []string {
	if len(t.msgs) == 0 {
		return nil
	}
	out := make([]string, 0, len(t.msgs))
	for i, m := range t.msgs {
		if t.count[i] > 1 {
			m += " (and " + strconv.Itoa(t.count[i]-1) + " more)"
		}
		out = append(out, m)
	}
	return out
}

// unknownKind is the warning for a module of no kind the renderers know
// (see kinds), rendered as nothing.
func unknownKind(m *design.Module) string {
	if m.Kind == design.KindAddon {
		return "addon module without a renderable contentType (" + quoteBounded(m.ContentType) + ") omitted"
	}
	return "unknown module type " + quoteBounded(m.Type) + " omitted"
}

// modulePath is the JSON path of a module, for warnings and errors.
func modulePath(row, col, mod int) string {
	return "page.rows[" + strconv.Itoa(row) + "].columns[" + strconv.Itoa(col) + "].modules[" + strconv.Itoa(mod) + "]"
}

// quoteBounded quotes a value from the design for a warning: ASCII only
// (warnings end up in a response header) and at most 80 characters.
func quoteBounded(s string) string {
	const maxRunes = 80
	if utf8.RuneCountInString(s) > maxRunes {
		r := []rune(s)
		s = string(r[:maxRunes]) + "…"
	}
	return strconv.QuoteToASCII(s)
}

// refusedURL is the warning for the URL u of a design's field, left out
// because design.SafeURL refused it, and the key that tells it apart
// (warnings.onceAs). The message says why as urlRefusal does.
func refusedURL(field, u string) (key, msg string) { return droppedURL(field, urlRefusal(u)) }

// droppedURL is the warning for a URL of a design's field left out for
// reason why, and its key: one per field, whatever the reasons.
func droppedURL(field, why string) (key, msg string) {
	what := "URL of " + strconv.Quote(field) + " dropped ("
	return what + "URL scheme not allowed)", what + why + ")"
}

// The reasons urlRefusal gives, but for a scheme's, which names it.
const (
	refusedData    = "data: URL not of a raster image"
	refusedNetwork = "network path not allowed"
	refusedMailto  = "mailto: URL attaching a file not allowed"
)

// urlRefusal says why design.SafeURL refused u, for the render's
// warnings of links, sources and CSS values alike. It names the scheme
// (a designer who wrote skype: or javascript: learns why the button has
// no link), cut short, never the URL, which may be long; a network path
// ("//host", `\\host`) has no scheme to name, and a mailto: URL is
// refused only for a field that attaches a file.
func urlRefusal(u string) string {
	scheme := design.Scheme(u)
	switch {
	case scheme == "data":
		return refusedData
	case scheme == "mailto":
		return refusedMailto
	case scheme == "" && design.NetworkPath(u):
		return refusedNetwork
	}
	return "URL scheme " + quoteScheme(scheme) + " not allowed"
}

// isURLRefusal reports whether why, the reason a CSS value was dropped,
// is urlRefusal's.
func isURLRefusal(why string) bool {
	switch why {
	case refusedData, refusedNetwork, refusedMailto:
		return true
	}
	return strings.HasPrefix(why, "URL scheme ")
}

// quoteScheme quotes scheme and its colon for a warning, ASCII-escaped
// and cut to 24 bytes of escapes: a scheme of non-ASCII letters, escaped
// as \uXXXX, could otherwise take a header value's room.
func quoteScheme(scheme string) string {
	const maxBytes = 24
	b := make([]byte, 0, maxBytes+16)
	b = append(b, '"')
	n := 0
	for s := scheme; s != ""; {
		_, size := utf8.DecodeRuneInString(s)
		e := strconv.QuoteToASCII(s[:size])
		e = e[1 : len(e)-1]
		if n+len(e) > maxBytes {
			b = append(b, `\u2026`...)
			break
		}
		b = append(b, e...)
		n += len(e)
		s = s[size:]
	}
	return string(append(b, `:"`...))
}

// allowURL reports whether design.SafeURL allows u, the URL of the
// design's field; when it does not, the URL is left out, and a warning
// says so at the current place (see path).
func (w *emailWriter) allowURL(field, u string) bool {
	if design.SafeURL(u) {
		return true
	}
	w.warnURL(field, u)
	return false
}

// warnURL warns that u, the URL of field, was left out: design.SafeURL
// refused it.
func (w *emailWriter) warnURL(field, u string) {
	key, msg := refusedURL(field, u)
	w.warn.onceAs(key, msg, w.path())
}

// keptURL is u when allowURL(field, u), else "".
func (w *emailWriter) keptURL(field, u string) string {
	if w.allowURL(field, u) {
		return u
	}
	return ""
}
