package render

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

func TestWarnings(t *testing.T) {
	mods := func(types ...string) string {
		var b []string
		for _, ty := range types {
			b = append(b, `{"type":"`+ty+`","descriptor":{}}`)
		}
		return `{"page":{"rows":[{"columns":[{"grid-columns":12,"modules":[` + strings.Join(b, ",") + `]}]}]}}`
	}
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"known types warn nothing", mods("mailup-bee-newsletter-modules-empty", "mailup-bee-newsletter-modules-divider"), nil},
		{"unknown type", mods("x-new"), []string{`unknown module type "x-new" omitted at page.rows[0].columns[0].modules[0]`}},
		{"repeats are counted, not listed", mods("x", "mailup-bee-newsletter-modules-empty", "x", "x", "y"), []string{
			`unknown module type "x" omitted at page.rows[0].columns[0].modules[0] (and 2 more)`,
			`unknown module type "y" omitted at page.rows[0].columns[0].modules[4]`}},
		{"header-safe names", mods(`évil\r\nX-Injected: 1`), []string{`unknown module type "\u00e9vil\r\nX-Injected: 1" omitted at page.rows[0].columns[0].modules[0]`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := design.Decode([]byte(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			out, err := HTML(d)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(out.Warnings, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("warnings\n got %q\nwant %q", out.Warnings, tt.want)
			}
			for _, w := range out.Warnings {
				for _, c := range w {
					if c < 0x20 || c > 0x7e {
						t.Errorf("warning not header-safe: %q", w)
					}
				}
			}
		})
	}
}

// cssDesign is a one-row design: body (content and container), row
// (container), column and paragraph styles as given (JSON object
// members, "" for none).
func cssDesign(body, bodyContainer, row, col, para string) string {
	return `{"page":{"body":{"content":{"style":{` + body + `}},"container":{"style":{` + bodyContainer + `}}},"rows":[{"container":{"style":{` + row +
		`}},"columns":[{"grid-columns":12,"style":{` + col + `},"modules":[` +
		`{"type":"mailup-bee-newsletter-modules-paragraph","descriptor":{"paragraph":{"html":"<p>Hi</p>","style":{` + para + `}}}}]}]}]}}`
}

