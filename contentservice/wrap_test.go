package contentservice

import (
	"bytes"
	"encoding/json"
	"testing"
)

// encodingJSONWrap is the JSON wrapper as encoding/json writes it.
func encodingJSONWrap(key string, body []byte) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(map[string]map[string]string{"body": {key: string(body)}})
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// checkWrap: wrapBody writes valid JSON that reads back as the same
// string as encoding/json's wrapper (invalid UTF-8 as U+FFFD in both),
// whatever a recycled buffer held before.
func checkWrap(t *testing.T, body []byte) {
	t.Helper()
	stale := []byte(`{"body":{"html":"an earlier, longer answer"}}`)
	for _, key := range []string{"html", "text"} {
		got := wrapBody(stale, key, body)
		var g, w map[string]map[string]string
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("wrapBody(%q, %q) is not JSON: %v\n%q", key, body, err, got)
		}
		if err := json.Unmarshal(encodingJSONWrap(key, body), &w); err != nil {
			t.Fatal(err)
		}
		if len(g) != 1 || len(g["body"]) != 1 || g["body"][key] != w["body"][key] {
			t.Fatalf("wrapBody(%q, %q) reads back as %q, want %q", key, body, g, w)
		}
	}
}

func TestWrapBodyReadsBack(t *testing.T) {
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

// FuzzWrapBody checks wrapBody against encoding/json on any bytes.
func FuzzWrapBody(f *testing.F) {
	f.Add([]byte("<p>\"a\" \\ b\n\u2028\xff</p>"))
	f.Add([]byte("\x00\x1f\x7f\xc0\x80"))
	f.Fuzz(func(t *testing.T, body []byte) {
		checkWrap(t, body)
	})
}
