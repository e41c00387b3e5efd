//go:build linux

package render

import (
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// TestRenderReadOnlyInput decodes every design of ours from read-only
// memory (design.DecodeString reads a string's bytes in place) and renders
// it in every layout and as plain text: the rich-text lexer reads the
// design's strings in place too (richlex.go), so neither may write to
// them; a write would fault and end the test binary.
func TestRenderReadOnlyInput(t *testing.T) {
	designs := designtest.Own(t)
	if len(designs) < 10 {
		t.Fatalf("only %d designs of ours", len(designs))
	}
	for _, name := range designtest.Names(designs) {
		d, err := design.DecodeString(designtest.ReadOnlyString(t, string(designs[name])))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, layout := range []Layout{LayoutEmail, LayoutPage, LayoutPopup} {
			out, err := HTMLWithLimits(d, Limits{Layout: layout})
			if err != nil {
				t.Fatalf("%s (%v): %v", name, layout, err)
			}
			out.Release()
		}
		if _, err := PlainText(d); err != nil {
			t.Fatalf("%s: plain text: %v", name, err)
		}
		d.Release()
	}
}
