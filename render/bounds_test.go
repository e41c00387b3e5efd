package render

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// The amplification bound (docs/renderer.md): a document of n bytes of
// JSON renders to at most ampK×n + ampC bytes of HTML or plain text.
// ampK covers the worst shape, a row of twelve empty columns ({} is 3
// bytes of JSON and some 270 bytes of HTML and ghost table, 89×); ampC
// covers the head and the preheader.
const (
	ampK = 100
	ampC = 16 << 10
)

// renderBoth renders data as HTML and as plain text with lim.
func renderBoth(t testing.TB, data []byte, lim Limits) (html, text []byte, htmlErr, textErr error) {
	t.Helper()
	d, err := design.Decode(data)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if out, err := HTMLWithLimits(d, lim); err == nil {
		html = out.Body
	} else {
		htmlErr = err
	}
	if out, err := PlainTextWithLimits(d, lim); err == nil {
		text = out.Body
	} else {
		textErr = err
	}
	return html, text, htmlErr, textErr
}

// TestAmplification renders the amplification designs without an output
// limit that would hide the growth: each output stays within the
// amplification bound. Unbounded, long-values renders 120 KB of JSON to
// 131 MB of HTML (a 32 KiB link colour on 2,000 links) and deep-nesting
// to 100 MB of plain text (indentation growing with each nested list).
func TestAmplification(t *testing.T) {
	for _, a := range designtest.Amplifiers() {
		t.Run(a.Name, func(t *testing.T) {
			html, text, herr, terr := renderBoth(t, a.JSON, Limits{MaxOutput: 1 << 30})
			if herr != nil || terr != nil {
				t.Fatalf("HTML: %v, text: %v", herr, terr)
			}
			bound := ampK*len(a.JSON) + ampC
			if len(html) > bound || len(text) > bound {
				t.Errorf("%d bytes of JSON: %d bytes of HTML, %d of text; the bound is %d", len(a.JSON), len(html), len(text), bound)
			}
		})
	}
}

// TestOutputLimit: a document of exactly MaxOutput bytes is rendered, one
// byte less is refused with ErrOutputTooLarge; the same for plain text.
func TestOutputLimit(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "fixtures", "module-paragraph.json"))
	if err != nil {
		t.Fatal(err)
	}
	html, text, herr, terr := renderBoth(t, data, Limits{})
	if herr != nil || terr != nil {
		t.Fatal(herr, terr)
	}
	for _, tt := range []struct {
		name string
		n    int
		form func(d *design.Design, lim Limits) (*Output, error)
	}{
		{"html", len(html), HTMLWithLimits},
		{"text", len(text), PlainTextWithLimits},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, _ := design.Decode(data)
			if _, err := tt.form(d, Limits{MaxOutput: tt.n}); err != nil {
				t.Errorf("limit = size %d: %v", tt.n, err)
			}
			for _, max := range []int{tt.n - 1, tt.n / 2, 100, 1} {
				out, err := tt.form(d, Limits{MaxOutput: max})
				if !errors.Is(err, ErrOutputTooLarge) || out != nil {
					t.Errorf("limit %d for %d bytes: %v, want ErrOutputTooLarge", max, tt.n, err)
				}
			}
		})
	}
}

