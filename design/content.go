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

// SafeURL reports whether a link or source URL may be emitted: anything
// but script-capable schemes (javascript:, vbscript:, data: other than
// images). Scheme-less values ("www.example.com", "{{link}}",
// "$url$") are safe.
func SafeURL(u string) bool {
	colon := strings.IndexByte(u, ':')
	if colon < 0 || strings.ContainsAny(u[:colon], "/?#") {
		return true
	}
	// Browsers ignore ASCII control characters and spaces inside a scheme
	// ("java\tscript:"), so compare without them.
	scheme := make([]byte, 0, colon)
	for i := 0; i < colon; i++ {
		if c := u[i]; c > ' ' {
			scheme = append(scheme, c|0x20)
		}
	}
	switch string(scheme) {
	case "javascript", "vbscript", "livescript", "mocha":
		return false
	case "data":
		rest := strings.ToLower(strings.TrimSpace(u[colon+1:]))
		return strings.HasPrefix(rest, "image/") && !strings.HasPrefix(rest, "image/svg")
	}
	return true
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
