package render

import (
	"math"
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
	w.openLink("href", b.href)
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
	hover := w.buttonHover(m)
	extra := ""
	if hover != "" && m.Mobile.Len() == 0 {
		// The block's own class, which a mobile style would give it.
		extra = w.mobileClass()
	}
	avail := w.blockOpenClass(m, "button", extra, &td, align)
	if hover != "" {
		w.mainRule("."+w.mobileClass()+" .bt:hover", hover)
	}

	href := strings.TrimSpace(b.href)
	linked := href != "" && w.allowURL("href", href)
	label := b.label

	bg := w.safeColor("background-color", st.Get("background-color"))
	color := w.safeColor("color", st.Get("color"))
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
	if fs := w.safeCSS("font-size", m.Mobile.Get("font-size")); fs != "" {
		// A label paragraph with a font size of its own is written as a
		// span with it inline (inlineLabel), which the block's .tx rule
		// misses: the mobile size goes to the label's spans too, as the
		// vendor's exports give it to the block's spans.
		w.mobileRule("."+w.mobileClass()+" .bt span", "font-size:"+fs+"!important")
	}

	// Width: "auto" (fit the label), a percentage of the column, or px.
	widthMode := lower(st.Get("width"))
	var boxWidth float64
	full := false
	if n, unit, ok := design.ParseLength(widthMode); ok && n > 0 {
		switch unit {
		case "%":
			// Whole px, rounded down as the editor measures it (229.25
			// is 229): rounded up the button came out wider.
			boxWidth = math.Floor(avail * n / 100)
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
	radius, _ := st.Px("border-radius")
	if radius > 0 {
		s.addPx("border-radius", radius)
	}
	bh, bv := s.addBorders(st)
	s.addPadding(pt, pr, pb, pl)
	s.raw("text-align:center;text-decoration:none;mso-border-alt:none;word-break:keep-all;max-width:100%;")
	if boxWidth > 0 && !full {
		// border-box inline: the width includes padding and border also
		// where the <style> element's "*" rule is stripped (content-box
		// made a 229 px button 275 px wide).
		s.raw("box-sizing:border-box;")
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
		w.attrText(color)
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
	w.attrText(color)
	w.s(";font-family:")
	w.attrText(font)
	w.s(";font-size:")
	w.s(formatPx(fontSize))
	w.s(`px"><![endif]-->`)
	// As in the vendor's exports, the line height is on an inner span
	// around the label, not on the button: the button's own line (its
	// font at the inherited line height) is part of its line box, which
	// can reach below the label's and makes the button that much taller.
	// A label of one paragraph is written inline, as the vendor does, so
	// that both lines share the box.
	w.s(`<span class="bt tx"`)
	w.styleAttr(&s)
	w.s(`><span class="tx" style="word-break:break-word;line-height:`)
	w.s(formatPx(lineHeight * fontSize))
	w.s(`px">`)
	// The spans hold phrasing content only, and the link no other link.
	w.rich(inlineLabel(label), &richOpts{phrasing: true, inLink: linked})
	w.s("</span></span>")
	w.s(`<!--[if mso]></center></v:textbox></v:roundrect><![endif]-->`)
	if linked {
		w.s("</a>")
	}
	w.blockClose()
	if m.Mobile.Has("width") && strings.HasPrefix(m.Mobile.Get("width"), "100") {
		w.mobileRule("."+w.mobileClass()+" .bt", "display:block!important;width:100%!important")
	}
}

// buttonHover is the declarations of the button's :hover rule from
// descriptor.hoverStyle (its colours and borders under the pointer, as
// the vendor's exports write them), "" when it sets none. They override
// the button's inline style, so each is !important; a transparent
// background is kept, as it changes the button.
func (w *emailWriter) buttonHover(m *design.Module) string {
	hs := design.StyleOf(m.Descriptor.Get("hoverStyle"))
	if hs.Len() == 0 {
		return ""
	}
	s := w.style()
	s.add("background-color", w.safeColor("background-color", hs.Get("background-color")))
	s.add("color", w.safeColor("color", hs.Get("color")))
	for _, side := range [...]string{"border", "border-top", "border-right", "border-bottom", "border-left"} {
		s.add(side, hs.Get(side))
	}
	return important(s.String())
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

// inlineLabel returns a label that is one paragraph (the editor's <div
// class="txtTinyMce-wrapper"><p>…</p></div>, or a bare <p>) holding only
// inline markup as that markup, in a span with the paragraph's
// attributes (its font, size and colour) when it has any; any other
// label as it is. It reads the label's token stream (richlex.go), whose
// places in the label give the paragraph's start tag and content.
func inlineLabel(label string) string {
	if !strings.Contains(label, "<") {
		return label
	}
	var (
		pos        int    // where the last token ended
		start, end int    // the paragraph's content
		pTag       string // the paragraph's start tag
		depth      int    // open wrapper divs
		state      int    // 0 before the p, 1 inside it, 2 after it
		other      bool   // the label is not one such paragraph
	)
	richTokens(label, func(t richToken) {
		// A gap between tokens is a comment or a doctype, which the
		// stream leaves out: inside the paragraph it stays part of it.
		gap := t.start != pos
		pos = t.end
		if other {
			return
		}
		tag := string(t.name)
		switch {
		case gap && state != 1:
			other = true
		case t.kind == html.TextToken && state != 1:
			other = strings.TrimSpace(label[t.start:t.end]) != ""
		case state == 1 && t.kind != html.TextToken && blockTag(tag):
			if t.kind != html.EndTagToken || tag != "p" {
				other = true
			}
			state, end = 2, t.start
		case state == 0 && t.kind == html.StartTagToken && tag == "div":
			depth++
		case state == 0 && t.kind == html.StartTagToken && tag == "p":
			state, start, pTag = 1, t.end, label[t.start:t.end]
		case state == 2 && t.kind == html.EndTagToken && tag == "div" && depth > 0:
			depth--
		case state != 1:
			other = true
		}
	})
	if other || state != 2 || depth != 0 || pos != len(label) {
		return label
	}
	if attrs := pTag[2:]; strings.TrimSpace(attrs) != ">" {
		return "<span" + attrs + label[start:end] + "</span>"
	}
	return label[start:end]
}

// blockTag reports whether tag makes a block box (which would break the
// button's line).
func blockTag(tag string) bool {
	switch tag {
	case "p", "div", "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6", "table", "tr", "td", "th",
		"tbody", "thead", "tfoot", "blockquote", "pre", "hr", "section", "article", "header", "footer",
		"nav", "aside", "figure", "dl", "dt", "dd", "form", "address", "main", "center":
		return true
	}
	return false
}
