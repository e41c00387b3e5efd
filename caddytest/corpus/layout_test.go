package corpus

import (
	"fmt"
	"strings"
)

// layoutProbe runs in the page and returns (as JSON) what the checks need:
// the viewport and document widths, the outermost elements that stick out
// of the viewport, and for every layout row its columns' boxes.
//
// Rows and columns are found by the vendor's class names, which our
// renderer keeps: email tables (table.row-content > tr > td.column, class
// "stack" when the row stacks, tr.reverse when it stacks reversed) and the
// page/popup flexbox markup (.bee[-popup]-row-content > .bee[-popup]-col,
// class "no_stack" when it does not stack). The row number comes from the
// "row-N" class of the enclosing row.
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
  const rowSel = 'table.row-content, .bee-row-content, .bee-popup-row-content';
  const box = el => { const r = el.getBoundingClientRect(); return {left: r.left, top: r.top, width: r.width, height: r.height}; };
  for (const row of document.querySelectorAll(rowSel)) {
    const isTable = row.tagName === 'TABLE';
    let cols;
    if (isTable) {
      cols = Array.from(row.querySelectorAll('td.column')).filter(c => c.closest('table.row-content') === row);
    } else {
      cols = Array.from(row.children).filter(c => c.classList.contains('bee-col') || c.classList.contains('bee-popup-col'));
    }
    let number = 0;
    for (let e = row; e && !number; e = e.parentElement) {
      if (typeof e.className !== 'string') continue;
      for (const c of e.className.split(/\s+/)) {
        const m = /^(?:bee-(?:popup-)?)?row-(\d+)$/.exec(c);
        if (m) { number = parseInt(m[1], 10); break; }
      }
    }
    const reverse = row.classList.contains('reverse') || !!row.querySelector('tr.reverse') && isTable;
    const stack = isTable ? row.classList.contains('stack') : !row.classList.contains('no_stack');
    out.rows.push({number: number, path: path(row), box: box(row), stack: stack, reverse: reverse, cols: cols.map(box)});
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
	Cols    []box
}

type measurement struct {
	VW          float64
	ScrollWidth float64
	Overflow    []offender
	Rows        []rowProbe
}

// tolerance absorbs sub-pixel rounding of layout boxes.
const tolerance = 1.0

// rowExpectation is what a row should do on mobile.
type rowExpectation struct {
	stack, reverse bool
}

// checkMobile returns the problems of a page at phone width: horizontal
// overflow, and rows whose columns are not arranged as expected.
func checkMobile(m *measurement, expect func(rowProbe) (rowExpectation, bool)) []string {
	var problems []string
	if m.ScrollWidth > m.VW {
		problems = append(problems, fmt.Sprintf("document scrollWidth %.0f > viewport %.0f", m.ScrollWidth, m.VW))
	}
	for _, o := range m.Overflow {
		problems = append(problems, fmt.Sprintf("element outside the viewport (left %.0f, right %.0f, width %.0f): %s", o.Left, o.Right, o.Width, o.Path))
	}
	for _, r := range m.Rows {
		cols := visibleCols(r)
		if !r.Box.visible() || len(cols) < 2 {
			continue
		}
		exp, ok := expect(r)
		if !ok {
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
		if p := sideBySide(cols); p != "" {
			problems = append(problems, fmt.Sprintf("row %d (%s) should keep its columns side by side on mobile: %s", r.Number, r.Path, p))
		}
	}
	return problems
}

// checkDesktop returns the problems of a page at desktop width: every
// multi-column row must have its columns side by side. Rows wider than the
// viewport (1440 px page designs) are left to the mobile checks.
func checkDesktop(m *measurement) []string {
	var problems []string
	for _, r := range m.Rows {
		cols := visibleCols(r)
		if !r.Box.visible() || len(cols) < 2 {
			continue
		}
		if p := sideBySide(cols); p != "" {
			problems = append(problems, fmt.Sprintf("row %d (%s) should have its columns side by side on desktop: %s", r.Number, r.Path, p))
		}
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

// sideBySide: same top, each column starting at or right of the end of the
// one before.
func sideBySide(cols []box) string {
	for i := 1; i < len(cols); i++ {
		a, b := cols[i-1], cols[i]
		if d := b.Top - a.Top; d > tolerance || d < -tolerance {
			return fmt.Sprintf("column %d top %.0f != column %d top %.0f", i+1, b.Top, i, a.Top)
		}
		if b.Left < a.right()-tolerance {
			return fmt.Sprintf("column %d (left %.0f) starts before column %d ends (%.0f)", i+1, b.Left, i, a.right())
		}
	}
	return ""
}

func joinProblems(ps []string) string { return "\n\t" + strings.Join(ps, "\n\t") }
