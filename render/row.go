package render

import (
	"strconv"
	"strings"

	"github.com/designbridge/caddy-designbridge/design"
)

// Rows use the hybrid ("fluid") technique: columns are inline-block divs
// with a max-width and width:100%, so a client that strips <style> still
// shows a readable single column, a client without media queries wraps
// them when narrow, and the @media block stacks them on phones. Outlook
// for Windows ignores inline-block and max-width, so it gets conditional
// ghost tables of fixed widths that keep the columns side by side.

func (w *emailWriter) row(r *design.Row) {
	width := float64(w.d.Page.Body.Width)
	n := w.rowIndex + 1
	if r.DisplayBefore != "" {
		w.s(r.DisplayBefore) // template language, passed through as written
	}
	if r.HideOnDesktop {
		w.desktopHideOpen()
	}
	w.rowLink = w.safeColor("linkColor", r.Computed.Get("linkColor"))

	// Full-width band.
	cls := "row r" + strconv.Itoa(n)
	if r.HideOnMobile {
		cls += " mh"
	}
	band := w.style()
	bandBg := w.safeColor("background-color", r.ContainerStyle.Get("background-color"))
	if !isTransparent(bandBg) {
		band.add("background-color", bandBg)
	}
	bandImg := w.safeURL("background-image", r.ContainerStyle.Get("background-image"))
	if bandImg != "" {
		band.addURL("background-image", bandImg)
		w.backgroundProps(&band, r.ContainerStyle)
	}
	w.s(`<table class="`)
	w.s(cls)
	w.s(`" align="center" width="100%"`)
	w.s(tableAttrs)
	if !isTransparent(bandBg) {
		w.attr("bgcolor", bandBg)
	}
	if bandImg != "" {
		w.attr("background", bandImg)
	}
	w.styleAttr(&band)
	w.s("><tr><td>")
	if bandImg != "" {
		w.vmlBackgroundOpen(bandImg, bandBg, r.ContainerStyle, "mso-width-percent:1000")
	}

	// Centred content box.
	cs := r.ContentStyle
	box := w.style()
	box.raw("width:100%;max-width:")
	box.raw(strconv.Itoa(int(width)))
	box.raw("px;margin:0 auto;")
	boxBg, boxImg, bh := w.decorateContentBox(&box, r)
	pt, pr, pb, pl := padding(cs) // on the cell inside, for Outlook
	inner := max(width-bh-pr-pl, 20)

	w.s(`<!--[if mso]><table align="center" width="`)
	w.int(int(width))
	w.s(`"`)
	w.s(tableAttrs)
	w.s(`><tr><td><![endif]-->`)
	if boxImg != "" {
		w.vmlBackgroundOpen(boxImg, boxBg, cs, "width:"+strconv.Itoa(int(width))+"px")
	}
	w.s(`<table class="rc`)
	stack := r.StackOnMobile && len(r.Columns) > 1
	if stack {
		w.s(" st")
	}
	if r.StackOnMobile && w.mobileWidth() > 0 {
		// Popups narrow their stacking rows on phones to
		// messageWidthMobile (as the vendor's popup HTML does).
		w.s(" mw")
	}
	w.s(`" align="center" width="100%"`)
	w.s(tableAttrs)
	if !isTransparent(boxBg) {
		w.attr("bgcolor", boxBg)
	}
	if boxImg != "" {
		w.attr("background", boxImg)
	}
	w.styleAttr(&box)
	w.s("><tr><td")
	reverse := r.ReverseOnMobile && stack
	var tdCls []string
	if r.MobileStyle.Len() > 0 {
		rowCls := "r" + strconv.Itoa(n) + "p"
		w.mobileRule("."+rowCls, mobilePadding(r.MobileStyle))
		tdCls = append(tdCls, rowCls)
	}
	if reverse {
		// Reversed stacking keeps the document (reading) order; only the
		// stacked layout swaps the first and last column, with table
		// header/footer groups (rules in the @media block).
		tdCls = append(tdCls, "rv")
		w.hasRev = true
	}
	if len(tdCls) > 0 {
		w.s(` class="`)
		w.s(strings.Join(tdCls, " "))
		w.s(`"`)
	}
	cst := w.style()
	if len(r.Columns) > 1 {
		cst.raw("font-size:0;")
	}
	cst.addPadding(pt, pr, pb, pl)
	w.styleAttr(&cst)
	w.s(">")
	w.columns(r, inner, stack, reverse)
	w.s("</td></tr></table>")
	if boxImg != "" {
		w.vmlBackgroundClose()
	}
	w.s("<!--[if mso]></td></tr></table><![endif]-->")
	if bandImg != "" {
		w.vmlBackgroundClose()
	}
	w.s("</td></tr></table>")
	if r.HideOnDesktop {
		w.desktopHideClose()
	}
	if r.DisplayAfter != "" {
		w.s(r.DisplayAfter)
	}
}

