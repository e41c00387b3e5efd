package render

import (
	"strings"

	"golang.org/x/net/html"

	"github.com/designbridge/caddy-designbridge/design"
)

// buttonBlock is a "bulletproof" button: a styled inline-block span
// inside the link for every client, and for Outlook on Windows (which
// ignores padding, border-radius and inline-block) a VML roundrect of the
// button's measured size around the same label, so size, fill, border and
// rounded corners survive there too.
type buttonBlock struct {
	label, href, target string
	style               design.Style
}

var buttonKind = kind{
	name: design.KindButton,
	decode: func(c *design.Value) (block, error) {
		r := content{c: c, key: design.KindButton}
		b := &buttonBlock{label: r.text("label"), href: r.text("href"), target: r.text("target"),
			style: design.StyleOf(c.Get("style"))}
		return b, r.err
	},
}

// text writes the label, linked.
func (b *buttonBlock) text(w *textWriter) {
	w.openLink(b.href)
	w.fragment(b.label)
	w.closeLink()
}

func (b *buttonBlock) html(w *emailWriter, m *design.Module) {
	st := b.style
	align := textAlign(m.Style.Get("text-align"))
	if align == "" || align == "justify" {
		align = "center"
	}
	td := w.style()
	td.raw("text-align:" + align + ";")
	avail := w.blockOpen(m, "button", &td, align)

	href := strings.TrimSpace(b.href)
	linked := href != "" && design.SafeURL(href)
	label := b.label

	bg := cssColor(st.Get("background-color"))
	color := cssColor(st.Get("color"))
	if color == "" {
		color = "#ffffff"
	}
	font := w.fontStack(st.Get("font-family"))
	fontSize, ok := st.Px("font-size")
	if !ok || fontSize <= 0 {
		fontSize = 16
	}
	lineHeight := 1.5
	if n, unit, ok := st.Value("line-height").Number(); ok && n > 0 {
		switch unit {
		case "%":
			lineHeight = n / 100
		case "":
			lineHeight = n
		case "px":
			lineHeight = n / fontSize
		}
	}
	pt, pr, pb, pl := padding(st)
	if mf, ok := m.Mobile.Px("font-size"); ok && mf > 0 && m.Mobile.Get("line-height") == "" {
		// The line height is written in px (Outlook needs it so), which
		// would keep the desktop size's line on phones: the mobile font
		// size gets its own, in the same proportion.
		w.mobileRule("."+w.mobileClass()+" .tx", "line-height:"+formatPx(lineHeight*mf)+"px!important")
	}

	// Width: "auto" (fit the label), a percentage of the column, or px.
	widthMode := lower(st.Get("width"))
	var boxWidth float64
	full := false
	if n, unit, ok := design.ParseLength(widthMode); ok && n > 0 {
		switch unit {
		case "%":
			boxWidth = avail * n / 100
			full = n >= 100
		case "px", "":
			boxWidth = n
		}
	}
	s := w.style()
	s.raw("display:")
	if full {
		s.raw("block;")
	} else {
		s.raw("inline-block;")
	}
	if !isTransparent(bg) {
		s.add("background-color", bg)
	}
	s.add("color", color)
	s.add("font-family", font)
	s.addPx("font-size", fontSize)
	s.add("font-weight", st.Get("font-weight"))
	s.add("letter-spacing", st.Get("letter-spacing"))
	s.add("line-height", formatPx(lineHeight*fontSize)+"px")
	radius, _ := st.Px("border-radius")
	if radius > 0 {
		s.addPx("border-radius", radius)
	}
	bh, bv := s.addBorders(st)
	s.addPadding(pt, pr, pb, pl)
	s.raw("text-align:center;text-decoration:none;mso-border-alt:none;word-break:keep-all;max-width:100%;")
	if boxWidth > 0 && !full {
		s.addPx("width", boxWidth)
	}
	if d := lower(st.Get("direction")); d == "rtl" {
		s.raw("direction:rtl;")
	}

	// The VML shape needs the rendered size: the editor's measurement
	// when present, else an estimate from the label and padding.
	vw, okW := m.Computed.Px("width")
	vh, okH := m.Computed.Px("height")
	if boxWidth > 0 {
		vw, okW = boxWidth, true
	}
	if !okW || vw <= 0 {
		vw = float64(len([]rune(plain(label))))*fontSize*0.6 + pl + pr + bh
		okW = true
	}
	if !okH || vh <= 0 {
		vh = lineHeight*fontSize + pt + pb + bv
	}
	vw = min(float64(int(vw+0.5)), avail)
	vh = float64(int(vh + 0.5))

	if linked {
		w.s("<a")
		w.attr("href", href)
		t := lower(b.target)
		if t == "" {
			t = "_blank"
		}
		w.attr("target", t)
		w.s(` style="text-decoration:none;color:`)
		w.text(color)
		if full {
			w.s(";display:block")
		}
		w.s(`">`)
	}
	w.s(`<!--[if mso]><v:roundrect xmlns:v="urn:schemas-microsoft-com:vml" xmlns:w="urn:schemas-microsoft-com:office:word"`)
	if linked {
		w.attr("href", href)
	}
	w.s(` style="height:`)
	w.s(formatPx(vh))
	w.s("px;width:")
	w.s(formatPx(vw))
	w.s(`px;v-text-anchor:middle;" arcsize="`)
	arc := 0
	if radius > 0 && vh > 0 {
		arc = int(min(radius*2/vh, 1)*50 + 0.5)
	}
	w.int(arc)
	w.s(`%"`)
	if bw, bc := borderStroke(st); bw > 0 {
		w.s(` strokeweight="`)
		w.s(formatPx(bw * 0.75))
		w.s(`pt"`)
		w.attr("strokecolor", bc)
	} else {
		w.s(` stroke="false"`)
	}
	if !isTransparent(bg) {
		w.attr("fillcolor", bg)
	} else {
		w.s(` filled="false"`)
	}
	w.s(`><w:anchorlock/><v:textbox inset="0px,0px,0px,0px"><center style="color:`)
	w.text(color)
	w.s(";font-family:")
	w.text(font)
	w.s(";font-size:")
	w.s(formatPx(fontSize))
	w.s(`px"><![endif]-->`)
	w.s(`<span class="bt tx"`)
	w.styleAttr(&s)
	w.s(">")
	w.rich(label, &richOpts{pMargin: true})
	w.s("</span>")
	w.s(`<!--[if mso]></center></v:textbox></v:roundrect><![endif]-->`)
	if linked {
		w.s("</a>")
	}
	w.blockClose()
	if m.Mobile.Has("width") && strings.HasPrefix(m.Mobile.Get("width"), "100") {
		w.mobileRule("."+w.mobileClass()+" .bt", "display:block!important;width:100%!important")
	}
}

// borderStroke picks the VML stroke from the first visible border side.
func borderStroke(st design.Style) (width float64, color string) {
	for _, side := range [...]string{"border-top", "border-right", "border-bottom", "border-left", "border"} {
		v := st.Get(side)
		if !borderVisible(v) {
			continue
		}
		f := strings.Fields(v)
		if len(f) >= 3 {
			return borderWidth(v), cssColor(f[len(f)-1])
		}
	}
	return 0, ""
}

// plain returns the text of an HTML fragment (for measuring labels).
func plain(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return strings.TrimSpace(s)
	}
	z := html.NewTokenizer(strings.NewReader(s))
	var b strings.Builder
	for {
		switch z.Next() {
		case html.ErrorToken:
			return strings.TrimSpace(design.CollapseSpace(b.String()))
		case html.TextToken:
			b.Write(z.Text())
			b.WriteByte(' ')
		}
	}
}
