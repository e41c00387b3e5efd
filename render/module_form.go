package render

import (
	"github.com/designbridge/caddy-designbridge/design"
)

// formBlock is a form, rendered as a static picture of its visible
// fields: email clients cannot submit forms (most strip <form> and
// <input>), so fields become labelled boxes and the submit button a
// styled label. A warning says so.
type formBlock struct {
	noText
	fields                 []design.FormField
	line                   map[string]int // field ID → its layout line
	labels, boxes, buttons design.Style
}

var formKind = kind{
	name: design.KindForm,
	decode: func(f *design.Value) (block, error) {
		style := f.Get("style")
		return &formBlock{fields: design.FormFields(f), line: formLines(f),
			labels: design.StyleOf(style.Get("labels")), boxes: design.StyleOf(style.Get("fields")),
			buttons: design.StyleOf(style.Get("buttons"))}, nil
	},
	// The HTML shows a form only as a static preview; in plain text that
	// would be a list of labels with nothing to fill in.
	textOmitted: "form module omitted from the plain text (email clients cannot submit forms)",
}

func (b *formBlock) html(w *emailWriter, m *design.Module) {
	fields := b.fields
	w.warn.once("form module rendered as a static preview (email clients cannot submit forms)", w.path())
	if len(fields) == 0 {
		return
	}
	labels, boxes, buttons := b.labels, b.boxes, b.buttons
	align := textAlign(m.Style.Get("text-align"))
	w.blockOpen(m, "form", nil, "")

	lbl := w.style()
	lbl.add("color", w.safeColor("color", labels.Get("color")))
	lbl.add("font-family", w.fontStack(m.Style.Get("font-family")))
	lbl.add("font-size", m.Style.Get("font-size"))
	lbl.add("line-height", labels.Get("line-height"))
	if a := textAlign(labels.Get("text-align")); a != "" {
		lbl.add("text-align", a)
	}
	// Options sit on their line unpadded; a label has 3 px around it
	// (the vendor's measures).
	opts := w.style()
	opts.raw(string(lbl.b))
	lbl.raw("padding:3px;")

	box := w.style()
	bg := w.safeColor("backgroundColor", boxes.GetAny("backgroundColor", "background-color"))
	if isTransparent(bg) {
		bg = "#ffffff"
	}
	box.add("background-color", bg)
	if h, _ := box.addBorders(boxes); h == 0 {
		box.raw("border:1px solid #cccccc;")
	}
	// 38 px with its border, the vendor's field height.
	box.raw("box-sizing:border-box;height:38px;line-height:36px;font-size:1px;")

	w.s(`<table class="tx" width="100%"`)
	w.s(tableAttrs)
	w.s(">")
	field := func(fld design.FormField) {
		switch fld.Type {
		case "submit", "button":
			btn := w.style()
			if n, unit, ok := design.ParseLength(buttons.Get("width")); ok && unit == "%" && n >= 100 {
				btn.raw("display:block;")
			} else {
				btn.raw("display:inline-block;")
			}
			btn.raw("text-decoration:none;text-align:center;")
			if bgc := w.safeColor("backgroundColor", buttons.GetAny("backgroundColor", "background-color")); !isTransparent(bgc) {
				btn.add("background-color", bgc)
			}
			btn.add("color", w.safeColor("color", buttons.Get("color")))
			btn.add("font-family", w.fontStack(buttons.Get("font-family")))
			if fs := buttons.Get("font-size"); fs != "" {
				btn.add("font-size", fs)
			} else {
				// The vendor's buttons take the form's font size.
				btn.add("font-size", m.Style.Get("font-size"))
			}
			btn.add("line-height", buttons.Get("line-height"))
			btn.add("border-radius", buttons.Get("border-radius"))
			btn.addBorders(buttons)
			pt, pr, pb, pl := padding(buttons)
			if pt+pr+pb+pl == 0 {
				pt, pr, pb, pl = 5, 20, 5, 20
			}
			btn.addPadding(pt, pr, pb, pl)
			if align != "" {
				w.s(`<div style="text-align:`)
				w.s(align)
				w.s(`">`)
			}
			w.s("<span")
			w.styleAttr(&btn)
			w.s(">")
			w.text(fld.Label)
			w.s("</span>")
			if align != "" {
				w.s("</div>")
			}
		case "checkbox", "radio":
			// Drawn boxes rather than glyphs: nothing for screen readers
			// or text extraction to read out.
			mark := `<span style="display:inline-block;width:12px;height:12px;border:1px solid #999999;vertical-align:middle;margin-right:4px"></span>`
			if fld.Type == "radio" {
				mark = `<span style="display:inline-block;width:12px;height:12px;border:1px solid #999999;border-radius:50%;vertical-align:middle;margin-right:4px"></span>`
			}
			w.s("<div")
			if len(fld.Options) > 0 && fld.Label == "" {
				w.styleAttr(&opts)
			} else {
				w.styleAttr(&lbl)
			}
			w.s(">")
			if len(fld.Options) == 0 {
				w.s(mark)
				w.text(fld.Label)
			} else {
				if fld.Label != "" {
					w.text(fld.Label)
					w.s("<br>")
				}
				for i, o := range fld.Options {
					w.checkSize()
					if i > 0 {
						w.s(" &nbsp; ")
					}
					w.s(mark)
					w.text(o)
				}
			}
			w.s("</div>")
		default:
			if fld.Label != "" {
				w.s("<div")
				w.styleAttr(&lbl)
				w.s(">")
				w.text(fld.Label)
				if fld.Required {
					w.s(" *")
				}
				w.s("</div>")
			}
			w.s("<div")
			w.styleAttr(&box)
			w.s(">&nbsp;</div>")
		}
	}
	// Fields the editor puts on one layout line share a row, side by
	// side on desktop and stacked on phones, as the vendor's forms
	// (First name | Last name); 3 px around each field, as there.
	line := b.line
	stackRule := false
	for i := 0; i < len(fields); {
		w.checkSize()
		n := 1
		if l, ok := line[fields[i].ID]; ok {
			for i+n < len(fields) {
				if next, ok := line[fields[i+n].ID]; !ok || next != l {
					break
				}
				n++
			}
		}
		if n == 1 {
			w.s(`<tr><td style="padding:3px">`)
			field(fields[i])
			w.s("</td></tr>")
			i++
			continue
		}
		if !stackRule {
			w.mobileRule(".ff", "display:block!important;width:100%!important")
			stackRule = true
		}
		w.s("<tr><td>")
		for _, fld := range fields[i : i+n] {
			w.checkSize()
			w.s(`<div class="ff" style="display:inline-block;vertical-align:top;box-sizing:border-box;padding:3px;width:`)
			w.s(formatPx(100 / float64(n)))
			w.s(`%">`)
			field(fld)
			w.s("</div>")
		}
		w.s("</td></tr>")
		i += n
	}
	w.s("</table>")
	w.blockClose()
}

// formLines numbers the line of the form's layout each field ID is on.
func formLines(form *design.Value) map[string]int {
	layout := form.At("structure", "layout")
	if layout.Kind != design.Array {
		return nil
	}
	out := map[string]int{}
	for i := range layout.Members {
		l := &layout.Members[i].Value
		if l.Kind == design.String {
			out[l.Str] = i
			continue
		}
		for j := range l.Len() {
			out[l.Index(j).Text()] = i
		}
	}
	return out
}
