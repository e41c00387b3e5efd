package bridge

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
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
		// Network error logging: every later request of the origin, its
		// URL included, reported to the upstream's collector.
		"Nel":                      `{"report_to":"c","max_age":31536000,"include_subdomains":true,"success_fraction":1.0}`,
		"Report-To":                `{"group":"c","max_age":31536000,"endpoints":[{"url":"https://collector.example/r"}]}`,
		"Reporting-Endpoints":      `c="https://collector.example/r"`,
		"Set-Login":                "logged-in",
		"Sec-Session-Registration": `(ES256);path="/reg";challenge="x"`,
		// A challenge: the browser would ask for credentials in the host's name.
		"Www-Authenticate": `Basic realm="sign in again"`,
		// A redirect the page's fetch would follow, posting the design again.
		"Location": "/proxy/bee-auth",
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

// TestExportAnswerTrailersActOnNoOrigin: the upstream's trailers reach
// the browser on the host's origin as its headers do, so those that would
// act on that origin are dropped there too; the others come back.
func TestExportAnswerTrailersActOnNoOrigin(t *testing.T) {
	tests := []struct {
		name  string
		value string
		kept  bool
	}{
		{"Set-Cookie", "upstream_session=abc; Path=/", false},
		{"Clear-Site-Data", `"cookies", "storage"`, false},
		{"Strict-Transport-Security", "max-age=31536000", false},
		{"Access-Control-Allow-Origin", "*", false},
		{"Refresh", "0; url=https://elsewhere.example", false},
		{"X-Render-Ms", "12", true},
	}
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		for _, tt := range tests {
			w.Header().Add("Trailer", tt.name)
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<p>ok</p>"))
		for _, tt := range tests {
			w.Header().Set(tt.name, tt.value)
		}
	})
	tc := load(t, site(bridgeBlock(up, "cache 1MiB 10m")))
	for _, round := range []string{"fresh", "again"} {
		req, _ := http.NewRequest(http.MethodPost, siteURL+"/v1/message/html", bytes.NewReader(caseBody("trailers")))
		req.Header.Set("Content-Type", "application/json")
		res, err := tc.Client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body) // the trailers are in once it is read
		res.Body.Close()
		if res.StatusCode != 200 || string(body) != "<p>ok</p>" {
			t.Fatalf("%s: got %d %q", round, res.StatusCode, body)
		}
		for _, tt := range tests {
			got, inTrailer := res.Trailer[tt.name]
			_, inHeader := res.Header[tt.name]
			if tt.kept && (!inTrailer || got[0] != tt.value) {
				t.Errorf("%s: trailer %s %q, want %q", round, tt.name, got, tt.value)
			}
			if !tt.kept && (inTrailer || inHeader) {
				t.Errorf("%s: %s %q reached the browser", round, tt.name, got)
			}
		}
	}
}

// TestHugeAnswerHeadersRefused: an upstream's answer headers count
// against no budget, so they are bounded per answer: headers of 4 MiB on
// every export in flight are refused (502) as soon as they pass the
// bound, on both paths, rather than held (and copied) whole for each.
func TestHugeAnswerHeadersRefused(t *testing.T) {
	// Written from one buffer: the test's own allocations count too.
	upURL := repeatingUpstream(t, []byte("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Pad: "+strings.Repeat("p", 4<<20)+"\r\nContent-Length: 2\r\n\r\nok"), false)
	tc := load(t, site(bothPaths(upURL)))
	const exports = 10
	for _, path := range []string{"/v1/message/html", "/proxy/bee-auth"} {
		t.Run(path, func(t *testing.T) {
			runtime.GC()
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var wg sync.WaitGroup
			statuses := make([]response, exports)
			for i := range exports {
				wg.Add(1)
				go func() {
					defer wg.Done()
					body := caseBody(fmt.Sprint(i)) // distinct: no shared call
					if path == "/proxy/bee-auth" {
						body = fmt.Appendf(nil, `{"uid":"u%d"}`, i)
					}
					statuses[i] = post(t, tc, path, body, nil)
				}()
			}
			wg.Wait()
			runtime.ReadMemStats(&after)
			for i, s := range statuses {
				if s.Status != http.StatusBadGateway {
					t.Errorf("export %d: status %d, want 502", i, s.Status)
				}
			}
			assertErrorBody(t, statuses[0], 5020)
			// Held whole, each answer's headers were read, copied and
			// scanned: over 25 MiB allocated per answer.
			allocated := int64(after.TotalAlloc - before.TotalAlloc)
			t.Logf("%d answers with 4 MiB of headers allocated %d KiB", exports, allocated>>10)
			if limit := int64(exports * 4 << 20); allocated > limit {
				t.Errorf("allocated %d KiB, want at most %d KiB", allocated>>10, limit>>10)
			}
		})
	}
}

// TestEndlessInterimAnswersRefused: net/http bounds an upstream's interim
// (1xx) answers only for a client that does not look at them, and the
// bridge does (to mask them); an upstream sending them without end is
// answered 502 once past the bound, not read until timeout.
func TestEndlessInterimAnswersRefused(t *testing.T) {
	hint := []byte("HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\nX-Pad: " + strings.Repeat("p", 30000) + "\r\n\r\n")
	tc := load(t, site(bothPaths(repeatingUpstream(t, hint, true), "timeout 5s")))
	for _, path := range []string{"/v1/message/html", "/proxy/bee-auth"} {
		t.Run(path, func(t *testing.T) {
			res := post(t, tc, path, caseBody("hints"), nil)
			if res.Status != http.StatusBadGateway {
				t.Fatalf("status %d %s, want 502", res.Status, res.Body)
			}
			assertErrorBody(t, res, 5020)
		})
	}
}

// bothPaths configures exports and LoginV2 (any uid) against upURL.
func bothPaths(upURL string, extra ...string) string {
	return fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken %s\n\t\tclient_id %s\n\t\tclient_secret %s\n\t\tauth_url %s/auth\n\t\tauth_rate_limit off\n\t\tinsecure_caller_uid\n%s",
		upURL, tokenPlain, clientID, clientSecret, upURL, indent(extra))
}

// repeatingUpstream reads one request per connection and writes answer,
// once or (forever) until the connection fails; it returns its URL.
func repeatingUpstream(t *testing.T, answer []byte, forever bool) string {
	return connUpstream(t, func(conn net.Conn) {
		req, err := http.ReadRequest(bufio.NewReader(conn))
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		for {
			if _, err := conn.Write(answer); err != nil || !forever {
				return
			}
		}
	})
}
