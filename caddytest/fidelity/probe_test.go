package fidelity

// blockProbe runs in a page and returns (as JSON) the document's height
// and, in document order, every content block with its kind and its box in
// document coordinates. Blocks are found by class names in the three
// dialects the two renderers write:
//   - email tables (the vendor's and ours): an element with a class
//     "<kind>_block" ("paragraph_block", "divider_block", …);
//   - the vendor's page and popup markup: an element with the class
//     "bee-block" or "bee-popup-block" and a class "bee-[popup-]<kind>".
//
// Only the outermost block counts (an html block may hold markup with
// block classes of its own). Blocks that are not displayed at this width
// are returned with visible false, so that our blocks still line up with
// the design's modules one for one.
const blockProbe = `(() => {
  const kindOf = el => {
    if (typeof el.className !== 'string') return '';
    const cls = el.className.trim().split(/\s+/);
    if (cls.includes('bee-popup-block') || cls.includes('bee-block')) {
      for (const c of cls) {
        const m = /^bee-(?:popup-)?([a-z]+)$/.exec(c);
        if (m && m[1] !== 'block') return m[1];
      }
      return 'block';
    }
    for (const c of cls) {
      const m = /^([a-z]+)_block$/.exec(c);
      if (m) return m[1];
    }
    return '';
  };
  const sx = window.scrollX, sy = window.scrollY;
  const out = {height: 0, width: window.innerWidth, blocks: []};
  if (!document.body) return JSON.stringify(out);
  const b = document.body.getBoundingClientRect();
  out.height = b.height;
  for (const el of document.body.querySelectorAll('[class]')) {
    const kind = kindOf(el);
    if (!kind) continue;
    let nested = false;
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      if (kindOf(p)) { nested = true; break; }
    }
    if (nested) continue;
    const r = el.getBoundingClientRect();
    const visible = r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== 'hidden';
    out.blocks.push({kind: kind, top: r.top + sy, left: r.left + sx, width: r.width, height: r.height, visible: visible,
      text: (el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 40)});
  }
  return JSON.stringify(out);
})()`

// layout is what blockProbe returns.
type layout struct {
	Height float64 `json:"height"`
	Width  float64 `json:"width"`
	Blocks []block `json:"blocks"`
}

// block is one content block as measured, with the JSON path of the
// design module it renders (ours only; "" when unknown).
type block struct {
	Kind    string  `json:"kind"`
	Top     float64 `json:"top"`
	Left    float64 `json:"left"`
	Width   float64 `json:"width"`
	Height  float64 `json:"height"`
	Visible bool    `json:"visible"`
	Text    string  `json:"text"`
	Path    string  `json:"-"`
}

// stripStylesProbe removes every <style> element, as an email client that
// drops <head> styles (and style blocks in the body) does, before the
// layout is measured. Inline style attributes stay.
const stripStylesProbe = `(() => {
  const n = document.querySelectorAll('style').length;
  for (const s of document.querySelectorAll('style')) s.remove();
  return JSON.stringify(n);
})()`

// overflowProbe returns the outermost elements that stick out of the
// viewport sideways (those inside a box that clips them and fits do not
// count), and for every row of our markup (table.rc) the boxes of its
// displayed columns (div.col).
const overflowProbe = `(() => {
  const vw = window.innerWidth, tol = 1;
  const out = {scrollWidth: document.documentElement.scrollWidth, overflow: [], rows: []};
  const name = el => {
    let s = el.tagName.toLowerCase();
    const c = typeof el.className === 'string' ? el.className.trim() : '';
    if (c) s += '.' + c.split(/\s+/).join('.');
    return s;
  };
  const path = el => {
    const parts = [];
    for (let e = el; e && e !== document.body && parts.length < 4; e = e.parentElement) parts.unshift(name(e));
    return parts.join(' > ');
  };
  const clipped = el => {
    for (let p = el.parentElement; p && p !== document.documentElement; p = p.parentElement) {
      if (getComputedStyle(p).overflowX !== 'visible') {
        const r = p.getBoundingClientRect();
        if (r.left >= -tol && r.right <= vw + tol) return true;
      }
    }
    return false;
  };
  const offenders = new Set();
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 && r.height === 0) continue;
    if (!(r.right > vw + tol || r.left < -tol)) continue;
    if (clipped(el)) continue;
    const parentOffends = el.parentElement && offenders.has(el.parentElement);
    offenders.add(el);
    if (!parentOffends && out.overflow.length < 10) out.overflow.push(path(el) + ' (' + Math.round(r.left) + '..' + Math.round(r.right) + ')');
  }
  for (const row of document.querySelectorAll('table.rc')) {
    const cols = Array.from(row.querySelectorAll('div.col')).filter(c => c.closest('table.rc') === row)
      .map(c => c.getBoundingClientRect()).filter(r => r.width > 0 && r.height > 0)
      .map(r => ({left: r.left, top: r.top, width: r.width, height: r.height}));
    let number = 0;
    const rowEl = row.closest('table.row');
    if (rowEl) for (const c of rowEl.classList) { const m = /^r(\d+)$/.exec(c); if (m) number = parseInt(m[1], 10); }
    out.rows.push({number: number, cols: cols});
  }
  return JSON.stringify(out);
})()`

type overflowResult struct {
	ScrollWidth float64   `json:"scrollWidth"`
	Overflow    []string  `json:"overflow"`
	Rows        []rowCols `json:"rows"`
}

// rowCols is a row of our markup ("r<Number>") and its displayed columns.
type rowCols struct {
	Number int      `json:"number"`
	Cols   []colBox `json:"cols"`
}

type colBox struct{ Left, Top, Width, Height float64 }
