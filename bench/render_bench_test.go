// Package bench holds the benchmark harness (see run.sh). This file is B:
// the renderer per corpus template, beside encoding/json decoding the same
// document, so that the cost of rendering reads as a multiple of the cost
// of merely parsing the JSON:
//
//	go test -run '^$' -bench . -benchmem -cpu 1 ./bench/ | go run ./bench/benchtable
//
// For each template, JSONUnmarshal decodes into `any` (what a Go service that
// only parses the body would do); Decode is design.Decode (our parser plus
// the typed view); Render is render.HTML of a decoded design; DecodeRender
// is both, the content service's work per request; DecodeRenderString is
// DecodeRender from the document as a string (design.DecodeString, which
// has no bytes to copy), as C times ours beside mjml given its source as a
// string. Tokenize and TokenizeTags are the floor under Render's rich
// text: x/net/html's tokenizer alone over the design's rich-text fragments
// (see benchTokenize). JSONTokens is the floor under Decode: jsontext's
// tokenizer alone reading every token of the document, which Decode
// builds on.
package bench

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
	"golang.org/x/net/html"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/render"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
	"github.com/designbridge/caddy-designbridge/testutil/proccpu"
)

type corpusDoc struct {
	name string
	data []byte
}

// loadCorpus returns the designs B measures: the third-party corpus when
// DESIGN_CORPUS names it (the published figures), else the project's own.
func loadCorpus(b *testing.B) []corpusDoc {
	b.Helper()
	dir, err := designtest.Lookup()
	if err != nil {
		b.Fatal(err)
	}
	var designs map[string][]byte
	if dir == "" {
		b.Log("own designs; " + designtest.SkipMessage)
		designs = designtest.Own(b)
	} else {
		designs = designtest.CorpusDesigns(b, false)
	}
	docs := make([]corpusDoc, 0, len(designs))
	for _, name := range designtest.Names(designs) {
		docs = append(docs, corpusDoc{name: name, data: designs[name]})
	}
	return docs
}

// BenchmarkCorpus runs, per template, the four measurements one after the
// other, so that a change in machine load affects a template's four figures
// alike and their ratios stay meaningful.
func BenchmarkCorpus(b *testing.B) {
	for _, doc := range loadCorpus(b) {
		d, err := design.Decode(doc.data)
		if err != nil {
			b.Fatalf("%s: %v", doc.name, err)
		}
		b.Run(doc.name+"/JSONUnmarshal", func(b *testing.B) {
			b.SetBytes(int64(len(doc.data)))
			b.ReportAllocs()
			for b.Loop() {
				var v any
				if err := json.Unmarshal(doc.data, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(doc.name+"/JSONTokens", func(b *testing.B) {
			b.SetBytes(int64(len(doc.data)))
			b.ReportAllocs()
			r := bytes.NewReader(doc.data)
			dec := jsontext.NewDecoder(r)
			for b.Loop() {
				r.Reset(doc.data)
				dec.Reset(r)
				for {
					if _, err := dec.ReadToken(); err != nil {
						break
					}
				}
			}
		})
		b.Run(doc.name+"/Decode", func(b *testing.B) {
			b.SetBytes(int64(len(doc.data)))
			b.ReportAllocs()
			for b.Loop() {
				d, err := design.Decode(doc.data)
				if err != nil {
					b.Fatal(err)
				}
				d.Release() // as content_service does once it has rendered
			}
		})
		b.Run(doc.name+"/Render", func(b *testing.B) {
			b.SetBytes(int64(len(doc.data)))
			b.ReportAllocs()
			for b.Loop() {
				out, err := render.HTML(d)
				if err != nil {
					b.Fatal(err)
				}
				out.Release() // as content_service does once the answer is written
			}
		})
		b.Run(doc.name+"/DecodeRender", func(b *testing.B) {
			benchDecodeRender(b, len(doc.data), func() (*design.Design, error) { return design.Decode(doc.data) })
		})
		src := string(doc.data)
		b.Run(doc.name+"/DecodeRenderString", func(b *testing.B) {
			benchDecodeRender(b, len(src), func() (*design.Design, error) { return design.DecodeString(src) })
		})
		frags := richFragments(d)
		b.Run(doc.name+"/Tokenize", func(b *testing.B) { benchTokenize(b, len(doc.data), frags, false) })
		b.Run(doc.name+"/TokenizeTags", func(b *testing.B) { benchTokenize(b, len(doc.data), frags, true) })
	}
}

// benchDecodeRender times decode and render.HTML of one document of size
// bytes, releasing each output and design as content_service does. Beside the wall
// time it reports the process's CPU time per render (cpu-ns/op, the
// collector's included), which a busy machine disturbs far less: time
// spent waiting for a core is not counted.
func benchDecodeRender(b *testing.B, size int, decode func() (*design.Design, error)) {
	b.SetBytes(int64(size))
	b.ReportAllocs()
	cpu0 := proccpu.Used()
	defer func() { b.ReportMetric(float64(proccpu.Used()-cpu0)/float64(b.N), "cpu-ns/op") }()
	for b.Loop() {
		d, err := decode()
		if err != nil {
			b.Fatal(err)
		}
		out, err := render.HTML(d)
		if err != nil {
			b.Fatal(err)
		}
		out.Release()
		d.Release()
	}
}

// benchTokenize times x/net/html's tokenizer alone over frags, the rich
// text Render tokenizes: NewTokenizer and Next until EOF, and with tags
// also TagName for every tag and TagAttr for every attribute of a start
// tag (Render reads those of the tags it keeps). No renderer built on the
// tokenizer can take much less time for these fragments.
func benchTokenize(b *testing.B, size int, frags []string, tags bool) {
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		for _, f := range frags {
			z := html.NewTokenizer(strings.NewReader(f))
			for {
				tt := z.Next()
				if tt == html.ErrorToken {
					break
				}
				if !tags || (tt != html.StartTagToken && tt != html.SelfClosingTagToken && tt != html.EndTagToken) {
					continue
				}
				_, hasAttr := z.TagName()
				for hasAttr && tt != html.EndTagToken {
					_, _, hasAttr = z.TagAttr()
				}
			}
		}
	}
}
