package content

import (
	"net/http"
	"testing"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
)

// TestHandleErrors: a site's handle_errors sees none of content_service's
// errors: the service writes its JSON error bodies itself (the error
// policy in CONTRIBUTING.md), so a site whose handle_errors answers every
// error with a page of its own still gives the editor the contract's
// bodies.
func TestHandleErrors(t *testing.T) {
	tester := newTester(t)
	tester.InitServer(globalOptions+`
:{$PORT_HANDLED} {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}`+apps+`
	}
	handle_errors {
		header X-Handled {err.status_code}
		respond "Sorry ({err.status_code})" {err.status_code}
	}
}
`, "caddyfile")
	res := post(t, tester, http.MethodPost, testcaddy.URL("HANDLED")+"/v1/message/html", bearer("not-a-configured-token"), []byte(`{"page":{}}`))
	if res.status != 403 || res.header.Get("X-Handled") != "" {
		t.Fatalf("got %d, X-Handled %q: %s", res.status, res.header.Get("X-Handled"), res.body)
	}
	if code, _, _ := exportError(t, res); code != 4003 {
		t.Errorf("export error code %d: %s", code, res.body)
	}
	res = post(t, tester, http.MethodGet, testcaddy.URL("HANDLED")+"/loginV2", nil, nil)
	if res.status != 405 || res.header.Get("X-Handled") != "" {
		t.Fatalf("got %d, X-Handled %q: %s", res.status, res.header.Get("X-Handled"), res.body)
	}
	if code, _ := loginError(t, res); code != 405 {
		t.Errorf("login error code %d: %s", code, res.body)
	}
}
