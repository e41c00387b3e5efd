package render

import (
	"strconv"
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
func (t *warnings) once(msg, path string) {
	if t.index == nil {
		t.index = map[string]int{}
	}
	if i, ok := t.index[msg]; ok {
		if t.last[i] != path {
			t.count[i]++
			t.last[i] = path
		}
		return
	}
	t.index[msg] = len(t.msgs)
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