func (w *emailWriter) backgroundProps(s *style, st design.Style) {
	s.add("background-position", st.Get("background-position"))
	s.add("background-repeat", st.Get("background-repeat"))
	if sz := st.Get("background-size"); sz != "" && sz != "auto" {
		s.add("background-size", sz)
	}
}

func (w *emailWriter) columns(r *design.Row, inner float64, stack, reverse bool) {
	cols := r.Columns
	if len(cols) == 0 {
		return
	}
	total := r.GridTotal()
	valign := "top"
	switch r.VerticalAlign {
	case "middle", "center":
		valign = "middle"
	case "bottom":
		valign = "bottom"
	}
	// Integer pixel widths that add up to the row's inner width.
	widths := make([]float64, len(cols))
	used := 0.0
	for i := range cols {
		if i == len(cols)-1 {
			widths[i] = inner - used
		} else {
			widths[i] = float64(int(inner * float64(cols[i].Grid) / float64(total)))
			used += widths[i]
		}
	}
	if len(cols) == 1 {
		w.column(r, &cols[0], widths[0], false, 0)
		return
	}
	spacing := r.ColumnsSpacing
	gapCls := ""
	if stack && spacing > 0 {
		// Stacked on phones, the columns keep the row's spacing between
		// them, below each but the last one shown (as the vendor's
		// exports do), instead of the sideways gap.
		gapCls = "r" + strconv.Itoa(w.rowIndex+1) + "g"
		w.mobileRule("."+gapCls, "padding-bottom:"+formatPx(spacing)+"px!important")
	}
	w.s(`<!--[if mso]><table width="100%"`)
	w.s(tableAttrs)
	w.s(`><tr><![endif]-->`)
	for i := range cols {
		c := &cols[i]
		cw := widths[i]
		padL, padR := 0.0, 0.0
		if spacing > 0 {
			if i > 0 {
				padL = spacing / 2
			}
			if i < len(cols)-1 {
				padR = spacing / 2
			}
		}
		w.s(`<!--[if mso]><td width="`)
		w.int(int(cw))
		w.s(`" valign="`)
		w.s(valign)
		w.s(`" style="width:`)
		w.int(int(cw))
		w.s(`px"><![endif]-->`)
		w.s(`<div class="col`)
		if padL > 0 || padR > 0 {
			w.s(" sp")
		}
		if reverse && i == 0 {
			w.s(" cf")
		}
		if reverse && i == len(cols)-1 {
			w.s(" cl")
		}
		// The last column shown when stacked: the last one, or the first
		// when the row stacks reversed.
		if lastShown := (!reverse && i == len(cols)-1) || (reverse && i == 0); gapCls != "" && !lastShown {
			w.s(" ")
			w.s(gapCls)
		}
		w.s(`"`)
		w.s(` style="display:inline-block;vertical-align:`)
		w.s(valign)
		if stack {
			w.s(`;width:100%;max-width:`)
			w.s(formatPx(cw))
			w.s("px")
		} else {
			// Never stacked: proportional widths keep them side by side
			// at any screen size.
			w.s(";width:")
			w.s(strconv.FormatFloat(float64(c.Grid)*100/float64(total), 'f', 4, 64))
			w.s("%")
		}
		if padL > 0 || padR > 0 {
			// border-box inline: the spacing is inside max-width, also
			// for a client that drops the <style> element's "*" rule
			// (with content-box the columns overflow the row and wrap).
			w.s(";box-sizing:border-box;padding:0 ")
			w.s(formatPx(padR))
			w.s("px 0 ")
			w.s(formatPx(padL))
			w.s("px")
		}
		w.s(`">`)
		w.column(r, c, cw-padL-padR, true, i)
		w.s(`</div><!--[if mso]></td><![endif]-->`)
	}
	w.s(`<!--[if mso]></tr></table><![endif]-->`)
}

