package contentservice

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/caddyserver/caddy/v2"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/render"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

func bearer(tok string) map[string]string {
	return map[string]string{"Authorization": "Bearer " + tok}
}

func TestExportAuthentication(t *testing.T) {
	h, _ := newTestService(t, nil)
	editor := login(t, h, "editor-app", "secret-editor-0123", "user-1").AccessToken
	alphaEditor := login(t, h, "alpha", testSecret, "user-1").AccessToken
	other, _ := newTestService(t, func(o *Handler) { o.SigningKey = strings.Repeat("k", 40) })
	foreign := login(t, other, "editor-app", "secret-editor-0123", "user-1").AccessToken
	// Issued one lifetime ago: it expires now, inside its refresh window.
	now := time.Now()
	expired := editorToken(t, "editor-app", "user-1", now.Add(-AccessTokenTTL), now.Add(time.Hour))

	tests := []struct {
		name    string
		headers map[string]string
		status  int
		code    int
	}{
		{"no header", nil, 401, CodeNoAuthorization},
		{"empty header", map[string]string{"Authorization": ""}, 401, CodeMalformedBearer},
		{"missing prefix", map[string]string{"Authorization": testAPIToken}, 401, CodeMalformedBearer},
		{"other scheme", map[string]string{"Authorization": "Basic " + testAPIToken}, 401, CodeMalformedBearer},
		{"empty token", map[string]string{"Authorization": "Bearer "}, 401, CodeMalformedBearer},
		{"bearer only", map[string]string{"Authorization": "Bearer"}, 401, CodeMalformedBearer},
		{"two words", map[string]string{"Authorization": "Bearer a b"}, 401, CodeMalformedBearer},
		{"unknown token", bearer("nope"), 403, CodeForbiddenToken},
		{"token prefix", bearer(testAPIToken[:len(testAPIToken)-1]), 403, CodeForbiddenToken},
		{"token of disabled app", bearer(testDisToken), 403, CodeForbiddenToken},
		{"valid token", bearer(testAPIToken), 200, 0},
		{"second token", bearer(testToken2), 200, 0},
		{"lower-case scheme", map[string]string{"Authorization": "bearer " + testAPIToken}, 200, 0},
		{"editor token allowed", bearer(editor), 200, 0},
		{"editor token of app without editor_tokens", bearer(alphaEditor), 403, CodeForbiddenToken},
		{"editor token signed by another key", bearer(foreign), 403, CodeForbiddenToken},
		{"editor token expired", bearer(expired), 401, CodeTokenExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := do(t, h, request{path: PathHTML, headers: tt.headers, body: minimalDesign})
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
	h, _ := newTestService(t, nil)
	tok := login(t, h, "editor-app", "secret-editor-0123", "u").AccessToken
	parts := strings.Split(tok, ".")
	// Same claims, "alg":"none", no signature.
	forged := "eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0." + parts[1] + "."
	w := do(t, h, request{path: PathHTML, headers: bearer(forged), body: minimalDesign})
	if w.Code != 403 || exportErrorOf(t, w).Code != CodeForbiddenToken {
		t.Fatalf("alg none: %d %s", w.Code, w.Body)
	}
}

func TestExportErrors(t *testing.T) {
	deep := `{"page":` + strings.Repeat("[", design.DefaultMaxDepth+1) + strings.Repeat("]", design.DefaultMaxDepth+1) + `}`
	tests := []struct {
		name    string
		maxBody int64 // and max_output, when negative
		method  string
		path    string
		headers map[string]string
		body    string
		status  int
		code    int
		details string // substring of details
	}{
		{"not JSON", 0, "", PathHTML, nil, "<html>", 400, CodeNotJSON, "not JSON"},
		{"empty body", 0, "", PathHTML, nil, "", 400, CodeNotJSON, "not JSON"},
		{"not a design", 0, "", PathHTML, nil, `{"page":{"rows":[1,2,3,4]}}`, 400, CodeNotDesign, "page.rows[0]: "},
		{"no page", 0, "", PathPlainText, nil, `{}`, 400, CodeNotDesign, `$: missing "page"`},
		{"a block the renderer cannot read", 0, "", PathPlainText, nil, `{"page":{"rows":[{"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-button","descriptor":{"button":{"label":[]}}}]}]}]}}`,
			400, CodeNotDesign, "page.rows[0].columns[0].modules[0]: descriptor.button.label must be a string, not array"},
		{"design over a bound", 0, "", PathHTML, nil, deep, 413, CodeBodyTooLarge, "nesting deeper"},
		{"body over max_body", 10, "", PathHTML, nil, minimalDesign, 413, CodeBodyTooLarge, "10 bytes"},
		{"HTML over max_output", -1000, "", PathHTML, nil, minimalDesign, 413, CodeBodyTooLarge, "more than 1000 bytes (max_output)"},
		{"text over max_output", -10, "", PathPlainText, nil, `{"page":{"rows":[{"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-text","descriptor":{"text":{"html":"<p>eleven char</p>"}}}]}]}]}}`,
			413, CodeBodyTooLarge, "more than 10 bytes (max_output)"},
		{"media type text/plain", 0, "", PathHTML, map[string]string{"Content-Type": "text/plain"}, minimalDesign, 415, CodeMediaType, "application/json"},
		{"media type form", 0, "", PathPlainText, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, minimalDesign, 415, CodeMediaType, ""},
		{"media type malformed", 0, "", PathHTML, map[string]string{"Content-Type": "application/json;;=="}, minimalDesign, 415, CodeMediaType, ""},
		{"GET", 0, http.MethodGet, PathHTML, nil, ``, 405, 405, "POST"},
		{"PUT plain text", 0, http.MethodPut, PathPlainText, nil, minimalDesign, 405, 405, "POST"},
		{"unknown path", 0, "", "/v1/message/amp", nil, minimalDesign, 404, 404, PathHTML},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := newTestService(t, func(h *Handler) {
				if tt.maxBody < 0 {
					h.MaxOutput = -tt.maxBody
				} else {
					h.MaxBody = tt.maxBody
				}
			})
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
		})
	}
}

