package contentservice

import (
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

const (
	testKey      = "0123456789abcdef0123456789abcdef-test-key"
	testAPIToken = "cs-api-token-ALPHA-000000000001"
	testToken2   = "cs-api-token-ALPHA-000000000002"
	testDisToken = "cs-api-token-DISABLED-0000000001"
	testEdToken  = "cs-api-token-EDITOR-00000000001"
	testSecret   = "secret-alpha-0123456789"
)

// minimalDesign is the smallest design the decoder accepts; it renders
// without warnings.
const minimalDesign = `{"page":{"rows":[]}}`

// newTestService returns a service built the way Provision builds it, with
// three apps ("alpha": two API tokens; "disabled-app": disabled;
// "editor-app": editor_tokens) and a log observer. mutate changes the
// configuration first.
func newTestService(t testing.TB, mutate func(*Handler)) (*service, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zap.DebugLevel)
	cfg := &Handler{
		SigningKey: testKey,
		Apps: []App{
			{ClientID: "alpha", ClientSecret: testSecret, Tokens: []string{testAPIToken, testToken2}},
			{ClientID: "disabled-app", ClientSecret: "secret-disabled-0123", Tokens: []string{testDisToken}, Disabled: true},
			{ClientID: "editor-app", ClientSecret: "secret-editor-0123", Tokens: []string{testEdToken}, EditorTokens: true},
		},
	}
	if mutate != nil {
		mutate(cfg)
	}
	s, err := newService(cfg, caddy.NewReplacer(), zap.New(core))
	if err != nil {
		t.Fatalf("newService: %v", err)
	}
	return s, logs
}

// editorToken returns an editor token that the test services accept for
// clientID's application, issued at issued: a token from the past is
// expired, or past its refresh window, without a clock to move.
func editorToken(t testing.TB, clientID, uid string, issued time.Time, refreshUntil time.Time) string {
	t.Helper()
	tok, err := signEditorToken([]byte(testKey), testAppRef(clientID), uid, issued, refreshUntil.Unix())
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// testAppRef is the reference of clientID's application of the test
// services.
func testAppRef(clientID string) string {
	secret := map[string]string{"alpha": testSecret, "disabled-app": "secret-disabled-0123", "editor-app": "secret-editor-0123"}[clientID]
	return appRef([]byte(testKey), clientID, sha256.Sum256([]byte(secret)))
}

// request describes one test request.
type request struct {
	method  string
	path    string
	headers map[string]string
	body    string
}

// do runs one request through h, the service or the module (with a next
// handler that answers 299, so that pass-through is visible) and returns
// the recorder.
func do(t testing.TB, h caddyhttp.MiddlewareHandler, req request) *httptest.ResponseRecorder {
	t.Helper()
	if req.method == "" {
		req.method = http.MethodPost
	}
	r := httptest.NewRequest(req.method, req.path, strings.NewReader(req.body))
	for k, v := range req.headers {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		w.WriteHeader(299)
		return nil
	})
	if err := h.ServeHTTP(w, r, next); err != nil {
		t.Fatalf("ServeHTTP returned %v", err)
	}
	return w
}

// errorBodyOf decodes a JSON error body into T, failing unless it has
// exactly the given members.
func errorBodyOf[T any](t testing.TB, w *httptest.ResponseRecorder, members ...string) T {
	t.Helper()
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q, want application/json; body %s", ct, w.Body)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(w.Body.Bytes(), &fields); err != nil {
		t.Fatalf("error body is not JSON: %v: %s", err, w.Body)
	}
	if len(fields) != len(members) {
		t.Fatalf("error body %s: want exactly %v", w.Body, members)
	}
	for _, m := range members {
		if fields[m] == nil {
			t.Fatalf("error body %s: want exactly %v", w.Body, members)
		}
	}
	var e T
	if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil {
		t.Fatalf("error body: %v", err)
	}
	return e
}

// exportErrorOf decodes an export error body, failing on any other shape.
func exportErrorOf(t testing.TB, w *httptest.ResponseRecorder) exportError {
	t.Helper()
	return errorBodyOf[exportError](t, w, "code", "message", "details")
}

// loginErrorOf decodes a LoginV2 error body, failing on any other shape.
func loginErrorOf(t testing.TB, w *httptest.ResponseRecorder) loginError {
	t.Helper()
	e := errorBodyOf[loginError](t, w, "code", "message", "status_code")
	if e.StatusCode != w.Code {
		t.Errorf("status_code %d, HTTP status %d", e.StatusCode, w.Code)
	}
	return e
}

// login performs a successful LoginV2 and returns the response body.
func login(t testing.TB, h *service, clientID, secret, uid string) loginResponse {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"client_id": clientID, "client_secret": secret, "uid": uid})
	w := do(t, h, request{path: PathLogin, headers: map[string]string{"Content-Type": "application/json"}, body: string(body)})
	if w.Code != http.StatusOK {
		t.Fatalf("login: status %d: %s", w.Code, w.Body)
	}
	var resp loginResponse
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil {
		t.Fatalf("login body: %v", err)
	}
	return resp
}
