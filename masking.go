package designbridge

// Masking the configured secrets in what upstreams answer: the streamed
// body, headers, and JSON strings as the page decodes them.

import (
	"bytes"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf16"
	"unicode/utf8"
)

// foldSecrets returns the secrets long enough to mask, in lower case, for
// containsSecretFold: folded once, not for every header of every answer.
func foldSecrets(secrets [][]byte) []string {
	var folded []string
	for _, sec := range secrets {
		if len(sec) >= minMaskedSecret {
			folded = append(folded, strings.ToLower(string(sec)))
		}
	}
	return folded
}

// containsSecretFold reports whether s holds one of the folded secrets
// (foldSecrets) in any case.
func containsSecretFold(s string, folded []string) bool {
	if len(folded) == 0 {
		return false
	}
	s = strings.ToLower(s) // s itself when it has no upper case
	for _, sec := range folded {
		if strings.Contains(s, sec) {
			return true
		}
	}
	return false
}

// withJSONForms returns the secrets followed by the forms they take
// inside a JSON string where those differ from the secret (a secret
// holding <, >, &, ", \, a control character or U+2028): as the bridge
// writes the client credentials into the LoginV2 body (encoding/json,
// which escapes <, > and & too), and with only the escapes JSON needs.
// An upstream that echoes the body it received as text sends a secret
// back in that form, which the page reads as readily as the secret.
func withJSONForms(secrets [][]byte) [][]byte {
	out := slices.Clip(secrets)
	for _, sec := range secrets {
		if len(sec) < minMaskedSecret {
			continue // not masked as it is either
		}
		for _, escapeHTML := range []bool{true, false} {
			f, ok := jsonForm(string(sec), escapeHTML)
			form := []byte(f)
			if ok && !slices.ContainsFunc(out, func(s []byte) bool { return bytes.Equal(s, form) }) {
				out = append(out, form)
			}
		}
	}
	return out
}

func maskable(secrets [][]byte) bool {
	for _, s := range secrets {
		if len(s) >= minMaskedSecret {
			return true
		}
	}
	return false
}

// maskingReader replaces each occurrence of a secret in the stream with as
// many '*' (so Content-Length stays right), holding back the last
// longest-secret-minus-one bytes of each read until more data shows whether
// they begin a secret.
type maskingReader struct {
	src     io.ReadCloser
	secrets [][]byte
	onEOF   func()
	// masked, when set, is set once a secret is found: the body then
	// differs from what the upstream's digests and validators describe.
	masked *atomic.Bool
	buf    []byte // buf[:n] holds data: buf[r:ready] masked and safe, buf[ready:n] held back
	r      int
	ready  int
	n      int
	err    error // src's terminal error, once seen
	// carry: how many bytes at the front of the held-back data belong to
	// an occurrence that starts in data already let go
	carry int
}

const maskChunk = 32 << 10

// maskBufPool holds buffers of maskChunk bytes and the held-back margin of
// the secrets they were used for; a reader sizes a new one itself, so New
// gives an empty one rather than one it would drop.
var maskBufPool = sync.Pool{New: func() any { return new([]byte) }}

func (m *maskingReader) Read(p []byte) (int, error) {
	for m.r == m.ready {
		if m.err != nil {
			return 0, m.err
		}
		keep := longest(m.secrets) - 1
		if m.buf == nil {
			m.buf = *maskBufPool.Get().(*[]byte)
			if cap(m.buf) < maskChunk+keep {
				m.buf = make([]byte, 0, maskChunk+keep)
			}
			m.buf = m.buf[:cap(m.buf)]
		}
		// Move the held-back bytes to the front and read after them.
		m.n = copy(m.buf, m.buf[m.ready:m.n])
		m.r, m.ready = 0, 0
		read, err := m.src.Read(m.buf[m.n:])
		m.n += read
		if err != nil {
			m.err = maskError(err, m.secrets)
			m.ready = m.n
			if err == io.EOF && m.onEOF != nil {
				m.onEOF()
			}
		} else {
			m.ready = max(m.n-keep, 0)
		}
		// Only what is let go is masked: the held-back bytes stay as they
		// came, so that an occurrence of another secret starting in them
		// is still found; the part of an occurrence that reaches into
		// them is masked once they are let go (carry).
		end := maskBelow(m.buf[:m.n], m.secrets, m.ready)
		if end > 0 && m.masked != nil {
			m.masked.Store(true)
		}
		star(m.buf[:min(m.carry, m.ready)])
		m.carry = max(m.carry, end, m.ready) - m.ready
	}
	n := copy(p, m.buf[m.r:m.ready])
	m.r += n
	return n, nil
}

