package design

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkParse times the JSON parser alone (no typed view) per corpus
// design, to tell parsing cost from building the model.
func BenchmarkParse(b *testing.B) {
	files, _ := filepath.Glob("../../shared/corpus/*.json")
	if len(files) == 0 {
		b.Skip("no corpus")
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(strings.TrimSuffix(filepath.Base(f), ".json"), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := parseDocument(string(data), DefaultLimits()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
