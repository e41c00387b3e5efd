package designbridge

import (
	"bytes"
	"encoding/json"
)

// HTMLResult applies the front end's rule for reading an export response
// (docs/contracts.md, "The page's behaviour", Get design HTML) to the response text: if the
// text parses as a JSON object with a "body" member, the HTML is the first
// string among body.html, body.result and body; in every other case,
// including a wrapper none of whose candidates is a string, the text itself
// is the HTML. wrapped reports whether the HTML came out of a JSON wrapper,
// which is what unwrap_html rewrites.
//
// The text is the body as the page reads it: decoded as UTF-8, which drops
// one leading byte order mark, so HTMLResult drops it too (a wrapper after
// a BOM is a wrapper). The response's Content-Type plays no part, in
// either implementation: the page reads every answer as text.
//
// The page (www/) implements the same rule with JSON.parse; both are tested
// against testdata/htmlresult_cases.json, so the two must agree on every
// case there. Member names are matched exactly (JSON.parse is
// case-sensitive, so encoding/json's case-insensitive struct matching is
// avoided on purpose).
func HTMLResult(text []byte) (html []byte, wrapped bool) {
	text = trimBOM(text)
	// Cheap rejection before parsing: only an object can hold "body".
	if first := firstNonSpace(text); first != '{' {
		return text, false
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(text, &top) != nil {
		return text, false
	}
	body, ok := top["body"]
	if !ok {
		return text, false
	}
	var members map[string]json.RawMessage
	if firstNonSpace(body) == '{' && json.Unmarshal(body, &members) == nil {
		for _, name := range [...]string{"html", "result"} {
			if s, ok := jsonString(members[name]); ok {
				return []byte(s), true
			}
		}
		return text, false
	}
	if s, ok := jsonString(body); ok {
		return []byte(s), true
	}
	return text, false
}

// utf8BOM is the UTF-8 byte order mark, which a UTF-8 decoder drops from
// the start of a text (TextDecoder, and so fetch's Response.text()).
var utf8BOM = []byte("\xef\xbb\xbf")

// trimBOM drops one leading UTF-8 byte order mark.
func trimBOM(b []byte) []byte {
	return bytes.TrimPrefix(b, utf8BOM)
}

// jsonString decodes raw when it is a JSON string (and only then).
func jsonString(raw json.RawMessage) (string, bool) {
	if firstNonSpace(raw) != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// firstNonSpace returns the first byte that is not JSON whitespace, or 0.
func firstNonSpace(b []byte) byte {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return 0
	}
	return b[0]
}
