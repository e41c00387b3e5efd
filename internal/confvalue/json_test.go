package confvalue

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

func TestDecodeStrict(t *testing.T) {
	type inner struct {
		TTL  caddy.Duration `json:"ttl,omitempty"`
		Size int64          `json:"max_size,omitempty"`
	}
	type config struct {
		Timeout caddy.Duration `json:"timeout,omitempty"`
		Cache   *inner         `json:"cache,omitempty"`
		Name    string         `json:"name,omitempty"`
		Skipped string         `json:"-"`
	}
	for _, c := range []struct {
		json, want string // want "" means it decodes
	}{
		{`{"timeout":"2s","cache":{"ttl":"1m","max_size":5},"name":"x"}`, ""},
		{`{"TIMEOUT":"2s"}`, ""},
		{`{"timeout":"soon"}`, `timeout: time: invalid duration "soon"`},
		{`{"Timeout":"soon"}`, `Timeout: time: invalid duration "soon"`},
		{`{"name":"x","cache":{"max_size":1,"ttl":"1x"}}`, `cache.ttl: time: unknown unit "x"`},
		{`{"cache":{"max_size":"big"}}`, `cache.max_size: json: cannot unmarshal string`},
		{`{"cache":"on"}`, `cache: json: cannot unmarshal string`},
		// Two bad fields: the path is the reported error's, not the first
		// bad field's by name.
		{`{"cache":{"max_size":"big","ttl":"1x"}}`, `cache.ttl: time: unknown unit "x"`},
		{`{"cache":{"max_size":"big"},"timeout":"soon"}`, `timeout: time: invalid duration "soon"`},
		{`{"cache":{"ttl":"1m","max_size":"big"},"name":5}`, `cache.max_size: json: cannot unmarshal string`},
		{`{"name":"x","bogus":1}`, `json: unknown field "bogus"`},
		{`{"-":"x"}`, `json: unknown field "-"`},
		{`{"timeout":`, `unexpected EOF`},
	} {
		var v config
		err := DecodeStrict([]byte(c.json), &v)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.json, err, c.want)
		}
		if c.want != "" && err != nil && strings.HasPrefix(c.want, "json: unknown") && err.Error() != c.want {
			t.Errorf("%s: %v, want exactly %q", c.json, err, c.want)
		}
	}
}
