package render

import (
	"strings"

	"github.com/designbridge/caddy-designbridge/design"
)

// tableBlock is the table block, rendered as a data table: header cells
// are <th scope="col"> and, unlike layout tables, it keeps its table role
// so screen readers announce rows and columns.
type tableBlock struct {
	headers, rows [][]string // each row's cells' rich text
	style         design.Style
	computed      design.Style // computedStyle: headers, alternate rows, link colour
}

var tableKind = kind{
	name: design.KindTable,
	decode: func(c *design.Value) (block, error) {
		content := c.Get("content")
		return &tableBlock{headers: tableRows(content.Get("headers")), rows: tableRows(content.Get("rows")),
			style: design.StyleOf(c.Get("style")), computed: design.StyleOf(c.Get("computedStyle"))}, nil
	},
}

// tableRows reads rows of cells.
func tableRows(rows *design.Value) [][]string {
	if rows.Len() == 0 {
		return nil
	}
	out := make([][]string, rows.Len())
	for i := range out {
		cells := rows.Index(i).Get("cells")
		out[i] = make([]string, cells.Len())
		for j := range out[i] {
			out[i][j] = cells.Index(j).Get("html").Text()
		}
	}
	return out
}

// text writes the table one line per row, cells separated by " | ".
func (b *tableBlock) text(w *textWriter) {
	for _, rows := range [...][][]string{b.headers, b.rows} {
		for _, cells := range rows {
			texts := make([]string, 0, len(cells))
			blank := true
			for _, cell := range cells {
				t := strings.Join(strings.Fields(w.cellText(cell)), " ")
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

func (b *tableBlock) html(w *emailWriter, m *design.Module) {
	st, cs := b.style, b.computed
	w.blockOpen(m, "table", nil, "")
	tbl := w.style()
	tbl.raw("border-collapse:collapse;width:100%;table-layout:fixed;word-break:break-word;")
	tbl.add("color", w.safeColor("color", st.Get("color")))
	tbl.add("font-family", w.fontStack(st.Get("font-family")))
	tbl.add("font-size", st.Get("font-size"))
	tbl.add("font-weight", st.Get("font-weight"))
	tbl.add("line-height", st.Get("line-height"))
	tbl.add("letter-spacing", st.Get("letter-spacing"))
	if bg := w.safeColor("background-color", st.Get("background-color")); !isTransparent(bg) {
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
	if bg := w.safeColor("headersBackgroundColor", cs.Get("headersBackgroundColor")); !isTransparent(bg) {
		head.add("background-color", bg)
	}
	head.add("color", w.safeColor("headersColor", cs.Get("headersColor")))
	head.add("font-size", cs.Get("headersFontSize"))
	head.add("font-weight", cs.Get("headersFontWeight"))
	if a := textAlign(cs.Get("headersTextAlign")); a != "" {
		head.add("text-align", a)
	}
	alt := w.safeColor("alternateRowBackgroundColor", cs.Get("alternateRowBackgroundColor"))
	o := &richOpts{linkColor: w.linkColorFor(cs.Get("linkColor")), pMargin: true}

	w.s(`<table class="tx" width="100%" border="0" cellpadding="0" cellspacing="0"`)
	w.styleAttr(&tbl)
	w.s(">")
	if len(b.headers) > 0 {
		w.s("<thead>")
		for _, cells := range b.headers {
			w.checkSize()
			w.s("<tr>")
			for _, cell := range cells {
				w.s(`<th scope="col"`)
				w.styleAttr(&head)
				w.s(">")
				w.rich(cell, o)
				w.s("</th>")
			}
			w.s("</tr>")
		}
		w.s("</thead>")
	}
	w.s("<tbody>")
	for i, cells := range b.rows {
		w.checkSize()
		w.s("<tr")
		if i%2 == 1 && !isTransparent(alt) {
			w.s(` style="background-color:`)
			w.attrText(alt)
			w.s(`"`)
		}
		w.s(">")
		for _, c := range cells {
			w.s("<td")
			w.styleAttr(&cell)
			w.s(">")
			w.rich(c, o)
			w.s("</td>")
		}
		w.s("</tr>")
	}
	w.s("</tbody></table>")
	w.blockClose()
}
