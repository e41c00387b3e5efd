package design

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// testDocuments returns the documents the corpus tests run on, name →
// bytes: the project's own designs and, when the third-party corpus is
// configured (designtest.EnvVar), every JSON file of it, pairs/ included,
// designs or not (pairs/ also holds popup configurations and Simple Schema
// requests).
func testDocuments(t testing.TB) map[string][]byte {
	t.Helper()
	docs := designtest.Own(t)
	dir, err := designtest.Lookup()
	if err != nil {
		t.Fatal(err)
	}
	if dir == "" {
		t.Log("own designs only; " + designtest.SkipMessage)
		return docs
	}
	for _, f := range designtest.CorpusFiles(t, true) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, f)
		docs["corpus/"+filepath.ToSlash(rel)] = data
	}
	return docs
}

// minDesigns is how many whole designs testDocuments must find: the own
// designs alone, or those and the corpus's.
func minDesigns() int {
	if dir, _ := designtest.Lookup(); dir != "" {
		return 30
	}
	return 20
}

func TestCorpusDecodesAndRoundTrips(t *testing.T) {
	n := 0
	docs := testDocuments(t)
	for _, name := range designtest.Names(docs) {
		data := docs[name]
		if !designtest.IsDesign(data) {
			if _, err := Decode(data); err == nil {
				t.Errorf("%s: not a design but Decode accepted it", name)
			}
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
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
		})
	}
	if n < minDesigns() {
		t.Errorf("only %d designs", n)
	}
}
