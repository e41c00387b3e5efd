// Package content tests the content_service handler in a real Caddy
// started from Caddyfiles, on ports chosen when each config loads
// (testcaddy: {$PORT_<NAME>} in a Caddyfile). Tests that only use the
// package's config (start) run in parallel; those that load another
// config, force a reload, or measure memory or render times do not.
package content

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"

	"github.com/caddyserver/caddy/v2/caddytest"

	_ "github.com/designbridge/caddy-designbridge"
)

const (
	// The signing key reaches Caddy through {env.CS_IT_SIGNING_KEY}, so
	// placeholder resolution is exercised as well.
	signingKey   = "it-signing-key-0123456789abcdefghijklmnop"
	otherKey     = "it-other-key-ZYXWVUTSRQPONMLKJIHGFEDCBA9876"
	apiToken     = "it-api-token-alpha-00000000000000000001"
	apiToken2    = "it-api-token-alpha-00000000000000000002"
	disabledTok  = "it-api-token-disabled-000000000000001"
	editorAppTok = "it-api-token-editor-00000000000000001"
	alphaSecret  = "it-secret-alpha-0123456789"
	editorSecret = "it-secret-editor-0123456789"
)

// Sites of the test config, set by each load (setSites).
var (
	mainSite      string // three apps, max_body 256KiB
	replicaSite   string // same key as mainSite
	otherKeySite  string // another key
	limitedSite   string // rate_limit 2 per 1m
	sharedSite    string // pass_thru, then respond
	prefixSite    string // mounted under /cs with handle_path
	failureSite   string // login_failure_limit 3 per 1m
	smallOutSite  string // max_output 64KiB
	fetchSite     string // images from loopback, 1s per image
	rangesSite    string // images from 127.0.0.2 only, 1s per image, browser off
	renderSite    string // images from loopback allowed; renders time out after 4s
	heavySite     string // as renderSite, one tab, renders time out after 60s
	offSite       string // browser off
	boundSite     string // images from loopback, 2 fetched at once
	boundOneSite  string // images from loopback, 1 fetched at once, total_timeout 2s
	fewImagesSite string // images from loopback, max_images 3, one tab
)

// setSites points the site URLs at the running config's ports.
func setSites() {
	for v, name := range map[*string]string{
		&mainSite: "MAIN", &replicaSite: "REPLICA", &otherKeySite: "OTHERKEY",
		&limitedSite: "LIMITED", &sharedSite: "SHARED", &prefixSite: "PREFIX",
		&failureSite: "FAILURE", &smallOutSite: "SMALLOUT", &fetchSite: "FETCH",
		&rangesSite: "RANGES",
		&renderSite: "RENDER", &heavySite: "HEAVY", &offSite: "OFF",
		&boundSite: "BOUND", &boundOneSite: "BOUNDONE", &fewImagesSite: "FEWIMAGES",
	} {
		*v = testcaddy.URL(name)
	}
}

