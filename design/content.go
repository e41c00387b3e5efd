package design

import (
	"strings"
)

// CollapseSpace collapses runs of ASCII white space to one space and trims
// the ends (U+00A0 from &nbsp; is kept: it is not collapsible in HTML).
func CollapseSpace(s string) string {
	var b strings.Builder
	space := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteByte(c)
	}
	return b.String()
}

// SafeURL reports whether a link or source URL may be emitted. A value
// without a scheme is safe as it is: a relative URL, "www.example.com",
// "#top", or a merge tag ("{{link}}", "[unsubscribe]", "$url$",
// "*|UNSUB|*"), but for a network path (NetworkPath). A value with a
// scheme is safe only for the schemes a mail client or browser follows
// itself (allowedScheme), data: only for raster images, and mailto: only
// without a field that attaches a file (mailtoAttaches). Everything
// else is refused: script schemes, and those that hand the URL to a
// program of the reader's system, which a mail client may open without
// asking (file: and smb: leak Windows credentials to any host, ms-msdt:
// ran code, search-ms:, ms-word:…).
func SafeURL(u string) bool {
	var scheme [8]byte // longer than any allowed scheme
	n, colon := readScheme(u, scheme[:])
	switch {
	case n < 0:
		return !NetworkPath(u)
	case n > len(scheme):
		return false
	case string(scheme[:n]) == "data":
		return rasterData(u[colon+1:])
	case string(scheme[:n]) == "mailto":
		return !mailtoAttaches(u[colon+1:])
	}
	return allowedScheme(scheme[:n])
}

// NetworkPath reports whether u starts with two slashes or backslashes
// ("//host/x", `\\host\share`, `/\host`), read as SafeURL reads a
// scheme (controls and spaces ignored): a URL that takes its scheme from
// the page. A desktop mail client has no page and reads it as file:, and
// Windows a backslash one as a share, either sending the reader's
// credentials to the host as a file: URL does.
func NetworkPath(u string) bool {
	slashes := 0
	for i := 0; i < len(u) && slashes < 2; i++ {
		switch c := u[i]; {
		case c <= ' ' || c == 0x7f:
		case c == '/' || c == '\\':
			slashes++
		default:
			return false
		}
	}
	return slashes == 2
}

// Scheme is the scheme SafeURL reads in u, lower-cased and without the
// bytes it ignores ("" when u has none): for saying why SafeURL refused u.
func Scheme(u string) string {
	colon := strings.IndexByte(u, ':')
	if colon < 0 {
		return ""
	}
	scheme := make([]byte, colon)
	n, _ := readScheme(u, scheme)
	if n < 0 {
		return ""
	}
	return string(scheme[:n])
}

// readScheme reads u's scheme into scheme, lower-cased and without the
// bytes it ignores, and returns its length n (bytes past len(scheme) are
// counted, not kept) and the colon that ends it; n is -1 when u has no
// scheme.
func readScheme(u string, scheme []byte) (n, colon int) {
	colon = strings.IndexByte(u, ':')
	if colon < 0 {
		return -1, colon
	}
	// Browsers strip ASCII controls and spaces before a scheme and tabs
	// and line breaks inside it ("java\tscript:"); some mail clients strip
	// more, so any of them is ignored. A scheme is an ASCII letter, then
	// letters, digits, '+', '-' and '.': before the colon, anything else
	// ("/x:y", "{{ link:x }}", "[unsub:1]", "127.0.0.1:80") makes the value
	// relative. Other bytes (non-ASCII letters) are kept and so never
	// match an allowed scheme.
	for i := 0; i < colon; i++ {
		c := u[i]
		switch {
		case c <= ' ' || c == 0x7f:
			continue
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case 'a' <= c && c <= 'z', c >= 0x80:
		case '0' <= c && c <= '9', c == '+', c == '-', c == '.':
			if n == 0 {
				return -1, colon
			}
		default:
			return -1, colon
		}
		if n < len(scheme) {
			scheme[n] = c
		}
		n++
	}
	return n, colon
}

