package designcheck

import (
	"context"
	"fmt"
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// sizeWeigher answers every image at once, as the weight cache does once
// warm: the benchmarks measure the checks, not a network.
type sizeWeigher struct{}

func (sizeWeigher) Weigh(context.Context, string) (int64, error) { return 64 << 10, nil }

// BenchmarkCheck measures decoding a design and running every message
// check on it (the Check API's work per request, image weights cached),
// the widget checks alone, and the widget checks in four languages.
func BenchmarkCheck(b *testing.B) {
	designs := designtest.OwnAndCorpus(b, false)
	all := Request{}
	for category := range available[Message] {
		all.Checks = append(all.Checks, Spec{Category: category})
	}
	specs, langs, err := all.Validate(Message)
	if err != nil {
		b.Fatal(err)
	}
	widgetChecks := []Spec{{Category: MissingAltText}, {Category: MissingImageLink}, {Category: MissingCopyLink}}
	widgets, _, _ := (&Request{Checks: widgetChecks}).Validate(Message)
	// Four of multi-rtl-language-template's languages: the widget checks
	// read their translations (design.Value.Expand).
	_, languages, err := (&Request{Checks: widgetChecks, Languages: []string{"ar-SA", "ja-JP", "ur-PK", "tr-TR"}}).Validate(Message)
	if err != nil {
		b.Fatal(err)
	}
	for _, name := range designtest.Names(designs) {
		data := designs[name]
		if _, err := design.Decode(data); err != nil {
			continue
		}
		for _, bc := range []struct {
			name  string
			specs []Spec
			langs []string
		}{{"all", specs, langs}, {"widgets", widgets, langs}, {"widgets-languages", widgets, languages}} {
			b.Run(name+"/"+bc.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					d, err := design.Decode(data)
					if err != nil {
						b.Fatal(err)
					}
					Run(context.Background(), d, Message, bc.specs, bc.langs, Options{Weigher: sizeWeigher{}})
					d.Release() // as content_service does once it has answered
				}
			})
		}
	}
}

// BenchmarkCheckCostly runs the widget checks in 15 languages on the
// costly designs of the Check API (designtest.CostlyDesigns) at two sizes:
// time per op should grow about 4× from one to the next.
func BenchmarkCheckCostly(b *testing.B) {
	checks := []Spec{{Category: MissingAltText}, {Category: MissingImageLink}, {Category: MissingCopyLink}}
	specs, langs, err := (&Request{Checks: checks, Languages: []string{"en-US", "it-IT", "fr-FR", "de-DE", "es-ES", "pt-PT", "nl-NL", "sv-SE",
		"da-DK", "fi-FI", "pl-PL", "cs-CZ", "hu-HU", "ro-RO", "el-GR"}}).Validate(Message)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range designtest.CostlyDesigns() {
		if !c.Check {
			continue
		}
		for _, size := range []int{16 << 10, 64 << 10} {
			data := c.Build(size)
			b.Run(fmt.Sprintf("%s/%dKiB", c.Name, size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					d, err := design.Decode(data)
					if err != nil {
						b.Fatal(err)
					}
					Run(context.Background(), d, Message, specs, langs, Options{})
					d.Release()
				}
			})
		}
	}
}
