// Package content tests the content_service handler in a real Caddy
// started from Caddyfiles (admin port 2903, HTTP ports 9300-9399).
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

	"github.com/designbridge/caddy-designbridge/caddytest/internal/adminapi"
	"github.com/designbridge/caddy-designbridge/caddytest/internal/pkglock"

	"github.com/caddyserver/caddy/v2/caddytest"

	_ "github.com/designbridge/caddy-designbridge"
)

const (
	adminPort = 2903

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

	// Sites of the test config.
	mainSite     = "http://localhost:9301" // three apps, max_body 256KiB
	replicaSite  = "http://localhost:9302" // same key as mainSite
	otherKeySite = "http://localhost:9303" // another key
	limitedSite  = "http://localhost:9304" // rate_limit 2 per 1m
	sharedSite   = "http://localhost:9305" // pass_thru, then respond
	prefixSite   = "http://localhost:9306" // mounted under /cs with handle_path
	failureSite  = "http://localhost:9307" // login_failure_limit 3 per 1m
	smallOutSite = "http://localhost:9308" // max_output 64KiB
)

func TestMain(m *testing.M) {
	if err := pkglock.Acquire("content"); err != nil {
		fmt.Fprintln(os.Stderr, "locking:", err)
		os.Exit(1)
	}
	adminapi.SteadyLoads()
	dir, err := os.MkdirTemp("", "content-caddytest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, v := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "HOME"} {
		_ = os.Setenv(v, dir)
	}
	_ = os.Setenv("CS_IT_SIGNING_KEY", signingKey)
	_ = os.Setenv("CS_IT_ALPHA_TOKEN", "Bearer "+apiToken) // the prefix is optional
	_ = os.Setenv("CS_IT_ALPHA_TOKEN2", apiToken2)
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// globalOptions is the global block every Caddyfile of this package uses.
const globalOptions = `{
	admin localhost:2903
	http_port 9300
	https_port 9343
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
:9301 {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		max_body 256KiB
	}
}

:9302 {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
	}
}

:9303 {
	content_service {
		signing_key ` + otherKey + apps + `
	}
}

:9304 {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		rate_limit 2 per 1m
	}
}

:9305 {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		pass_thru
	}
	respond "the next handler" 200
}

:9306 {
	handle_path /cs/* {
		content_service {
			signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		}
	}
	respond "outside /cs" 200
}

:9307 {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		login_failure_limit 3 per 1m
	}
}

:9308 {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		max_output 64KiB
	}
}
`

// start loads the test config into the package's Caddy (started on first
// use, reloaded only when the config changed).
func start(t *testing.T) *caddytest.Tester {
	t.Helper()
	tester := adminapi.NewTester(t, caddytest.Config{AdminPort: adminPort})
	tester.InitServer(config, "caddyfile")
	return tester
}

// response is a response read in full.
type response struct {
	status int
	header http.Header
	body   []byte
}

// post sends a request and reads the answer; every answer of the service
// must carry a request id.
func post(t *testing.T, tester *caddytest.Tester, method, url string, headers map[string]string, body []byte) response {
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
