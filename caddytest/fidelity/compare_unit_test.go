package fidelity

import (
	"strings"
	"testing"
)

// The measuring arithmetic, without a browser: pairing by kind in order,
// the tolerance, the figures of the report and the stripped-layout rules.
func TestCompareArithmetic(t *testing.T) {
	b := func(kind string, top, height float64) block {
		return block{Kind: kind, Top: top, Height: height, Width: 100, Visible: true}
	}
	vendor := layout{Height: 400, Blocks: []block{
		b("heading", 0, 40), b("paragraph", 40, 100), b("empty", 140, 0), b("divider", 140, 32), b("button", 172, 50), b("form", 222, 80),
	}}
	ours := layout{Height: 300, Blocks: []block{
		b("heading", 0, 41), // within 4 px
		b("text", 42, 101),  // "text" pairs with "paragraph"
		b("divider", 143, 1),
		{Kind: "image", Visible: false}, // not displayed: left out
		b("button", 150, 50),            // 22 px off
		b("html", 200, 10),              // no vendor counterpart
	}}
	r := compare("d", 500, vendor, ours)
	cases := []struct {
		name      string
		got, want float64
	}{
		{"blocks (the vendor's empty placeholder left out)", float64(r.blocks), 5},
		{"within tolerance", float64(r.ok), 2},
		{"unpaired vendor blocks", float64(r.unpaired), 1},
		{"extra blocks of ours", float64(r.extra), 1},
		{"worst offset", r.worst, 22},
		{"height ratio", r.heightRatio, 0.75},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: %v, want %v", c.name, c.got, c.want)
		}
	}
	worst := r.worstPairs(5)
	if len(worst) != 3 || worst[0].ours != nil || worst[1].vendor.Kind != "divider" {
		t.Errorf("worst pairs: %v", worst)
	}
	if got := targetFor("nowhere", 1); got != defaultTarget {
		t.Errorf("targetFor an unlisted design: %+v", got)
	}
	for _, c := range []struct {
		got, want float64
		ok        bool
	}{{104, 100, true}, {105, 100, false}, {1019, 1000, true}, {1021, 1000, false}} {
		if within(c.got, c.want) != c.ok {
			t.Errorf("within(%v, %v) = %v", c.got, c.want, !c.ok)
		}
	}
}

func TestCheckStripped(t *testing.T) {
	row := func(cols ...[2]float64) overflowResult {
		var m overflowResult
		m.ScrollWidth = 800
		m.Rows = []rowCols{{Number: 1}}
		for _, c := range cols {
			m.Rows[0].Cols = append(m.Rows[0].Cols, colBox{Left: c[0], Top: c[1], Width: 250, Height: 10})
		}
		return m
	}
	if p := checkStripped(row([2]float64{150, 0}, [2]float64{400, 60}), desktopWidth, 500); len(p) != 0 {
		t.Errorf("side by side, middle-aligned: %v", p)
	}
	if p := checkStripped(row([2]float64{400, 0}, [2]float64{150, 0}), desktopWidth, 500); len(p) != 0 {
		t.Errorf("side by side, right to left: %v", p)
	}
	if p := checkStripped(row([2]float64{150, 0}, [2]float64{150, 60}), desktopWidth, 500); len(p) != 1 || !strings.Contains(p[0], "not beside") {
		t.Errorf("wrapped columns: %v", p)
	}
	if p := checkStripped(row([2]float64{150, 0}, [2]float64{150, 60}), desktopWidth, 1440); len(p) != 0 {
		t.Errorf("a design wider than the screen is not held to side by side: %v", p)
	}
	m := row()
	m.ScrollWidth = 420
	m.Overflow = []string{"img (0..420)"}
	if p := checkStripped(m, mobileWidth, 500); len(p) != 2 {
		t.Errorf("overflow at 375 px: %v", p)
	}
}
