package confvalue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

// selfReader reads itself, as contentservice.RateLimit does, and names
// the inner field its error is about with a FieldError.
type selfReader struct{ N int }

func (s *selfReader) UnmarshalJSON(b []byte) error {
	var raw struct {
		N int `json:"n"`
	}
	if err := DecodeStrict(b, &raw); err != nil {
		return err
	}
	if raw.N < 0 {
		return &FieldError{Path: "n", Err: fmt.Errorf("%d is negative", raw.N)}
	}
	s.N = raw.N
	return nil
}

// TestDecodeStrict: a value the config cannot hold is an error naming its
// full path (dotted, with list indexes) and what to write there in plain
// words, never a Go type; the first bad value in the document is the one
// named. Each row's before is the message this replaced.
func TestDecodeStrict(t *testing.T) {
	type inner struct {
		TTL  caddy.Duration `json:"ttl,omitempty"`
		Size int64          `json:"max_size,omitempty"`
	}
	type item struct {
		Name string   `json:"name,omitempty"`
		Tags []string `json:"tags,omitempty"`
	}
	type embedded struct {
		Shared string `json:"shared,omitempty"`
	}
	type config struct {
		embedded
		Timeout caddy.Duration    `json:"timeout,omitempty"`
		Cache   *inner            `json:"cache,omitempty"`
		Name    string            `json:"name,omitempty"`
		On      bool              `json:"on,omitempty"`
		Count   int               `json:"count,omitempty"`
		Small   int8              `json:"small,omitempty"`
		Rate    uint              `json:"rate,omitempty"`
		Ratio   float64           `json:"ratio,omitempty"`
		Items   []item            `json:"items,omitempty"`
		Labels  map[string]string `json:"labels,omitempty"`
		Limit   *selfReader       `json:"limit,omitempty"`
		Raw     json.RawMessage   `json:"raw,omitempty"`
		Addr    netip.Addr        `json:"addr,omitzero"`
		Skipped string            `json:"-"`
	}
	for _, c := range []struct {
		json, want, before string // want "" means it decodes
	}{
		{`{"timeout":"2s","cache":{"ttl":"1m","max_size":5},"name":"x","shared":"s","raw":[1]}`, "", ""},
		{`{"TIMEOUT":"2s","cache":null,"items":null,"count":null,"on":null}`, "", ""},
		{`{"items":[{"name":"a","tags":["x"]}],"labels":{"a":"b"},"limit":{"n":1},"rate":0,"ratio":1.5,"small":-128}`, "", ""},

		// Durations.
		{`{"timeout":"soon"}`, `timeout: "soon" is not a duration: write a number with a unit, such as 500ms, 10s, 5m, 2h or 1d`, `timeout: time: invalid duration "soon"`},
		{`{"Timeout":"soon"}`, `Timeout: "soon" is not a duration`, `Timeout: time: invalid duration "soon"`},
		{`{"name":"x","cache":{"max_size":1,"ttl":"1x"}}`, `cache.ttl: "1x" is not a duration`, `cache.ttl: time: unknown unit "x" in duration "1x"`},
		{`{"cache":{"ttl":"1.x5d"}}`, `cache.ttl: "1.x5d" is not a duration`, `cache.ttl: time: unknown unit "x" in duration "1.x120h"`},
		{`{"timeout":true}`, `timeout: expected a duration such as "10s", got true`, `timeout: json: cannot unmarshal bool into Go struct field config.timeout of type time.Duration`},
		{`{"timeout":1.5}`, `timeout: expected a duration such as "10s", got 1.5`, `timeout: json: cannot unmarshal number 1.5 into Go struct field config.timeout of type time.Duration`},
		{`{"timeout":{}}`, `timeout: expected a duration such as "10s", got an object`, `timeout: json: cannot unmarshal object into Go struct field config.timeout of type time.Duration`},
		{`{"timeout":"` + strings.Repeat("9", 2000) + `"}`, `timeout: "99999999999999999999999999999999…" is not a duration`, `timeout: parsing duration: input string too long`},

		// Wrong JSON types, at every depth.
		{`{"cache":{"max_size":"big"}}`, `cache.max_size: expected a whole number, got a string`, `cache.max_size: json: cannot unmarshal string into Go struct field inner.cache.max_size of type int64`},
		{`{"cache":"on"}`, `cache: expected an object, got a string`, `cache: json: cannot unmarshal string into Go struct field config.cache of type confvalue.inner`},
		{`{"cache":[]}`, `cache: expected an object, got a list`, `cache: json: cannot unmarshal array into Go struct field config.cache of type confvalue.inner`},
		{`{"name":5}`, `name: expected a string, got a number`, `name: json: cannot unmarshal number into Go struct field config.name of type string`},
		{`{"on":"yes"}`, `on: expected true or false, got a string`, `on: json: cannot unmarshal string into Go struct field config.on of type bool`},
		{`{"count":1.5}`, `count: expected a whole number, got 1.5`, `count: json: cannot unmarshal number 1.5 into Go struct field config.count of type int`},
		{`{"count":1e30}`, `count: expected a whole number up to 9223372036854775807, got 1e30`, `count: json: cannot unmarshal number 1e30 into Go struct field config.count of type int`},
		{`{"count":-1e30}`, `count: expected a whole number from -9223372036854775808, got -1e30`, `count: json: cannot unmarshal number -1e30 into Go struct field config.count of type int`},
		{`{"small":200}`, `small: expected a whole number up to 127, got 200`, `small: json: cannot unmarshal number 200 into Go struct field config.small of type int8`},
		{`{"rate":-1}`, `rate: expected a whole number, 0 or more, got -1`, `rate: json: cannot unmarshal number -1 into Go struct field config.rate of type uint`},
		{`{"ratio":"half"}`, `ratio: expected a number, got a string`, `ratio: json: cannot unmarshal string into Go struct field config.ratio of type float64`},
		{`{"items":{"name":"a"}}`, `items: expected a list of objects, got an object`, `items: json: cannot unmarshal object into Go struct field config.items of type []confvalue.item`},
		{`{"items":[{"name":"a"},{"tags":"x"}]}`, `items[1].tags: expected a list of strings, got a string`, `items.tags: json: cannot unmarshal string into Go struct field item.items.tags of type []string`},
		{`{"items":[{"tags":["a",7]}]}`, `items[0].tags[1]: expected a string, got a number`, `items.tags: json: cannot unmarshal number into Go struct field item.items.tags of type string`},
		{`{"items":[5]}`, `items[0]: expected an object, got a number`, `items: json: cannot unmarshal number into Go struct field config.items of type confvalue.item`},
		{`{"labels":{"a":1}}`, `labels.a: expected a string, got a number`, `labels: json: cannot unmarshal number into Go struct field config.labels of type string`},
		{`{"name":31415926535,"count":1}`, `name: expected a string, got a number`, `name: json: cannot unmarshal number into Go struct field config.name of type string`},
		{`{"on":27182818284}`, `on: expected true or false, got a number`, `on: json: cannot unmarshal number into Go struct field config.on of type bool`},
		{`{"name":"not-shown","cache":{"max_size":"s3cr3t-value"}}`, `cache.max_size: expected a whole number, got a string`, `cache.max_size: json: cannot unmarshal string into Go struct field inner.cache.max_size of type int64`},

		// Unknown fields, at every depth.
		{`{"name":"x","bogus":1}`, `bogus: unknown field (known here: addr, cache, count, items, labels, limit, name, on, rate, ratio, raw, shared, small, timeout)`, `json: unknown field "bogus"`},
		{`{"cache":{"size":1}}`, `cache.size: unknown field (known here: max_size, ttl)`, `json: unknown field "size"`},
		{`{"items":[{"name":"a"},{"nmae":"b"}]}`, `items[1].nmae: unknown field (known here: name, tags)`, `json: unknown field "nmae"`},
		{`{"-":"x"}`, `-: unknown field`, `json: unknown field "-"`},
		{`{"Skipped":"x"}`, `Skipped: unknown field`, `json: unknown field "Skipped"`},

		// A value read from a string's text (encoding.TextUnmarshaler).
		{`{"addr":"192.0.2.1","count":"x"}`, `count: expected a whole number, got a string`, `count: json: cannot unmarshal string into Go struct field config.count of type int`},
		{`{"addr":5}`, `addr: expected a string, got a number`, `addr: json: cannot unmarshal number into Go struct field config.addr of type netip.Addr`},
		{`[]`, `expected an object, got a list`, `json: cannot unmarshal array into Go value of type confvalue.config`},

		// A value that reads itself: its inner path is joined to the outer.
		{`{"limit":{"n":-1}}`, `limit.n: -1 is negative`, `limit.n: n: -1 is negative`},
		{`{"limit":{"m":1}}`, `limit.m: unknown field (known here: n)`, `json: unknown field "m"`},
		{`{"limit":{"n":"x"}}`, `limit.n: expected a whole number, got a string`, `n: n: json: cannot unmarshal string into Go struct field .n of type int`},

		// The first bad value in the document is the one named.
		{`{"cache":{"max_size":"big","ttl":"1x"}}`, `cache.max_size: expected a whole number, got a string`, `cache.ttl: time: unknown unit "x" in duration "1x"`},
		{`{"cache":{"max_size":"big"},"timeout":"soon"}`, `cache.max_size: expected a whole number`, `timeout: time: invalid duration "soon"`},
		{`{"zzz":1,"cache":{"max_size":"big"}}`, `zzz: unknown field`, `json: unknown field "zzz"`},
		{`{"timeout":`, `unexpected EOF`, `unexpected EOF`},
	} {
		var v config
		err := DecodeStrict([]byte(c.json), &v)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.json, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%.80s:\n got  %v\n want %q", c.json, err, c.want)
			continue
		}
		for _, internal := range []string{"json:", "Go ", "int64", "time.", "strconv", "plain", "confvalue", "s3cr3t", "not-shown", "31415926535", "27182818284"} {
			if strings.Contains(err.Error(), internal) {
				t.Errorf("%.80s: %v names %q", c.json, err, internal)
			}
		}
		var fe *FieldError
		if c.want != "unexpected EOF" && !errors.As(err, &fe) {
			t.Errorf("%.80s: %T is not a *FieldError", c.json, err)
		}
	}
}

