package corpus

import (
	"fmt"
	"strings"
)

// layoutProbe runs in the page and returns (as JSON) what the checks need:
// the viewport and document widths, the outermost elements that stick out
// of the viewport, for every layout row its columns' boxes, and the layout
// tables whose rows do not span them.
//
// Rows and columns are found by class names, in three dialects: the
// vendor's email tables (table.row-content > tr > td.column, class "stack"
// when the row stacks, tr.reverse when it stacks reversed), the vendor's
// page/popup flexbox markup (.bee[-popup]-row-content > .bee[-popup]-col,
// class "no_stack" when it does not stack) and our renderer's hybrid layout
// (table.rc > … > div.col, class "st" when the row stacks). The row number
// comes from the "row-N" or "rN" class of the enclosing row.
const layoutProbe = `(() => {
  const vw = window.innerWidth;
  const tol = 1; // sub-pixel rounding
  const out = {vw: vw, scrollWidth: document.documentElement.scrollWidth, overflow: [], rows: []};
  const name = el => {
    let s = el.tagName.toLowerCase();
    if (el.id) s += '#' + el.id;
    const c = typeof el.className === 'string' ? el.className.trim() : '';
    if (c) s += '.' + c.split(/\s+/).join('.');
    return s;
  };
  const path = el => {
    const parts = [];
    for (let e = el; e && e !== document.body && parts.length < 4; e = e.parentElement) parts.unshift(name(e));
    return parts.join(' > ');
  };
  // An element that is wider than the viewport but sits inside a box that
  // clips it (overflow other than visible) and itself fits, is not an
  // overflow of the page.
  const clipped = el => {
    for (let p = el.parentElement; p && p !== document.documentElement; p = p.parentElement) {
      const s = getComputedStyle(p);
      if (s.overflowX !== 'visible') {
        const r = p.getBoundingClientRect();
        if (r.left >= -tol && r.right <= vw + tol) return true;
      }
    }
    return false;
  };
  const offenders = new Set();
  if (document.body) {
    for (const el of document.body.querySelectorAll('*')) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      if (!(r.right > vw + tol || r.left < -tol || r.width > vw + tol)) continue;
      if (clipped(el)) continue;
      const parentOffends = el.parentElement && offenders.has(el.parentElement);
      offenders.add(el);
      if (!parentOffends && out.overflow.length < 10) {
        out.overflow.push({path: path(el), left: r.left, right: r.right, width: r.width});
      }
    }
  }
  const rowSel = 'table.row-content, table.rc, .bee-row-content, .bee-popup-row-content';
  const box = el => { const r = el.getBoundingClientRect(); return {left: r.left, top: r.top, width: r.width, height: r.height}; };
  const pageDir = getComputedStyle(document.body || document.documentElement).direction;
  out.pageRTL = pageDir === 'rtl';
  for (const row of document.querySelectorAll(rowSel)) {
    let cols;
    if (row.matches('table.row-content')) {
      cols = Array.from(row.querySelectorAll('td.column')).filter(c => c.closest('table.row-content') === row);
    } else if (row.matches('table.rc')) {
      cols = Array.from(row.querySelectorAll('div.col')).filter(c => c.closest('table.rc') === row);
      // A one-column row has no column wrapper: the row is the column.
      if (cols.length === 0) cols = [row];
    } else {
      cols = Array.from(row.children).filter(c => c.classList.contains('bee-col') || c.classList.contains('bee-popup-col'));
    }
    let number = 0;
    for (let e = row; e && !number; e = e.parentElement) {
      if (typeof e.className !== 'string') continue;
      for (const c of e.className.split(/\s+/)) {
        const m = /^(?:(?:bee-(?:popup-)?)?row-|r)(\d+)$/.exec(c);
        if (m) { number = parseInt(m[1], 10); break; }
      }
    }
    const reverse = row.classList.contains('reverse') || (row.matches('table.row-content') && !!row.querySelector('tr.reverse'));
    const stack = row.matches('table') ? (row.classList.contains('stack') || row.classList.contains('st')) : !row.classList.contains('no_stack');
    // Columns written in reverse document order inside a container of the
    // opposite direction (the hybrid layout's way to stack reversed).
    const domReversed = cols.length > 0 && !!cols[0].parentElement && getComputedStyle(cols[0].parentElement).direction !== pageDir;
    // The content blocks of a column, outermost only (an html block may
    // hold markup with *_block classes of its own).
    const blockKind = el => {
      if (typeof el.className !== 'string') return '';
      const m = /(?:^|\s)([a-z]+)_block(?:\s|$)/.exec(el.className);
      return m ? m[1] : '';
    };
    const blocksOf = col => Array.from(col.querySelectorAll('[class*="_block"]')).filter(b => {
      if (!blockKind(b)) return false;
      for (let p = b.parentElement; p && p !== col; p = p.parentElement) if (blockKind(p)) return false;
      return true;
    }).map(b => {
      const out = {kind: blockKind(b), box: box(b)};
      // The element that carries a text block's typography.
      const tx = (out.kind === 'heading' || out.kind === 'paragraph') ? b.querySelector('h1,h2,h3,h4,h5,h6,.tx') : null;
      if (tx) {
        const cs = getComputedStyle(tx);
        out.font = {size: cs.fontSize, weight: cs.fontWeight, color: cs.color};
      }
      return out;
    });
    // Content sticking out of its column sideways (into the next column or
    // the margin), outermost offender only; content clipped by a box
    // inside the column does not count.
    const spillOf = col => {
      const c = col.getBoundingClientRect();
      if (c.width === 0 && c.height === 0) return '';
      for (const el of col.querySelectorAll('*')) {
        const r = el.getBoundingClientRect();
        if (r.width === 0 && r.height === 0) continue;
        if (r.left >= c.left - tol && r.right <= c.right + tol) continue;
        let clippedInside = false;
        for (let p = el.parentElement; p && p !== col; p = p.parentElement) {
          if (getComputedStyle(p).overflowX !== 'visible') { clippedInside = true; break; }
        }
        if (!clippedInside) return path(el) + ' (' + Math.round(r.left) + '..' + Math.round(r.right) + ' in column ' + Math.round(c.left) + '..' + Math.round(c.right) + ')';
      }
      return '';
    };
    out.rows.push({number: number, path: path(row), box: box(row), stack: stack, reverse: reverse, domReversed: domReversed,
      cols: cols.map(box), blocks: cols.map(blocksOf), spill: cols.map(spillOf)});
  }
  // Layout tables (role=presentation, 100% wide) whose first row is
  // narrower than the table: a table shown as a block lays its rows out
  // in an anonymous table as narrow as their content, so a centred image
  // sits at the left and text is squeezed. An html block's markup is the
  // designer's own.
  out.unfilled = [];
  for (const tb of document.querySelectorAll('table[role="presentation"][width="100%"]')) {
    const tr = tb.rows[0];
    if (!tr || tb.closest('.html_block') || out.unfilled.length >= 10) continue;
    const r = tb.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    const s = getComputedStyle(tb);
    const inner = r.width - ['borderLeftWidth', 'borderRightWidth', 'paddingLeft', 'paddingRight'].reduce((a, p) => a + parseFloat(s[p]), 0);
    const rw = tr.getBoundingClientRect().width;
    if (rw < inner - tol) out.unfilled.push({path: path(tb), width: inner, rowWidth: rw, display: s.display});
  }
  return JSON.stringify(out);
})()`

