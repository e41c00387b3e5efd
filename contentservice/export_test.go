package contentservice

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/render"
)

func bearer(tok string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + tok}
}

func TestExportAuthentication(t *testing.T) {
	h, clock, _ := newTestHandler(t, withFakeRenderer(nil, fakeOutput, nil))
	editor := login(t, h, "editor-app", "secret-editor-0123", "user-1").AccessToken
	alphaEditor := login(t, h, "alpha", testSecret, "user-1").AccessToken
	other, _, _ := newTestHandler(t, func(o *Handler) { o.SigningKey = strings.Repeat("k", 40) })
	foreign := login(t, other, "editor-app", "secret-editor-0123", "user-1").AccessToken

	tests := []struct {
		name    string
		headers map[string]string
		advance time.Duration // clock moves before the request
		status  int
		code    int
	}{
		{"no header", nil, 0, 401, CodeNoAuthorization},
		{"empty header", map[string]string{"Authorization": ""}, 0, 401, CodeMalformedBearer},
		{"missing prefix", map[string]string{"Authorization": testAPIToken}, 0, 401, CodeMalformedBearer},
		{"other scheme", map[string]string{"Authorization": "Basic " + testAPIToken}, 0, 401, CodeMalformedBearer},
		{"empty token", map[string]string{"Authorization": "Bearer "}, 0, 401, CodeMalformedBearer},
		{"bearer only", map[string]string{"Authorization": "Bearer"}, 0, 401, CodeMalformedBearer},
		{"two words", map[string]string{"Authorization": "Bearer a b"}, 0, 401, CodeMalformedBearer},
		{"unknown token", bearer("nope"), 0, 403, CodeForbiddenToken},
		{"token prefix", bearer(testAPIToken[:len(testAPIToken)-1]), 0, 403, CodeForbiddenToken},
		{"token of disabled app", bearer(testDisToken), 0, 403, CodeForbiddenToken},
		{"valid token", bearer(testAPIToken), 0, 200, 0},
		{"second token", bearer(testToken2), 0, 200, 0},
		{"lower-case scheme", map[string]string{"Authorization": "bearer " + testAPIToken}, 0, 200, 0},
		{"editor token allowed", bearer(editor), 0, 200, 0},
		{"editor token of app without editor_tokens", bearer(alphaEditor), 0, 403, CodeForbiddenToken},
		{"editor token signed by another key", bearer(foreign), 0, 403, CodeForbiddenToken},
		{"editor token expired", bearer(editor), AccessTokenTTL, 401, CodeTokenExpired},
		{"API token still valid later", bearer(testAPIToken), 0, 200, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock.advance(tt.advance)
			w := do(t, h, request{path: PathHTML, headers: tt.headers, body: "{}"})
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			if tt.code != 0 {
				if e := exportErrorOf(t, w); e.Code != tt.code {
					t.Errorf("code %d, want %d", e.Code, tt.code)
				}
			}
		})
	}
}

func TestEditorTokenNoneAlgRefused(t *testing.T) {
	h, _, _ := newTestHandler(t, withFakeRenderer(nil, fakeOutput, nil))
	tok := login(t, h, "editor-app", "secret-editor-0123", "u").AccessToken
	parts := strings.Split(tok, ".")
	// Same claims, "alg":"none", no signature.
	forged := "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + parts[1] + "."
	w := do(t, h, request{path: PathHTML, headers: bearer(forged), body: "{}"})
	if w.Code != 403 || exportErrorOf(t, w).Code != CodeForbiddenToken {
		t.Fatalf("alg none: %d %s", w.Code, w.Body)
	}
}