// TestClassifyDecodeError: the decoder's errors, also wrapped, map to the
// contract's codes; an error of no known kind is the decoder's fault, a
// 500 (no design reaches that: the export path cannot be shown it).
func TestClassifyDecodeError(t *testing.T) {
	tests := []struct {
		name    string
		err     error
		status  int
		code    int
		details string
	}{
		{"not JSON", fmt.Errorf("line 1: %w", design.ErrNotJSON), 400, CodeNotJSON, "line 1: design: not JSON"},
		{"path error", &design.PathError{Path: "page.rows[3]", Msg: "must be an object"}, 400, CodeNotDesign, "page.rows[3]: must be an object"},
		{"wrapped path error", fmt.Errorf("decode: %w", &design.PathError{Path: "page", Msg: "missing"}), 400, CodeNotDesign, "page: missing"},
		{"over a bound", fmt.Errorf("%w: depth 200", design.ErrTooLarge), 413, CodeBodyTooLarge, "depth 200"},
		{"unclassified", errors.New("odd"), 500, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := classifyDecodeError(tt.err)
			if f.status != tt.status || f.code != tt.code || !strings.Contains(f.details, tt.details) {
				t.Errorf("%+v, want status %d code %d details with %q", f, tt.status, tt.code, tt.details)
			}
			if tt.status == 500 && !strings.Contains(f.internal, "odd") {
				t.Errorf("internal %q does not name the error", f.internal)
			}
		})
	}
}

