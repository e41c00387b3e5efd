package content

import (
	"net/http"
	"testing"
)

// TestExportSandboxed: export answers, successes and errors, carry the
// sandbox policy through a real server.
func TestExportSandboxed(t *testing.T) {
	tester := start(t)
	for _, h := range []map[string]string{bearer(apiToken), nil} {
		r := post(t, tester, http.MethodPost, mainSite+"/v1/message/html", h, []byte(`{"page":{"rows":[]}}`))
		if r.header.Get("Content-Security-Policy") != "sandbox" || r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("status %d: CSP %q nosniff %q", r.status, r.header.Get("Content-Security-Policy"), r.header.Get("X-Content-Type-Options"))
		}
	}
}
