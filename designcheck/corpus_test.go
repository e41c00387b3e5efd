package designcheck

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// TestOwnDesigns runs every check of every collection on the project's
// own designs, checking what must hold of any answer and the alt-text
// findings against a count made independently from the raw JSON.
func TestOwnDesigns(t *testing.T) {
	runDesigns(t, designtest.Own(t))
}

// TestCorpus does the same over the third-party corpus. The corpus holds
// no answer of the vendor's Check API to compare with, so this checks
// consistency (and that nothing fails or panics on real designs).
func TestCorpus(t *testing.T) {
	runDesigns(t, designtest.CorpusDesigns(t, true))
}

func runDesigns(t *testing.T, designs map[string][]byte) {
	for _, name := range designtest.Names(designs) {
		t.Run(name, func(t *testing.T) {
			data := designs[name]
			d, err := design.Decode(data)
			if err != nil {
				t.Skipf("not a design the decoder accepts: %v", err)
			}
			for _, coll := range []Collection{Message, Page} {
				req := Request{Languages: []string{"it-IT"}}
				for category := range available[coll] {
					req.Checks = append(req.Checks, Spec{Category: category})
				}
				specs, langs, err := req.Validate(coll)
				if err != nil {
					t.Fatal(err)
				}
				res := Run(context.Background(), d, coll, specs, langs, Options{Weigher: mapWeigher{}})
				consistent(t, d, res)
				for _, c := range res[0].Checks {
					if c.Type == MissingAltText {
						if got, want := countType(c.Targets, "image"), imagesWithoutAlt(t, data); got != want {
							t.Errorf("%s: %d images without alt text, the raw JSON has %d", coll, got, want)
						}
					}
				}
			}
		})
	}
}

// consistent fails unless the counts and statuses agree with the
// targets, and every widget target names a block or row of d.
func consistent(t *testing.T, d *design.Design, res []LanguageResult) {
	t.Helper()
	ids := map[string]bool{}
	for _, r := range d.Page.Rows {
		ids[r.UUID] = true
		for _, c := range r.Columns {
			for _, m := range c.Modules {
				ids[m.UUID] = true
			}
		}
	}
	for _, lr := range res {
		failed, warn, sugg := 0, 0, 0
		for _, c := range lr.Checks {
			if c.TargetsCount != len(c.Targets) || (c.TargetsCount == 0) != (c.CheckStatus == StatusPassed) {
				t.Errorf("%s %s: count %d, %d targets, status %s", lr.Language, c.Type, c.TargetsCount, len(c.Targets), c.CheckStatus)
			}
			switch c.CheckStatus {
			case StatusWarning:
				warn += c.TargetsCount
			case StatusSuggestion:
				sugg += c.TargetsCount
			}
			failed += c.TargetsCount
			for _, tg := range c.Targets {
				if tg.WidgetType != "" && !ids[tg.UUID] {
					t.Errorf("%s: target uuid %q is no block or row of the design", c.Type, tg.UUID)
				}
			}
			if c.Type == OverageImageWeight && *c.Errored != len(c.ErroredTargets) {
				t.Errorf("errored %d, %d listed", *c.Errored, len(c.ErroredTargets))
			}
		}
		if lr.ChecksFailedCount != failed || lr.ChecksWarningCount != warn || lr.ChecksSuggestionCount != sugg {
			t.Errorf("%s totals %d/%d/%d, targets say %d/%d/%d", lr.Language, lr.ChecksFailedCount, lr.ChecksWarningCount, lr.ChecksSuggestionCount, failed, warn, sugg)
		}
	}
}

func countType(ts []Target, typ string) int {
	n := 0
	for _, t := range ts {
		if t.WidgetType == typ {
			n++
		}
	}
	return n
}

// imagesWithoutAlt counts, in the raw JSON, image blocks with a source and
// no alternative text.
func imagesWithoutAlt(t *testing.T, data []byte) int {
	var doc struct {
		Page struct {
			Rows []struct {
				Columns []struct {
					Modules []struct {
						Type       string `json:"type"`
						Descriptor struct {
							Image json.RawMessage `json:"image"`
						} `json:"descriptor"`
					} `json:"modules"`
				} `json:"columns"`
			} `json:"rows"`
		} `json:"page"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Skipf("the oracle cannot read this design: %v", err)
	}
	n := 0
	for _, r := range doc.Page.Rows {
		for _, c := range r.Columns {
			for _, m := range c.Modules {
				if m.Type != design.TypePrefix+"image" {
					continue
				}
				var img map[string]any
				_ = json.Unmarshal(m.Descriptor.Image, &img)
				src, _ := img["src"].(string)
				if src == "" {
					src, _ = img["dynamicSrc"].(string)
				}
				alt, _ := img["alt"].(string)
				kind, _ := img["type"].(string)
				if strings.TrimSpace(src) != "" && strings.TrimSpace(alt) == "" && kind == "" {
					n++
				}
			}
		}
	}
	return n
}
