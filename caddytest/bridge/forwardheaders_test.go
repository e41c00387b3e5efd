package bridge

// Which request headers reach the content service: an allowlist, against
// a real Caddy and an upstream that records the headers it was sent.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// browserHeaders are what a browser, or a proxy in front of Caddy, puts on
// an export request beside what the export needs.
var browserHeaders = map[string]string{
	"Authorization":               "Basic YnJvd3Nlcjpwdw==",
	"Cookie":                      "session=browser-cookie",
	"Proxy-Authorization":         "Basic cHJveHk6cHc=",
	"X-Api-Key":                   "browser-api-key",
	"Referer":                     "https://site.example/editor?campaign=spring&user=alice",
	"Cf-Access-Jwt-Assertion":     "eyJhbGciOiJSUzI1NiJ9.cf.access",
	"X-Auth-Request-Access-Token": "oauth2-proxy-access-token",
	"X-Auth-Request-Email":        "alice@site.example",
	"If-None-Match":               `"v1"`,
	"If-Modified-Since":           "Mon, 02 Jan 2006 15:04:05 GMT",
	"Range":                       "bytes=0-9",
	"Upgrade":                     "websocket",
	"Connection":                  "Upgrade",
	"Cache-Control":               "no-cache",
	"Accept-Language":             "fr-CH, fr;q=0.9",
	"User-Agent":                  "Mozilla/5.0 (browser)",
	"Origin":                      "", // removed: do sets none
	"Sec-Fetch-Site":              "same-origin",
	"Sec-Fetch-Mode":              "cors",
	"Traceparent":                 "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
	"X-Request-Id":                "req-42",
	"Forwarded":                   "for=203.0.113.7",
	"X-Forwarded-For":             "203.0.113.7",
	"X-Forwarded-Host":            "spoofed.example",
	"Accept":                      "application/json",
}

// TestExportForwardsOnlyListedHeaders: by default the content service
// gets the export's own headers (the bearer token, Content-Type,
// Content-Length, Accept, Accept-Encoding: identity) and those Caddy's
// reverse proxy sets (X-Forwarded-*, Via), nothing else the browser or a
// front proxy sent; forward_headers adds the headers it names.
func TestExportForwardsOnlyListedHeaders(t *testing.T) {
	up := newUpstream(t, nil)
	always := func(t *testing.T, h http.Header) {
		t.Helper()
		want := map[string]string{
			"Authorization":     "Bearer " + tokenPlain,
			"Content-Type":      "application/json",
			"Accept":            "application/json",
			"Accept-Encoding":   "identity",
			"X-Forwarded-For":   "127.0.0.1", // the client is no trusted proxy: its value is replaced
			"X-Forwarded-Host":  "localhost:",
			"X-Forwarded-Proto": "http",
			"Via":               "1.1 Caddy",
		}
		for name, v := range want {
			if got := h.Values(name); len(got) != 1 || !strings.HasPrefix(got[0], v) {
				t.Errorf("%s: %q, want %q", name, got, v)
			}
		}
	}
	for _, tt := range []struct {
		name  string
		extra []string
		opted []string // headers forwarded besides the export's own
	}{
		{"default", nil, nil},
		{"forward_headers", []string{"forward_headers Traceparent x-request-id Referer Accept-Language"}, []string{"Traceparent", "X-Request-Id", "Referer", "Accept-Language"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tc := load(t, site(bridgeBlock(up, tt.extra...)))
			res := post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), browserHeaders)
			if res.Status != 200 {
				t.Fatalf("status %d %s", res.Status, res.Body)
			}
			got := up.last(t).Header
			always(t, got)
			allowed := []string{"Authorization", "Content-Type", "Content-Length", "Accept", "Accept-Encoding",
				"X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "Via"}
			for _, name := range tt.opted {
				if v := got.Values(name); len(v) != 1 || v[0] != browserHeaders[name] {
					t.Errorf("opted-in %s: %q, want %q", name, v, browserHeaders[name])
				}
				allowed = append(allowed, name)
			}
			for name, v := range got {
				if !slices.Contains(allowed, name) {
					t.Errorf("%s: %q reached the content service", name, v)
				}
			}
		})
	}
}

