package designbridge

import (
	"bytes"
	"encoding/json"
)

// HTMLResult applies the front end's rule for reading an export response
// (frontend.md, "Get design HTML", step 3) to the response text: if the
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

// maskJSONStrings masks the secrets that a JSON text's strings hold once
// decoded: the raw text was masked as it arrived, but a secret written with
// escapes ("\u0074ok…", "a\/b") only appears when the page parses the
// JSON (an HTML wrapper, an error's details). Each string that holds one is
// written again, decoded, masked and encoded. Any other text is returned
// as it is; changed reports a rewrite.
func maskJSONStrings(text []byte, secrets [][]byte) (out []byte, changed bool) {
	body := trimBOM(text)
	// Without a backslash no string decodes to other bytes than its own,
	// which the raw masking has already seen.
	if !maskable(secrets) || bytes.IndexByte(body, '\\') < 0 {
		return text, false
	}
	if f := firstNonSpace(body); (f != '{' && f != '[' && f != '"') || !json.Valid(body) {
		return text, false
	}
	last := 0
	for i := 0; i < len(body); i++ {
		if body[i] != '"' {
			continue
		}
		// In valid JSON a quote outside a string opens one; find its end.
		j, escaped := i+1, false
		for body[j] != '"' {
			if body[j] == '\\' {
				escaped = true
				j++
			}
			j++
		}
		if escaped {
			if masked, ok := maskedString(body[i:j+1], secrets); ok {
				if out == nil {
					out = append(make([]byte, 0, len(text)), text[:len(text)-len(body)]...)
				}
				out = append(append(out, body[last:i]...), masked...)
				last = j + 1
			}
		}
		i = j
	}
	if out == nil {
		return text, false
	}
	return append(out, body[last:]...), true
}

// maskedString decodes the JSON string literal lit and, when the decoded
// text holds a secret, returns it masked and encoded again.
func maskedString(lit []byte, secrets [][]byte) ([]byte, bool) {
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return nil, false
	}
	dec := []byte(s)
	if !containsSecret(dec, secrets) {
		return nil, false
	}
	maskSecrets(dec, secrets)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(string(dec)) != nil {
		return nil, false
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), true
}

// containsSecret reports whether b holds a secret that maskSecrets masks.
func containsSecret(b []byte, secrets [][]byte) bool {
	for _, s := range secrets {
		if len(s) >= minMaskedSecret && bytes.Contains(b, s) {
			return true
		}
	}
	return false
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
