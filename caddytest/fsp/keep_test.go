package fsp

import (
	"encoding/json"
	"testing"
)

// TestProviderKeepKeepsType: a keep upload's free name keeps the name's
// type, also for a name that is only an extension (".png"): the file is
// stored and listed as what its content was checked to be.
func TestProviderKeepKeepsType(t *testing.T) {
	src := newSources(t)
	onEachBackend(t, func(t *testing.T, b backend) {
		anonymousSite(t, b.storage)
		for i, want := range []string{"/.png", "/_1.png"} {
			c := withStrategy(direct("/.png", string(src.png2)), "keep")
			c.auth = "-"
			res := send(t, privatePort, c)
			var ok struct {
				Data dataJSON `json:"data"`
			}
			if res.Status != 200 || json.Unmarshal(res.Body, &ok) != nil {
				t.Fatalf("upload %d: %d %s", i, res.Status, res.Body)
			}
			if m := ok.Data.Meta; m.Path != want || m.MimeType != "image/png" {
				t.Errorf("upload %d: %s as %s, want %s as image/png", i, m.Path, m.MimeType, want)
			}
		}
	})
}
