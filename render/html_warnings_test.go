package render

import (
	"strings"
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
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
