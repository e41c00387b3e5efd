package render

// Content hidden on desktop: shown only by the @media block, and kept out
// of Outlook's sight in a conditional comment.

import "bytes"

// desktopHideOpen hides content on desktop: Outlook (desktop only) never
// sees it, other clients hide it inline until the @media block shows it.
// Outlook ends a false conditional comment at the first <![endif] it
// meets: conditional comments do not nest. So only the outermost hidden
// content is wrapped, and desktopHideClose takes the Outlook-only markup
// (ghost tables, VML) out of it, which Outlook would otherwise read as
// the wrapper's end and show the rest.
func (w *emailWriter) desktopHideOpen() {
	if w.hiddenDepth == 0 {
		w.s(`<!--[if !mso]><!-->`)
		w.hiddenStart = w.body.Len()
	}
	w.hiddenDepth++
	w.s(`<div class="dh" style="display:none;max-height:0;overflow:hidden;mso-hide:all">`)
}

func (w *emailWriter) desktopHideClose() {
	w.s(`</div>`)
	if w.hiddenDepth--; w.hiddenDepth > 0 {
		return
	}
	hidden := withoutOutlookMarkup(w.body.Bytes()[w.hiddenStart:])
	w.body.Truncate(w.hiddenStart)
	w.body.Write(hidden)
	w.s(`<!--<![endif]-->`)
}

// withoutOutlookMarkup returns the content of a desktop-hidden section,
// which only clients other than Outlook read, without what those clients
// do not show either and Outlook could read as the end of the section's
// wrapper: the content of <!--[if mso]>…<![endif]--> and
// <!--[if gte mso 9]>…, the markers of <!--[if !mso]><!-->…<!--<![endif]-->
// (their content stays), other comments, and bogus ones such as a stray
// <![endif]> of an html block. Tags are copied whole (see appendTag), so
// that an attribute value (<div title="<!--[if mso]>">) keeps its text.
func withoutOutlookMarkup(b []byte) []byte {
	const otherOpen, otherClose, endif = "<!--[if !mso]><!-->", "<!--<![endif]-->", "<![endif]-->"
	out := make([]byte, 0, len(b))
	unwrapped := 0 // <!--[if !mso]><!--> taken out, whose ends are still to come
	// skip drops b up to the end of the first sep after from. Where
	// there is none, the "<" is written as text instead ("&lt;"): an
	// unended comment would otherwise take the markup after the section
	// with it, and hold a marker for Outlook. A sep not found is not
	// looked for again (the rest of b is shorter), so that many unended
	// comments cost one search, not one each.
	missing := map[string]bool{}
	skip := func(from int, sep string) {
		if !missing[sep] {
			if end := bytes.Index(b[from:], []byte(sep)); end >= 0 {
				b = b[from+end+len(sep):]
				return
			}
			missing[sep] = true
		}
		out = append(out, "&lt;"...)
		b = b[1:]
	}
	for {
		i := bytes.IndexByte(b, '<')
		if i < 0 {
			return append(out, b...)
		}
		out = append(out, b[:i]...)
		b = b[i:]
		switch {
		case bytes.HasPrefix(b, []byte(otherOpen)):
			b = b[len(otherOpen):]
			unwrapped++
		case unwrapped > 0 && bytes.HasPrefix(b, []byte(otherClose)):
			b = b[len(otherClose):]
			unwrapped--
		case bytes.HasPrefix(b, []byte("<!--[if ")):
			skip(0, endif)
		case bytes.HasPrefix(b, []byte("<!--")):
			skip(len("<!"), "-->") // "<!-->" is a whole (empty) comment
		case bytes.HasPrefix(b, []byte("<!")):
			skip(0, ">")
		default:
			var n int
			out, n = appendTag(out, b)
			// The text of a <style> or <script> of an html block is not
			// markup (an old <style><!-- … --></style> is CSS): kept.
			if end := rawTextEnd(b[:n], b[n:]); end > 0 {
				out = append(out, b[n:n+end]...)
				n += end
			}
			b = b[n:]
		}
	}
}

// rawTextEnd is, for a start tag of an element whose text is not markup
// (style, script, textarea, title), the length of that text in rest (up
// to its end tag, or all of rest); 0 otherwise.
func rawTextEnd(tag, rest []byte) int {
	for _, name := range [...]string{"style", "script", "textarea", "title"} {
		if len(tag) > len(name)+1 && bytes.EqualFold(tag[1:1+len(name)], []byte(name)) {
			if c := tag[1+len(name)]; c == '>' || c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '/' {
				return endTag(rest, name)
			}
		}
	}
	return 0
}

// endTag is the index in b of the first end tag of name, in any case, or
// len(b) when there is none.
func endTag(b []byte, name string) int {
	for i := 0; ; {
		j := bytes.Index(b[i:], []byte("</"))
		if j < 0 {
			return len(b)
		}
		i += j
		if rest := b[i+2:]; len(rest) >= len(name) && bytes.EqualFold(rest[:len(name)], []byte(name)) {
			return i
		}
		i += 2
	}
}

// appendTag appends the tag b starts with to out, with each "<" in it
// (in an attribute value, mostly) written as "&lt;" (the same text to an
// HTML parser, but no "<![endif]" or "<!--" that Outlook could take for
// markup), and returns out and the tag's length in b (all of b if it
// does not end). A "<" that starts no tag is appended as it is.
func appendTag(out, b []byte) ([]byte, int) {
	if len(b) < 2 || !(b[1] == '/' || 'a' <= b[1]|0x20 && b[1]|0x20 <= 'z') {
		return append(out, '<'), 1
	}
	out = append(out, '<')
	var quote, last byte // last: the last byte outside quotes, not a space
	for i := 1; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '<': // in a value or not, the same text to a parser
			out = append(out, "&lt;"...)
			continue
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case (c == '"' || c == '\'') && last == '=': // as HTML: quotes open a value only
			quote = c
		case c == '>':
			return append(out, c), i + 1
		case c != ' ' && c != '\t' && c != '\n' && c != '\r' && c != '\f':
			last = c
		}
		out = append(out, c)
	}
	return out, len(b)
}
