package render

import (
	"os"
	"path/filepath"
	"strings"
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

// emCorpusAndFixtures is the shared corpus plus the golden fixtures.
func emCorpusAndFixtures(t *testing.T) map[string][]byte {
	all := emCorpus(t)
	fixtures, _ := filepath.Glob("testdata/fixtures/*.json")
	for _, f := range fixtures {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all["fixture-"+strings.TrimSuffix(filepath.Base(f), ".json")] = data
	}
	return all
}