// fuzzConfig has a field of each kind a module's config has.
type fuzzConfig struct {
	Timeout caddy.Duration    `json:"timeout,omitempty"`
	Size    int64             `json:"size,omitempty"`
	Small   int8              `json:"small,omitempty"`
	Rate    uint16            `json:"rate,omitempty"`
	Ratio   float64           `json:"ratio,omitempty"`
	On      bool              `json:"on,omitempty"`
	Name    string            `json:"name,omitempty"`
	Names   []string          `json:"names,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	Limit   *selfReader       `json:"limit,omitempty"`
	Raw     json.RawMessage   `json:"raw,omitempty"`
	Any     any               `json:"any,omitempty"`
	Items   []struct {
		TTL  caddy.Duration `json:"ttl,omitempty"`
		Deep *struct {
			N int `json:"n,omitempty"`
		} `json:"deep,omitempty"`
	} `json:"items,omitempty"`
}

// FuzzDecodeStrict: DecodeStrict accepts exactly what Caddy's strict
// decode accepts, never panics, and a refused valid JSON object is a
// FieldError in the config's words.
func FuzzDecodeStrict(f *testing.F) {
	for _, s := range []string{
		`{"timeout":"2s","size":5,"items":[{"ttl":"1m","deep":{"n":1}}],"limit":{"n":2}}`,
		`{"timeout":true,"small":300,"rate":-1,"names":[1],"labels":{"a":[]}}`,
		`{"items":[{"deep":{"m":1}}],"limit":{"n":-1},"size":1e30,"ratio":"x"}`,
		`{"on":null,"Items":null,"TIMEOUT":"1x","raw":{"x":[1,2]},"any":5}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var v, w fuzzConfig
		err := DecodeStrict(data, &v)
		// Caddy's own, not this package's decodeStrict, which DecodeStrict
		// is made of.
		plainErr := caddy.StrictUnmarshalJSON(data, &w)
		if (err == nil) != (plainErr == nil) {
			t.Fatalf("DecodeStrict %v, the strict decode %v", err, plainErr)
		}
		if err == nil && !reflect.DeepEqual(v, w) {
			t.Fatalf("DecodeStrict gives %+v, the strict decode %+v", v, w)
		}
		if err == nil || !json.Valid(data) || len(bytes.TrimSpace(data)) == 0 || bytes.TrimSpace(data)[0] != '{' {
			return
		}
		var fe *FieldError
		if !errors.As(err, &fe) {
			t.Fatalf("%T %v is not a FieldError (strict decode: %v)", err, err, plainErr)
		}
		// The path is the input's own keys; the message is ours.
		for _, internal := range []string{"json:", "Go ", "int64", "time.", "strconv", "fuzzConfig"} {
			if strings.Contains(fe.Err.Error(), internal) {
				t.Fatalf("%v names %q", err, internal)
			}
		}
	})
}

// TestWritten: what a value that reads itself may repeat of what was
// written, as DecodeStrict does: never a string's text, a number only
// where a number belongs.
func TestWritten(t *testing.T) {
	for _, c := range []struct {
		raw    string
		number bool
		want   string
	}{
		{`"s3cr3t"`, false, "a string"},
		{`"12345678"`, true, "a string"},
		{` {"token":"s3cr3t"}`, false, "an object"},
		{`["s3cr3t"]`, true, "a list"},
		{`12345678`, false, "a number"},
		{`1.5`, true, "1.5"},
		{`-1`, true, "-1"},
		{`false`, false, "false"},
		{`null`, true, "null"},
		{` `, false, "nothing"},
	} {
		if got := Written([]byte(c.raw), c.number); got != c.want {
			t.Errorf("Written(%s, %v) = %q, want %q", c.raw, c.number, got, c.want)
		}
	}
}
