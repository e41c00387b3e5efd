package designtest

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Pair is a design of the corpus's pairs/ folder with the HTML the
// vendor's own renderer made of it.
type Pair struct {
	Name   string            // the design's file name without ".json"
	Design []byte            // the design JSON
	Vendor map[string][]byte // variant ("" for a popup, "email", "page") → the vendor's HTML
}

// Pairs returns the designs of the corpus's pairs/ folder that have the
// vendor's HTML beside them ("<name>.html", "<name>.email.html",
// "<name>.page.html"), by name. It skips like CorpusDir, and fails when
// the folder holds no pair.
func Pairs(tb testing.TB) []Pair {
	tb.Helper()
	dir := filepath.Join(CorpusDir(tb), "pairs")
	designs := readDesigns(tb, filepath.Join(dir, "*.json"), "")
	var out []Pair
	for name, data := range designs {
		p := Pair{Name: name, Design: data, Vendor: map[string][]byte{}}
		for _, variant := range []string{"", "email", "page"} {
			file := name + ".html"
			if variant != "" {
				file = name + "." + variant + ".html"
			}
			html, err := os.ReadFile(filepath.Join(dir, file))
			if err != nil {
				continue
			}
			p.Vendor[variant] = html
		}
		if len(p.Vendor) > 0 {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		tb.Fatalf("%s holds no design with the vendor's HTML beside it", dir)
	}
	sort.Slice(out, func(i, j int) bool { return strings.Compare(out[i].Name, out[j].Name) < 0 })
	return out
}
