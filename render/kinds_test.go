package render

import (
	"errors"
	"strings"
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
)

// TestCheck: HTML and PlainText refuse a design whose blocks hold members
// of the wrong type, with the first problem as a *design.PathError.
func TestCheck(t *testing.T) {
	tests := []struct {
		in, path, msg string
	}{
		{`{"page":{"rows":[{"columns":[{"modules":[{"type":"t"},{"type":"t"},{"type":"mailup-bee-newsletter-modules-image","descriptor":{"image":{"src":{}}}}]}]}]}}`,
			"page.rows[0].columns[0].modules[2]", "descriptor.image.src must be a string"},
		{`{"page":{"rows":[{"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-social","descriptor":{"iconsList":{"icons":[{"image":{"href":[]}}]}}}]}]}]}}`,
			"page.rows[0].columns[0].modules[0]", "descriptor.iconsList.icons[0].image.href must be a string"},
		{`{"page":{"rows":[{"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-menu","descriptor":{"menuItemsList":{"items":[{"text":1,"link":{"href":false}}]}}}]}]}]}}`,
			"page.rows[0].columns[0].modules[0]", "items[0].link.href must be a string"},
		{`{"page":{"rows":[{"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-social","descriptor":{"iconsList":{"icons":{}}}}]}]}]}}`,
			"page.rows[0].columns[0].modules[0]", "descriptor.iconsList.icons must be an array"},
		{`{"page":{"rows":[{"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-social","descriptor":{"iconsList":{"icons":[{"image":{}},7]}}}]}]}]}}`,
			"page.rows[0].columns[0].modules[0]", "descriptor.iconsList.icons[1] must be an object"},
		{`{"page":{"rows":[{"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-social","descriptor":{"iconsList":{"icons":[{"image":"x"}]}}}]}]}]}}`,
			"page.rows[0].columns[0].modules[0]", "descriptor.iconsList.icons[0].image must be an object"},
		{`{"page":{"rows":[{"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-icons","descriptor":{"iconsList":{"icons":[{"image":{"src":"x"}}]}}}]}]}]}}`,
			"page.rows[0].columns[0].modules[0]", "descriptor.iconsList.icons[0].image must be a string"},
		{`{"page":{"rows":[{"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-menu","descriptor":{"menuItemsList":{"items":"x"}}}]}]}]}}`,
			"page.rows[0].columns[0].modules[0]", "descriptor.menuItemsList.items must be an array"},
		{`{"page":{"rows":[{"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-menu","descriptor":{"menuItemsList":{"items":[null]}}}]}]}]}}`,
			"page.rows[0].columns[0].modules[0]", "descriptor.menuItemsList.items[0] must be an object"},
		{`{"page":{"rows":[{"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-menu","descriptor":{"menuItemsList":{"items":[{"text":"a"},{"text":{}}]}}}]}]}]}}`,
			"page.rows[0].columns[0].modules[0]", "descriptor.menuItemsList.items[1].text must be a string"},
		{`{"page":{"rows":[{"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-button","descriptor":{"button":{"label":[]}}}]}]}]}}`,
			"page.rows[0].columns[0].modules[0]", "descriptor.button.label must be a string"},
		{`{"page":{"rows":[{"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-addon","contentType":"mailup-bee-newsletter-modules-heading","descriptor":{"heading":{"title":true}}}]}]}]}}`,
			"page.rows[0].columns[0].modules[0]", "descriptor.heading.title must be a string, not boolean"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			d, err := design.Decode([]byte(tt.in))
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			for name, render := range map[string]func(*design.Design) (*Output, error){"HTML": HTML, "PlainText": PlainText} {
				out, err := render(d)
				var pe *design.PathError
				if !errors.As(err, &pe) {
					t.Fatalf("%s: err = %v, want a *design.PathError", name, err)
				}
				if out != nil {
					t.Errorf("%s: output with an error", name)
				}
				if pe.Path != tt.path || !strings.Contains(pe.Msg, tt.msg) {
					t.Errorf("%s: got %q: %q, want %q containing %q", name, pe.Path, pe.Msg, tt.path, tt.msg)
				}
			}
		})
	}
}

// TestKinds: every kind in the registry is complete and filed under its
// name.
func TestKinds(t *testing.T) {
	for name, k := range kinds {
		if k.name != name || k.content == "" || k.decode == nil {
			t.Errorf("kind %q: name %q, content %q, decode set %v", name, k.name, k.content, k.decode != nil)
		}
	}
}

// TestUnknownKindNeverFails: a block of an unknown type renders as
// nothing with a warning, in HTML and plain text, whatever its
// descriptor holds, its envelope (Decode checks only known types') or its
// content member.
func TestUnknownKindNeverFails(t *testing.T) {
	for _, desc := range []string{`5`, `"x"`, `[1]`, `{"style":"x"}`, `{"computedStyle":[1],"mobileStyle":true}`, `{"futurekind":5}`, `{"futurekind":"x"}`} {
		d, err := design.Decode([]byte(`{"page":{"rows":[{"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-futurekind","descriptor":` + desc + `}]}]}]}}`))
		if err != nil {
			t.Fatalf("%s: Decode: %v", desc, err)
		}
		for name, render := range map[string]func(*design.Design) (*Output, error){"HTML": HTML, "PlainText": PlainText} {
			out, err := render(d)
			if err != nil {
				t.Fatalf("%s: %s: %v", desc, name, err)
			}
			if want := `unknown module type "mailup-bee-newsletter-modules-futurekind" omitted at page.rows[0].columns[0].modules[0]`; len(out.Warnings) != 1 || out.Warnings[0] != want {
				t.Errorf("%s: %s: warnings %q, want %q", desc, name, out.Warnings, want)
			}
		}
	}
}
