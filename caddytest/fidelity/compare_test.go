package fidelity

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/designbridge/caddy-designbridge/design"
)

// Tolerances of a block's top and height: 4 px or 2 % of the vendor's
// value, whichever is larger.
const (
	tolPx    = 4.0
	tolShare = 0.02
)

// within reports whether got is within tolerance of want.
func within(got, want float64) bool {
	return math.Abs(got-want) <= max(tolPx, tolShare*math.Abs(want))
}

// normKind maps the kind names of the two renderers onto one: the
// vendor's popups call a text block "paragraph" where an email of the
// same era says "text"; both are rich text.
func normKind(k string) string {
	switch k {
	case "text", "paragraph":
		return "text"
	}
	return k
}

// designBlock is a module of the design that our renderer writes as a
// block, with its JSON path.
type designBlock struct{ kind, path string }

// designBlocks lists the design's modules in document order (row by row,
// column by column), leaving out those our renderer writes nothing for:
// empty placeholders and kinds it does not know.
func designBlocks(d *design.Design) []designBlock {
	var out []designBlock
	for ri := range d.Page.Rows {
		r := &d.Page.Rows[ri]
		for ci := range r.Columns {
			for mi := range r.Columns[ci].Modules {
				m := &r.Columns[ci].Modules[mi]
				k := m.EffectiveKind()
				switch k {
				case design.KindEmpty, design.KindAddon, design.KindCarousel, design.KindMergeContent, "":
					continue
				}
				out = append(out, designBlock{kind: k, path: fmt.Sprintf("page.rows[%d].columns[%d].modules[%d]", ri, ci, mi)})
			}
		}
	}
	return out
}

// attachPaths names each of our blocks by the module it renders: blocks
// and modules are aligned by kind in order.
func attachPaths(blocks []block, mods []designBlock) {
	a := make([]string, len(blocks))
	for i, b := range blocks {
		a[i] = normKind(b.Kind)
	}
	m := make([]string, len(mods))
	for i, d := range mods {
		m[i] = normKind(d.kind)
	}
	for _, p := range align(a, m) {
		blocks[p[0]].Path = mods[p[1]].path
	}
}

// align pairs the items of a and b by equal value in order: the pairs of
// a longest common subsequence, as index pairs.
func align(a, b []string) [][2]int {
	n, m := len(a), len(b)
	t := make([][]int, n+1)
	for i := range t {
		t[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				t[i][j] = t[i+1][j+1] + 1
			} else {
				t[i][j] = max(t[i+1][j], t[i][j+1])
			}
		}
	}
	var out [][2]int
	for i, j := 0, 0; i < n && j < m; {
		switch {
		case a[i] == b[j]:
			out = append(out, [2]int{i, j})
			i++
			j++
		case t[i+1][j] >= t[i][j+1]:
			i++
		default:
			j++
		}
	}
	return out
}

// comparable keeps the displayed blocks that both renderers write: the
// vendor's empty placeholders (ours writes nothing for them) are left out.
func comparable(bs []block) []block {
	var out []block
	for _, b := range bs {
		if b.Visible && b.Kind != "empty" {
			out = append(out, b)
		}
	}
	return out
}

// pair is a vendor block and the block of ours paired with it (nil when
// none was).
type pair struct {
	vendor block
	ours   *block
}

func (p pair) ok() bool {
	return p.ours != nil && within(p.ours.Top, p.vendor.Top) && within(p.ours.Height, p.vendor.Height)
}

// offset is how far our block is from the vendor's vertically (its top).
func (p pair) offset() float64 {
	if p.ours == nil {
		return math.Inf(1)
	}
	return math.Abs(p.ours.Top - p.vendor.Top)
}

// result is the comparison of one design at one width.
type result struct {
	design      string
	width       int
	heightRatio float64 // our document height / the vendor's
	blocks      int     // the vendor's displayed blocks
	ok          int     // of which within tolerance
	worst       float64 // largest vertical offset of a paired block, px
	unpaired    int     // vendor blocks with no block of ours
	extra       int     // blocks of ours with no vendor block
	pairs       []pair
}

// share is the fraction of the vendor's blocks within tolerance (1 when
// the design has no block).
func (r result) share() float64 {
	if r.blocks == 0 {
		return 1
	}
	return float64(r.ok) / float64(r.blocks)
}

// compare pairs the two layouts' blocks by kind in order and measures.
func compare(name string, width int, vendor, ours layout) result {
	vb, ob := comparable(vendor.Blocks), comparable(ours.Blocks)
	r := result{design: name, width: width, blocks: len(vb)}
	if vendor.Height > 0 {
		r.heightRatio = ours.Height / vendor.Height
	}
	a := make([]string, len(vb))
	for i, b := range vb {
		a[i] = normKind(b.Kind)
	}
	c := make([]string, len(ob))
	for i, b := range ob {
		c[i] = normKind(b.Kind)
	}
	r.pairs = make([]pair, len(vb))
	for i, b := range vb {
		r.pairs[i].vendor = b
	}
	paired := align(a, c)
	for _, p := range paired {
		r.pairs[p[0]].ours = &ob[p[1]]
	}
	r.extra = len(ob) - len(paired)
	for _, p := range r.pairs {
		switch {
		case p.ours == nil:
			r.unpaired++
		default:
			r.worst = max(r.worst, p.offset())
			if p.ok() {
				r.ok++
			}
		}
	}
	return r
}

// worstPairs returns up to n pairs out of tolerance, the largest
// difference (of top or height) first.
func (r result) worstPairs(n int) []pair {
	var bad []pair
	for _, p := range r.pairs {
		if !p.ok() {
			bad = append(bad, p)
		}
	}
	diff := func(p pair) float64 {
		if p.ours == nil {
			return math.Inf(1)
		}
		return max(math.Abs(p.ours.Top-p.vendor.Top), math.Abs(p.ours.Height-p.vendor.Height))
	}
	sort.SliceStable(bad, func(i, j int) bool { return diff(bad[i]) > diff(bad[j]) })
	return bad[:min(n, len(bad))]
}

func (p pair) String() string {
	v := p.vendor
	if p.ours == nil {
		return fmt.Sprintf("%s (vendor top %.0f height %.0f %q): no block of ours", v.Kind, v.Top, v.Height, v.Text)
	}
	o := p.ours
	path := o.Path
	if path == "" {
		path = "(no module)"
	}
	return fmt.Sprintf("%s %s: top %.0f vs vendor %.0f (%+.0f), height %.0f vs %.0f (%+.0f) %q",
		o.Kind, path, o.Top, v.Top, o.Top-v.Top, o.Height, v.Height, o.Height-v.Height, v.Text)
}

// summaryTable formats results as the Markdown table of docs/renderer.md.
func summaryTable(rs []result) string {
	var b strings.Builder
	b.WriteString("| design | width | height ratio | blocks within 4 px / 2 % | worst offset |\n")
	b.WriteString("|---|---:|---:|---:|---:|\n")
	for _, r := range rs {
		fmt.Fprintf(&b, "| %s | %d | %.3f | %d/%d (%.0f %%) | %.0f px |\n",
			r.design, r.width, r.heightRatio, r.ok, r.blocks, 100*r.share(), r.worst)
	}
	return b.String()
}
