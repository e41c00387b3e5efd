package designbridge

// The encoded forms of a secret that an upstream echoing it sends back
// without meaning to: the escapes a server applies to text it echoes on
// its own (an HTML error page, a script in a page, a redirect's URL, a
// JSON dump).

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"text/template"
	"unicode/utf16"
)

// withEchoForms returns secrets followed by their JSON forms
// (withJSONForms) and the other forms each takes where it differs from
// the secret (one holding characters other than ASCII letters, digits and
// -_.~): HTML-escaped, percent-encoded and JSON-escaped as common servers
// write echoed text. Each form is then masked where the secret is: in
// bodies, headers, status texts and logs. A secret of only letters,
// digits and -_.~ has no other form, and costs the masking nothing more.
func withEchoForms(secrets [][]byte) [][]byte {
	out := withJSONForms(secrets)
	for _, sec := range secrets {
		if len(sec) < minMaskedSecret {
			continue // not masked as it is either
		}
		for _, f := range textForms(string(sec)) {
			form := []byte(f)
			if len(form) >= minMaskedSecret && !slices.ContainsFunc(out, func(s []byte) bool { return bytes.Equal(s, form) }) {
				out = append(out, form)
			}
		}
	}
	return out
}

// htmlEscapers are how common servers escape text in HTML: Go's
// html.EscapeString and text/template, html/template (which escapes + as
// well), Python's html.escape, PHP's htmlspecialchars (HTML 4 and HTML 5).
var htmlEscapers = []*strings.Replacer{
	strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;"),
	strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;", "+", "&#43;"),
	strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#x27;"),
	strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#039;"),
	strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&apos;"),
}

// jsStringEscaper is html/template's escaping of a JavaScript string's
// characters that a secret may hold.
var jsStringEscaper = strings.NewReplacer(`"`, `\u0022`, "`", `\u0060`, "&", `\u0026`, "'", `\u0027`,
	"+", `\u002b`, "/", `\/`, "<", `\u003c`, ">", `\u003e`, `\`, `\\`)

// textForms are the forms of s in echoed text, some equal to s.
func textForms(s string) []string {
	var forms []string
	for _, r := range htmlEscapers {
		forms = append(forms, r.Replace(s))
	}
	// Percent-encoded: by Go's url.QueryEscape (space as +) and
	// PathEscape, JavaScript's encodeURIComponent, Python's quote; with
	// the hex digits in either case.
	for _, keep := range []string{"-_.~", "-_.~$&+=:@", "-_.~!'()*", "-_.~/"} {
		upper := percentEncode(s, keep)
		forms = append(forms, upper, lowerHex(upper))
		if strings.Contains(upper, "%20") {
			plus := strings.ReplaceAll(upper, "%20", "+")
			forms = append(forms, plus, lowerHex(plus))
		}
	}
	// In a script: as html/template writes a string in JavaScript, and
	// text/template's JSEscapeString.
	forms = append(forms, jsStringEscaper.Replace(s), template.JSEscapeString(s))
	// JSON as PHP's json_encode writes it (/ as \/, beyond ASCII as \u),
	// and as Python's json.dumps does (beyond ASCII as \u).
	for _, escapeHTML := range []bool{true, false} {
		if f, ok := jsonForm(s, escapeHTML); ok {
			ascii := asciiJSON(f)
			forms = append(forms, strings.ReplaceAll(f, "/", `\/`), ascii, strings.ReplaceAll(ascii, "/", `\/`))
		}
	}
	return forms
}

// percentEncode writes each byte of s that is neither an ASCII letter or
// digit nor in keep as %XX.
func percentEncode(s, keep string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(keep, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// lowerHex writes the hex digits of each %XX of s in lower case.
func lowerHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			copy(b[i+1:i+3], asciiLower(b[i+1:i+3]))
			i += 2
		}
	}
	return string(b)
}

// jsonForm is s inside a JSON string, as encoding/json writes it.
func jsonForm(s string, escapeHTML bool) (string, bool) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	if enc.Encode(s) != nil {
		return "", false
	}
	return strings.TrimSuffix(strings.TrimSuffix(buf.String(), "\n"), `"`)[1:], true
}

// asciiJSON writes every character of a JSON string's content beyond
// ASCII as \u escapes (a surrogate pair beyond the BMP).
func asciiJSON(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r < 0x80:
			b.WriteRune(r)
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}

// anchorMemo notes, for one buffer, which anchors it holds: a secret's
// forms (withEchoForms) all begin with what precedes its first character
// that some encoding escapes, so when the buffer lacks that anchor, one
// search rules out every form, where each would cost a search of its own.
type anchorMemo struct {
	seen [8]struct {
		anchor []byte
		found  bool
	}
	n int
}

// present reports whether b may hold s: false only when b lacks the
// anchor of s (its leading ASCII letters, digits and -_.~, when at least
// 4 and not s whole).
func (m *anchorMemo) present(b, s []byte) bool {
	n := 0
	for n < len(s) && unreserved(s[n]) {
		n++
	}
	if n < 4 || n == len(s) {
		return true
	}
	a := s[:n]
	for _, e := range m.seen[:m.n] {
		if bytes.Equal(e.anchor, a) {
			return e.found
		}
	}
	found := bytes.Contains(b, a)
	if m.n < len(m.seen) {
		m.seen[m.n].anchor, m.seen[m.n].found = a, found
		m.n++
	}
	return found
}

// unreserved reports whether no encoding withEchoForms applies changes c.
func unreserved(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~'
}
