package render

import (
	"encoding/json"
	"sort"
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

func sortedCorpus(b *testing.B) ([]string, map[string][]byte) {
	corpus := designtest.OwnAndCorpus(b, true)
	names := make([]string, 0, len(corpus))
	for n := range corpus {
		names = append(names, n)
	}
	sort.Strings(names)
	return names, corpus
}

// BenchmarkRender measures HTML rendering of an already decoded design.
func BenchmarkRender(b *testing.B) {
	names, corpus := sortedCorpus(b)
	for _, name := range names {
		d, err := design.Decode(corpus[name])
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(corpus[name])))
			for b.Loop() {
				if _, err := HTML(d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecode measures decoding: encoding/json into any (the baseline
// the render budget is stated against) and design.Decode.
func BenchmarkDecode(b *testing.B) {
	names, corpus := sortedCorpus(b)
	for _, name := range names {
		data := corpus[name]
		b.Run(name+"/json-any", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				var v any
				if err := json.Unmarshal(data, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/design", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				if _, err := design.Decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
