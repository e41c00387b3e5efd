package designbridge

import (
	"bytes"
	"encoding/json"
	"unicode/utf16"
	"unicode/utf8"
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
// written again, decoded, masked and encoded. A text that does not start
// as JSON does (after a BOM) is returned as it is; changed reports a
// rewrite. It is on every export's path, so it decodes only strings that
// hold an escape, one pass each, into one buffer.
func maskJSONStrings(text []byte, secrets [][]byte) (out []byte, changed bool) {
	body := trimBOM(text)
	// Without a backslash no string decodes to other bytes than its own,
	// which the raw masking has already seen.
	if !maskable(secrets) || bytes.IndexByte(body, '\\') < 0 {
		return text, false
	}
	if f := firstNonSpace(body); f != '{' && f != '[' && f != '"' {
		return text, false
	}
	if !escapesSecretByte(body, secrets) {
		return text, false
	}
	var dec []byte
	last := 0
	for i := 0; i < len(body); {
		q := bytes.IndexByte(body[i:], '"')
		if q < 0 {
			break
		}
		start := i + q
		end, escaped := stringEnd(body, start)
		if end < 0 {
			break // unterminated: JSON.parse decodes nothing of it
		}
		i = end + 1
		if !escaped {
			continue
		}
		var ok bool
		if dec, ok = unescapeJSON(dec[:0], body[start+1:end]); !ok || !containsSecret(dec, secrets) {
			continue
		}
		maskSecrets(dec, secrets)
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if enc.Encode(string(dec)) != nil {
			continue
		}
		if out == nil {
			out = append(make([]byte, 0, len(text)), text[:len(text)-len(body)]...)
		}
		out = append(append(out, body[last:start]...), bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...)
		last = end + 1
	}
	if out == nil {
		return text, false
	}
	return append(out, body[last:]...), true
}

// escapesSecretByte reports whether an escape in b decodes to a byte
// that some secret holds. If none does, every secret in a decoded string
// lies within bytes the escapes left alone, which the raw masking has
// seen: the common case (an HTML wrapper's \" and \n around an
// alphanumeric token) is settled by this one pass, without decoding.
func escapesSecretByte(b []byte, secrets [][]byte) bool {
	var in [256]bool
	for _, s := range secrets {
		if len(s) >= minMaskedSecret {
			for _, c := range s {
				in[c] = true
			}
		}
	}
	// The escapes that matter: \u (any character) and the one-letter ones
	// whose character a secret holds; typically only \u.
	var letters [256]bool
	for esc, c := range map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'} {
		letters[esc] = in[c]
	}
	for i := 0; i+1 < len(b); i++ {
		k := bytes.IndexByte(b[i:len(b)-1], '\\')
		if k < 0 {
			return false
		}
		i += k + 1
		if b[i] != 'u' {
			if letters[b[i]] || !validEscape(b[i]) {
				return true
			}
			continue
		}
		r, ok := hex4(b[i+1:])
		if !ok {
			return true
		}
		i += 4
		if r < utf8.RuneSelf {
			if in[r] {
				return true
			}
			continue
		}
		// Any byte of its UTF-8 form may be in a secret, and a
		// surrogate pairs with the next escape: decode to see.
		if utf16.IsSurrogate(r) {
			return true
		}
		var enc [utf8.UTFMax]byte
		for _, e := range enc[:utf8.EncodeRune(enc[:], r)] {
			if in[e] {
				return true
			}
		}
	}
	return false
}

// validEscape reports whether \c is a one-letter JSON escape.
func validEscape(c byte) bool {
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	}
	return false
}

// stringEnd returns the index of the quote that closes the string opened
// at b[start], or -1, and whether the string holds an escape.
func stringEnd(b []byte, start int) (end int, escaped bool) {
	for j := start + 1; j < len(b); {
		k := bytes.IndexAny(b[j:], "\"\\")
		if k < 0 {
			return -1, escaped
		}
		j += k
		if b[j] == '"' {
			return j, escaped
		}
		escaped = true
		j += 2
	}
	return -1, escaped
}

// unescapeJSON appends the decoded form of a JSON string's content (what
// lies between its quotes) to dst, as encoding/json decodes it: a lone
// surrogate, and invalid UTF-8, become U+FFFD. It reports false for a malformed escape.
func unescapeJSON(dst, s []byte) ([]byte, bool) {
	for len(s) > 0 {
		k := bytes.IndexByte(s, '\\')
		if k < 0 {
			return appendUTF8(dst, s), true
		}
		dst = appendUTF8(dst, s[:k])
		s = s[k:]
		if len(s) < 2 {
			return dst, false
		}
		switch c := s[1]; c {
		case '"', '\\', '/':
			dst = append(dst, c)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := hex4(s[2:])
			if !ok {
				return dst, false
			}
			s = s[6:]
			if utf16.IsSurrogate(r) {
				if r2, ok := hex4(s[min(2, len(s)):]); ok && len(s) >= 2 && s[0] == '\\' && s[1] == 'u' {
					if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
						dst = utf8.AppendRune(dst, d)
						s = s[6:]
						continue
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default:
			return dst, false
		}
		s = s[2:]
	}
	return dst, true
}

// appendUTF8 appends b with each invalid UTF-8 sequence replaced by
// U+FFFD, as a UTF-8 decoder (the page's, encoding/json's) reads it.
func appendUTF8(dst, b []byte) []byte {
	if utf8.Valid(b) {
		return append(dst, b...)
	}
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			dst = utf8.AppendRune(dst, utf8.RuneError)
		} else {
			dst = append(dst, b[:n]...)
		}
		b = b[n:]
	}
	return dst
}

// hex4 reads four hex digits.
func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
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
