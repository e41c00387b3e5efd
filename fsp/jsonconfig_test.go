package fsp

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
		{"bad fetch_timeout", `{"fetch_timeout":"soon"}`, `fetch_timeout: time: invalid duration "soon"`},
		{"bad s3 timeout", `{"s3":{"endpoint":"127.0.0.1:1","bucket":"b-1","timeout":"1x"}}`, `s3.timeout: time: unknown unit "x" in duration "1x"`},
		{"wrong type", `{"max_size":"20MiB"}`, `max_size: json: cannot unmarshal string`},
		{"unknown field", `{"folder":"/srv"}`, `json: unknown field "folder"`},
		{"good config", `{"local":{"folder":"/srv/fsp"},"public_url":"https://e.com/f","fetch_timeout":"5s"}`, ""},
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