// TestOutputLimitStopsEarly: past the limit the render stops, rather than
// rendering everything and then measuring: refusing a design whose output
// would be megabytes, under a 64 KiB limit, allocates well under a
// megabyte.
func TestOutputLimitStopsEarly(t *testing.T) {
	const limit = 64 << 10
	var tiny []byte
	for _, a := range designtest.Amplifiers() {
		if a.Name == "tiny-blocks" {
			tiny = a.JSON // 9 MB of HTML
		}
	}
	links := `{"page":{"rows":[{"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-paragraph","descriptor":{"paragraph":{"html":"` +
		strings.Repeat(`<a href='https://example.com/'>link</a>`, 40000) + `"}}}]}]}]}}` // 3 MB of HTML, 2 MB of text
	for _, tt := range []struct {
		name string
		data []byte
		form func(d *design.Design, lim Limits) (*Output, error)
	}{
		{"tiny-blocks/html", tiny, HTMLWithLimits},
		{"links/html", []byte(links), HTMLWithLimits},
		{"links/text", []byte(links), PlainTextWithLimits},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d, err := design.Decode(tt.data)
			if err != nil {
				t.Fatal(err)
			}
			if out, err := tt.form(d, Limits{MaxOutput: 1 << 30}); err != nil || len(out.Body) < 1<<20 {
				t.Fatalf("unbounded: %v", err) // the case must be big
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			_, err = tt.form(d, Limits{MaxOutput: limit})
			runtime.ReadMemStats(&after)
			if !errors.Is(err, ErrOutputTooLarge) {
				t.Fatalf("err = %v, want ErrOutputTooLarge", err)
			}
			// The body's buffer starts at 3/5 of the design's size
			// (newEmailWriter) and doubles once past the limit.
			budget := uint64(len(tt.data)*3/5 + 8*limit)
			if got := after.TotalAlloc - before.TotalAlloc; got > budget && !raceEnabled {
				t.Errorf("%d KiB allocated, want at most %d KiB", got>>10, budget>>10)
			}
		})
	}
}

// TestCSSValueBounds: a value copied from a design is dropped past its
// bound (maxCSSValue; maxCSSRepeated for colours and for values written
// on every tag of rich text), and kept up to it.
func TestCSSValueBounds(t *testing.T) {
	for _, tt := range []struct {
		name string
		f    func(string) string
		max  int
	}{
		{"cssValue", cssValue, maxCSSValue},
		{"cssColor", cssColor, maxCSSRepeated},
		{"cssRepeated", cssRepeated, maxCSSRepeated},
		{"repeatable", repeatable, maxCSSRepeated},
	} {
		t.Run(tt.name, func(t *testing.T) {
			at := strings.Repeat("a", tt.max)
			if got := tt.f(" " + at + " "); strings.TrimSpace(got) != at {
				t.Errorf("%d bytes: dropped", tt.max)
			}
			if got := tt.f(at + "a"); got != "" {
				t.Errorf("%d bytes: kept", tt.max+1)
			}
		})
	}
}

// FuzzAmplification: whatever the document, HTML and plain text stay
// within ampK × input + ampC bytes, and the output limit is exact: a
// limit of the output's size renders it, one byte less refuses it.
func FuzzAmplification(f *testing.F) {
	fixtures, _ := filepath.Glob("testdata/fixtures/*.json")
	for _, p := range fixtures {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	mod := func(kind, desc string) string {
		return `{"type":"mailup-bee-newsletter-modules-` + kind + `","descriptor":{` + desc + `}}`
	}
	col := func(mods ...string) string { return `{"modules":[` + strings.Join(mods, ",") + `]}` }
	for _, doc := range []string{
		`{"page":{"rows":[{"columns":[{},{},{},{},{},{},{},{},{},{},{},{}]}]}}`,
		`{"page":{"body":{"content":{"computedStyle":{"linkColor":"` + strings.Repeat("a", 70) + `"}}},"rows":[{"columns":[` +
			col(mod("paragraph", `"paragraph":{"html":"<a><a><a><a><p><p><ul><li><img>"}`)) + `]}]}}`,
		`{"page":{"rows":[{"columns":[` + col(mod("list", `"list":{"html":"<ul><ul><ul><li>x<ol><li>y","computedStyle":{"liIndent":"40px","listStyleType":"square"}}`)) + `]}]}}`,
		`{"page":{"rows":[{"columns":[` + col(mod("menu", `"menu":{"items":[{"text":"a","link":{"href":"https://x"}},{"text":"b"}]}`),
			mod("social", `"iconsList":{"icons":[{"image":{"src":"https://x/i.png","href":"https://x"}}]}`),
			mod("button", `"button":{"label":"<a>x</a>"}`), mod("spacer", ""), mod("divider", "")) + `]}]}}`,
	} {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := design.Decode(data)
		if err != nil {
			return
		}
		bound := ampK*len(data) + ampC
		for _, form := range []struct {
			name   string
			render func(d *design.Design, lim Limits) (*Output, error)
		}{{"HTML", HTMLWithLimits}, {"text", PlainTextWithLimits}} {
			out, err := form.render(d, Limits{MaxOutput: bound})
			var pe *design.PathError
			if errors.As(err, &pe) {
				return // refused as Decode refuses a malformed design
			}
			if err != nil {
				t.Fatalf("%s: %d bytes of JSON over %d bytes of output: %v", form.name, len(data), bound, err)
			}
			n := len(out.Body)
			if _, err := form.render(d, Limits{MaxOutput: n}); err != nil {
				t.Fatalf("%s: limit %d = its size: %v", form.name, n, err)
			}
			if n > 1 {
				if _, err := form.render(d, Limits{MaxOutput: n - 1}); !errors.Is(err, ErrOutputTooLarge) {
					t.Fatalf("%s: limit %d, one byte under its size: %v", form.name, n-1, err)
				}
			}
		}
	})
}

