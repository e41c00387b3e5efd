package contentservice

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// FuzzExportRequest sends arbitrary headers and bodies through the export
// path with the real decoder and renderer: the handler must never panic
// or return an error, every failure must be the contract's JSON error
// object, and no response may carry a configured token.
func FuzzExportRequest(f *testing.F) {
	small := designtest.OwnFile(f, "fixture-module-text")
	f.Add(uint8(0), "Bearer "+testAPIToken, "", "application/json", small)
	f.Add(uint8(1), "Bearer "+testAPIToken, "application/json;q=0.9, text/*", "", small)
	f.Add(uint8(0), "bearer  "+testToken2+" ", "*/*", "text/plain", []byte(`{"page":{}}`))
	f.Add(uint8(1), "Basic x", "", "", []byte(`[`))
	f.Add(uint8(2), "", "", "", []byte(``))
	f.Add(uint8(0), "Bearer eyJhbGciOiJub25lIn0.e30.", "", "application/json", []byte(`{"page":{"rows":[{"columns":[]}]}}`))
	h, _ := newTestService(f, func(h *Handler) { h.MaxBody = 64 << 10 })
	paths := []string{PathHTML, PathPlainText, PathLogin, PathRefresh, "/other"}
	f.Fuzz(func(t *testing.T, pathIndex uint8, auth, accept, ctype string, body []byte) {
		r := httptest.NewRequest(http.MethodPost, paths[int(pathIndex)%len(paths)], bytes.NewReader(body))
		// Values the HTTP server would never deliver are skipped.
		for name, value := range map[string]string{"Authorization": auth, "Accept": accept, "Content-Type": ctype} {
			if value == "" {
				continue
			}
			if strings.ContainsAny(value, "\r\n\x00") {
				return
			}
			r.Header.Set(name, value)
		}
		w := httptest.NewRecorder()
		if err := h.ServeHTTP(w, r, nil); err != nil {
			t.Fatalf("ServeHTTP: %v", err)
		}
		if w.Header().Get("X-Request-Id") == "" {
			t.Fatal("no request id")
		}
		if w.Code != http.StatusOK {
			var e map[string]json.RawMessage
			if w.Header().Get("Content-Type") != "application/json" || json.Unmarshal(w.Body.Bytes(), &e) != nil || len(e) != 3 || e["code"] == nil {
				t.Fatalf("status %d with body %q", w.Code, w.Body)
			}
		}
		for _, tok := range []string{testAPIToken, testToken2, testSecret, testKey} {
			if strings.Contains(w.Body.String(), tok) && !strings.Contains(string(body), tok) {
				t.Fatal("the response carries a configured secret")
			}
		}
	})
}
