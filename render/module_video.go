package render

import (
	"strconv"
	"strings"

	"github.com/designbridge/caddy-designbridge/design"
)

// videoBlock is a video, rendered as its linked thumbnail with a play button:
// email clients cannot play video. The thumbnail is the background of a
// cell holding the play icon; Outlook, which shows no CSS backgrounds,
// gets the thumbnail as a plain linked image instead.
type videoBlock struct {
	src, thumb, alt string // the video's and its thumbnail's URLs, thumbAlt
	ratio           string // thumbRatio: 4-3, 1-1 or another (16:9)
	iconSrc         string // the play icon's image, else a drawn one:
	iconSize        *design.Value
	iconBg, iconFg  string // iconColor1, iconColor2
}

var videoKind = kind{
	name: design.KindVideo,
	decode: func(c *design.Value) (block, error) {
		r := content{c: c, key: design.KindVideo}
		b := &videoBlock{src: r.text("src"), thumb: r.text("thumbSrc"), alt: r.text("thumbAlt"),
			ratio: strings.TrimSpace(c.Get("thumbRatio").Text()), iconSrc: strings.TrimSpace(c.Get("iconSrc").Text()),
			iconSize: c.Get("iconSize"), iconBg: c.Get("iconColor1").Text(), iconFg: c.Get("iconColor2").Text()}
		return b, r.err
	},
}

func (b *videoBlock) text(w *textWriter) { w.linkedLabel(b.alt, "src", b.src) }

func (b *videoBlock) html(w *emailWriter, m *design.Module) {
	avail := w.blockOpen(m, "video", nil, "center")
	width := avail
	if n, unit, ok := m.Computed.Value("width").Number(); ok && n > 0 {
		if unit == "%" {
			width = avail * min(n, 100) / 100
		} else if unit == "" || unit == "px" {
			width = min(n, avail)
		}
	}
	width = float64(int(width))
	ratio := 9.0 / 16
	switch b.ratio {
	case "4-3":
		ratio = 3.0 / 4
	case "1-1":
		ratio = 1
	}
	href := w.keptURL("src", strings.TrimSpace(b.src))
	thumb := w.keptURL("thumbSrc", strings.TrimSpace(b.thumb))
	cssThumb := cssURL(thumb) // encoded for url('…')
	alt := b.alt
	linked := href != ""

	// Outlook: the plain thumbnail.
	w.s("<!--[if mso]>")
	w.imageTag(thumb, alt, "", href, "_blank", width, width, "center", "", false)
	w.s("<![endif]--><!--[if !mso]><!-->")
	if linked {
		w.s("<a")
		w.attr("href", href)
		w.s(` target="_blank" style="display:block;text-decoration:none"`)
		if alt != "" {
			w.attr("aria-label", alt)
		}
		w.s(">")
	}
	w.s(`<table class="video-thumb" align="center" width="100%"`)
	w.s(tableAttrs)
	if thumb != "" {
		w.attr("background", thumb)
	}
	w.s(` style="max-width:`)
	w.s(formatPx(width))
	w.s("px")
	if cssThumb != "" {
		w.s(";background-image:url('")
		w.attrText(cssThumb)
		w.s("');background-size:cover;background-position:center;background-repeat:no-repeat")
	}
	// The cell's height follows its width, so the thumbnail keeps its
	// aspect at any width (a fixed height cropped a 16:9 thumbnail to
	// about a square on phones): vertical padding in percent counts from
	// the width. The play icon sits on the one empty line between the
	// paddings, its negative margins cancelling its own height.
	w.s(`"><tr><td align="center" valign="middle" style="padding:0;text-align:center"><div style="padding:`)
	w.s(strconv.FormatFloat(ratio*50, 'f', -1, 64))
	w.s(`% 0;line-height:0;font-size:0">`)
	size, ok := b.iconSize.Px()
	if !ok || size <= 0 || size > width/2 {
		size = min(60, width/3)
	}
	margin := "margin:-" + formatPx(size/2) + "px 0;vertical-align:middle;"
	if icon := b.iconSrc; icon != "" && w.allowURL("iconSrc", icon) {
		w.s("<img")
		w.attr("src", icon)
		w.s(` alt="" width="`)
		w.s(formatPx(size))
		w.s(`" style="display:inline-block;border:0;`)
		w.s(margin)
		w.s(`width:`)
		w.s(formatPx(size))
		w.s(`px;height:auto">`)
	} else {
		bg := w.safeColor("iconColor1", b.iconBg)
		if bg == "" {
			bg = "#000000"
		}
		fg := w.safeColor("iconColor2", b.iconFg)
		if fg == "" {
			fg = "#ffffff"
		}
		w.s(`<span style="display:inline-block;`)
		w.s(margin)
		w.s(`width:`)
		w.s(formatPx(size))
		w.s("px;height:")
		w.s(formatPx(size))
		w.s("px;line-height:")
		w.s(formatPx(size))
		w.s("px;border-radius:50%;background-color:")
		w.attrText(bg)
		w.s(";color:")
		w.attrText(fg)
		w.s(";font-size:")
		w.s(formatPx(float64(int(size * 0.45))))
		w.s(`px;font-family:Arial, sans-serif;text-align:center">&#9654;</span>`)
	}
	w.s("</div></td></tr></table>")
	if linked {
		w.s("</a>")
	}
	w.s("<!--<![endif]-->")
	w.blockClose()
}