// FuzzAmplificationRepeated holds the same bound where the constant ampC
// cannot hide a growth: a fragment of design (a row, a column or a block,
// by level) is repeated up to 255 times, so that a shape renders past
// the bound unless its own HTML is within about ampK bytes per byte.
func FuzzAmplificationRepeated(f *testing.F) {
	f.Add([]byte(`{"columns":[{},{},{},{},{},{},{},{},{},{},{},{}]}`), uint8(255), uint8(0))
	f.Add([]byte(`{"columns":[{"modules":[]}]}`), uint8(255), uint8(0))
	f.Add([]byte(`{}`), uint8(12), uint8(1))
	f.Add([]byte(`{"style":{"background-color":"#123456","border":"1px solid #abcdef"}}`), uint8(12), uint8(1))
	for _, m := range []string{
		`{"type":"mailup-bee-newsletter-modules-divider"}`,
		`{"type":"mailup-bee-newsletter-modules-spacer","descriptor":{"computedStyle":{"hideContentOnMobile":true}}}`,
		`{"type":"mailup-bee-newsletter-modules-paragraph","descriptor":{"paragraph":{"html":"<a><a><ul><li>","computedStyle":{"linkColor":"` + strings.Repeat("a", 64) + `"}}}}`,
		`{"type":"mailup-bee-newsletter-modules-button","descriptor":{"button":{"label":"x","href":"https://x"}}}`,
		`{"type":"mailup-bee-newsletter-modules-social","descriptor":{"iconsList":{"icons":[{"image":{"src":"https://x"}}]}}}`,
	} {
		f.Add([]byte(m), uint8(255), uint8(2))
	}
	f.Fuzz(func(t *testing.T, fragment []byte, copies, level uint8) {
		if copies == 0 {
			return
		}
		parts := bytes.Repeat(append(append([]byte{}, fragment...), ','), int(copies))
		parts = parts[:len(parts)-1]
		var doc []byte
		switch level % 3 {
		case 0:
			doc = slices.Concat([]byte(`{"page":{"rows":[`), parts, []byte(`]}}`))
		case 1:
			doc = slices.Concat([]byte(`{"page":{"rows":[{"columns":[`), parts, []byte(`]}]}}`))
		default:
			doc = slices.Concat([]byte(`{"page":{"rows":[{"columns":[{"modules":[`), parts, []byte(`]}]}]}}`))
		}
		d, err := design.Decode(doc)
		if err != nil {
			return
		}
		bound := ampK*len(doc) + ampC
		for _, form := range []struct {
			name   string
			render func(d *design.Design, lim Limits) (*Output, error)
		}{{"HTML", HTMLWithLimits}, {"text", PlainTextWithLimits}} {
			_, err := form.render(d, Limits{MaxOutput: bound})
			var pe *design.PathError
			if errors.As(err, &pe) {
				return
			}
			if err != nil {
				t.Fatalf("%s: %d bytes of JSON over %d bytes of output: %v", form.name, len(doc), bound, err)
			}
		}
	})
}