// column writes one column's box and its modules.
func (w *emailWriter) column(r *design.Row, c *design.Column, width float64, multi bool, index int) {
	w.checkTotal()
	w.colIndex, w.modIndex = index, -1
	defer func() { w.colIndex = -1 }()
	w.columnSeq++
	st := c.Style
	s := w.style()
	if bg := w.safeColor("background-color", st.Get("background-color")); !isTransparent(bg) {
		s.add("background-color", bg)
	}
	bh, _ := s.addBorders(st)
	if rad := r.ColumnsRadius; rad != "" && rad != "0px" {
		s.add("border-radius", rad)
	}
	pt, pr, pb, pl := padding(st)
	s.addPadding(pt, pr, pb, pl)
	if multi {
		// Undo the container's font-size:0 (which removes the gaps
		// between inline-block columns).
		s.raw("font-size:16px;")
	}
	w.s(`<table width="100%"`)
	w.s(tableAttrs)
	w.s("><tr><td")
	if c.MobileStyle.Len() > 0 {
		cls := "c" + strconv.Itoa(w.columnSeq)
		w.mobileRule("."+cls, mobilePadding(c.MobileStyle))
		w.s(` class="`)
		w.s(cls)
		w.s(`"`)
	}
	w.styleAttr(&s)
	w.s(">")
	w.colWidth = width - bh - pl - pr
	if w.colWidth < 10 {
		w.colWidth = 10
	}
	// An empty column is only its padding, as in the vendor's exports:
	// no filler line (which made it a text line taller).
	for mi, b := range w.blocks.column(r, w.rowIndex, index) {
		w.colIndex, w.modIndex = index, mi
		w.module(&c.Modules[mi], b)
	}
	w.modIndex = -1
	w.s("</td></tr></table>")
}

// module renders module m, decoded as b by its kind (kinds.go),
// handling visibility; an unknown kind (b nil) renders as nothing, with a
// warning.
func (w *emailWriter) module(m *design.Module, b block) {
	w.checkTotal()
	if b == nil {
		w.warn.once(unknownKind(m), w.path())
		return
	}
	w.blockSeq++
	if m.HideOnDesktop {
		w.desktopHideOpen()
	}
	b.html(w, m)
	if m.HideOnDesktop {
		w.desktopHideClose()
	}
}

// blockOpen writes the module's table and padded cell; it returns the
// width available inside the padding. td holds extra cell declarations.
func (w *emailWriter) blockOpen(m *design.Module, kind string, td *style, align string) float64 {
	return w.blockOpenClass(m, kind, "", td, align)
}

// blockOpenClass is blockOpen with an extra class on the block's table.
func (w *emailWriter) blockOpenClass(m *design.Module, kind, extraCls string, td *style, align string) float64 {
	w.s(`<table class="`)
	mobileCls := w.blockClass(m, kind, extraCls, m.Mobile.Len() > 0)
	w.s(`" width="100%"`)
	w.s(tableAttrs)
	w.s(`><tr><td class="pad"`)
	pt, pr, pb, pl := padding(m.Style)
	s := w.style()
	s.addPadding(pt, pr, pb, pl)
	if td != nil {
		s.raw(string(td.b))
	}
	w.styleAttr(&s)
	if align != "" {
		// Outlook honours the attribute where it ignores text-align on
		// block content such as images.
		w.s(` align="`)
		w.s(align)
		w.s(`"`)
	}
	w.s(">")
	if mobileCls != "" {
		w.blockMobileRules(m, mobileCls)
	}
	avail := w.colWidth - pl - pr
	if avail < 10 {
		avail = 10
	}
	return avail
}

