package content

import (
	"net/http"
	"testing"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
)

// TestHandleErrors: content_service's errors are caddyhttp.Errors that a
// site's handle_errors sees, with the JSON body in {vars.error_body}; with
// no handle_errors route for them, the service writes the body itself (the
// other tests of this package).
func TestHandleErrors(t *testing.T) {
	tester := newTester(t)
	tester.InitServer(globalOptions+`
:{$PORT_HANDLED} {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}`+apps+`
	}
	handle_errors {
		header X-Handled {err.status_code}
		header Content-Type application/json
		respond {vars.error_body} {err.status_code}
	}
}
`, "caddyfile")
	res := post(t, tester, http.MethodPost, testcaddy.URL("HANDLED")+"/v1/message/html", bearer("not-a-configured-token"), []byte(`{"page":{}}`))
	if res.status != 403 || res.header.Get("X-Handled") != "403" {
		t.Fatalf("got %d, X-Handled %q: %s", res.status, res.header.Get("X-Handled"), res.body)
	}
	if code, _, _ := exportError(t, res); code == 0 {
		t.Errorf("no error body through handle_errors: %s", res.body)
	}
	res = post(t, tester, http.MethodGet, testcaddy.URL("HANDLED")+"/loginV2", nil, nil)
	if res.status != 405 || res.header.Get("X-Handled") != "405" {
		t.Fatalf("got %d, X-Handled %q: %s", res.status, res.header.Get("X-Handled"), res.body)
	}
	if code, _ := loginError(t, res); code != 405 {
		t.Errorf("login error code %d: %s", code, res.body)
	}
}