// TestCSSWarnings: a CSS value the renderer drops from a design (unsafe or
// over its bound) is named in the warnings, by property, reason and place,
// alike in every layout, and is not in the HTML.
func TestCSSWarnings(t *testing.T) {
	long := `"` + strings.Repeat("Arial, ", 80) + `serif"` // 565 bytes
	tests := []struct {
		name           string
		body, row, col string
		bodyContainer  string
		para           string
		absent         string // what must not reach the HTML
		want           []string
	}{
		{name: "safe values warn nothing", body: `"font-family":"Georgia, serif","color":"#333333"`,
			row: `"background-image":"url('https://example.com/bg.png')"`, col: `"background-color":"#ffffff"`,
			para: `"font-family":"Arial, sans-serif","color":"red"`},
		{name: "over-long value", para: `"font-family":` + long, absent: "Arial, Arial,",
			want: []string{`CSS value of "font-family" dropped (over 512 bytes) at page.rows[0].columns[0].modules[0]`}},
		{name: "over-long colour", para: `"color":"` + strings.Repeat("a", 65) + `"`, absent: "aaaaaaaa",
			want: []string{`CSS value of "color" dropped (over 64 bytes) at page.rows[0].columns[0].modules[0]`}},
		{name: "unsafe url scheme", row: `"background-image":"url(javascript:alert(1))"`, absent: "javascript",
			want: []string{`CSS value of "background-image" dropped (URL scheme "javascript:" not allowed) at page.rows[0]`}},
		{name: "network path", row: `"background-image":"url('//attacker.test/bg.png')"`, absent: "attacker.test",
			want: []string{`CSS value of "background-image" dropped (network path not allowed) at page.rows[0]`}},
		// A URL's warning reads as the link's and source's (TestURLWarnings).
		{name: "url() in a value", para: `"font-family":"x, url(' SMB://h/s.png')"`, absent: "smb:",
			want: []string{`CSS value of "font-family" dropped (URL scheme "smb:" not allowed) at page.rows[0].columns[0].modules[0]`}},
		{name: "image-set() in a value", col: `"background-color":"-webkit-image-set('Search-MS:x' 1x)"`, absent: "search-ms",
			want: []string{`CSS value of "background-color" dropped (URL scheme "search-ms:" not allowed) at page.rows[0].columns[0]`}},
		{name: "data: not an image", row: `"background-image":"url('data:text/html,x')"`, absent: "data:",
			want: []string{`CSS value of "background-image" dropped (data: URL not of a raster image) at page.rows[0]`}},
		{name: "mailto: attaching a file", para: `"font-family":"x, url(mailto:a@example.com?attach=/etc/passwd)"`, absent: "passwd",
			want: []string{`CSS value of "font-family" dropped (mailto: URL attaching a file not allowed) at page.rows[0].columns[0].modules[0]`}},
		{name: "scheme escaped and cut", row: `"background-image":` + jsonString("url("+strings.Repeat("\uff46e", 50)+":x)"), absent: "\uff46",
			want: []string{`CSS value of "background-image" dropped (URL scheme "\uff46e\uff46e\uff46e\u2026:" not allowed) at page.rows[0]`}},
		{name: "one warning per property, the first place's reason", bodyContainer: `"background-image":"url(//attacker.test/a.png)"`,
			row: `"background-image":"url(file://h/s.png)"`, absent: "file:",
			want: []string{`CSS value of "background-image" dropped (network path not allowed) at page.body (and 1 more)`}},
		{name: "expression", col: `"background-color":"expression(alert(1))"`, absent: "expression",
			want: []string{`CSS value of "background-color" dropped (contains an expression) at page.rows[0].columns[0]`}},
		{name: "brace", body: `"font-family":"Arial}body{color:red"`, absent: "Arial}",
			want: []string{`CSS value of "font-family" dropped (contains '}') at page.body`}},
		// The popup layout shows no body background, yet warns alike;
		// the email layout reads the size twice, yet counts one place.
		{name: "body background", bodyContainer: `"background-image":"url('https://example.com/a.png')","background-size":"cover;x:y"`,
			absent: "x:y", want: []string{`CSS value of "background-size" dropped (contains ';') at page.body`}},
		{name: "script URL", para: `"font-family":"x, url(javascript:x)"`, absent: "javascript",
			want: []string{`CSS value of "font-family" dropped (contains a script URL) at page.rows[0].columns[0].modules[0]`}},
		{name: "several, in order of first place", body: `"color":"red;x:y"`, col: `"background-color":"expression(1)"`,
			para: `"font-family":"a<b", "color":"red;x:y"`, absent: "x:y",
			want: []string{
				`CSS value of "color" dropped (contains ';') at page.body (and 1 more)`,
				`CSS value of "background-color" dropped (contains an expression) at page.rows[0].columns[0]`,
				`CSS value of "font-family" dropped (contains '<') at page.rows[0].columns[0].modules[0]`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inEachLayout(t, cssDesign(tt.body, tt.bodyContainer, tt.row, tt.col, tt.para), func(layout Layout, out *Output) {
				checkWarnings(t, layout, out, tt.want)
				if tt.absent != "" && strings.Contains(string(out.Body), tt.absent) {
					t.Errorf("%s: HTML has %q", layout, tt.absent)
				}
				if !strings.Contains(string(out.Body), "Hi") {
					t.Errorf("%s: HTML lost the text", layout)
				}
			})
		})
	}
}