// allowedScheme reports whether links and sources may use scheme
// (lower-cased; "" for a value without one). The list is DOMPurify's
// default, the common ground of mainstream HTML sanitisers, without its
// recent matrix: (a chat client emails hardly link to): the web (http,
// https; ftp and ftps, which browsers now hand to the system, but which
// send no Windows credentials), mail and the MIME parts of the email
// itself (mailto, cid), phone and chat (tel, sms, callto, xmpp). Added:
// webcal, the "add to calendar" link of event emails, which a calendar
// application fetches over HTTP after asking the reader.
func allowedScheme(scheme []byte) bool {
	switch string(scheme) {
	case "", "http", "https", "mailto", "cid", "tel", "sms", "callto", "xmpp", "ftp", "ftps", "webcal":
		return true
	}
	return false
}

// rasterData reports whether the part of a data: URL after "data:" is a
// raster image: an image type other than SVG (which may hold script), read
// as a browser reads it (tabs and line breaks removed, leading white space
// skipped). Any other control or space in the type makes it no image.
func rasterData(rest string) bool {
	var typ [len("image/svg")]byte
	n := 0
	for i := 0; i < len(rest) && n < len(typ); i++ {
		c := rest[i]
		switch {
		case c == '\t' || c == '\n' || c == '\r':
			continue
		case (c == ' ' || c == '\f') && n == 0:
			continue
		case c <= ' ' || c == 0x7f:
			return false
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		}
		typ[n] = c
		n++
	}
	t := string(typ[:n])
	return strings.HasPrefix(t, "image/") && t != "image/svg"
}

// DropsContent reports whether an element's content is never shown as
// text, so sanitisers drop it and inventories skip it.
func DropsContent(tag string) bool {
	switch tag {
	case "script", "style", "template", "iframe", "object", "applet",
		"noscript", "noembed", "noframes", "frameset", "title",
		"head", "xmp", "select", "textarea", "svg", "math", "canvas", "audio", "video":
		return true
	}
	return false
}

// ImageSrc is an image content's source: src, or dynamicSrc (a merge
// expression) when src is empty.
func ImageSrc(img *Value) string {
	if s := strings.TrimSpace(img.Get("src").Text()); s != "" {
		return s
	}
	return strings.TrimSpace(img.Get("dynamicSrc").Text())
}

// FormField is one visible field of a form module, in layout order.
type FormField struct {
	ID       string
	Type     string // "text", "email", "checkbox", "radio", "submit", …
	Label    string // for submit: the button text
	Options  []string
	Required bool
}

// FormFields lists a form's visible fields in layout order (fields marked
// removeFromLayout are left out).
func FormFields(form *Value) []FormField {
	st := form.Get("structure")
	fields := st.Get("fields")
	layout := st.Get("layout")
	// Sized once: at most one entry per field.
	out := make([]FormField, 0, fields.Len())
	seen := make(map[string]bool, fields.Len())
	addField := func(id string) {
		if seen[id] {
			return
		}
		seen[id] = true
		f := fields.Get(id)
		if f.Kind != Object || f.Get("removeFromLayout").Truthy() {
			return
		}
		ff := FormField{ID: id, Type: strings.ToLower(f.Get("type").Text()), Label: f.Get("label").Text()}
		ff.Required = f.At("attributes", "required").Truthy()
		if ff.Type == "submit" {
			if v := f.At("attributes", "value").Text(); v != "" {
				ff.Label = v
			}
		}
		opts := f.Get("options")
		for i := range opts.Len() {
			if l := opts.Index(i).Get("label").Text(); l != "" {
				ff.Options = append(ff.Options, l)
			}
		}
		out = append(out, ff)
	}
	if layout.Kind == Array {
		for i := range layout.Members {
			line := &layout.Members[i].Value
			if line.Kind == String {
				addField(line.Str)
				continue
			}
			for j := range line.Len() {
				addField(line.Index(j).Text())
			}
		}
	} else if fields.Kind == Object {
		for i := range fields.Members {
			addField(fields.Members[i].Key)
		}
	}
	return out
}
