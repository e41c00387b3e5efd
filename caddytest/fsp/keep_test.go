package fsp

import (
	"encoding/json"
	"fmt"
	"testing"
)

// TestProviderKeepKeepsType: a keep upload's free name keeps the name's
// type, also for a name that is only an extension (".png"): the file is
// stored and listed as what its content was checked to be.
func TestProviderKeepKeepsType(t *testing.T) {
	t.Setenv("FSP_TEST_S3_ACCESS", s3Access)
	t.Setenv("FSP_TEST_S3_SECRET", s3Secret)
	src := newSources(t)
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			b := bk.make(t)
			load(t, fmt.Sprintf(`:%d {
	handle_path /fsp/* {
		fsp {
			%s
			public_url http://localhost/files
			allow_anonymous
		}
	}
}
`, privatePort, b.storage))
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
}