func TestExportErrors(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Handler)
		method  string
		path    string
		headers map[string]string
		body    string
		status  int
		code    int
		details string // substring of details
	}{
		{"not JSON", withFakeRenderer(fmt.Errorf("line 1: %w", design.ErrNotJSON), nil, nil),
			"", PathHTML, nil, "<html>", 400, CodeNotJSON, "not JSON"},
		{"not a design", withFakeRenderer(&design.PathError{Path: "page.rows[3]", Msg: "must be an object"}, nil, nil),
			"", PathHTML, nil, `{"page":{"rows":[1,2,3,4]}}`, 400, CodeNotDesign, "page.rows[3]: must be an object"},
		{"wrapped path error", withFakeRenderer(fmt.Errorf("decode: %w", &design.PathError{Path: "page", Msg: "missing"}), nil, nil),
			"", PathPlainText, nil, `{}`, 400, CodeNotDesign, "page: missing"},
		{"renderer refuses a block", withFakeRenderer(nil, nil, &design.PathError{Path: "page.rows[0].columns[0].modules[0]", Msg: "descriptor.button.label must be a string, not array"}),
			"", PathHTML, nil, `{}`, 400, CodeNotDesign, "page.rows[0].columns[0].modules[0]: descriptor.button.label must be a string, not array"},
		{"a block the real renderer cannot read", nil,
			"", PathPlainText, nil, `{"page":{"rows":[{"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-button","descriptor":{"button":{"label":[]}}}]}]}]}}`,
			400, CodeNotDesign, "page.rows[0].columns[0].modules[0]: descriptor.button.label must be a string, not array"},
		{"design over a bound", withFakeRenderer(fmt.Errorf("depth 200: %w", design.ErrTooLarge), nil, nil),
			"", PathHTML, nil, `{}`, 413, CodeBodyTooLarge, "depth"},
		{"body over max_body", func(h *Handler) { withFakeRenderer(nil, fakeOutput, nil)(h); h.MaxBody = 10 },
			"", PathHTML, nil, `{"page":{"rows":[]}}`, 413, CodeBodyTooLarge, "10 bytes"},
		{"media type text/plain", withFakeRenderer(nil, fakeOutput, nil),
			"", PathHTML, map[string]string{"Content-Type": "text/plain"}, `{}`, 415, CodeMediaType, "application/json"},
		{"media type form", withFakeRenderer(nil, fakeOutput, nil),
			"", PathPlainText, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, `{}`, 415, CodeMediaType, ""},
		{"media type malformed", withFakeRenderer(nil, fakeOutput, nil),
			"", PathHTML, map[string]string{"Content-Type": "application/json;;=="}, `{}`, 415, CodeMediaType, ""},
		{"GET", withFakeRenderer(nil, fakeOutput, nil),
			http.MethodGet, PathHTML, nil, ``, 405, 405, "POST"},
		{"PUT plain text", withFakeRenderer(nil, fakeOutput, nil),
			http.MethodPut, PathPlainText, nil, `{}`, 405, 405, "POST"},
		{"unknown path", withFakeRenderer(nil, fakeOutput, nil),
			"", "/v1/message/pdf", nil, `{}`, 404, 404, PathHTML},
		{"render error", withFakeRenderer(nil, nil, errors.New("boom")),
			"", PathHTML, nil, `{}`, 500, CodeInternal, "request id "},
		{"renderer returned nil", withFakeRenderer(nil, nil, nil),
			"", PathHTML, nil, `{}`, 500, CodeInternal, "request id "},
		{"unclassified decode error", withFakeRenderer(errors.New("odd"), nil, nil),
			"", PathHTML, nil, `{}`, 500, CodeInternal, "request id "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _, _ := newTestHandler(t, tt.mutate)
			headers := map[string]string{"Authorization": "Bearer " + testAPIToken}
			for k, v := range tt.headers {
				headers[k] = v
			}
			w := do(t, h, request{method: tt.method, path: tt.path, headers: headers, body: tt.body})
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			e := exportErrorOf(t, w)
			if e.Code != tt.code {
				t.Errorf("code %d, want %d", e.Code, tt.code)
			}
			if !strings.Contains(e.Details, tt.details) {
				t.Errorf("details %q, want it to contain %q", e.Details, tt.details)
			}
			if tt.status == 405 && w.Header().Get("Allow") != "POST" {
				t.Errorf("Allow %q, want POST", w.Header().Get("Allow"))
			}
			if tt.status == 500 && e.Details != "request id "+w.Header().Get("X-Request-Id") {
				t.Errorf("details %q do not repeat X-Request-Id %q", e.Details, w.Header().Get("X-Request-Id"))
			}
		})
	}
}