type box struct {
	Left, Top, Width, Height float64
}

func (b box) visible() bool   { return b.Width > 0 || b.Height > 0 }
func (b box) right() float64  { return b.Left + b.Width }
func (b box) bottom() float64 { return b.Top + b.Height }

type offender struct {
	Path               string
	Left, Right, Width float64
}

type rowProbe struct {
	Number  int    // from the row-N class, 1-based; 0 if none
	Path    string // CSS-ish path, for messages
	Box     box
	Stack   bool // the markup says the row stacks on mobile
	Reverse bool // the markup says it stacks in reverse order
	// DOMReversed: the columns are in reverse document order (written
	// last-first in a container of the opposite direction).
	DOMReversed bool
	Cols        []box
	Blocks      [][]blockProbe // per column, in document order
	Spill       []string       // per column: content sticking out of it sideways, "" if none
}

// blockProbe is one content block: its kind (from the "<kind>_block"
// class) and box.
type blockProbe struct {
	Kind string
	Box  box
	Font *fontProbe // computed typography of heading and paragraph blocks
}

type fontProbe struct {
	Size, Weight, Color string
}

// designOrder returns the visible columns in the design's order.
func (r rowProbe) designOrder() []box {
	cols := visibleCols(r)
	if r.DOMReversed {
		return reversed(cols)
	}
	return cols
}

type measurement struct {
	VW          float64
	ScrollWidth float64
	PageRTL     bool
	Overflow    []offender
	Rows        []rowProbe
	Unfilled    []unfilledTable
}

// unfilledTable is a layout table whose first row is narrower than the
// table's content box.
type unfilledTable struct {
	Path            string
	Width, RowWidth float64
	Display         string
}

// tolerance absorbs sub-pixel rounding of layout boxes.
const tolerance = 1.0

// rowExpectation is what a row should do.
type rowExpectation struct {
	stack, reverse              bool   // on mobile
	hiddenMobile, hiddenDesktop bool   // not shown at that width
	valign                      string // "top" (default), "middle" or "bottom": what lines up side by side
}

// expectFunc gives a row's expectation; false when the row is not to be
// checked.
type expectFunc func(rowProbe) (rowExpectation, bool)

