package browser

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// TestExampleFileLinksRunNoScript: Caddyfile.example forwards GET
// /v1/files/* of the host site to the content service, so whatever that
// service answers there is a page of the host's origin. A content
// service that answers with HTML, SVG or script (a hostile one, or one
// that serves a stored file of the wrong kind) must run nothing there:
// a script that ran could mint editor tokens with the user's session.
// Nor does it get the site's credentials (its cookies, a password the
// browser keeps for it), set cookies or other state of the site's
// origin, or have the browser ask for a password in the site's name.
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
	// Headers that would set state of the site's origin.
	originState := map[string]string{
		"Clear-Site-Data":              `"storage"`,
		"Strict-Transport-Security":    "max-age=31536000",
		"Access-Control-Allow-Origin":  "*",
		"Access-Control-Allow-Headers": "*",
		"Alt-Svc":                      `h2="127.0.0.1:1"`,
		"Service-Worker-Allowed":       "/",
		"Nel":                          `{"report_to":"c","max_age":86400,"success_fraction":1.0}`,
		"Report-To":                    `{"group":"c","max_age":86400,"endpoints":[{"url":"https://collector.example/r"}]}`,
		"Reporting-Endpoints":          `c="https://collector.example/r"`,
		"Set-Login":                    "logged-in",
		"Sec-Session-Registration":     `(ES256);path="/reg";challenge="x"`,
		"Refresh":                      "0; url=https://elsewhere.example/",
	}
	var credentials []string
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		for _, name := range []string{"Cookie", "Authorization"} {
			if v := r.Header.Get(name); v != "" {
				credentials = append(credentials, name+": "+v)
			}
		}
		mu.Unlock()
		switch r.URL.Path {
		case "/v1/files/state.pdf":
			w.Header().Set("Set-Cookie", "sid=from-early-hints; Path=/")
			w.Header().Set("Link", "</x.css>; rel=preload; as=style")
			w.WriteHeader(http.StatusEarlyHints)
			w.Header().Del("Link")
			w.Header().Set("Set-Cookie", "sid=fixed-by-upstream; Path=/")
			for k, v := range originState {
				w.Header().Set(k, v)
			}
			w.Header().Set("Content-Type", "application/pdf")
			w.Write([]byte("%PDF-"))
			return
		case "/v1/files/challenge.pdf":
			w.Header().Set("WWW-Authenticate", `Basic realm="Your session has expired: sign in again"`)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
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

	loadExampleFor(t, hostile.URL)
	s := newSession(t)
	asked := countAuthPrompts(s)
	// The site's session cookie, as the host's own sign-in would set it.
	s.run(t,
		network.SetCookie("sid", "the-users-session").WithURL(siteURL+"/"),
		fetch.Enable().WithHandleAuthRequests(true).WithPatterns([]*fetch.RequestPattern{{URLPattern: "*/v1/files/*"}}),
	)
	names := []string{"state.pdf", "challenge.pdf"}
	for _, a := range answers {
		names = append(names, a.name)
	}
	for _, name := range names {
		ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
		_ = chromedp.Run(ctx, chromedp.Navigate(siteURL+"/v1/files/"+name))
		cancel()
	}
	time.Sleep(2 * time.Second) // time for a script's beacon, had one run

	mu.Lock()
	for kind, n := range ran {
		t.Errorf("the content service's %s answer ran script on the site's origin (%d beacons)", kind, n)
	}
	for _, c := range credentials {
		t.Errorf("the content service got the site's credentials: %s", c)
	}
	mu.Unlock()
	if n := asked.Load(); n != 0 {
		t.Errorf("the browser asked the user for a password in the site's name %d times", n)
	}
	var cookies []*network.Cookie
	s.run(t, chromedp.ActionFunc(func(ctx context.Context) error {
		var err error
		cookies, err = network.GetCookies().WithURLs([]string{siteURL + "/"}).Do(ctx)
		return err
	}))
	for _, c := range cookies {
		if c.Name == "sid" && c.Value != "the-users-session" {
			t.Errorf("the content service set the site's cookie sid to %q", c.Value)
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	seen := 0
	for _, r := range s.responses {
		if !strings.HasPrefix(r.url, siteURL+"/v1/files/") {
			continue
		}
		seen++
		headers := strings.ToLower(strings.Join(r.headers, "\n"))
		for k := range originState {
			if strings.Contains(headers, strings.ToLower(k)+":") {
				t.Errorf("%s: the content service's %s reached the browser", r.url, k)
			}
		}
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
