package fidelity

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/render"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// desktopWidth is above every corpus email's width and breakpoint.
const desktopWidth = 800

// TestStylesStripped checks our HTML for every corpus design as an email
// client that drops <style> elements shows it: inline styles only. At
// 800 px nothing overflows and every row with several displayed columns
// has them side by side (for designs no wider than 800 px); at 375 px
// nothing overflows the screen.
func TestStylesStripped(t *testing.T) {
	designs := designtest.CorpusDesigns(t, true)
	base := startCaddy(t)
	tab := sharedTab(t)
	dir, urlPath := pageDir(t)
	for _, name := range designtest.Names(designs) {
		d, err := design.Decode(designs[name])
		if err != nil {
			// The corpus checks of render/ cover designs that do not
			// decode; there is nothing to lay out here.
			continue
		}
		out, err := render.HTML(d)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		file := name + ".html"
		if err := os.WriteFile(filepath.Join(dir, file), out.Body, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) {
			for _, width := range []int{desktopWidth, mobileWidth} {
				if err := load(tab, base+urlPath+file, width); err != nil {
					t.Fatalf("loading: %v", err)
				}
				var styled []float64
				if err := eval(tab, buttonWidthsProbe, &styled); err != nil {
					t.Fatalf("measuring buttons at %d px: %v", width, err)
				}
				var removed int
				if err := eval(tab, stripStylesProbe, &removed); err != nil {
					t.Fatalf("stripping styles: %v", err)
				}
				if removed == 0 {
					t.Fatalf("no <style> element to strip: the test would prove nothing")
				}
				var m overflowResult
				if err := eval(tab, overflowProbe, &m); err != nil {
					t.Fatalf("measuring at %d px: %v", width, err)
				}
				for _, p := range checkStripped(m, width, d.Page.Body.Width) {
					t.Errorf("styles stripped, %d px: %s", width, p)
				}
				if width == desktopWidth {
					// Without the @media block the desktop layout is the
					// same, so every button keeps its width.
					var stripped []float64
					if err := eval(tab, buttonWidthsProbe, &stripped); err != nil {
						t.Fatalf("measuring buttons at %d px: %v", width, err)
					}
					for _, p := range checkButtonWidths(styled, stripped) {
						t.Errorf("styles stripped, %d px: %s", width, p)
					}
				}
			}
		})
	}
}

// checkStripped lists what is wrong with a stripped layout at width.
func checkStripped(m overflowResult, width, designWidth int) []string {
	var problems []string
	if m.ScrollWidth > float64(width)+1 {
		problems = append(problems, fmt.Sprintf("document %.0f px wide", m.ScrollWidth))
	}
	for _, o := range m.Overflow {
		problems = append(problems, "sticks out: "+o)
	}
	if width != desktopWidth || designWidth > desktopWidth {
		return problems
	}
	// Side by side: each column's box is beside the previous one's (to
	// its right, or its left in a right-to-left row), whatever their
	// vertical alignment; stacked or wrapped columns overlap sideways.
	for _, r := range m.Rows {
		for i := 1; i < len(r.Cols); i++ {
			a, b := r.Cols[i-1], r.Cols[i]
			beside := b.Left >= a.Left+a.Width-1 || b.Left+b.Width <= a.Left+1
			if !beside {
				problems = append(problems, fmt.Sprintf("row %d: column %d (%.0f..%.0f, top %.0f) is not beside column %d (%.0f..%.0f, top %.0f)",
					r.Number, i+1, b.Left, b.Left+b.Width, b.Top, i, a.Left, a.Left+a.Width, a.Top))
			}
		}
	}
	return problems
}

// buttonWidthsProbe returns the width of every button of our markup.
const buttonWidthsProbe = `JSON.stringify(Array.from(document.querySelectorAll('span.bt')).map(b => b.getBoundingClientRect().width))`

// checkButtonWidths lists the buttons whose width changed when the
// <style> elements were removed (a width that relied on the head's
// box-sizing rule grows by its padding and border).
func checkButtonWidths(styled, stripped []float64) []string {
	if len(styled) != len(stripped) {
		return []string{fmt.Sprintf("%d buttons with styles, %d without", len(styled), len(stripped))}
	}
	var problems []string
	for i := range styled {
		if math.Abs(styled[i]-stripped[i]) > 1 {
			problems = append(problems, fmt.Sprintf("button %d: %.2f px wide, %.2f px with styles", i+1, stripped[i], styled[i]))
		}
	}
	return problems
}
