//go:build linux

package design

import (
	"testing"

	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// TestDecodeStringReadOnly decodes documents from read-only memory.
// DecodeString hands jsontext the string's own bytes (no copy), which is
// sound only while nothing writes to them: here a write would fault and
// end the test binary. The documents take every path of the parser: our
// designs, escapes, invalid UTF-8 (parsed again), the legacy widgets,
// a byte order mark, errors.
func TestDecodeStringReadOnly(t *testing.T) {
	docs := []string{
		`{"page":{"title":"caf\u00e9 \"x\" \ud83d\ude00","rows":[]}}`,
		"{\"page\":{\"title\":\"bad \xff utf-8\",\"rows\":[]}}",
		`{"page":{"rows":[{"columns":[{"modules":[{"type":"x","widgets":[{"a":[1,2,{"b":"c"}]}]}]}]}]}}`,
		"\xEF\xBB\xBF{\"page\":{\"rows\":[]}}",
		`{"page":{"rows":[`,
		`not json`,
		`{"page":{"rows":[]}} trailing`,
	}
	for _, name := range designtest.Names(designtest.Own(t)) {
		docs = append(docs, string(designtest.OwnFile(t, name)))
	}
	for i, doc := range docs {
		d, err := DecodeString(designtest.ReadOnlyString(t, doc))
		if err == nil {
			if _, err := d.Encode(); err != nil {
				t.Errorf("document %d: Encode: %v", i, err)
			}
			d.Release()
		}
	}
}
