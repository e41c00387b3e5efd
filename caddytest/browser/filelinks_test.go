package browser

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestExampleFileLinksRunNoScript: Caddyfile.example forwards GET
// /v1/files/* of the host site to the content service, so whatever that
// service answers there is a page of the host's origin. A content
// service that answers with HTML, SVG or script (a hostile one, or one
// that serves a stored file of the wrong kind) must run nothing there:
// a script that ran could mint editor tokens with the user's session.
func TestExampleFileLinksRunNoScript(t *testing.T) {
	var mu sync.Mutex
	ran := map[string]int{}
	beacon := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ran[r.URL.Query().Get("k")]++
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer beacon.Close()
	report := func(kind string) string {
		return `new Image().src="` + beacon.URL + `/ran?k=` + kind + `";` +
			`fetch("/proxy/bee-auth",{method:"POST",headers:{"Content-Type":"application/json"},body:"{}"})` +
			`.then(r=>r.ok&&(new Image().src="` + beacon.URL + `/ran?k=` + kind + `-token"))`
	}
	answers := []struct{ name, contentType, body string }{
		{"0123456789abcdef0123456789abcdef.pdf", "text/html", `<script>` + report("html-link") + `</script>`},
		{"x.html", "text/html; charset=utf-8", `<script>` + report("html") + `</script>`},
		{"x.svg", "image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg"><script>` + report("svg") + `</script></svg>`},
		{"untyped.pdf", "", `<html><script>` + report("sniffed") + `</script>`},
	}
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, a := range answers {
			if r.URL.Path == "/v1/files/"+a.name {
				if a.contentType == "" {
					w.Header()["Content-Type"] = nil // no type: Go would not sniff one in
				} else {
					w.Header().Set("Content-Type", a.contentType)
				}
				// Its own, weaker policy must not replace the site's.
				w.Header().Set("Content-Security-Policy", "default-src * 'unsafe-inline'")
				w.Header().Set("X-Content-Type-Options", "sniff")
				w.Write([]byte(a.body))
				return
			}
		}
		http.NotFound(w, r)
	}))
	defer hostile.Close()

	setEnv(t, readEnvExample(t), hostile.URL)
	tester := newTester(t)
	loadConfig(t, tester, exampleConfig(t, nil))
	s := newSession(t)
	for _, a := range answers {
		ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
		_ = chromedp.Run(ctx, chromedp.Navigate(siteURL+"/v1/files/"+a.name))
		cancel()
	}
	time.Sleep(2 * time.Second) // time for a script's beacon, had one run

	mu.Lock()
	for kind, n := range ran {
		t.Errorf("the content service's %s answer ran script on the site's origin (%d beacons)", kind, n)
	}
	mu.Unlock()

	s.mu.Lock()
	defer s.mu.Unlock()
	seen := 0
	for _, r := range s.responses {
		if !strings.HasPrefix(r.url, siteURL+"/v1/files/") {
			continue
		}
		seen++
		headers := strings.ToLower(strings.Join(r.headers, "\n"))
		for _, want := range []string{"content-security-policy: sandbox", "x-content-type-options: nosniff"} {
			if !strings.Contains(headers, want) {
				t.Errorf("%s: no %q header", r.url, want)
			}
		}
	}
	if seen == 0 {
		t.Error("the browser saw no answer from /v1/files")
	}
}
