package content

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/render"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// TestPageAndPopupCollections: /v1/page/… and /v1/popup/… answer page and
// popup designs (the corpus's, with DESIGN_CORPUS; the project's own
// always) through Caddy with the renderer's page and popup layouts: a
// page is a whole document whose rows and columns are flexbox divs, not
// the email's tables; a popup is one container div to embed, with no
// document around it. Plain text is the same for every collection.
func TestPageAndPopupCollections(t *testing.T) {
	t.Parallel()
	tester := start(t)
	designs := designtest.OwnAndCorpus(t, true)
	ran := 0
	for _, name := range designtest.Names(designs) {
		var collections []string
		switch {
		case strings.Contains(name, "popup"):
			collections = []string{"popup"}
		case strings.Contains(name, "page-") || strings.HasPrefix(name, "starter-"):
			collections = []string{"page", "popup"}
		default:
			continue
		}
		d, err := design.Decode(designs[name])
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		text, err := render.PlainText(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range collections {
			layout, err := render.ParseLayout(c)
			if err != nil {
				t.Fatal(err)
			}
			html, err := render.HTMLWithLimits(d, render.Limits{Layout: layout})
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct {
				path, ctype string
				want        []byte
			}{
				{"/v1/" + c + "/html", "text/html; charset=utf-8", html.Body},
				{"/v1/" + c + "/plain-text", "text/plain; charset=utf-8", text.Body},
			} {
				headers := bearer(apiToken)
				headers["Content-Type"] = "application/json"
				r := post(t, tester, http.MethodPost, replicaSite+tc.path, headers, designs[name])
				if r.status != 200 || r.header.Get("Content-Type") != tc.ctype || !bytes.Equal(r.body, tc.want) {
					t.Errorf("%s %s: %d %s, %d bytes (want %d)", name, tc.path, r.status, r.header.Get("Content-Type"), len(r.body), len(tc.want))
				}
				if strings.HasSuffix(tc.path, "/html") {
					checkCollectionLayout(t, name, c, r.body, len(d.Page.Rows))
				}
				ran++
			}
		}
	}
	if ran == 0 {
		t.Fatal("no page or popup design")
	}
	// Their errors are the export's.
	r := post(t, tester, http.MethodPost, mainSite+"/v1/popup/html", bearer(apiToken), []byte(`{"rows":[]}`))
	if code, _, _ := exportError(t, r); r.status != 400 || code != 4101 {
		t.Errorf("not a design: %d %d", r.status, code)
	}
	r = post(t, tester, http.MethodPost, mainSite+"/v1/page/plain-text", nil, []byte(`{}`))
	if code, _, _ := exportError(t, r); r.status != 401 || code != 4001 {
		t.Errorf("no token: %d %d", r.status, code)
	}
}

// checkCollectionLayout checks the layout of a page or popup answer: one
// db-row div per row of the design, none of the email layout's container
// and row tables, and a whole document (page) or one container div with
// no document around it (popup).
func checkCollectionLayout(t *testing.T, name, collection string, body []byte, rows int) {
	t.Helper()
	s := string(body)
	if n := strings.Count(s, `<div class="db-row db-row-`); n != rows {
		t.Errorf("%s /v1/%s/html: %d db-row divs for %d rows", name, collection, n, rows)
	}
	for _, email := range []string{`class="nl-container"`, `<table class="row `, `<table class="rc`} {
		if strings.Contains(s, email) {
			t.Errorf("%s /v1/%s/html holds the email layout's %s", name, collection, email)
		}
	}
	isDocument := strings.HasPrefix(s, "<!DOCTYPE html><html")
	switch collection {
	case "page":
		if !isDocument || !strings.HasSuffix(s, "</body></html>") || !strings.Contains(s, `<div class="db-page"`) {
			t.Errorf("%s /v1/page/html is not a whole page: %.60s…", name, s)
		}
	case "popup":
		if isDocument || !strings.HasPrefix(s, `<div class="db-popup"`) || !strings.HasSuffix(s, "</div>") || strings.Contains(s, "<body") {
			t.Errorf("%s /v1/popup/html is not one container div: %.60s…", name, s)
		}
	}
}