// TestForwardHeadersRefused: forward_headers never takes a header that
// carries credentials or an identity, a hop-by-hop header, a conditional
// or range header, or one the export sets itself; the load error names
// the header, in the Caddyfile (with its line) and in JSON.
func TestForwardHeadersRefused(t *testing.T) {
	up := newUpstream(t, nil)
	load(t, site(bridgeBlock(up))) // the running config, which must survive
	// The admin API's answer is {"error": "…"}.
	loadError := func(body []byte) string {
		var e struct{ Error string }
		_ = json.Unmarshal(body, &e)
		return e.Error
	}
	for _, tt := range []struct{ header, why string }{
		{"Authorization", "credentials"},
		{"cookie", "credentials"},
		{"Proxy-Authorization", "credentials"},
		{"X-Api-Key", "credentials"},
		{"Cf-Access-Jwt-Assertion", "credentials"},
		{"X-Auth-Request-Access-Token", "credentials"},
		{"X-Auth-Request-Email", "credentials"},
		{"X-Forwarded-Access-Token", "credentials"},
		// API gateways' keys, an mTLS proxy's client certificate and
		// subject, and access proxies' user headers.
		{"Ocp-Apim-Subscription-Key", "credentials"},
		{"X-Functions-Key", "credentials"},
		{"X-Access-Key", "credentials"},
		{"X-Forwarded-Client-Cert", "credentials"},
		{"X-Ssl-Client-Cert", "credentials"},
		{"X-Ssl-Client-S-Dn", "credentials"},
		{"Tailscale-User-Login", "credentials"},
		{"X-User-Email", "credentials"},
		{"X-Userid", "credentials"},
		{"From", "credentials"},
		{"Upgrade", "hop-by-hop"},
		{"Connection", "hop-by-hop"},
		{"TE", "hop-by-hop"},
		{"If-None-Match", "conditional"},
		{"If-Modified-Since", "conditional"},
		{"Range", "conditional"},
		{"Host", "sets"},
		{"Content-Length", "sets"},
		{"Content-Type", "sets"},
		{"Accept", "sets"},
		{"Accept-Encoding", "sets"},
		{"X-Forwarded-For", "reverse proxy"},
		{"Bad:Name", "not a header name"},
	} {
		t.Run(tt.header, func(t *testing.T) {
			status, body, err := loadRaw([]byte(site(bridgeBlock(up, "forward_headers Traceparent "+tt.header))), "text/caddyfile", false)
			if err != nil {
				t.Fatal(err)
			}
			msg := loadError(body)
			if status == 200 || !strings.Contains(msg, fmt.Sprintf("forward_headers: %q", tt.header)) ||
				!strings.Contains(msg, tt.why) || !strings.Contains(msg, "Caddyfile:") {
				t.Errorf("Caddyfile load: %d %s; want a refusal naming %q, why (%s) and the line", status, body, tt.header, tt.why)
			}
			var cfg any
			if err := json.Unmarshal(adapt(t, site(bridgeBlock(up))), &cfg); err != nil {
				t.Fatal(err)
			}
			findHandler(cfg, "design_bridge")["forward_headers"] = []string{"Traceparent", tt.header}
			raw, _ := json.Marshal(cfg)
			status, body, err = loadRaw(raw, "application/json", false)
			if err != nil {
				t.Fatal(err)
			}
			// JSON names the value by its path, as Caddy loads it.
			if msg := loadError(body); status == 200 || !strings.Contains(msg, "forward_headers[1] ") || !strings.Contains(msg, tt.why) {
				t.Errorf("JSON load: %d %s; want a refusal naming forward_headers[1] and why (%s)", status, body, tt.why)
			}
		})
	}
	// The running config still answers.
	if res := post(t, newTester(t), "/v1/message/html", []byte(`{}`), nil); res.Status != 200 {
		t.Errorf("after the refused loads: %d %s", res.Status, res.Body)
	}
}

// TestExportSendsNoRequestTrailers: a chunked export body's trailers
// (which Caddy's reverse proxy passes on) do not reach the content
// service, whatever forward_headers names.
func TestExportSendsNoRequestTrailers(t *testing.T) {
	trailers := make(chan http.Header, 1)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		trailers <- r.Trailer.Clone()
		io.WriteString(w, "<p>ok</p>")
	})
	tc := load(t, site(bridgeBlock(up, "forward_headers Traceparent")))
	req, err := http.NewRequest(http.MethodPost, siteURL+"/v1/message/html", io.MultiReader(strings.NewReader(`{"page":`), strings.NewReader(`{}}`)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Trailer = http.Header{"X-Api-Key": {"browser-api-key"}, "Authorization": {"Basic YnJvd3Nlcjpwdw=="}, "Traceparent": {browserHeaders["Traceparent"]}}
	res, err := tc.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	if got := <-trailers; len(got) != 0 {
		t.Errorf("trailers reached the content service: %v", got)
	}
	if got := up.last(t).Header; got.Get("Trailer") != "" || got.Get("X-Api-Key") != "" {
		t.Errorf("trailer announcement or value in the headers: %v", got)
	}
}

// TestExportForwardedForFromTrustedProxy: the X-Forwarded-* of a proxy in
// front of Caddy that the server trusts (trusted_proxies) are kept and
// extended, as Caddy's reverse proxy does; an untrusted client's are
// replaced (TestExportForwardsOnlyListedHeaders).
func TestExportForwardedForFromTrustedProxy(t *testing.T) {
	up := newUpstream(t, nil)
	cfg := strings.Replace(site(bridgeBlock(up)), "\t\tlog_credentials\n", "\t\tlog_credentials\n\t\ttrusted_proxies static 127.0.0.1/32\n", 1)
	tc := load(t, cfg)
	if res := post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), browserHeaders); res.Status != 200 {
		t.Fatalf("status %d %s", res.Status, res.Body)
	}
	got := up.last(t).Header
	for name, want := range map[string]string{
		"X-Forwarded-For":  "203.0.113.7, 127.0.0.1",
		"X-Forwarded-Host": "spoofed.example",
	} {
		if v := got.Values(name); len(v) != 1 || v[0] != want {
			t.Errorf("%s: %q, want %q", name, v, want)
		}
	}
	if v := got.Values("Forwarded"); len(v) != 0 {
		t.Errorf("Forwarded: %q reached the content service", v)
	}
}