func TestMain(m *testing.M) {
	_, removeHome, err := testcaddy.PrivateHome("content-caddytest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	_ = os.Setenv("CS_IT_SIGNING_KEY", signingKey)
	_ = os.Setenv("CS_IT_ALPHA_TOKEN", "Bearer "+apiToken) // the prefix is optional
	_ = os.Setenv("CS_IT_ALPHA_TOKEN2", apiToken2)
	testcaddy.OnLoad(setSites)
	code := testcaddy.Finish(m.Run())
	removeHome()
	os.Exit(code)
}

// globalOptions is the global block every Caddyfile of this package uses.
const globalOptions = `{
	admin localhost:{$PORT_ADMIN}
	http_port {$PORT_HTTP}
	https_port {$PORT_HTTPS}
	skip_install_trust
	persist_config off
}
`

// apps is the app configuration shared by the sites that share a key.
const apps = `
		app alpha {
			secret ` + alphaSecret + `
			token {env.CS_IT_ALPHA_TOKEN} {env.CS_IT_ALPHA_TOKEN2}
		}
		app disabled-app {
			secret it-secret-disabled-0123
			token ` + disabledTok + `
			disabled
		}
		app editor-app {
			secret ` + editorSecret + `
			token ` + editorAppTok + `
			editor_tokens
		}`

// config is the Caddyfile of the tests.
var config = globalOptions + `
:{$PORT_MAIN} {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		max_body 256KiB
	}
}

:{$PORT_REPLICA} {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
	}
}

:{$PORT_OTHERKEY} {
	content_service {
		signing_key ` + otherKey + apps + `
	}
}

:{$PORT_LIMITED} {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		rate_limit 2 per 1m
	}
}

:{$PORT_SHARED} {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		pass_thru
	}
	respond "the next handler" 200
}

:{$PORT_PREFIX} {
	handle_path /cs/* {
		content_service {
			signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		}
	}
	respond "outside /cs" 200
}

:{$PORT_FAILURE} {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		login_failure_limit 3 per 1m
	}
}

:{$PORT_SMALLOUT} {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		max_output 64KiB
	}
}
`

// start loads the test config into the package's Caddy (started on first
// use, reloaded only when the config changed).
func start(t *testing.T) *testcaddy.Tester {
	t.Helper()
	tester := newTester(t)
	tester.InitServer(config, "caddyfile")
	return tester
}

func newTester(t *testing.T) *testcaddy.Tester {
	return testcaddy.NewTester(t, caddytest.Default.TestRequestTimeout)
}

// load loads a Caddyfile and answers as the admin API's /load would
// (testcaddy.Load).
func load(cfg string, force bool) (status int, body []byte, err error) {
	return testcaddy.Load([]byte(cfg), "text/caddyfile", force)
}

// response is a response read in full.
type response struct {
	status int
	header http.Header
	body   []byte
}

// post sends a request and reads the answer; every answer of the service
// must carry a request id.
func post(t *testing.T, tester *testcaddy.Tester, method, url string, headers map[string]string, body []byte) response {
	t.Helper()
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := tester.Client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: data}
}

var requestIDPattern = regexp.MustCompile(`^[0-9a-f-]{32,36}$`)

// checkRequestID fails unless the response has a well-formed request id.
func checkRequestID(t *testing.T, r response) string {
	t.Helper()
	id := r.header.Get("X-Request-Id")
	if !requestIDPattern.MatchString(id) {
		t.Errorf("X-Request-Id %q", id)
	}
	return id
}

// exportError decodes the export error object, failing on another shape
// or media type.
func exportError(t *testing.T, r response) (code int, message, details string) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("error Content-Type %q, want application/json (body %s)", ct, r.body)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &fields); err != nil || len(fields) != 3 {
		t.Fatalf("error body %s: want exactly code, message, details", r.body)
	}
	var e struct {
		Code    *int    `json:"code"`
		Message *string `json:"message"`
		Details *string `json:"details"`
	}
	if err := json.Unmarshal(r.body, &e); err != nil || e.Code == nil || e.Message == nil || e.Details == nil {
		t.Fatalf("error body %s: %v", r.body, err)
	}
	return *e.Code, *e.Message, *e.Details
}

// loginError decodes the LoginV2 error object.
func loginError(t *testing.T, r response) (code int, message string) {
	t.Helper()
	if ct := r.header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("error Content-Type %q (body %s)", ct, r.body)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(r.body, &fields); err != nil || len(fields) != 3 {
		t.Fatalf("error body %s: want exactly code, message, status_code", r.body)
	}
	var e struct {
		Code       *int    `json:"code"`
		Message    *string `json:"message"`
		StatusCode *int    `json:"status_code"`
	}
	if err := json.Unmarshal(r.body, &e); err != nil || e.Code == nil || e.Message == nil || e.StatusCode == nil {
		t.Fatalf("error body %s: %v", r.body, err)
	}
	if *e.StatusCode != r.status {
		t.Errorf("status_code %d, HTTP status %d", *e.StatusCode, r.status)
	}
	return *e.Code, *e.Message
}

// noSecrets fails if a response carries any configured secret.
func noSecrets(t *testing.T, r response) {
	t.Helper()
	all := string(r.body)
	for k, vs := range r.header {
		all += "\n" + k + ": " + strings.Join(vs, ", ")
	}
	for _, s := range []string{signingKey, otherKey, apiToken, apiToken2, disabledTok, editorAppTok, alphaSecret, editorSecret} {
		if strings.Contains(all, s) {
			t.Errorf("the response carries a secret (%d bytes)", len(s))
		}
	}
}

func bearer(tok string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + tok}
}
