package content

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
)

// TestSharedFilesDirKeepsEachTTL: two services sharing files_dir (as
// every service does by default) with different files_ttl; storing a PDF
// on the one with the short TTL must not remove, nor its link expire, a
// PDF of the other before that one's files_ttl.
func TestSharedFilesDirKeepsEachTTL(t *testing.T) {
	dir := t.TempDir()
	site := func(port, ttl string) string {
		return `
:{$PORT_` + port + `} {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		browser {
			tabs 1
			timeout 20s
			files_dir ` + dir + `
			files_ttl ` + ttl + `
		}
	}
}
`
	}
	tester := newTester(t)
	tester.InitServer(globalOptions+site("SHORTTTL", "2s")+site("LONGTTL", "1h"), "caddyfile")
	short, long := testcaddy.URL("SHORTTTL"), testcaddy.URL("LONGTTL")

	render := func(site string) string {
		t.Helper()
		r := post(t, tester, http.MethodPost, site+"/v1/message/pdf", bearer(apiToken),
			[]byte(`{"html":"<p>x</p>","page_size":"A4","page_orientation":"portrait"}`))
		var ans struct {
			Body struct{ URL string } `json:"body"`
		}
		if r.status != 200 || json.Unmarshal(r.body, &ans) != nil {
			t.Fatalf("PDF: %d %s", r.status, r.body)
		}
		_, name, _ := strings.Cut(ans.Body.URL, "/v1/files/")
		return name
	}
	get := func(site, name string) int {
		t.Helper()
		return post(t, tester, http.MethodGet, site+"/v1/files/"+name, nil, nil).status
	}

	kept := render(long)
	time.Sleep(2500 * time.Millisecond)
	for _, tc := range []struct {
		name string
		do   func() int
	}{
		// A link of the short-lived service's folder opened there.
		{"opened on the other service", func() int { return get(short, kept) }},
		// A store there sweeps the shared folder.
		{"after a store on the other service", func() int { render(short); return get(long, kept) }},
	} {
		if got := tc.do(); got != 200 {
			t.Errorf("%s: GET the long-lived PDF = %d, want 200 (files_ttl 1h)", tc.name, got)
		}
	}
	// The short-lived service's own PDFs still expire after its TTL.
	own := render(short)
	time.Sleep(2500 * time.Millisecond)
	if got := get(short, own); got != 404 {
		t.Errorf("GET a PDF past its files_ttl = %d, want 404", got)
	}
	if got := get(long, own); got != 404 {
		t.Errorf("GET a PDF past its files_ttl on the other service = %d, want 404", got)
	}
}