func (m *maskingReader) Close() error {
	if m.buf != nil {
		b := m.buf[:0]
		m.buf = nil
		maskBufPool.Put(&b)
	}
	return m.src.Close()
}

func maskSecrets(b []byte, secrets [][]byte) {
	maskBelow(b, secrets, len(b))
}

// maskBelow replaces with '*' each byte below limit of every occurrence
// of a secret that starts below limit, and returns where the last of them
// ends (0 when there is none; it may be past limit). The occurrences are
// those of b as it came: masking one secret must not hide another that
// overlaps it (a client_secret that begins with the client_id), so the
// occurrences are found in order of their start, and a run of
// overlapping ones is masked only once the next occurrence starts past
// it.
func maskBelow(b []byte, secrets [][]byte, limit int) int {
	var starts [32]int
	next := starts[:0] // of each secret, where its next occurrence starts; -1 when none
	if len(secrets) > len(starts) {
		next = make([]int, 0, len(secrets))
	}
	var anchors anchorMemo
	for _, s := range secrets {
		i := -1
		if len(s) >= minMaskedSecret && anchors.present(b, s) {
			i = bytes.Index(b, s)
		}
		if i >= limit {
			i = -1
		}
		next = append(next, i)
	}
	runStart, runEnd := 0, 0 // the occurrences found and not yet masked
	for {
		k := -1 // the secret whose next occurrence starts first
		for x, i := range next {
			if i >= 0 && (k < 0 || i < next[k]) {
				k = x
			}
		}
		if k < 0 {
			break
		}
		i := next[k]
		if i > runEnd {
			// Every occurrence still to be found starts past the run.
			star(b[runStart:min(runEnd, limit)])
			runStart = i
		}
		runEnd = max(runEnd, i+len(secrets[k]))
		// Nothing at or past i is masked yet.
		next[k] = -1
		if j := bytes.Index(b[i+1:], secrets[k]); j >= 0 && i+1+j < limit {
			next[k] = i + 1 + j
		}
	}
	star(b[runStart:min(runEnd, limit)])
	return runEnd
}

func star(b []byte) {
	for i := range b {
		b[i] = '*'
	}
}

func longest(secrets [][]byte) int {
	n := 1
	for _, s := range secrets {
		if len(s) >= minMaskedSecret && len(s) > n {
			n = len(s)
		}
	}
	return n
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

// maskError returns err with the secrets its text holds masked (err
// itself when it holds none). net/http quotes what it could not parse of
// an upstream's answer (a status line, a header or trailer line) in its
// errors, and Caddy's reverse proxy logs them: at DEBUG, and at WARN
// when one ends an answer in the middle of its body.
func maskError(err error, secrets [][]byte) error {
	if err == nil {
		return nil
	}
	text, changed := maskText(err.Error(), secrets)
	if !changed {
		return err
	}
	return &maskedError{text: text, err: err}
}

// maskedError is an error whose text held a secret, with the secrets
// masked. It unwraps to the original, so that errors.Is and errors.As
// (a dial error, a cancelled context) still see what it is.
type maskedError struct {
	text string
	err  error
}

func (e *maskedError) Error() string { return e.text }

func (e *maskedError) Unwrap() error { return e.err }

// maskText masks the secrets in a text meant for a log: as they are, as
// %q quotes them (net/http's errors quote the line they could not parse),
// and in any ASCII letter case (a quoted header name may have been
// canonicalised).
func maskText(s string, secrets [][]byte) (string, bool) {
	b, lower := []byte(s), asciiLower([]byte(s))
	changed := false
	for _, sec := range secrets {
		// A secret longer than the text cannot be in it, in any form (its
		// quoted form is never shorter): io.EOF's text ends every answer.
		if len(sec) < minMaskedSecret || len(sec) > len(s) {
			continue
		}
		quoted := strconv.Quote(string(sec))
		for _, form := range []string{string(sec), quoted[1 : len(quoted)-1]} {
			// Found in the text as it came (lower is never masked), so
			// that masking one secret cannot hide another that overlaps it.
			pat := asciiLower([]byte(form))
			for off := 0; ; {
				i := bytes.Index(lower[off:], pat)
				if i < 0 {
					break
				}
				star(b[off+i : off+i+len(pat)])
				changed = true
				off += i + 1
			}
		}
	}
	if !changed {
		return s, false
	}
	return string(b), true
}

// asciiLower returns a copy of b with its ASCII letters in lower case:
// the same length, so that an index in it is one in b.
func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}
