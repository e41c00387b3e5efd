package contentservice

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

// TestJSONErrorsNameField: a JSON config value the handler cannot read is
// a load error naming its field, durations too (whose own error names
// none).
func TestJSONErrorsNameField(t *testing.T) {
	for _, c := range []struct {
		name, json, want string // want "" means it loads
	}{
		{"bad fetch timeout", `{"fetch":{"timeout":"x"}}`, `fetch.timeout: time: invalid duration "x"`},
		{"bad browser timeout", `{"browser":{"timeout":"1y"}}`, `browser.timeout: time: unknown unit "y" in duration "1y"`},
		{"bad login_failure_limit window", `{"login_failure_limit":{"requests":5,"window":"soon"}}`, `login_failure_limit: time: invalid duration "soon"`},
		{"rate_limit not an object", `{"rate_limit":"10 per 1m"}`, `rate_limit: "10 per 1m" is not a limit`},
		{"unknown nested field", `{"fetch":{"proxy":1}}`, `json: unknown field "proxy"`},
		{"good config", `{"signing_key":"k","fetch":{"timeout":"3s"},"browser":{"off":true}}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var h Handler
			err := caddy.StrictUnmarshalJSON([]byte(c.json), &h)
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
