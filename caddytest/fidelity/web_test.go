package fidelity

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/render"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// webRowsProbe returns the document's width and, for every row of our
// page and popup markup (div.db-row-content), whether it stacks or stacks
// reversed on phones and the boxes of its displayed columns (div.db-col).
const webRowsProbe = `(() => {
  const out = {scrollWidth: document.documentElement.scrollWidth, rows: []};
  for (const row of document.querySelectorAll('div.db-row-content')) {
    const cols = Array.from(row.children).filter(c => c.classList.contains('db-col'))
      .map(c => c.getBoundingClientRect()).filter(r => r.width > 0 && r.height > 0)
      .map(r => ({left: r.left, top: r.top, width: r.width, height: r.height}));
    out.rows.push({stack: row.classList.contains('db-stack'), reverse: row.classList.contains('db-reverse'), cols: cols});
  }
  return JSON.stringify(out);
})()`

type webRows struct {
	ScrollWidth float64 `json:"scrollWidth"`
	Rows        []struct {
		Stack   bool     `json:"stack"`
		Reverse bool     `json:"reverse"`
		Cols    []colBox `json:"cols"`
	} `json:"rows"`
}

// TestWebLayouts lays out every corpus design as a page and as a popup
// (in a plain host page) and checks the flexbox rows where there is no
// vendor export to compare with: on a desktop (800 px, or wider than a
// wider design's breakpoint) nothing overflows and the
// columns of every row sit side by side; on a phone nothing overflows,
// stacking rows show their columns one under the other (last first when
// reversed), and the other rows keep them side by side.
func TestWebLayouts(t *testing.T) {
	designs := designtest.CorpusDesigns(t, true)
	base := startCaddy(t)
	tab := sharedTab(t)
	dir, urlPath := pageDir(t)
	checked := 0
	for _, name := range designtest.Names(designs) {
		d, err := design.Decode(designs[name])
		if err != nil {
			continue // not a design: render/'s corpus checks cover it
		}
		for _, layout := range []render.Layout{render.LayoutPage, render.LayoutPopup} {
			out, err := render.HTMLWithLimits(d, render.Limits{Layout: layout})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			file := fmt.Sprintf("%s.%s.html", name, layout)
			if err := os.WriteFile(filepath.Join(dir, file), hostPage(out.Body), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Run(name+"/"+layout.String(), func(t *testing.T) {
				// A desktop above the design's breakpoint: pages are
				// often 1200 px or wider.
				desktop := max(desktopWidth, d.Page.Body.Width+40)
				for _, width := range []int{desktop, mobileWidth} {
					if err := load(tab, base+urlPath+file, width); err != nil {
						t.Fatalf("loading: %v", err)
					}
					var m webRows
					if err := eval(tab, webRowsProbe, &m); err != nil {
						t.Fatalf("measuring at %d px: %v", width, err)
					}
					if len(m.Rows) != len(d.Page.Rows) {
						t.Errorf("%d px: %d rows laid out, the design has %d", width, len(m.Rows), len(d.Page.Rows))
					}
					if m.ScrollWidth > float64(width)+1 {
						t.Errorf("%d px: the document is %.0f px wide", width, m.ScrollWidth)
					}
					for i, r := range m.Rows {
						stacked := width == mobileWidth && r.Stack
						for j := 1; j < len(r.Cols); j++ {
							a, b := r.Cols[j-1], r.Cols[j]
							var ok bool
							switch {
							case stacked && r.Reverse:
								ok = b.Top+b.Height <= a.Top+1
							case stacked:
								ok = b.Top >= a.Top+a.Height-1
							default: // beside, in either direction
								ok = b.Left >= a.Left+a.Width-1 || b.Left+b.Width <= a.Left+1
							}
							if !ok {
								t.Errorf("%d px, row %d (stacks %v, reversed %v): column %d at (%.0f, %.0f) %.0f×%.0f against column %d at (%.0f, %.0f) %.0f×%.0f",
									width, i+1, r.Stack, r.Reverse, j+1, b.Left, b.Top, b.Width, b.Height, j, a.Left, a.Top, a.Width, a.Height)
							}
						}
					}
					checked++
				}
			})
		}
	}
	if checked == 0 {
		t.Fatal("nothing laid out")
	}
}
