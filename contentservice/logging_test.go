package contentservice

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap/zapcore"
)

// TestRefusalsAreLogged: refused logins, bad tokens and rate-limit
// refusals are logged at DEBUG (the error policy's level for refusals,
// CONTRIBUTING.md; they were WARN) with a reason and the request id, and
// no entry holds a token or secret the client sent or the config holds.
func TestRefusalsAreLogged(t *testing.T) {
	h, logs := newTestService(t, func(h *Handler) {
		h.RateLimit = &RateLimit{Requests: 1, Window: caddy.Duration(time.Minute)}
	})
	json := map[string]string{"Content-Type": "application/json"}
	bearer := func(tok string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + tok, "Content-Type": "application/json"}
	}
	const wrongSecret = "wrong-secret-4b9c1e7d"
	const unknownToken = "unknown-token-5d2a8f3c"
	tests := []struct {
		name        string
		req         request
		status      int
		msg, reason string
	}{
		{"wrong secret", request{path: PathLogin, headers: json, body: `{"client_id":"alpha","client_secret":"` + wrongSecret + `","uid":"u"}`}, 401, "login refused", "unknown client_id or client_secret"},
		{"disabled app", request{path: PathLogin, headers: json, body: `{"client_id":"disabled-app","client_secret":"secret-disabled-0123","uid":"u"}`}, 403, "login refused", "application disabled"},
		{"no Authorization", request{path: PathHTML, headers: json, body: minimalDesign}, 401, "export refused", "no Authorization header"},
		{"unknown token", request{path: PathHTML, headers: bearer(unknownToken), body: minimalDesign}, 403, "export refused", "unknown token"},
		{"revoked token", request{path: PathHTML, headers: bearer(testDisToken), body: minimalDesign}, 403, "export refused", "token of a disabled application"},
		{"bad refresh token", request{path: PathRefresh, headers: bearer(unknownToken)}, 401, "token refresh refused", "invalid access token"},
		{"first export passes", request{path: PathHTML, headers: bearer(testAPIToken), body: minimalDesign}, 200, "", ""},
		{"rate-limited", request{path: PathHTML, headers: bearer(testAPIToken), body: minimalDesign}, 429, "export rate-limited", "rate_limit reached"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := logs.Len()
			w := do(t, h, tc.req)
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			entries := logs.All()[before:]
			if tc.msg == "" {
				if len(entries) != 0 {
					t.Errorf("unexpected log entries %v", entries)
				}
				return
			}
			if len(entries) != 1 {
				t.Fatalf("%d log entries, want 1: %v", len(entries), entries)
			}
			e := entries[0]
			fields := e.ContextMap()
			if e.Level != zapcore.DebugLevel || e.Message != tc.msg || fields["reason"] != tc.reason || fields["request_id"] != w.Header().Get("X-Request-Id") {
				t.Errorf("entry %s %q %v; want DEBUG %q reason %q", e.Level, e.Message, fields, tc.msg, tc.reason)
			}
			text := e.Message + fmt.Sprint(fields)
			for _, secret := range []string{wrongSecret, unknownToken, testAPIToken, testDisToken, testSecret, testKey, "secret-disabled-0123"} {
				if strings.Contains(text, secret) {
					t.Errorf("log entry holds a secret: %s", text)
				}
			}
		})
	}
	if got := logs.FilterMessage("export rate-limited").All(); len(got) == 1 && got[0].ContextMap()["client_id"] != "alpha" {
		t.Errorf("rate-limit entry names %v, want the application alpha", got[0].ContextMap()["client_id"])
	}
}

// TestRenderFailuresAreLogged: a PDF or image export answered 5xx is
// logged at ERROR with its cause and the request id (the error policy);
// a render that timed out was answered 504 without any log entry.
func TestRenderFailuresAreLogged(t *testing.T) {
	hang := make(chan struct{})
	img := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer img.Close()
	defer close(hang)
	h, logs := newTestService(t, func(h *Handler) {
		h.Fetch = &FetchConfig{AllowPrivate: true}
		h.Browser = &BrowserConfig{Timeout: caddy.Duration(2 * time.Second), FilesDir: t.TempDir()}
	})
	defer h.browser.Close()
	bearer := map[string]string{"Authorization": "Bearer " + testAPIToken, "Content-Type": "application/json"}
	tests := []struct {
		name   string
		body   string
		status int
		msg    string
	}{
		{"hung image", `{"html":"<img src=\"` + img.URL + `/x.png\">","width":100,"file_type":"png"}`, http.StatusGatewayTimeout, "rendering timed out"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := logs.Len()
			w := do(t, h, request{path: PathMessageImage, headers: bearer, body: tc.body})
			if w.Code != tc.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.status, w.Body)
			}
			var found bool
			for _, e := range logs.All()[before:] {
				if e.Level == zapcore.ErrorLevel && e.Message == tc.msg && e.ContextMap()["request_id"] == w.Header().Get("X-Request-Id") {
					found = true
				}
			}
			if !found {
				t.Errorf("no ERROR %q with the request id among %v", tc.msg, logs.All()[before:])
			}
		})
	}
}
