package design

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// corpusFiles lists the shared corpus designs (skipping the files in
// pairs/ that are not designs: Simple Schema requests, popup configs).
func corpusFiles(t testing.TB) []string {
	t.Helper()
	var files []string
	for _, pat := range []string{"../../shared/corpus/*.json", "../../shared/corpus/pairs/*.json"} {
		m, err := filepath.Glob(pat)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Skip("shared corpus not found")
	}
	return files
}

func isDesignFile(data []byte) bool {
	var probe map[string]json.RawMessage
	return json.Unmarshal(data, &probe) == nil && probe["page"] != nil
}

func TestCorpusDecodesAndRoundTrips(t *testing.T) {
	n := 0
	for _, f := range corpusFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !isDesignFile(data) {
			if _, err := Decode(data); err == nil {
				t.Errorf("%s: not a design but Decode accepted it", filepath.Base(f))
			}
			continue
		}
		n++
		t.Run(filepath.Base(f), func(t *testing.T) {
			d, err := Decode(data)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if ds, err := DecodeString(string(data)); err != nil || !reflect.DeepEqual(ds, d) {
				t.Errorf("DecodeString differs from Decode (err %v)", err)
			}
			if d.Page.Body.Width < MinWidth {
				t.Errorf("width %d", d.Page.Body.Width)
			}
			for ri, r := range d.Page.Rows {
				for ci, c := range r.Columns {
					if c.Grid < 1 || c.Grid > 12 {
						t.Errorf("row %d col %d grid %d", ri, ci, c.Grid)
					}
				}
			}
			// Round trip: same JSON value as the input.
			enc, err := d.Encode()
			if err != nil {
				t.Fatal(err)
			}
			var a, b any
			if err := json.Unmarshal(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), &a); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(enc, &b); err != nil {
				t.Fatalf("encoded output is not JSON: %v", err)
			}
			if !reflect.DeepEqual(a, b) {
				t.Error("decode → encode changed the document")
			}
			inv := d.Inventory()
			if len(d.Page.Rows) > 1 && len(inv.Texts) == 0 && len(inv.Srcs) == 0 {
				t.Error("inventory is empty for a design with content")
			}
		})
	}
	if n < 30 {
		t.Errorf("only %d corpus designs", n)
	}
}
