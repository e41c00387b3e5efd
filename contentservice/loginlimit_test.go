package contentservice

import (
	"github.com/caddyserver/caddy/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// login posts a LoginV2 request from the client address addr.
func loginFrom(t *testing.T, h *service, addr, secret string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, PathLogin, strings.NewReader(`{"client_id":"alpha","client_secret":"`+secret+`","uid":"u"}`))
	r.Header.Set("Content-Type", "application/json")
	r.RemoteAddr = addr
	w := httptest.NewRecorder()
	if err := h.ServeHTTP(w, r, caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { return nil })); err != nil {
		t.Fatal(err)
	}
	return w
}

func TestLoginFailureLimit(t *testing.T) {
	h, _ := newTestService(t, nil)
	attacker, other := "198.51.100.7:5000", "203.0.113.9:6000"
	for i := 0; i < DefaultLoginFailures; i++ {
		if w := loginFrom(t, h, attacker, "wrong"); w.Code != 401 {
			t.Fatalf("failure %d: status %d", i+1, w.Code)
		}
	}
	// The limit is reached: even the right secret is refused from there,
	// until one failure's worth of the window (6 s, less the moments the
	// requests took) has passed.
	w := loginFrom(t, h, attacker, testSecret)
	if w.Code != 429 || w.Header().Get("Retry-After") != "6" {
		t.Fatalf("after %d failures: %d Retry-After %q, want 429 after 6 s", DefaultLoginFailures, w.Code, w.Header().Get("Retry-After"))
	}
	if e := loginErrorOf(t, w); e.Code != 429 || e.StatusCode != 429 {
		t.Errorf("error body %+v", e)
	}
	// Another address is not affected, and the same port does not matter.
	if w := loginFrom(t, h, other, testSecret); w.Code != 200 {
		t.Fatalf("other address: %d %s", w.Code, w.Body)
	}
	if w := loginFrom(t, h, "198.51.100.7:5001", testSecret); w.Code != 429 {
		t.Fatalf("same address, other port: %d", w.Code)
	}
	// Successes do not count.
	for i := 0; i < 3*DefaultLoginFailures; i++ {
		if w := loginFrom(t, h, other, testSecret); w.Code != 200 {
			t.Fatalf("success %d: %d", i+1, w.Code)
		}
	}
}

func TestLoginFailureLimitConfigured(t *testing.T) {
	h, _ := newTestService(t, func(h *Handler) { h.LoginFailureLimit = &RateLimit{Requests: 2, Window: caddy.Duration(time.Hour)} })
	loginFrom(t, h, "[2001:db8::1]:1", "wrong")
	loginFrom(t, h, "[2001:db8::2]:1", "wrong") // the same /64
	if w := loginFrom(t, h, "[2001:db8::3]:1", testSecret); w.Code != 429 || w.Header().Get("Retry-After") != "1800" {
		t.Fatalf("status %d Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	// A short window, waited out, lets the address try again.
	const window = 20 * time.Millisecond
	short, _ := newTestService(t, func(h *Handler) { h.LoginFailureLimit = &RateLimit{Requests: 1, Window: caddy.Duration(window)} })
	loginFrom(t, short, "198.51.100.7:1", "wrong")
	time.Sleep(2 * window)
	if w := loginFrom(t, short, "198.51.100.7:1", testSecret); w.Code != 200 {
		t.Fatalf("after the window: %d %s", w.Code, w.Body)
	}
	off, _ := newTestService(t, func(h *Handler) { h.NoLoginFailureLimit = true })
	for i := 0; i < 3*DefaultLoginFailures; i++ {
		loginFrom(t, off, "198.51.100.7:1", "wrong")
	}
	if w := loginFrom(t, off, "198.51.100.7:1", testSecret); w.Code != 200 {
		t.Fatalf("limit off: %d", w.Code)
	}
}

// TestJSONRateLimitForms: a rate limit that is not an object (such as the
// Caddyfile's "off" written into JSON) is refused naming its field and the
// form it takes, where encoding/json would name a Go type; the JSON config
// is still read as strictly as Caddy reads it.
func TestJSONRateLimitForms(t *testing.T) {
	for _, c := range []struct{ name, fields, err string }{
		{"login_failure_limit off", `"login_failure_limit":"off"`,
			`login_failure_limit: expected an object such as {"requests": 60, "window": "1m"}, got a string; to turn it off, set "no_login_failure_limit": true`},
		{"login_failure_limit false, another case", `"Login_Failure_Limit":false`, `Login_Failure_Limit: expected an object such as {"requests": 60, "window": "1m"}, got false; to turn it off`},
		{"rate_limit a number", `"rate_limit":60`, `rate_limit: expected an object such as {"requests": 60, "window": "1m"}, got a number`},
		{"rate_limit requests not a number", `"rate_limit":{"requests":"many","window":"1m"}`, `rate_limit.requests: expected a whole number such as 60, got a string of other text`},
		{"unknown field", `"rate_limits":{"requests":1,"window":"1m"}`, `rate_limits: unknown field`},
		{"unknown field in an app", `"apps":[{"client_id":"a","secret":"x"}]`, `apps[0].secret: unknown field`},
		{"limits as objects", `"rate_limit":{"requests":"60","window":"1m"},"login_failure_limit":{"requests":5,"window":60000000000}`, ""},
		{"limit null", `"login_failure_limit":null`, ""},
		{"unknown field in a limit", `"rate_limit":{"requests":1,"window":"1m","burst":5}`, `rate_limit.burst: unknown field`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var h Handler
			err := caddy.StrictUnmarshalJSON([]byte(`{"signing_key":"k",`+c.fields+`}`), &h)
			if c.err == "" {
				if err != nil || h.SigningKey != "k" {
					t.Fatalf("%v, signing_key %q", err, h.SigningKey)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("error %v, want it to contain %q", err, c.err)
			}
		})
	}
}
