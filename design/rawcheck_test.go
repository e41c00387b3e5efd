package design

import (
	"strings"
	"testing"

	"github.com/designbridge/caddy-designbridge/internal/designtest"
)

// sameAsCheck fails t unless validRaw, on the value at the start of s,
// agrees with check wherever it answers; it returns whether it answered.
func sameAsCheck(t *testing.T, s string, lim Limits, depth int) bool {
	t.Helper()
	fast := &parser{src: s, lim: lim}
	end, values, ok := fast.validRaw(0, depth)
	slow := &parser{src: s, lim: lim, depth: depth}
	err := slow.check()
	if ok && (err != nil || slow.pos != end || slow.values != values) {
		t.Fatalf("%q: validRaw ok, end %d, %d values; check: %v, end %d, %d values", s, end, values, err, slow.pos, slow.values)
	}
	return ok
}

// TestValidRaw: the one-loop check takes the JSON Raw values are made of,
// and leaves to check everything it must refuse or report.
func TestValidRaw(t *testing.T) {
	lim := DefaultLimits()
	for _, s := range []string{
		`[]`, `[ ]`, "[\n\t\t]", `[[]]`, `[{}]`, `[[],{},[{}],{"a":[]}]`,
		`[1, -2.5e3, 0, -0.5, 1E+9, 2e-3, true, false, null]`,
		`[{"type":"x","items":[{"a":"b"},{"c":{"d":[1,2,3]}}]}] trailing`,
		"[\n\t{\n\t\t\"label\" : \"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\",\n\t\t\"u\": \"\\u00e9\\ud83d\\ude00\\ud800x\"\n\t}\n]",
		`["é€😀", {"ключ": "значение"}]`,
	} {
		if !sameAsCheck(t, s, lim, 2) {
			t.Errorf("%q: validRaw refused valid JSON", s)
		}
	}
	for _, s := range []string{
		`[01]`, `[tru]`, "[\"a\x01\"]", `["\x"]`, `["\u12"]`, `[1,]`, `[{"a" 1}]`, `[{"a":1,}]`,
		`[}`, `["abc`, `[1 2]`, `[`, `[1.]`, `[-]`, `[1e]`, `[{1:2}]`, `[{"a":1]`, `[[}]`, `[nul]`,
		"[\"\xff\"]", "[{\"\xc3\":1}]", `[` + strings.Repeat(`[`, rawMaxNest) + strings.Repeat(`]`, rawMaxNest) + `]`,
	} {
		if sameAsCheck(t, s, lim, 2) {
			t.Errorf("%q: validRaw answered for what it must leave to check", s)
		}
	}
	// Limits, reached or nearly so, are left to check.
	for _, c := range []struct {
		s   string
		lim Limits
	}{
		{`[1,2,3]`, Limits{MaxItems: 2}},
		{`[{"a":1,"b":2,"c":3}]`, Limits{MaxItems: 2}},
		{`[[[1]]]`, Limits{MaxDepth: 4}},
		{`["abcdef"]`, Limits{MaxString: 5}},
		{`["ab\ncd"]`, Limits{MaxString: 5}}, // 5 bytes unescaped, 6 as written
		{`[1,2,3]`, Limits{MaxValues: 3}},
	} {
		if sameAsCheck(t, c.s, c.lim.withDefaults(), 2) {
			t.Errorf("%q with %+v: validRaw answered at a limit", c.s, c.lim)
		}
	}
}

// TestValidRawCorpus: every widgets array of the corpus takes the loop.
func TestValidRawCorpus(t *testing.T) {
	seen := 0
	docs := testDocuments(t)
	for _, f := range designtest.Names(docs) {
		s := string(docs[f])
		for i := 0; ; {
			j := strings.Index(s[i:], rawKey)
			if j < 0 {
				break
			}
			i += j + len(rawKey)
			if k := rawStart(s, i); k >= 0 {
				seen++
				if !sameAsCheck(t, s[k:], DefaultLimits(), 3) {
					t.Errorf("%s: widgets at %d refused", f, k)
				}
			}
		}
	}
	want := 1 // the own designs' form
	if dir, _ := designtest.Lookup(); dir != "" {
		want = 10
	}
	if seen < want {
		t.Errorf("only %d widgets arrays in the test designs", seen)
	}
}

// FuzzValidRaw: wherever validRaw answers, check agrees (end, count),
// under small limits too.
func FuzzValidRaw(f *testing.F) {
	for _, s := range []string{`[]`, `[{"a":[1,{"b":"c\n"}]},null]`, `[1,[2,[3]]]`, `["\ud83d\ude00"]`, `[{"x":-1.5e+3}]`} {
		f.Add(s, uint8(0), uint8(0), uint8(0), uint8(0))
	}
	f.Fuzz(func(t *testing.T, s string, items, depth, str, values uint8) {
		if !strings.HasPrefix(s, "[") {
			s = "[" + s
		}
		lim := Limits{MaxItems: int(items), MaxDepth: int(depth), MaxString: int(str), MaxValues: int(values)}.withDefaults()
		sameAsCheck(t, s, lim, int(depth%4))
	})
}
