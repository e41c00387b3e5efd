package bridge

import (
	"net/http"
	"testing"
)

// TestExportAnswerHeadersActOnNoOrigin: an export's answer reaches the
// browser on the host's origin, so the upstream's headers that would act
// on that origin (cookies, site data, HSTS, CORS grants, a refresh, an
// alternative service, a service worker's scope) are dropped, from a
// fresh answer, a shared one and a kept one alike; what describes the
// answer (its type, caching, warnings, validators) comes back.
func TestExportAnswerHeadersActOnNoOrigin(t *testing.T) {
	dropped := map[string]string{
		"Set-Cookie":                       "upstream_session=abc; Path=/",
		"Clear-Site-Data":                  `"cookies", "storage"`,
		"Strict-Transport-Security":        "max-age=31536000; includeSubDomains; preload",
		"Access-Control-Allow-Origin":      "*",
		"Access-Control-Allow-Credentials": "true",
		"Access-Control-Expose-Headers":    "*",
		"Refresh":                          "0; url=https://elsewhere.example",
		"Alt-Svc":                          `h3="evil.example:443"`,
		"Service-Worker-Allowed":           "/",
		"Public-Key-Pins":                  `pin-sha256="x"; max-age=1`,
	}
	kept := map[string]string{
		"Content-Type":      "text/html; charset=utf-8",
		"Cache-Control":     "max-age=60",
		"X-Design-Warnings": "unknown module type: futurekind",
		"Etag":              `"v1"`,
	}
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		for k, v := range dropped {
			w.Header().Set(k, v)
		}
		for k, v := range kept {
			w.Header().Set(k, v)
		}
		w.Write([]byte("<p>ok</p>"))
	})
	tc := load(t, site(bridgeBlock(up, "cache 1MiB 10m")))
	for _, round := range []string{"fresh", "kept"} {
		res := post(t, tc, "/v1/message/html", caseBody("headers"), nil)
		if res.Status != 200 || string(res.Body) != "<p>ok</p>" {
			t.Fatalf("%s: got %d %q", round, res.Status, res.Body)
		}
		for k := range dropped {
			if v, ok := res.Header[k]; ok {
				t.Errorf("%s: %s %q reached the browser", round, k, v)
			}
		}
		for k, want := range kept {
			if got := res.Header.Get(k); got != want {
				t.Errorf("%s: %s %q, want %q", round, k, got, want)
			}
		}
	}
	if n := len(up.requests()); n != 1 {
		t.Errorf("%d upstream calls, want 1 (the second answer kept)", n)
	}
}
