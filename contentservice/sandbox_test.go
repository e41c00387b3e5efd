package contentservice

import (
	"net/http"
	"testing"
)

// TestExportAnswersSandboxed: every answer of the export paths tells a
// browser that navigates to it to run nothing of it.
func TestExportAnswersSandboxed(t *testing.T) {
	h, _ := newTestService(t, nil)
	auth := map[string]string{"Authorization": "Bearer " + testAPIToken, "Content-Type": "application/json"}
	for _, req := range []request{
		{path: PathHTML, headers: auth, body: minimalDesign},
		{path: PathPlainText, headers: auth, body: minimalDesign},
		{path: PathHTML, headers: map[string]string{"Authorization": "Bearer " + testAPIToken, "Accept": "application/json"}, body: minimalDesign},
		{path: PathHTML, headers: auth, body: `{}`},
		{path: PathHTML, body: `{}`},
		{method: http.MethodGet, path: PathHTML},
		{path: PathHTML, headers: map[string]string{"Authorization": "Bearer " + testAPIToken, "Content-Type": "text/plain"}, body: `{}`},
	} {
		w := do(t, h, req)
		if w.Header().Get("Content-Security-Policy") != "sandbox" || w.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s %s (status %d): CSP %q nosniff %q", req.method, req.path, w.Code,
				w.Header().Get("Content-Security-Policy"), w.Header().Get("X-Content-Type-Options"))
		}
	}
}