// checkMobile returns the problems of a page at phone width: horizontal
// overflow, and rows whose columns are not arranged as expected.
func checkMobile(m *measurement, expect expectFunc) []string {
	problems := checkOverflow(m)
	for _, r := range m.Rows {
		exp, ok := expect(r)
		if !ok {
			continue
		}
		if exp.hiddenMobile {
			if r.Box.visible() {
				problems = append(problems, fmt.Sprintf("row %d (%s) is hidden on mobile but shows", r.Number, r.Path))
			}
			continue
		}
		cols := r.designOrder()
		if !r.Box.visible() || len(cols) < 2 {
			continue
		}
		if exp.stack {
			if exp.reverse {
				cols = reversed(cols)
			}
			if p := stacked(cols); p != "" {
				problems = append(problems, fmt.Sprintf("row %d (%s) should stack%s on mobile: %s", r.Number, r.Path, revWord(exp.reverse), p))
			}
			continue
		}
		if m.PageRTL {
			cols = reversed(cols)
		}
		if p := sideBySide(cols, exp.valign); p != "" {
			problems = append(problems, fmt.Sprintf("row %d (%s) should keep its columns side by side on mobile: %s", r.Number, r.Path, p))
		}
	}
	return problems
}

// checkDesktop returns the problems of a page at desktop width (wider than
// the design's breakpoint): no horizontal overflow, every multi-column row
// with its columns side by side, and rows hidden on desktop not showing.
func checkDesktop(m *measurement, expect expectFunc) []string {
	problems := checkOverflow(m)
	for _, r := range m.Rows {
		exp, ok := expect(r)
		if !ok {
			continue
		}
		if exp.hiddenDesktop {
			if r.Box.visible() {
				problems = append(problems, fmt.Sprintf("row %d (%s) is hidden on desktop but shows", r.Number, r.Path))
			}
			continue
		}
		cols := r.designOrder()
		if !r.Box.visible() || len(cols) < 2 {
			continue
		}
		// Right to left designs put the first column on the right.
		if m.PageRTL {
			cols = reversed(cols)
		}
		if p := sideBySide(cols, exp.valign); p != "" {
			problems = append(problems, fmt.Sprintf("row %d (%s) should have its columns side by side on desktop: %s", r.Number, r.Path, p))
		}
	}
	return problems
}

// checkOverflow: nothing may stick out of the viewport sideways, nor out
// of its column.
func checkOverflow(m *measurement) []string {
	var problems []string
	for _, r := range m.Rows {
		for ci, s := range r.Spill {
			if s != "" {
				problems = append(problems, fmt.Sprintf("row %d column %d: content outside its column: %s", r.Number, ci+1, s))
			}
		}
	}
	if m.ScrollWidth > m.VW {
		problems = append(problems, fmt.Sprintf("document scrollWidth %.0f > viewport %.0f", m.ScrollWidth, m.VW))
	}
	for _, o := range m.Overflow {
		problems = append(problems, fmt.Sprintf("element outside the viewport (left %.0f, right %.0f, width %.0f): %s", o.Left, o.Right, o.Width, o.Path))
	}
	return problems
}

// checkFilled: the rows of our layout tables span them. (Only our
// markup is held to it: every one of its layout tables is 100% wide.)
func checkFilled(m *measurement) []string {
	var problems []string
	for _, u := range m.Unfilled {
		problems = append(problems, fmt.Sprintf("layout table (display %s) %.0f px wide, its row %.0f px: %s", u.Display, u.Width, u.RowWidth, u.Path))
	}
	return problems
}

func visibleCols(r rowProbe) []box {
	var cols []box
	for _, c := range r.Cols {
		if c.visible() {
			cols = append(cols, c)
		}
	}
	return cols
}

func reversed(cols []box) []box {
	out := make([]box, len(cols))
	for i, c := range cols {
		out[len(cols)-1-i] = c
	}
	return out
}

func revWord(rev bool) string {
	if rev {
		return " (reversed)"
	}
	return ""
}

// stacked: each column starts at or below the bottom of the one before and
// overlaps it horizontally (one under the other, not diagonal).
func stacked(cols []box) string {
	for i := 1; i < len(cols); i++ {
		a, b := cols[i-1], cols[i]
		if b.Top < a.bottom()-tolerance {
			return fmt.Sprintf("column %d (top %.0f) is not below column %d (bottom %.0f)", i+1, b.Top, i, a.bottom())
		}
		if b.Left >= a.right()-tolerance || a.Left >= b.right()-tolerance {
			return fmt.Sprintf("column %d (left %.0f) is beside column %d (right %.0f), not under it", i+1, b.Left, i, a.right())
		}
	}
	return ""
}

// sideBySide: lined up vertically (same top, or same middle or bottom
// for rows aligned so), each column starting at or right of the end of the
// one before.
func sideBySide(cols []box, valign string) string {
	line := func(b box) float64 { return b.Top }
	switch valign {
	case "middle":
		line = func(b box) float64 { return b.Top + b.Height/2 }
	case "bottom":
		line = box.bottom
	default:
		valign = "top"
	}
	for i := 1; i < len(cols); i++ {
		a, b := cols[i-1], cols[i]
		if d := line(b) - line(a); d > tolerance || d < -tolerance {
			return fmt.Sprintf("column %d %s %.0f != column %d %s %.0f", i+1, valign, line(b), i, valign, line(a))
		}
		if b.Left < a.right()-tolerance {
			return fmt.Sprintf("column %d (left %.0f) starts before column %d ends (%.0f)", i+1, b.Left, i, a.right())
		}
	}
	return ""
}

func joinProblems(ps []string) string { return "\n\t" + strings.Join(ps, "\n\t") }
