package design

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// BenchmarkParse times the JSON parser alone (no typed view) per corpus
// design, to tell parsing cost from building the model.
func BenchmarkParse(b *testing.B) {
	designs := designtest.OwnAndCorpus(b, false)
	for _, name := range designtest.Names(designs) {
		data := designs[name]
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := parseDocument(string(data), data, DefaultLimits()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzParseLength: the whole-number shortcut answers as ParseFloat does
// on the same number.
func FuzzParseLength(f *testing.F) {
	for _, s := range []string{"10px", " 0 ", "12.5PX", "-3px", "007em", "1e3px", "100%", "", "px", "999999999px", "+5px"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, unit, ok := ParseLength(s)
		t2 := strings.TrimSpace(s)
		end := lengthNumberEnd(t2)
		if end == 0 {
			if ok {
				t.Fatalf("%q: ok without a number", s)
			}
			return
		}
		want, err := strconv.ParseFloat(t2[:end], 64)
		if (err == nil) != ok || (ok && (n != want || unit != strings.ToLower(strings.TrimSpace(t2[end:])))) {
			t.Fatalf("%q: got %v %q %v, want %v %q %v", s, n, unit, ok, want, strings.ToLower(strings.TrimSpace(t2[end:])), err == nil)
		}
	})
}

// TestRawWidgets: legacy editor metadata is kept as checked JSON text,
// everything else about the document is as before.
func TestRawWidgets(t *testing.T) {
	doc := func(widgets string) string {
		return `{"page":{"rows":[{"columns":[],"widgets":` + widgets + `,"type":"one-column-empty"}]}}`
	}
	widgets := func(d *Design) *Value { return d.Root.Get("page").Get("rows").Index(0).Get("widgets") }

	in := doc(`[ {"type":"mailup-bee-common-widgets-color","items":[1, -2.5e3, true, null, "a\"b\u00e9\ud83d\ude00"], "x":{}} ]`)
	d, err := Decode([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	if w := widgets(d); w.Kind != Raw || !strings.HasPrefix(w.Str, "[ {") || !strings.HasSuffix(w.Str, "} ]") {
		t.Fatalf("widgets = %v %q, want Raw with the text as written", w.Kind, w.Str)
	}
	if got := d.Root.Get("page").Get("rows").Index(0).Get("type").Text(); got != "one-column-empty" {
		t.Errorf("member after widgets = %q", got)
	}
	out, err := d.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if json.Unmarshal([]byte(in), &a) != nil || json.Unmarshal(out, &b) != nil || !reflect.DeepEqual(a, b) {
		t.Fatalf("round trip changed the document:\n in  %s\n out %s", in, out)
	}
	if strings.Contains(string(out), "[ {") {
		t.Errorf("Raw not compacted on Encode: %s", out)
	}

	// Anything decoding rejects is rejected inside widgets too.
	for _, bad := range []string{`[01]`, `[tru]`, "[\"a\x01\"]", `["\x"]`, `["\u12"]`, `[1,]`, `[{"a" 1}]`, `[{"a":1,}]`, `[}`, `["abc`, `[1 2]`, `[`} {
		if _, err := Decode([]byte(doc(bad))); !errors.Is(err, ErrNotJSON) {
			t.Errorf("widgets %q: err = %v, want ErrNotJSON", bad, err)
		}
	}
	// Limits count inside widgets as elsewhere.
	deep := strings.Repeat("[", 70) + strings.Repeat("]", 70)
	for _, tt := range []struct {
		widgets string
		lim     Limits
	}{
		{deep, Limits{}},
		{`[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20]`, Limits{MaxValues: 20}},
		{`[1,2,3,4,5,6]`, Limits{MaxItems: 5}},
		{`[{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}]`, Limits{MaxItems: 5}},
		{`["` + strings.Repeat("x", 60) + `"]`, Limits{MaxString: 50}},
	} {
		if _, err := DecodeWithLimits([]byte(doc(tt.widgets)), tt.lim); !errors.Is(err, ErrTooLarge) {
			t.Errorf("widgets %.40q with %+v: err = %v, want ErrTooLarge", tt.widgets, tt.lim, err)
		}
	}
	// MaxString counts a string once unescaped, inside widgets as
	// elsewhere: 30 × \u00e9 is 180 bytes written, 60 decoded.
	accents := `["` + strings.Repeat(`\u00e9`, 30) + `\ud83d\ude00\n"]`
	for _, in := range []string{doc(accents), `{"page":{"rows":[],"x":` + accents + `}}`} {
		if _, err := DecodeWithLimits([]byte(in), Limits{MaxString: 100}); err != nil {
			t.Errorf("%.60s…: %v, want it within MaxString 100", in, err)
		}
		if _, err := DecodeWithLimits([]byte(in), Limits{MaxString: 64}); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%.60s…: err = %v, want ErrTooLarge for MaxString 64", in, err)
		}
	}
	// Invalid UTF-8 is replaced, as everywhere: that needs decoding.
	d, err = Decode([]byte(doc("[\"a\xffb\"]")))
	if err != nil {
		t.Fatal(err)
	}
	if w := widgets(d); w.Kind != Array || w.Index(0).Text() != "a\uFFFDb" {
		t.Errorf("invalid UTF-8 in widgets: %v %q", w.Kind, w.Index(0).Text())
	}
	// Only the name as written, and only arrays.
	for _, in := range []string{
		`{"page":{"rows":[{"columns":[],"widget\u0073":[1]}]}}`,
		`{"page":{"rows":[{"columns":[],"widgets":{"a":[1]}}]}}`,
	} {
		d, err := Decode([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if w := widgets(d); w.Kind == Raw || !w.Present() {
			t.Errorf("%s: widgets kept raw (%v)", in, w.Kind)
		}
	}
}

// TestRawTranslations: a block's translations are kept as checked JSON
// text, which Expand decodes to what decoding them would have built.
func TestRawTranslations(t *testing.T) {
	doc := func(tr string) string {
		return `{"page":{"rows":[{"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-paragraph",` +
			`"descriptor":{"paragraph":{"html":"<p>Hi</p>","translations":` + tr + `}}}]}]}]}}`
	}
	paragraph := func(d *Design) *Value { return d.Page.Rows[0].Columns[0].Modules[0].Descriptor.Get("paragraph") }

	tr := `{ "it-IT": {"html": "<p>Ciao \"tu\"</p>", "n": [1, -2.5e3, true, null]}, "ar-SA": {"html": "\u0645\ud83d\ude00"} }`
	d, err := Decode([]byte(doc(tr)))
	if err != nil {
		t.Fatal(err)
	}
	raw := paragraph(d).Get("translations")
	if raw.Kind != Raw || raw.Str != tr {
		t.Fatalf("translations = %v %q, want Raw with the text as written", raw.Kind, raw.Str)
	}
	if got := paragraph(d).Get("html").Text(); got != "<p>Hi</p>" {
		t.Errorf("the block's own copy = %q", got)
	}
	var want any
	if err := json.Unmarshal([]byte(tr), &want); err != nil {
		t.Fatal(err)
	}
	x := raw.Expand()
	if got := plainValue(x, false); !reflect.DeepEqual(got, want) {
		t.Errorf("Expand = %#v, want %#v", got, want)
	}
	if got := x.At("it-IT", "html").Text(); got != `<p>Ciao "tu"</p>` {
		t.Errorf("it-IT html = %q", got)
	}
	if e := paragraph(d).Get("html"); e.Expand() != e {
		t.Error("Expand of a decoded value is not the value itself")
	}
	// An expanded tree is cut to its own size, not from 64 KiB blocks: a
	// Check holds one for every block's translations.
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		raw.Expand()
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 100; per > 8<<10 {
		t.Errorf("Expand of %d bytes allocates %d bytes", len(raw.Str), per)
	}
	out, err := d.Encode()
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if json.Unmarshal([]byte(doc(tr)), &a) != nil || json.Unmarshal(out, &b) != nil || !reflect.DeepEqual(a, b) {
		t.Fatalf("round trip changed the document:\n in  %s\n out %s", doc(tr), out)
	}

	// A lone surrogate's escape is valid UTF-8 as written: kept, and
	// decoded as encoding/json decodes it.
	d, err = Decode([]byte(doc(`{"x":"a\ud800b"}`)))
	if err != nil {
		t.Fatal(err)
	}
	if raw := paragraph(d).Get("translations"); raw.Kind != Raw || raw.Expand().Get("x").Text() != "a\uFFFDb" {
		t.Errorf("lone surrogate: %v, expanded %q", raw.Kind, raw.Expand().Get("x").Text())
	}
	// Limits count inside translations as elsewhere.
	if _, err := DecodeWithLimits([]byte(doc(`{"a":[1,2,3,4,5,6]}`)), Limits{MaxItems: 5}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("MaxItems inside translations: err = %v, want ErrTooLarge", err)
	}
	if _, err := Decode([]byte(doc(`{"a":[1,]}`))); !errors.Is(err, ErrNotJSON) {
		t.Errorf("bad JSON inside translations: err = %v, want ErrNotJSON", err)
	}
	// Invalid UTF-8 needs decoding; only objects, only the name as written.
	for _, in := range []string{
		doc("{\"x\":\"a\xffb\"}"),
		doc(`[{"x":1}]`),
		strings.Replace(doc(`{"x":1}`), `"translations"`, `"translation\u0073"`, 1),
	} {
		d, err := Decode([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if tr := paragraph(d).Get("translations"); tr.Kind == Raw || !tr.Present() {
			t.Errorf("%s: translations kept raw (%v)", in, tr.Kind)
		}
	}
}

// TestEscapedStrings: escaped strings decode as encoding/json decodes
// them, beside invalid UTF-8 and lone surrogates, and errors say where.
func TestEscapedStrings(t *testing.T) {
	for _, tc := range []struct {
		doc     string
		wantErr string // "" when the document is valid
	}{
		{doc: `{"a":"x\"y","b":["\\n\t\/","plain","\u00e9\ud83d\ude00"],"c":{"k\"ey":"\"\""}}`},
		{doc: "{\"a\":\"q\\\"\xffz\",\"b\":\"r\\\"s\"}"}, // invalid UTF-8 after an escape: U+FFFD
		{doc: `{"a":"\ud800x","b":"\"\u0041"}`},          // lone surrogate
		{doc: `{"a":"x\"y","b":"bad\q"}`, wantErr: "jsontext: invalid escape sequence `\\q` in string within \"/b\" after offset 20"},
		{doc: `{"a":"x\"y","b":"bad\u12"}`, wantErr: "jsontext: invalid escape sequence `\\u12\"}` in string within \"/b\" after offset 20"},
		{doc: "{\"a\":\"x\\\"y\",\"b\":\"ctl\\\"\x01\"}", wantErr: "jsontext: invalid character '\\x01' in string (expecting non-control character) within \"/b\" after offset 22"},
		{doc: `{"a":"x\"y","b":"open\"`, wantErr: "jsontext: unexpected EOF within \"/b\" after offset 23"},
	} {
		v, _, err := parseDocument(tc.doc, []byte(tc.doc), DefaultLimits())
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%q: error %v, want %q", tc.doc, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.doc, err)
			continue
		}
		var want any
		if err := json.Unmarshal([]byte(tc.doc), &want); err != nil {
			t.Fatal(err)
		}
		if got := plainValue(&v, false); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: got %#v, want %#v", tc.doc, got, want)
		}
	}
}

// plainValue is v as encoding/json would decode it into an any, with
// numbers as json.Number when literal (as a Decoder with UseNumber).
func plainValue(v *Value, literal bool) any {
	switch v.Kind {
	case Bool:
		return v.Bool
	case Number:
		if literal {
			return json.Number(v.Str)
		}
		f, _ := strconv.ParseFloat(v.Str, 64)
		return f
	case String:
		return v.Str
	case Array:
		out := []any{}
		for i := range v.Members {
			out = append(out, plainValue(&v.Members[i].Value, literal))
		}
		return out
	case Object:
		out := map[string]any{}
		for i := range v.Members {
			out[v.Members[i].Key] = plainValue(&v.Members[i].Value, literal)
		}
		return out
	case Raw:
		// What Expand decodes the text to, held to encoding/json's view
		// of the whole document like every other value.
		return plainValue(v.Expand(), literal)
	}
	return nil
}

// FuzzParse checks the parser against encoding/json on any input: the
// same verdict, and for JSON the same value (strings cut from the wrong
// place of the document show here).
func FuzzParse(f *testing.F) {
	for _, doc := range []string{
		`{"a":"x\"y","b":["\\n\t\/","plain","\u00e9\ud83d\ude00"],"c":{"k\"ey":"\"\""}}`,
		`{"a" "b\"c"}`,
		`{"a":"b\"c"} x`,
		`["\ud800x","\"\u0041",1e5,-0.5,true,false,null]`,
		`{"widgets":[{"a":"\"x\""},"\u00e9"],"b":"\n"}`,
		`{"translations":{"a":"\"x\"","b":["\u00e9"]},"c":"\n"}`,
		"{\"widgets\":[\"\xff\\\"\"],\"b\":\"\\\"\"}",
		`{"a":"x\"y","b":"bad\q"}`,
	} {
		f.Add([]byte(doc))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, _, err := parseDocument(string(data), data, DefaultLimits())
		var le *limitError
		if errors.As(err, &le) {
			return
		}
		if valid := json.Valid(data); (err == nil) != valid {
			t.Fatalf("parse error %v, valid JSON %v", err, valid)
		}
		if err != nil {
			return
		}
		// Numbers as written: encoding/json cannot hold 1e400 in a float64.
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		if got := plainValue(&v, true); !reflect.DeepEqual(got, want) {
			t.Fatalf("got %#v, want %#v", got, want)
		}
	})
}

// TestLargeContainers: containers with more children than fit on the
// stack, one after the other and nested, read the same from a parser's
// spare buffers as the first time, however the buffers were used before.
func TestLargeContainers(t *testing.T) {
	objects := make([]string, 25)
	for i := range objects {
		objects[i] = `{"k` + strconv.Itoa(i) + `":[1,2,3],"s":"v"}`
	}
	nulls := strings.Repeat(`null,`, 30) + `null`
	empties := strings.Repeat(`[],{},"",`, 12) + `0`
	members := make([]string, 14)
	for i := range members {
		members[i] = `"m` + strconv.Itoa(i) + `":[` + nulls + `]`
	}
	docs := []string{
		`[[` + strings.Join(objects, ",") + `],[` + nulls + `],[` + empties + `]]`,
		`{` + strings.Join(members, ",") + `,"last":[` + empties + `]}`,
		`[[` + empties + `],[` + strings.Join(objects, ",") + `]]`,
	}
	for range 2 { // the second time from pooled parsers
		for _, doc := range docs {
			v, blocks, err := parseDocument(doc, []byte(doc), DefaultLimits())
			if err != nil {
				t.Fatal(err)
			}
			got, err := v.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != doc {
				t.Errorf("read back as\n%s\nwant\n%s", got, doc)
			}
			releaseBlocks(blocks)
		}
	}
}