func (w *emailWriter) blockClose() { w.s("</td></tr></table>") }

// blockClass writes the class list of a block's outer element:
// <kind>_block, extra, mh when the block is hidden on phones, and, when
// mobile is set, the block's own class for its mobile rules, which it
// returns ("" without).
func (w *emailWriter) blockClass(m *design.Module, kind, extra string, mobile bool) string {
	w.s(kind)
	w.s("_block")
	if extra != "" {
		w.s(" ")
		w.s(extra)
	}
	if m.HideOnMobile {
		w.s(" mh")
	}
	if !mobile {
		return ""
	}
	cls := w.mobileClass()
	w.s(" ")
	w.s(cls)
	return cls
}

// mobileClass names the current block's class for its mobile rules.
func (w *emailWriter) mobileClass() string { return "m" + strconv.Itoa(w.blockSeq) }

// blockMobileRules turns descriptor.mobileStyle into rules for the block.
func (w *emailWriter) blockMobileRules(m *design.Module, cls string) {
	ms := m.Mobile
	w.mobileRule("."+cls+" td.pad", mobilePadding(ms))
	txt := w.style()
	txt.add("font-size", ms.Get("font-size"))
	txt.add("line-height", ms.Get("line-height"))
	if a := textAlign(ms.Get("text-align")); a != "" {
		txt.add("text-align", a)
	}
	if len(txt.b) > 0 {
		w.mobileRule("."+cls+" .tx", important(txt.String()))
	}
	if a := textAlign(ms.Get("text-align")); a != "" {
		w.mobileRule("."+cls+" td.pad", "text-align:"+a+"!important")
	}
}

// linkColorFor picks the module's link colour: its own, the row's, the body's.
func (w *emailWriter) linkColorFor(vals ...string) string {
	for _, v := range vals {
		if c := w.safeColor("link-color", v); c != "" {
			return c
		}
	}
	if w.rowLink != "" {
		return w.rowLink
	}
	return w.linkColor
}

// lower lower-cases ASCII.
func lower(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// decorateContentBox adds to box what every layout draws of a row's
// content box: its background colour (else the message's), background
// image, text colour, borders and radius. It returns the colour and
// image (Outlook's VML repeats them) and the borders' width, and keeps
// the text colour as the row's (rowColor), for the blocks that write one.
func (w *emailWriter) decorateContentBox(box *style, r *design.Row) (bg, img string, borders float64) {
	cs := r.ContentStyle
	bg = w.safeColor("background-color", cs.Get("background-color"))
	if isTransparent(bg) {
		bg = w.safeColor("messageBackgroundColor", r.Computed.Get("messageBackgroundColor"))
	}
	if isTransparent(bg) {
		bg = w.messageBg
	}
	if !isTransparent(bg) {
		box.add("background-color", bg)
	}
	img = w.safeURL("background-image", cs.Get("background-image"))
	if img != "" {
		box.addURL("background-image", img)
		w.backgroundProps(box, cs)
	}
	w.rowColor = w.safeColor("color", cs.Get("color"))
	if c := w.rowColor; c != "" && !strings.EqualFold(c, w.color) {
		box.add("color", c)
	}
	borders, _ = box.addBorders(cs)
	if rad := w.safeCSS("border-radius", cs.Get("border-radius")); rad != "" && rad != "0px" && rad != "0" {
		box.add("border-radius", rad)
		box.raw("overflow:hidden;")
	}
	return bg, img, borders
}
