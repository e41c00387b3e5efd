// Package configtest checks how a module's JSON config decodes, as Caddy
// decodes it when it loads a config, and fuzzes a module's Caddyfile and
// JSON config through a load.
package configtest

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

// leaks are what no config error may hold: Go's own wording, and the
// secrets and long numbers the tests write into bad configs.
var leaks = []string{"json:", "Go ", "time.", "s3cr3t", "12345678"}

// Decode decodes doc into v with Caddy's strict decoder. With want ""
// the config must load; otherwise the error must contain want and none
// of leaks (unless want holds it too).
func Decode(t *testing.T, doc string, v any, want string) {
	t.Helper()
	err := caddy.StrictUnmarshalJSON([]byte(doc), v)
	if want == "" {
		if err != nil {
			t.Fatalf("error %v", err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("error %v, want it to contain %q", err, want)
	}
	for _, bad := range leaks {
		if strings.Contains(err.Error(), bad) && !strings.Contains(want, bad) {
			t.Errorf("error %v names %q", err, bad)
		}
	}
}
