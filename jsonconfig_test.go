package designbridge

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

// TestJSONErrorsNameField: a JSON config value the handler cannot read is
// a load error naming its field, durations too (whose own error names
// none), and the fields are read as Caddy reads them otherwise.
func TestJSONErrorsNameField(t *testing.T) {
	for _, c := range []struct {
		name, json, want string // want "" means it loads
	}{
		{"bad timeout", `{"timeout":"soon"}`, `timeout: time: invalid duration "soon"`},
		{"bad cache ttl", `{"cache":{"ttl":"1x"}}`, `cache.ttl: time: unknown unit "x" in duration "1x"`},
		{"bad auth_rate_limit window", `{"auth_rate_limit":{"requests":5,"window":"often"}}`, `auth_rate_limit.window: time: invalid duration "often"`},
		{"wrong type", `{"max_body":"10MiB"}`, `max_body: json: cannot unmarshal string`},
		{"unknown field", `{"bogus":1}`, `json: unknown field "bogus"`},
		{"unknown nested field", `{"cache":{"size":1}}`, `json: unknown field "size"`},
		{"field names in any case", `{"Timeout":"2s","UID":"demo"}`, ""},
		{"good config", `{"uid":"demo","timeout":"2s","cache":{"max_size":1048576,"ttl":"1m"}}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b Bridge
			err := caddy.StrictUnmarshalJSON([]byte(c.json), &b)
			if c.want == "" {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}
