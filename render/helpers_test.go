package render

import (
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
)

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
