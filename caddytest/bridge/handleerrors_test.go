package bridge

import (
	"net/http"
	"strings"
	"testing"
)

// handleErrorsRecipe is docs/troubleshooting.md's recipe: a site-wide
// handle_errors that leaves design_bridge's paths out, so the bridge's JSON
// error bodies (which the page's alert shows) stay.
const handleErrorsRecipe = `	handle_errors {
		@page not path /v1/message/* /proxy/bee-auth
		handle @page {
			respond "Sorry, that went wrong ({err.status_code})." {err.status_code}
		}
	}`

// TestHandleErrorsRecipe: with the recipe, the bridge's errors keep their
// JSON body and the site's own errors get the site's page; without the
// path matcher, handle_errors takes the bridge's errors over.
func TestHandleErrorsRecipe(t *testing.T) {
	block := "\t\tcontent_service http://" + closedPort(t) + "\n\t\ttoken " + tokenPlain
	tc := load(t, site(block, handleErrorsRecipe))
	res := post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), nil)
	if res.Status != 502 {
		t.Fatalf("export: %d %s", res.Status, res.Body)
	}
	assertErrorBody(t, res, 5020)
	res = do(t, tc, http.MethodGet, "/v1/message/html", nil, nil)
	if res.Status != 405 {
		t.Fatalf("GET export path: %d %s", res.Status, res.Body)
	}
	assertErrorBody(t, res, 4050)
	res = do(t, tc, http.MethodGet, "/no-such-page", nil, nil)
	if res.Status != 404 || string(res.Body) != "Sorry, that went wrong (404)." {
		t.Errorf("site error: %d %q, want the site's own error page", res.Status, res.Body)
	}

	// The same handle_errors without the matcher answers the bridge's
	// errors itself: this is what the recipe avoids.
	naive := strings.Replace(strings.Replace(handleErrorsRecipe, "handle @page", "handle", 1), "\t\t@page not path /v1/message/* /proxy/bee-auth\n", "", 1)
	tc = load(t, site(block, naive))
	res = post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), nil)
	if res.Status != 502 || string(res.Body) != "Sorry, that went wrong (502)." {
		t.Errorf("without the matcher: %d %q", res.Status, res.Body)
	}
}

// TestHandleErrorsSeesBody: an error handed to handle_errors carries its
// JSON body in {vars.error_body}, so a route can answer with it (or add to
// it) instead of losing it; any handler in a matching route takes the
// error, whatever its module (no list of module names decides).
func TestHandleErrorsSeesBody(t *testing.T) {
	block := "\t\tcontent_service http://" + closedPort(t) + "\n\t\ttoken " + tokenPlain
	tc := load(t, site(block, `	handle_errors {
		@bridge path /v1/message/* /proxy/bee-auth
		handle @bridge {
			header Content-Type application/json
			header X-Handled-By site
			respond {vars.error_body} {err.status_code}
		}
	}`))
	res := post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), nil)
	if res.Status != 502 || res.Header.Get("X-Handled-By") != "site" {
		t.Fatalf("export: %d %q %s", res.Status, res.Header.Get("X-Handled-By"), res.Body)
	}
	assertErrorBody(t, res, 5020)

	// A route with only a header handler takes the error too: Caddy then
	// answers with the status alone.
	tc = load(t, site(block, "\thandle_errors {\n\t\theader X-Seen yes\n\t}"))
	res = post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), nil)
	if res.Status != 502 || res.Header.Get("X-Seen") != "yes" || len(res.Body) != 0 {
		t.Errorf("header-only route: %d X-Seen=%q body %q", res.Status, res.Header.Get("X-Seen"), res.Body)
	}
}
