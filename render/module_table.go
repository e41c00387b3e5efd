package render

import (
	"strings"

	"github.com/designbridge/caddy-designbridge/design"
)

// moduleTable renders the table block as a data table: header cells are
// <th scope="col"> and, unlike layout tables, it keeps its table role so
// screen readers announce rows and columns.
func (w *emailWriter) moduleTable(m *design.Module, t *design.Value) {
	st := design.StyleOf(t.Get("style"))
	cs := design.StyleOf(t.Get("computedStyle"))
	content := t.Get("content")
	w.blockOpen(m, "table", nil, "")
	tbl := w.style()
	tbl.raw("border-collapse:collapse;width:100%;table-layout:fixed;word-break:break-word;")
	tbl.add("color", cssColor(st.Get("color")))
	tbl.add("font-family", w.fontStack(st.Get("font-family")))
	tbl.add("font-size", st.Get("font-size"))
	tbl.add("font-weight", st.Get("font-weight"))
	tbl.add("line-height", st.Get("line-height"))
	tbl.add("letter-spacing", st.Get("letter-spacing"))
	if bg := cssColor(st.Get("background-color")); !isTransparent(bg) {
		tbl.add("background-color", bg)
	}
	if d := lower(st.Get("direction")); d == "rtl" {
		tbl.raw("direction:rtl;")
	}
	cell := w.style()
	cell.raw("padding:10px;")
	cell.addBorders(st)
	if a := textAlign(st.Get("text-align")); a != "" {
		cell.add("text-align", a)
	}
	head := w.style()
	head.raw(string(cell.b))
	if bg := cssColor(cs.Get("headersBackgroundColor")); !isTransparent(bg) {
		head.add("background-color", bg)
	}
	head.add("color", cssColor(cs.Get("headersColor")))
	head.add("font-size", cs.Get("headersFontSize"))
	head.add("font-weight", cs.Get("headersFontWeight"))
	if a := textAlign(cs.Get("headersTextAlign")); a != "" {
		head.add("text-align", a)
	}
	alt := cssColor(cs.Get("alternateRowBackgroundColor"))
	o := &richOpts{linkColor: w.linkColorFor(cs.Get("linkColor")), pMargin: true}

	w.s(`<table class="tx" width="100%" border="0" cellpadding="0" cellspacing="0"`)
	w.styleAttr(&tbl)
	w.s(">")
	headers := content.Get("headers")
	if headers.Len() > 0 {
		w.s("<thead>")
		for i := range headers.Len() {
			w.checkSize()
			cells := headers.Index(i).Get("cells")
			w.s("<tr>")
			for j := range cells.Len() {
				w.s(`<th scope="col"`)
				w.styleAttr(&head)
				w.s(">")
				w.rich(cells.Index(j).Get("html").Text(), o)
				w.s("</th>")
			}
			w.s("</tr>")
		}
		w.s("</thead>")
	}
	rows := content.Get("rows")
	w.s("<tbody>")
	for i := range rows.Len() {
		w.checkSize()
		cells := rows.Index(i).Get("cells")
		w.s("<tr")
		if i%2 == 1 && !isTransparent(alt) {
			w.s(` style="background-color:`)
			w.text(alt)
			w.s(`"`)
		}
		w.s(">")
		for j := range cells.Len() {
			w.s("<td")
			w.styleAttr(&cell)
			w.s(">")
			w.rich(cells.Index(j).Get("html").Text(), o)
			w.s("</td>")
		}
		w.s("</tr>")
	}
	w.s("</tbody></table>")
	w.blockClose()
}

var tableKind = kind{
	name: design.KindTable,
	html: (*emailWriter).moduleTable,
	text: tableText,
}

// tableText writes the table one line per row, cells separated by " | ".
func tableText(w *textWriter, c *design.Value) {
	content := c.Get("content")
	for _, part := range [...]string{"headers", "rows"} {
		rows := content.Get(part)
		for i := range rows.Len() {
			cells := rows.Index(i).Get("cells")
			texts := make([]string, 0, cells.Len())
			blank := true
			for j := range cells.Len() {
				t := strings.Join(strings.Fields(fragmentText(cells.Index(j).Get("html").Text())), " ")
				if t != "" {
					blank = false
				}
				texts = append(texts, t)
			}
			if blank {
				continue
			}
			w.lineBreak()
			w.text(strings.Join(texts, " | "))
		}
	}
}
