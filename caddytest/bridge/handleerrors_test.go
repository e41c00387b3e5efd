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

// closedBridge is a design_bridge block whose content service refuses
// every connection.
func closedBridge(t *testing.T) string {
	return "\t\tcontent_service http://" + closedPort(t) + "\n\t\ttoken " + tokenPlain
}

// assertUnmarked checks that res is the bridge's own JSON error (status
// and code) and carries no header mark, the one a handle_errors route
// would have set.
func assertUnmarked(t *testing.T, what string, res response, status, code int, mark string) {
	t.Helper()
	if res.Status != status || res.Header.Get(mark) != "" {
		t.Fatalf("%s: %d %s=%q %s", what, res.Status, mark, res.Header.Get(mark), res.Body)
	}
	assertErrorBody(t, res, code)
}

// TestHandleErrorsRecipe: a site's own handle_errors, with no matcher that
// leaves design_bridge out, keeps the site's page for the site's errors
// and leaves the bridge's answers alone: design_bridge writes its JSON
// errors itself (the error policy in CONTRIBUTING.md), so the page's alert
// still gets the code and details.
func TestHandleErrorsRecipe(t *testing.T) {
	tc := load(t, site(closedBridge(t), siteHandleErrors))
	assertUnmarked(t, "export", post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), nil), 502, 5020, "X-Handled-By")
	assertUnmarked(t, "GET export path", do(t, tc, http.MethodGet, "/v1/message/html", nil, nil), 405, 4050, "X-Handled-By")
	res := do(t, tc, http.MethodGet, "/no-such-page", nil, nil)
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
	tc := load(t, site(closedBridge(t), "\thandle_errors {\n\t\theader X-Seen yes\n\t}"))
	assertUnmarked(t, "export", post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), nil), 502, 5020, "X-Seen")
	assertUnmarked(t, "auth path", do(t, tc, http.MethodGet, "/proxy/bee-auth", nil, nil), 405, 4050, "X-Seen")
	res := do(t, tc, http.MethodGet, "/no-such-page", nil, nil)
	if res.Status != 404 || res.Header.Get("X-Seen") != "yes" {
		t.Errorf("site error: %d X-Seen=%q, want handle_errors to see it", res.Status, res.Header.Get("X-Seen"))
	}
}
