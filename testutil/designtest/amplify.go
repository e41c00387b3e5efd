package designtest

import "strings"

// Amplifier is a design built to make a renderer write far more than it
// reads, for tests of the renderer's output and memory bounds.
type Amplifier struct {
	Name string
	JSON []byte
}

// Amplifiers returns the amplification designs, each 100–200 KB:
//
//   - long-values: 32 KiB values the renderer copies onto every tag of a
//     block's rich text (the body's link colour onto 2,000 links, a
//     list's indent onto 2,000 lists): about 128 MB of HTML unbounded;
//   - deep-nesting: 10,000 nested lists (indented once per level in plain
//     text: about 100 MB unbounded) and 20,000 nested <div>s;
//   - tiny-blocks: 2,000 rows of 12 empty columns, each a few bytes of
//     JSON and a few hundred bytes of HTML (about 9 MB).
func Amplifiers() []Amplifier {
	long := strings.Repeat("a", 32<<10)
	return []Amplifier{
		{"long-values", amplifierDoc(`"content":{"computedStyle":{"linkColor":"`+long+`"}}`,
			amplifierRow(amplifierModule("paragraph", `"paragraph":{"html":"<p>`+strings.Repeat("<a>x</a>", 2000)+`</p>"}`),
				amplifierModule("list", `"list":{"html":"`+strings.Repeat("<ul><li>x</li></ul>", 2000)+`","computedStyle":{"liIndent":"`+long+`"}}`)))},
		{"deep-nesting", amplifierDoc("",
			amplifierRow(amplifierModule("list", `"list":{"html":"`+strings.Repeat("<ul><li>x", 10000)+`"}`),
				amplifierModule("text", `"text":{"html":"`+strings.Repeat("<div>", 20000)+`x"}`)))},
		{"tiny-blocks", amplifierDoc("", repeatJoin(`{"columns":[`+repeatJoin(`{}`, 12)+`]}`, 2000))},
	}
}

func amplifierDoc(body, rows string) []byte {
	return []byte(`{"page":{"body":{` + body + `},"rows":[` + rows + `]}}`)
}

func amplifierRow(modules ...string) string {
	return `{"columns":[{"modules":[` + strings.Join(modules, ",") + `]}]}`
}

func amplifierModule(kind, descriptor string) string {
	return `{"type":"mailup-bee-newsletter-modules-` + kind + `","descriptor":{` + descriptor + `}}`
}

func repeatJoin(s string, n int) string {
	return strings.TrimSuffix(strings.Repeat(s+",", n), ",")
}
