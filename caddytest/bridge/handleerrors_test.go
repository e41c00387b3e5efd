package bridge

import (
	"net/http"
	"testing"
)

// siteHandleErrors is a site's own handle_errors, as a site that already
// has one writes it: no matcher, a page of its own for every error.
const siteHandleErrors = `	handle_errors {
		header X-Handled-By site
		respond "Sorry, that went wrong ({err.status_code})." {err.status_code}
	}`

// TestHandleErrorsRecipe: a site's own handle_errors, with no matcher that
// leaves design_bridge out, keeps the site's page for the site's errors
// and leaves the bridge's answers alone: design_bridge writes its JSON
// errors itself (the error policy in CONTRIBUTING.md), so the page's alert
// still gets the code and details.
func TestHandleErrorsRecipe(t *testing.T) {
	block := "\t\tcontent_service http://" + closedPort(t) + "\n\t\ttoken " + tokenPlain
	tc := load(t, site(block, siteHandleErrors))
	res := post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), nil)
	if res.Status != 502 || res.Header.Get("X-Handled-By") != "" {
		t.Fatalf("export: %d X-Handled-By=%q %s", res.Status, res.Header.Get("X-Handled-By"), res.Body)
	}
	assertErrorBody(t, res, 5020)
	res = do(t, tc, http.MethodGet, "/v1/message/html", nil, nil)
	if res.Status != 405 || res.Header.Get("X-Handled-By") != "" {
		t.Fatalf("GET export path: %d X-Handled-By=%q %s", res.Status, res.Header.Get("X-Handled-By"), res.Body)
	}
	assertErrorBody(t, res, 4050)
	res = do(t, tc, http.MethodGet, "/no-such-page", nil, nil)
	if res.Status != 404 || string(res.Body) != "Sorry, that went wrong (404)." {
		t.Errorf("site error: %d %q, want the site's own error page", res.Status, res.Body)
	}
}

// TestHandleErrorsSeesBody: handle_errors sees none of the bridge's
// errors, whatever its routes hold: a route with only a header handler
// (which would take an error handed to it, and leave Caddy's empty body)
// neither marks nor empties the bridge's JSON answer, on the export path
// or the auth path.
func TestHandleErrorsSeesBody(t *testing.T) {
	block := "\t\tcontent_service http://" + closedPort(t) + "\n\t\ttoken " + tokenPlain
	tc := load(t, site(block, "\thandle_errors {\n\t\theader X-Seen yes\n\t}"))
	res := post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), nil)
	if res.Status != 502 || res.Header.Get("X-Seen") != "" {
		t.Fatalf("export: %d X-Seen=%q %s", res.Status, res.Header.Get("X-Seen"), res.Body)
	}
	assertErrorBody(t, res, 5020)
	res = do(t, tc, http.MethodGet, "/proxy/bee-auth", nil, nil)
	if res.Status != 405 || res.Header.Get("X-Seen") != "" {
		t.Fatalf("auth path: %d X-Seen=%q %s", res.Status, res.Header.Get("X-Seen"), res.Body)
	}
	assertErrorBody(t, res, 4050)
	res = do(t, tc, http.MethodGet, "/no-such-page", nil, nil)
	if res.Status != 404 || res.Header.Get("X-Seen") != "yes" {
		t.Errorf("site error: %d X-Seen=%q, want handle_errors to see it", res.Status, res.Header.Get("X-Seen"))
	}
}
