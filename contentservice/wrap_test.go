package contentservice

import (
	"bytes"
	"encoding/json"
	"testing"
)

// encodingJSONWrap is the JSON wrapper as encoding/json writes it: what
// wrapBody must match byte for byte.
func encodingJSONWrap(key string, body []byte) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]map[string]string{"body": {key: string(body)}})
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func checkWrap(t *testing.T, body []byte) {
	t.Helper()
	// A recycled buffer holding an earlier answer must not show through.
	stale := []byte(`{"body":{"html":"an earlier, longer answer"}}`)
	for _, key := range []string{"html", "text"} {
		got, want := wrapBody(stale, key, body), encodingJSONWrap(key, body)
		if !bytes.Equal(got, want) {
			t.Fatalf("wrapBody(%q, %q)\n got %q\nwant %q", key, body, got, want)
		}
	}
}

func TestWrapBodyAsEncodingJSON(t *testing.T) {
	every := make([]byte, 256)
	for i := range every {
		every[i] = byte(i)
	}
	for _, body := range []string{
		"",
		"<p>plain & simple</p>",
		`quote " backslash \ slash /`,
		"\b\f\n\r\t\x00\x01\x1f\x7f",
		"é ü 日本 😀",
		"line\u2028para\u2029end",
		"bad \xff \xc3 \xe2\x80 \xed\xa0\x80 surrogate, \xf4\x90\x80\x80 beyond",
		"\u2028",
		"\xe2\x80\xa8\xe2\x80",
		string(every),
	} {
		checkWrap(t, []byte(body))
	}
}

// FuzzWrapBody compares wrapBody with encoding/json on any bytes.
func FuzzWrapBody(f *testing.F) {
	f.Add([]byte("<p>\"a\" \\ b\n\u2028\xff</p>"))
	f.Add([]byte("\x00\x1f\x7f\xc0\x80"))
	f.Fuzz(func(t *testing.T, body []byte) {
		checkWrap(t, body)
	})
}