func TestBodyOverLimitWithoutContentLength(t *testing.T) {
	h, _, _ := newTestHandler(t, func(h *Handler) { withFakeRenderer(nil, fakeOutput, nil)(h); h.MaxBody = 1 << 10 })
	for _, size := range []int{1024, 1025} {
		r := request{path: PathHTML, headers: bearer(testAPIToken), body: strings.Repeat(" ", size)}
		req := do(t, h, r)
		want := 200
		if size > 1024 {
			want = 413
		}
		if req.Code != want {
			t.Errorf("%d bytes: status %d, want %d", size, req.Code, want)
		}
	}
	// A chunked body (ContentLength -1) is bounded while reading.
	w := doChunked(t, h, strings.Repeat("x", 2048))
	if w.Code != 413 || exportErrorOf(t, w).Code != CodeBodyTooLarge {
		t.Errorf("chunked: %d %s", w.Code, w.Body)
	}
}

func TestMissingContentTypeAccepted(t *testing.T) {
	h, _, _ := newTestHandler(t, withFakeRenderer(nil, fakeOutput, nil))
	for _, ct := range []string{"", "application/json", "application/json; charset=utf-8", "Application/JSON"} {
		headers := bearer(testAPIToken)
		if ct != "" {
			headers["Content-Type"] = ct
		}
		if w := do(t, h, request{path: PathHTML, headers: headers, body: "{}"}); w.Code != 200 {
			t.Errorf("Content-Type %q: status %d", ct, w.Code)
		}
	}
}

func TestRendererPanicBecomes4200AndIsLogged(t *testing.T) {
	h, _, logs := newTestHandler(t, func(h *Handler) {
		withFakeRenderer(nil, nil, nil)(h)
		h.renderHTML = func(*design.Design) (*render.Output, error) { panic("index out of range in renderer") }
	})
	w := do(t, h, request{path: PathHTML, headers: bearer(testAPIToken), body: "{}"})
	if w.Code != 500 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	e := exportErrorOf(t, w)
	id := w.Header().Get("X-Request-Id")
	if e.Code != CodeInternal || id == "" || e.Details != "request id "+id {
		t.Fatalf("error %+v, request id %q", e, id)
	}
	entries := logs.FilterField(stringField("request_id", id)).All()
	if len(entries) != 1 {
		t.Fatalf("want one log entry with request id %s, got %d (all: %v)", id, len(entries), logs.All())
	}
	if !strings.Contains(entries[0].ContextMap()["error"].(string), "index out of range in renderer") {
		t.Errorf("log entry does not name the panic: %v", entries[0].ContextMap())
	}
	if strings.Contains(fmt.Sprint(entries[0].ContextMap()), testAPIToken) {
		t.Error("the log entry holds the token")
	}
	// The decoder panicking is no different.
	h.decode = func([]byte) (*design.Design, error) { panic("decoder bug") }
	if w := do(t, h, request{path: PathPlainText, headers: bearer(testAPIToken), body: "{}"}); w.Code != 500 {
		t.Errorf("decoder panic: status %d", w.Code)
	}
}