// badCSSDesign is a design of rows×mods paragraphs whose styles hold
// only values the renderer drops, each value distinct: one of five
// reasons for each of the properties a paragraph copies.
func badCSSDesign(rows, mods int) string {
	bad := []func(n int) string{
		func(n int) string { return strconv.Itoa(n) + strings.Repeat("x", 600) },
		func(n int) string { return "a<" + strconv.Itoa(n) },
		func(n int) string { return "a;" + strconv.Itoa(n) },
		func(n int) string { return "expression(" + strconv.Itoa(n) + ")" },
		func(n int) string { return "url(javascript:" + strconv.Itoa(n) + ")" },
	}
	props := []string{"font-family", "color", "font-size", "line-height", "letter-spacing", "font-weight"}
	var b strings.Builder
	b.WriteString(`{"page":{"rows":[`)
	n := 0
	for r := range rows {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"columns":[{"grid-columns":12,"modules":[`)
		for m := range mods {
			if m > 0 {
				b.WriteByte(',')
			}
			b.WriteString(`{"type":"mailup-bee-newsletter-modules-paragraph","descriptor":{"paragraph":{"html":"<p>Hi</p>","style":{`)
			for i, p := range props {
				if i > 0 {
					b.WriteByte(',')
				}
				n++
				b.WriteString(strconv.Quote(p) + ":" + strconv.Quote(bad[n%len(bad)](n)))
			}
			b.WriteString(`}}}}`)
		}
		b.WriteString(`]}]}`)
	}
	b.WriteString(`]}}`)
	return b.String()
}

// TestCSSWarningsBounded: thousands of dropped values, all different,
// give one warning per property and reason (a fixed set, whatever the
// design), each short and header-safe, with the count of places.
func TestCSSWarningsBounded(t *testing.T) {
	const rows, mods = 1000, 3
	d, err := design.Decode([]byte(badCSSDesign(rows, mods)))
	if err != nil {
		t.Fatal(err)
	}
	out, err := HTML(d)
	if err != nil {
		t.Fatal(err)
	}
	// 6 properties × 5 reasons (a colour's bound is 64 bytes, not 512).
	if len(out.Warnings) != 30 {
		t.Errorf("%d warnings, want 30:\n%s", len(out.Warnings), strings.Join(out.Warnings, "\n"))
	}
	total := 0
	for _, w := range out.Warnings {
		if len(w) > 160 {
			t.Errorf("warning of %d bytes: %q", len(w), w)
		}
		for _, c := range w {
			if c < 0x20 || c > 0x7e {
				t.Errorf("warning not header-safe: %q", w)
			}
		}
		n := 1
		if i := strings.Index(w, " (and "); i >= 0 {
			n, _ = strconv.Atoi(strings.TrimSuffix(w[i+len(" (and "):], " more)"))
			n++
		}
		total += n
	}
	if total != rows*mods*6 {
		t.Errorf("warnings count %d places, want %d", total, rows*mods*6)
	}
}

// spoil appends bad to every non-empty string in the style objects
// (members whose name contains "style", and all below them) of the
// decoded JSON v.
func spoil(v any, bad string, inStyle bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, m := range x {
			if str, ok := m.(string); ok && inStyle && str != "" {
				x[k] = str + bad
				continue
			}
			spoil(m, bad, inStyle || strings.Contains(strings.ToLower(k), "style"))
		}
	case []any:
		for _, m := range x {
			spoil(m, bad, inStyle)
		}
	}
}

// TestCSSWarningsAlikeInLayouts: with every style value of the project's
// designs (and the corpus's, with DESIGN_CORPUS) made unsafe or
// over-long, the three layouts warn alike, though they read different
// values, some of them twice.
func TestCSSWarningsAlikeInLayouts(t *testing.T) {
	for name, data := range designtest.OwnAndCorpus(t, false) {
		for _, bad := range []string{";x", "<", strings.Repeat("y", 600), " expression(1)"} {
			var v any
			if err := json.Unmarshal(data, &v); err != nil {
				continue // the malformed designs of the own set
			}
			spoil(v, bad, false)
			data, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			d, err := design.Decode(data)
			if err != nil {
				continue
			}
			email, err := HTML(d)
			if err != nil {
				continue
			}
			if len(email.Warnings) == 0 {
				t.Errorf("%s, values + %.3q: no warnings", name, bad)
			}
			for _, layout := range []Layout{LayoutPage, LayoutPopup} {
				out, err := HTMLWithLimits(d, Limits{Layout: layout})
				if err != nil {
					t.Fatalf("%s, values + %.3q, %s: %v", name, bad, layout, err)
				}
				if got, want := strings.Join(out.Warnings, "\n"), strings.Join(email.Warnings, "\n"); got != want {
					t.Errorf("%s, values + %.3q, %s: warnings\n%s\nthe email layout's\n%s", name, bad, layout, got, want)
				}
			}
		}
	}
}
