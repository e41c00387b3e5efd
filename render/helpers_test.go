package render

import (
	"strings"
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/testutil/inventory"
)

// checkInventoryInOutput fails t for every text run, link href and image
// src of the design that the rendered document does not contain.
func checkInventoryInOutput(t *testing.T, d *design.Design, body []byte) {
	t.Helper()
	c := parseDoc(t, body)
	inv := inventory.Of(d)
	for _, s := range inv.Texts {
		if !strings.Contains(c.text, s) {
			t.Errorf("text run missing from output: %q", s)
		}
	}
	for _, h := range inv.Hrefs {
		if !c.hrefs[h] {
			t.Errorf("href missing from output: %q", h)
		}
	}
	for _, s := range inv.Srcs {
		if !c.srcs[s] {
			t.Errorf("src missing from output: %q", s)
		}
	}
}

func renderForTest(t testing.TB, data []byte) []byte {
	t.Helper()
	d, err := design.Decode(data)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	out, err := HTML(d)
	if err != nil {
		t.Fatalf("HTML: %v", err)
	}
	return out.Body
}