func TestResponseForms(t *testing.T) {
	html := &render.Output{Body: []byte(`<!DOCTYPE html><html lang="en"><body><a href="x?a=1&b=2">x</a></body></html>`)}
	h, _, _ := newTestHandler(t, withFakeRenderer(nil, html, nil))
	tests := []struct {
		path   string
		accept string // "-" for no header
		json   bool
		ctype  string
	}{
		{PathHTML, "-", false, "text/html; charset=utf-8"},
		{PathHTML, "*/*", false, "text/html; charset=utf-8"},
		{PathHTML, "text/html", false, "text/html; charset=utf-8"},
		{PathHTML, "text/html, application/json", false, "text/html; charset=utf-8"},
		{PathHTML, "application/json", true, "application/json"},
		{PathHTML, "application/json, text/html;q=0.5", true, "application/json"},
		{PathHTML, "text/html;q=0.1, application/json;q=0.9", true, "application/json"},
		{PathHTML, "application/json;q=0.5, */*;q=0.1", true, "application/json"},
		{PathHTML, "application/*", true, "application/json"},
		{PathHTML, "image/png", false, "text/html; charset=utf-8"},
		{PathPlainText, "-", false, "text/plain; charset=utf-8"},
		{PathPlainText, "text/plain", false, "text/plain; charset=utf-8"},
		{PathPlainText, "application/json", true, "application/json"},
	}
	for _, tt := range tests {
		t.Run(tt.path+" "+tt.accept, func(t *testing.T) {
			headers := bearer(testAPIToken)
			if tt.accept != "-" {
				headers["Accept"] = tt.accept
			}
			w := do(t, h, request{path: tt.path, headers: headers, body: "{}"})
			if w.Code != 200 {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			if ct := w.Header().Get("Content-Type"); ct != tt.ctype {
				t.Errorf("Content-Type %q, want %q", ct, tt.ctype)
			}
			if !tt.json {
				if w.Body.String() != string(html.Body) {
					t.Errorf("raw body %q", w.Body)
				}
				return
			}
			key := "html"
			if tt.path == PathPlainText {
				key = "text"
			}
			var wrapped map[string]map[string]string
			if err := json.Unmarshal(w.Body.Bytes(), &wrapped); err != nil {
				t.Fatalf("JSON form: %v: %s", err, w.Body)
			}
			if len(wrapped) != 1 || len(wrapped["body"]) != 1 || wrapped["body"][key] != string(html.Body) {
				t.Errorf("JSON form %s, want {\"body\":{%q:…}}", w.Body, key)
			}
			if w.Header().Get("Content-Length") != strconv.Itoa(w.Body.Len()) {
				t.Errorf("Content-Length %q for %d bytes", w.Header().Get("Content-Length"), w.Body.Len())
			}
		})
	}
}

func TestWarningsHeader(t *testing.T) {
	var many []string
	for i := range 25 {
		many = append(many, fmt.Sprintf("unknown module type \"x-%d\"", i))
	}
	tests := []struct {
		name     string
		warnings []string
		want     []string
	}{
		{"none", nil, nil},
		{"two", []string{`unknown module type "mailup-bee-newsletter-modules-addon"`, "form omitted"},
			[]string{`unknown module type "mailup-bee-newsletter-modules-addon"`, "form omitted"}},
		{"control characters and non-ASCII", []string{"bad\r\nX-Injected: 1", "é"}, []string{"bad??X-Injected: 1", "??"}},
		{"capped", many, append(append([]string{}, many[:20]...), "5 more warnings")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := &render.Output{Body: []byte("<html></html>"), Warnings: tt.warnings}
			h, _, _ := newTestHandler(t, withFakeRenderer(nil, out, nil))
			w := do(t, h, request{path: PathHTML, headers: bearer(testAPIToken), body: "{}"})
			got := w.Header().Values("X-Design-Warnings")
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("X-Design-Warnings %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRateLimit(t *testing.T) {
	h, clock, _ := newTestHandler(t, func(h *Handler) {
		withFakeRenderer(nil, fakeOutput, nil)(h)
		h.RateLimit = &RateLimit{Requests: "2", Window: "1m"}
	})
	call := func(tok string) *httptestResult {
		w := do(t, h, request{path: PathHTML, headers: bearer(tok), body: "{}"})
		return &httptestResult{w.Code, w.Header().Get("Retry-After"), w}
	}
	for i := range 2 {
		if r := call(testAPIToken); r.status != 200 {
			t.Fatalf("request %d: %d", i, r.status)
		}
	}
	r := call(testAPIToken)
	if r.status != 429 || exportErrorOf(t, r.w).Code != CodeRateLimited || r.retryAfter != "30" {
		t.Fatalf("third request: %d Retry-After %q %s", r.status, r.retryAfter, r.w.Body)
	}
	// Each token has its own budget.
	if r := call(testToken2); r.status != 200 {
		t.Errorf("second token limited: %d", r.status)
	}
	// Unknown tokens are refused before they count.
	if r := call("unknown"); r.status != 403 {
		t.Errorf("unknown token: %d", r.status)
	}
	clock.advance(30 * time.Second)
	if r := call(testAPIToken); r.status != 200 {
		t.Errorf("after Retry-After: %d", r.status)
	}
	if r := call(testAPIToken); r.status != 429 {
		t.Errorf("bucket should be empty again: %d", r.status)
	}
}

type httptestResult struct {
	status     int
	retryAfter string
	w          *httptest.ResponseRecorder
}

// doChunked posts body as a chunked request (no Content-Length).
func doChunked(t *testing.T, h *Handler, body string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, PathHTML, io.MultiReader(strings.NewReader(body)))
	r.ContentLength = -1
	r.Header.Set("Authorization", "Bearer "+testAPIToken)
	w := httptest.NewRecorder()
	if err := h.ServeHTTP(w, r, nil); err != nil {
		t.Fatal(err)
	}
	return w
}

func stringField(key, value string) zap.Field { return zap.String(key, value) }
