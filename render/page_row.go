package render

import (
	"math"
	"strconv"
	"strings"

	"github.com/designbridge/caddy-designbridge/design"
)

// Rows of the web layouts, as the vendor's page and popup exports lay
// them out: a full-width band (div.db-row) holding a centred content box
// (div.db-row-content) that is a flex container, whose flex items are the
// columns (div.db-col), stretched to the row's height. On phones a stacking
// row becomes a block (page.go's @media rules). Every style that comes
// from the design is inline, through the same checks as the email
// layout's; the classes only select the @media rules.

func (w *webWriter) row(r *design.Row) {
	n := w.rowIndex + 1
	if r.DisplayBefore != "" {
		w.s(r.DisplayBefore) // template language, passed through as written
	}
	if r.HideOnDesktop {
		w.desktopHideOpen()
	}
	w.rowLink = w.safeColor("linkColor", r.Computed.Get("linkColor"))

	band := w.style()
	if bg := w.safeColor("background-color", r.ContainerStyle.Get("background-color")); !isTransparent(bg) {
		band.add("background-color", bg)
	}
	if img := w.safeURL("background-image", r.ContainerStyle.Get("background-image")); img != "" {
		band.addURL("background-image", img)
		w.backgroundProps(&band, r.ContainerStyle)
	}
	w.s(`<div class="db-row db-row-`)
	w.int(n)
	if r.HideOnMobile {
		w.s(" mh")
	}
	w.s(`"`)
	w.styleAttr(&band)
	w.s(">")

	stack := r.StackOnMobile && len(r.Columns) > 1
	reverse := r.ReverseOnMobile && stack
	cls := []string{"db-row-content"}
	if stack {
		cls = append(cls, "db-stack")
	}
	if reverse {
		cls = append(cls, "db-reverse")
	}
	if r.StackOnMobile && w.mobileWidth() > 0 {
		// A popup's stacking rows narrow to messageWidthMobile on
		// phones, as in the vendor's popup exports.
		cls = append(cls, "db-narrow")
	}
	if r.MobileStyle.Len() > 0 {
		rowCls := "db-r" + strconv.Itoa(n) + "p"
		w.mobileRule("."+rowCls, mobilePadding(r.MobileStyle))
		cls = append(cls, rowCls)
	}
	box, inner := w.rowBox(r)
	w.s(`<div class="`)
	w.s(strings.Join(cls, " "))
	w.s(`"`)
	w.styleAttr(&box)
	w.s(">")
	w.columns(r, inner, stack, reverse)
	w.s("</div></div>")
	if r.HideOnDesktop {
		w.desktopHideClose()
	}
	if r.DisplayAfter != "" {
		w.s(r.DisplayAfter)
	}
}

// rowBox is the style of a row's content box, and the width inside its
// borders and padding.
func (w *webWriter) rowBox(r *design.Row) (style, float64) {
	width := float64(w.d.Page.Body.Width)
	box := w.style()
	box.raw("display:flex;width:100%;max-width:")
	box.raw(strconv.Itoa(int(width)))
	box.raw("px;margin:0 auto;")
	if r.ColumnsSpacing > 0 {
		// The gap between columns side by side, and between the
		// columns of a reversed stack (a flex column); a stack that is
		// a block ignores it and gets margins (columns).
		box.addPx("gap", r.ColumnsSpacing)
	}
	_, _, bh := w.decorateContentBox(&box, r)
	pt, pr, pb, pl := padding(r.ContentStyle)
	box.addPadding(pt, pr, pb, pl)
	return box, max(width-bh-pr-pl, 20)
}

// columns writes a row's columns. A page's column is as wide as its share
// of the grid (flex-basis), a popup's shares what the columns' padding
// leaves (flex-grow by its grid), as in the vendor's exports; the blocks
// are told the content width that gives.
func (w *webWriter) columns(r *design.Row, inner float64, stack, reverse bool) {
	cols := r.Columns
	if len(cols) == 0 {
		return
	}
	total := float64(r.GridTotal())
	spacing := max(r.ColumnsSpacing, 0)
	avail := inner - spacing*float64(len(cols)-1)
	// What the columns' borders and padding take, for a popup's shares.
	frames := 0.0
	for i := range cols {
		frames += columnFrame(cols[i].Style)
	}
	gapCls := ""
	if stack && !reverse && spacing > 0 {
		// A stack that is a block keeps the row's spacing below each
		// column but the last.
		gapCls = "db-r" + strconv.Itoa(w.rowIndex+1) + "g"
		w.mobileRule("."+gapCls, "margin-bottom:"+formatPx(spacing)+"px!important")
	}
	for i := range cols {
		c := &cols[i]
		share := float64(c.Grid) / total
		s := w.style()
		var content float64
		if w.popup {
			s.raw("flex:" + strconv.Itoa(c.Grid) + ";")
			content = (avail - frames) * share
		} else {
			s.raw("flex-basis:" + strconv.FormatFloat(math.Round(share*1e6)/1e4, 'f', -1, 64) + "%;")
			content = avail*share - columnFrame(c.Style)
		}
		// The column's width in the editor: its grid share of the row,
		// the spacing between columns left in, less its own frame.
		nominal := inner*share - columnFrame(c.Style)
		cls := "db-col"
		if gapCls != "" && i < len(cols)-1 {
			cls += " " + gapCls
		}
		w.column(r, c, i, cls, &s, content, nominal)
	}
}

// columnFrame is the width a column's borders and padding take.
func columnFrame(st design.Style) float64 {
	var s style
	bh, _ := s.addBorders(st)
	_, pr, _, pl := padding(st)
	return bh + pr + pl
}

// column writes one column, its box style s completed with the design's,
// and its modules, which get width to lay out in (and nominal, the
// editor's width of the column: see fluidMaxWidth).
func (w *webWriter) column(r *design.Row, c *design.Column, index int, cls string, s *style, width, nominal float64) {
	w.checkTotal()
	w.colIndex, w.modIndex = index, -1
	defer func() { w.colIndex = -1 }()
	w.columnSeq++
	st := c.Style
	if bg := w.safeColor("background-color", st.Get("background-color")); !isTransparent(bg) {
		s.add("background-color", bg)
	}
	s.addBorders(st)
	if rad := r.ColumnsRadius; rad != "" && rad != "0px" {
		s.add("border-radius", rad)
	}
	pt, pr, pb, pl := padding(st)
	s.addPadding(pt, pr, pb, pl)
	switch r.VerticalAlign {
	case "middle", "center":
		s.raw("display:flex;flex-direction:column;justify-content:center;")
	case "bottom":
		s.raw("display:flex;flex-direction:column;justify-content:flex-end;")
	}
	w.s(`<div class="`)
	w.s(cls)
	if c.MobileStyle.Len() > 0 {
		colCls := "db-c" + strconv.Itoa(w.columnSeq)
		w.mobileRule("."+colCls, mobilePadding(c.MobileStyle))
		w.s(" ")
		w.s(colCls)
	}
	w.s(`"`)
	w.styleAttr(s)
	w.s(">")
	w.colWidth, w.colNominal = max(width, 10), max(nominal, 10)
	for mi, b := range w.blocks.column(r, w.rowIndex, index) {
		w.colIndex, w.modIndex = index, mi
		w.module(&c.Modules[mi], b)
	}
	w.modIndex = -1
	w.s("</div>")
}