// TestInternalFailure: whatever goes wrong inside rendering (a panic, an
// error, no output) is answered 500 with code 4200 and details repeating
// the request id, logged at ERROR under that id, never with the token. No
// design makes the real renderer fail, so these run the export path with
// a format whose renderer does.
func TestInternalFailure(t *testing.T) {
	tests := []struct {
		name   string
		render func(*design.Design, render.Limits) (*render.Output, error)
		logged string // in the log entry's error field
	}{
		{"panic", func(*design.Design, render.Limits) (*render.Output, error) { panic("index out of range in renderer") }, "panic: index out of range in renderer"},
		{"error", func(*design.Design, render.Limits) (*render.Output, error) { return nil, errors.New("boom") }, "boom"},
		{"no output", func(*design.Design, render.Limits) (*render.Output, error) { return nil, nil }, "renderer returned no output"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, logs := newTestService(t, nil)
			failing := formatHTML
			failing.render = tt.render
			r := httptest.NewRequest(http.MethodPost, PathHTML, strings.NewReader(minimalDesign))
			r.Header.Set("Authorization", "Bearer "+testAPIToken)
			w := httptest.NewRecorder()
			h.serveExport(w, r, failing)
			if w.Code != 500 {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			e := exportErrorOf(t, w)
			id := w.Header().Get("X-Request-Id")
			if e.Code != CodeInternal || id == "" || e.Details != "request id "+id {
				t.Fatalf("error %+v, request id %q", e, id)
			}
			entries := logs.FilterField(stringField("request_id", id)).All()
			if len(entries) != 1 || entries[0].Level != zapcore.ErrorLevel {
				t.Fatalf("want one ERROR entry with request id %s, got %v", id, logs.All())
			}
			if got := entries[0].ContextMap()["error"]; got != tt.logged {
				t.Errorf("logged error %q, want %q", got, tt.logged)
			}
			if strings.Contains(fmt.Sprint(entries[0].ContextMap()), testAPIToken) {
				t.Error("the log entry holds the token")
			}
		})
	}
}

func TestBodyOverLimitWithoutContentLength(t *testing.T) {
	h, _ := newTestService(t, func(h *Handler) { h.MaxBody = 1 << 10 })
	for _, size := range []int{1024, 1025} {
		// A design padded with white space to size bytes.
		r := request{path: PathHTML, headers: bearer(testAPIToken), body: minimalDesign + strings.Repeat(" ", size-len(minimalDesign))}
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
	h, _ := newTestService(t, nil)
	for _, ct := range []string{"", "application/json", "application/json; charset=utf-8", "Application/JSON"} {
		headers := bearer(testAPIToken)
		if ct != "" {
			headers["Content-Type"] = ct
		}
		if w := do(t, h, request{path: PathHTML, headers: headers, body: minimalDesign}); w.Code != 200 {
			t.Errorf("Content-Type %q: status %d", ct, w.Code)
		}
	}
}

func TestResponseForms(t *testing.T) {
	// A design whose HTML and text hold characters JSON may escape (<, >,
	// &, quotes), rendered beforehand for comparison.
	body := designtest.OwnFile(t, "fixture-module-button")
	want := map[string]string{}
	for path, renderFn := range map[string]func(*design.Design) (*render.Output, error){PathHTML: render.HTML, PathPlainText: render.PlainText} {
		d, err := design.Decode(body)
		if err != nil {
			t.Fatal(err)
		}
		out, err := renderFn(d)
		if err != nil {
			t.Fatal(err)
		}
		want[path] = string(out.Body)
	}
	h, _ := newTestService(t, nil)
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
			w := do(t, h, request{path: tt.path, headers: headers, body: string(body)})
			if w.Code != 200 {
				t.Fatalf("status %d: %s", w.Code, w.Body)
			}
			if ct := w.Header().Get("Content-Type"); ct != tt.ctype {
				t.Errorf("Content-Type %q, want %q", ct, tt.ctype)
			}
			if !tt.json {
				if w.Body.String() != want[tt.path] {
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
			if len(wrapped) != 1 || len(wrapped["body"]) != 1 || wrapped["body"][key] != want[tt.path] {
				t.Errorf("JSON form %s, want {\"body\":{%q:…}}", w.Body, key)
			}
			if w.Header().Get("Content-Length") != strconv.Itoa(w.Body.Len()) {
				t.Errorf("Content-Length %q for %d bytes", w.Header().Get("Content-Length"), w.Body.Len())
			}
		})
	}
}

// TestWarningsHeader: the renderer's warnings become X-Design-Warnings
// values, made safe for a header and capped.
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
			hdr := http.Header{}
			setWarnings(hdr, tt.warnings)
			if got := hdr.Values("X-Design-Warnings"); fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("X-Design-Warnings %q, want %q", got, tt.want)
			}
		})
	}
}

// TestExportWarnings: an export of a design with an unknown module type
// succeeds and names the type in X-Design-Warnings (docs/contracts.md, "The export API").
func TestExportWarnings(t *testing.T) {
	h, _ := newTestService(t, nil)
	unknown := `{"page":{"rows":[{"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-hologram"}]}]}]}}`
	for _, path := range []string{PathHTML, PathPlainText} {
		w := do(t, h, request{path: path, headers: bearer(testAPIToken), body: unknown})
		if w.Code != 200 {
			t.Fatalf("%s: status %d: %s", path, w.Code, w.Body)
		}
		if got := w.Header().Values("X-Design-Warnings"); len(got) != 1 || !strings.Contains(got[0], "hologram") {
			t.Errorf("%s: X-Design-Warnings %q, want the unknown type", path, got)
		}
	}
	if w := do(t, h, request{path: PathHTML, headers: bearer(testAPIToken), body: minimalDesign}); len(w.Header().Values("X-Design-Warnings")) != 0 {
		t.Errorf("a design without warnings: X-Design-Warnings %q", w.Header().Values("X-Design-Warnings"))
	}
}

// TestRateLimit: each API token has its own budget; an exhausted one is
// answered 429 with Retry-After, and refills with time. (TestLimiter
// checks the bucket arithmetic against a given clock.)
func TestRateLimit(t *testing.T) {
	h, _ := newTestService(t, func(h *Handler) {
		h.RateLimit = &RateLimit{Requests: 2, Window: caddy.Duration(time.Minute)}
	})
	call := func(h *service, tok string) *httptestResult {
		w := do(t, h, request{path: PathHTML, headers: bearer(tok), body: minimalDesign})
		return &httptestResult{w.Code, w.Header().Get("Retry-After"), w}
	}
	for i := range 2 {
		if r := call(h, testAPIToken); r.status != 200 {
			t.Fatalf("request %d: %d", i, r.status)
		}
	}
	// The next token comes 30 s after the first request (2 a minute), less
	// the moments the requests took: Retry-After rounds up to 30.
	r := call(h, testAPIToken)
	if r.status != 429 || exportErrorOf(t, r.w).Code != CodeRateLimited || r.retryAfter != "30" {
		t.Fatalf("third request: %d Retry-After %q %s", r.status, r.retryAfter, r.w.Body)
	}
	// Each token has its own budget.
	if r := call(h, testToken2); r.status != 200 {
		t.Errorf("second token limited: %d", r.status)
	}
	// Unknown tokens are refused before they count.
	if r := call(h, "unknown"); r.status != 403 {
		t.Errorf("unknown token: %d", r.status)
	}

	// A short window, waited out, lets the next request through.
	const window = 20 * time.Millisecond
	short, _ := newTestService(t, func(h *Handler) {
		h.RateLimit = &RateLimit{Requests: 1, Window: caddy.Duration(window)}
	})
	if r := call(short, testAPIToken); r.status != 200 {
		t.Fatalf("first request: %d", r.status)
	}
	time.Sleep(2 * window)
	if r := call(short, testAPIToken); r.status != 200 {
		t.Errorf("after the window: %d %s", r.status, r.w.Body)
	}
}

type httptestResult struct {
	status     int
	retryAfter string
	w          *httptest.ResponseRecorder
}

// doChunked posts body as a chunked request (no Content-Length).
func doChunked(t *testing.T, h *service, body string) *httptest.ResponseRecorder {
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
