package contentservice

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func TestProvisionErrors(t *testing.T) {
	t.Setenv("CS_TEST_KEY", strings.Repeat("e", 40))
	t.Setenv("CS_TEST_SHORT", "short")
	t.Setenv("CS_TEST_TOKENS", "tok-one  tok-two\ttok-three")
	valid := func() *Handler {
		return &Handler{SigningKey: testKey, Apps: []App{{ClientID: "a", ClientSecret: "secret-a", Tokens: []string{"token-a1"}}}}
	}
	tests := []struct {
		name   string
		mutate func(*Handler)
		err    string // substring; "" means success
	}{
		{"valid", func(*Handler) {}, ""},
		{"key from env", func(h *Handler) { h.SigningKey = "{env.CS_TEST_KEY}" }, ""},
		{"missing key", func(h *Handler) { h.SigningKey = "" }, "signing_key is required"},
		{"short key", func(h *Handler) { h.SigningKey = "abc" }, "3 bytes after replacement; at least 32"},
		{"short key from env", func(h *Handler) { h.SigningKey = "{env.CS_TEST_SHORT}" }, "5 bytes"},
		{"unset env key", func(h *Handler) { h.SigningKey = "{env.CS_TEST_UNSET_VAR}" }, "signing_key"},
		{"unknown placeholder", func(h *Handler) { h.SigningKey = "{nope.nothing}" + testKey }, "signing_key"},
		{"no apps", func(h *Handler) { h.Apps = nil }, "no app configured"},
		{"brace inside a literal secret", func(h *Handler) { h.Apps[0].ClientSecret = "abc{tok-one}def" }, "escape a literal brace"},
		{"unset env in whole-placeholder secret names it", func(h *Handler) { h.Apps[0].ClientSecret = "{env.CS_TEST_UNSET_VAR}" }, "CS_TEST_UNSET_VAR"},
		{"empty client id", func(h *Handler) { h.Apps[0].ClientID = "" }, "apps[0].client_id: value is missing"},
		{"empty second client id", func(h *Handler) { h.Apps = append(h.Apps, App{ClientID: " ", ClientSecret: "secret-b"}) }, "apps[1].client_id: value is missing"},
		{"duplicate client id", func(h *Handler) { h.Apps = append(h.Apps, App{ClientID: "a", ClientSecret: "x"}) }, "apps[1].client_id: the same as apps[0].client_id; each app has its own"},
		{"short secret", func(h *Handler) { h.Apps[0].ClientSecret = "abc" }, `apps[0].client_secret: 3 bytes; at least 8 are required (design_bridge refuses a shorter client_secret`},
		{"short secret from env", func(h *Handler) { h.Apps[0].ClientSecret = "{env.CS_TEST_SHORT}" }, `apps[0].client_secret: 5 bytes; at least 8`},
		{"short token", func(h *Handler) { h.Apps[0].Tokens = []string{"token-a1", "abc"} }, `apps[0].tokens[1]: 3 bytes; at least 8 are required (design_bridge refuses a shorter token`},
		{"short token after Bearer", func(h *Handler) { h.Apps[0].Tokens = []string{"Bearer abcdefg"} }, `apps[0].tokens[0]: 7 bytes`},
		{"empty secret", func(h *Handler) { h.Apps[0].ClientSecret = "" }, "apps[0].client_secret: value is missing"},
		{"unset env secret", func(h *Handler) { h.Apps[0].ClientSecret = "{env.CS_TEST_UNSET_VAR}" }, "apps[0].client_secret: "},
		{"unset env token", func(h *Handler) { h.Apps[0].Tokens = []string{"{env.CS_TEST_UNSET_VAR}"} }, "apps[0].tokens[0]: "},
		{"token holding whitespace", func(h *Handler) { h.Apps[0].Tokens = []string{"{env.CS_TEST_TOKENS}"} }, "apps[0].tokens[0]: holds whitespace"},
		{"bearer prefix without a token", func(h *Handler) { h.Apps[0].Tokens = []string{"Bearer "} }, "apps[0].tokens[0]: is empty"},
		{"token shared by two apps", func(h *Handler) {
			h.Apps = append(h.Apps, App{ClientID: "b", ClientSecret: "secret-b", Tokens: []string{"token-a1"}})
		}, "apps[1].tokens[0]: the same token as apps[0].tokens[0]; a token belongs to one app"},
		{"token twice in one app", func(h *Handler) { h.Apps[0].Tokens = []string{"token-a1", "Bearer token-a1"} }, "apps[0].tokens[1]: the same token as apps[0].tokens[0]"},
		{"negative max_body", func(h *Handler) { h.MaxBody = -1 }, "max_body must not be negative"},
		{"negative max_output", func(h *Handler) { h.MaxOutput = -1 }, "max_output must not be negative"},
		{"max_output over 2 GiB", func(h *Handler) { h.MaxOutput = 1 << 40 }, "max_output: 1099511627776 bytes, more than the largest accepted"},
		{"chromium missing", func(h *Handler) { h.Browser = &BrowserConfig{Path: "/nonexistent/chromium"} },
			`browser.path: chromium not found at "/nonexistent/chromium": exec: "/nonexistent/chromium": stat /nonexistent/chromium: no such file or directory (install chromium, give its path with "path <chromium>" in the browser block, or turn the PDF and image endpoints off with the line "browser off" in the content_service block`},
		{"tabs at their bound", func(h *Handler) { h.Browser = &BrowserConfig{Tabs: 1024} }, ""},
		{"tabs past their bound", func(h *Handler) { h.Browser = &BrowserConfig{Tabs: 1025} }, "browser.tabs: 1025; at most 1024"},
		{"tabs that overflow the queue", func(h *Handler) { h.Browser = &BrowserConfig{Tabs: 3_000_000_000_000_000_000} }, "browser.tabs: 3000000000000000000; at most 1024"},
		{"negative browser timeout", func(h *Handler) { h.Browser = &BrowserConfig{Timeout: -1} }, "browser.timeout must be positive"},
		{"negative files_ttl", func(h *Handler) { h.Browser = &BrowserConfig{FilesTTL: -1} }, "browser.files_ttl must be positive"},
		{"negative tabs", func(h *Handler) { h.Browser = &BrowserConfig{Tabs: -1} }, "browser.tabs must be positive"},
		{"public_url not http", func(h *Handler) { h.Browser = &BrowserConfig{PublicURL: "ftp://user:s3cr3t@x/f"} }, "browser.public_url: write an http(s) URL without query or fragment, such as https://example.com/cs"},
		{"negative fetch timeout", func(h *Handler) { h.Fetch = &FetchConfig{Timeout: -1} }, "fetch.timeout must be positive"},
		{"negative fetch total_timeout", func(h *Handler) { h.Fetch = &FetchConfig{TotalTimeout: -1} }, "fetch.total_timeout must be positive"},
		{"negative fetch cache_ttl", func(h *Handler) { h.Fetch = &FetchConfig{CacheTTL: -1} }, "fetch.cache_ttl must not be negative"},
		{"negative fetch max_size", func(h *Handler) { h.Fetch = &FetchConfig{MaxSize: -1} }, "fetch.max_size must be positive"},
		{"negative fetch max_images", func(h *Handler) { h.Fetch = &FetchConfig{MaxImages: -1} }, "fetch.max_images must be positive"},
		{"fetch private_ranges", func(h *Handler) {
			h.Fetch = &FetchConfig{PrivateRanges: []string{"10.0.0.0/8", "fd00::/8", "192.168.1.7"}}
		}, ""},
		{"bad fetch private_ranges element", func(h *Handler) { h.Fetch = &FetchConfig{PrivateRanges: []string{"10.0.0.0/8", "10.0.0.300"}} },
			`fetch.private_ranges[1]: "10.0.0.300" is not an IP address: write one such as 192.168.1.7 or fd00::7, or a CIDR range such as 10.0.0.0/8`},
		{"empty fetch private_ranges element", func(h *Handler) { h.Fetch = &FetchConfig{PrivateRanges: []string{""}} }, `fetch.private_ranges[0]: "" is not an IP address`},
		{"fetch private_ranges with allow_private", func(h *Handler) {
			h.Fetch = &FetchConfig{AllowPrivate: true, PrivateRanges: []string{"10.0.0.0/8"}}
		}, "fetch.private_ranges: allow_private already allows every address; set one of them"},
		{"negative fetch max_concurrent", func(h *Handler) { h.Fetch = &FetchConfig{MaxConcurrent: -1} }, "fetch.max_concurrent must be positive"},
		{"fetch max_concurrent one, browser off", func(h *Handler) {
			h.Fetch, h.Browser = &FetchConfig{MaxConcurrent: 1}, &BrowserConfig{Off: true}
		}, ""},
		{"fetch max_concurrent one with renders", func(h *Handler) { h.Fetch = &FetchConfig{MaxConcurrent: 1} },
			"fetch.max_concurrent 1: at least 2 while PDF and image exports are on"},
		{"fetch max_concurrent two with renders", func(h *Handler) { h.Fetch = &FetchConfig{MaxConcurrent: 2} }, ""},
		{"bad rate count", func(h *Handler) { h.RateLimit = &RateLimit{Requests: -1, Window: caddy.Duration(time.Minute)} }, "rate_limit.requests: -1 is not a positive number of requests"},
		{"negative rate window", func(h *Handler) { h.RateLimit = &RateLimit{Requests: 5, Window: caddy.Duration(-time.Minute)} }, "rate_limit.window: -1m0s must be positive"},
		{"zero rate window", func(h *Handler) { h.RateLimit = &RateLimit{Requests: 5, Window: 0} }, "rate_limit.window: 0s must be positive"},
		{"zero login failures", func(h *Handler) { h.LoginFailureLimit = &RateLimit{Window: caddy.Duration(time.Minute)} }, "login_failure_limit.requests: 0 is not a positive number of requests"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := valid()
			tt.mutate(h)
			err := provision(t, h)
			if tt.err == "" {
				if err != nil {
					t.Fatalf("unexpected error %v", err)
				}
				if err := h.Validate(); err != nil {
					t.Fatalf("validate: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("error %v, want it to contain %q", err, tt.err)
			}
			for _, secret := range []string{"tok-one", strings.Repeat("e", 40), "s3cr3t"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("error %q reveals a secret", err)
				}
			}
			// JSON is what Caddy loads: the error names the value by its
			// path there, not by the Caddyfile's words or the client ID.
			for _, caddyfileWords := range []string{`app "`, "#", "fetch:", "browser:", "rate_limit:", "login_failure_limit:"} {
				if strings.Contains(err.Error(), caddyfileWords) {
					t.Errorf("error %q names %q", err, caddyfileWords)
				}
			}
		})
	}
}

func TestValidateUnprovisioned(t *testing.T) {
	if err := new(Handler).Validate(); err == nil {
		t.Error("an unprovisioned handler validated")
	}
}

// provision runs h's Provision with a Caddy context, as Caddy does.
func provision(t *testing.T, h *Handler) error {
	t.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	return h.Provision(ctx)
}

// TestProvisionedHandlerServes: the module, provisioned as Caddy does it,
// answers through its ServeHTTP (the other tests use the service that
// Provision builds).
func TestProvisionedHandlerServes(t *testing.T) {
	h := &Handler{
		SigningKey: testKey,
		Apps:       []App{{ClientID: "alpha", ClientSecret: testSecret, Tokens: []string{testAPIToken}}},
		PassThru:   true,
	}
	if err := provision(t, h); err != nil {
		t.Fatal(err)
	}
	serve := func(path, body string, headers map[string]string) *httptest.ResponseRecorder {
		return do(t, h, request{path: path, headers: headers, body: body})
	}
	json := map[string]string{"Content-Type": "application/json"}
	if w := serve(PathLogin, `{"client_id":"alpha","client_secret":"`+testSecret+`","uid":"u"}`, json); w.Code != 200 {
		t.Errorf("login: %d %s", w.Code, w.Body)
	}
	if w := serve(PathHTML, minimalDesign, bearer(testAPIToken)); w.Code != 200 || !strings.HasPrefix(w.Body.String(), "<!DOCTYPE html>") {
		t.Errorf("export: %d %.100s", w.Code, w.Body)
	}
	if w := serve("/index.html", "", nil); w.Code != 299 {
		t.Errorf("pass_thru: %d", w.Code)
	}
}

func TestProvisionResolvesPlaceholders(t *testing.T) {
	t.Setenv("CS_TEST_TOKENS", "Bearer tok-one-1")
	t.Setenv("CS_TEST_TOKEN2", "tok-two-2")
	t.Setenv("CS_TEST_SECRET", "sec-from-env")
	h := &Handler{
		SigningKey: testKey,
		Apps:       []App{{ClientID: "a", ClientSecret: "{env.CS_TEST_SECRET}", Tokens: []string{"{env.CS_TEST_TOKENS}", "{env.CS_TEST_TOKEN2}", "bearer tok-three", "tok-four"}}},
		MaxBody:    1 << 10,
		RateLimit:  &RateLimit{Requests: 10, Window: caddy.Duration(time.Minute)},
	}
	if err := provision(t, h); err != nil {
		t.Fatal(err)
	}
	if h.svc.maxBody != 1024 || h.svc.limits.MaxBytes != 1024 {
		t.Errorf("maxBody %d, decoder limit %d", h.svc.maxBody, h.svc.limits.MaxBytes)
	}
	for _, tok := range []string{"tok-one-1", "tok-two-2", "tok-three", "tok-four"} {
		if h.svc.lookupAPIToken(tok) < 0 {
			t.Errorf("token %q not accepted", tok)
		}
	}
	for _, tok := range []string{"{env.CS_TEST_TOKENS}", "Bearer", "bearer", "Bearer tok-one-1"} {
		if h.svc.lookupAPIToken(tok) >= 0 {
			t.Errorf("%q is accepted as a token", tok)
		}
	}
	if h.svc.lookupApp("a", "sec-from-env") != 0 || h.svc.lookupApp("a", "{env.CS_TEST_SECRET}") != -1 {
		t.Error("client secret placeholder not resolved")
	}
	keyFile := filepath.Join(t.TempDir(), "signing_key")
	if err := os.WriteFile(keyFile, []byte(strings.Repeat("f", 48)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.SigningKey = "{file." + keyFile + "}"
	if err := provision(t, h); err != nil || string(h.svc.signingKey) != strings.Repeat("f", 48) {
		t.Errorf("key from a file: %v, %d bytes", err, len(h.svc.signingKey))
	}
	h.Apps[0].ClientSecret = `ab\{c\}defgh`
	if err := provision(t, h); err != nil || h.svc.lookupApp("a", "ab{c}defgh") != 0 {
		t.Errorf("escaped braces: %v", err)
	}
	if h.svc.limiter == nil {
		t.Errorf("limiter %+v", h.svc.limiter)
	}
}

func TestDefaultMaxBody(t *testing.T) {
	h, _ := newTestService(t, nil)
	if h.maxBody != 4<<20 || h.limits.MaxBytes != 4<<20 {
		t.Errorf("default max body %d, decoder limit %d, want 4 MiB", h.maxBody, h.limits.MaxBytes)
	}
	if h.output.MaxOutput != 8<<20 {
		t.Errorf("default max output %d, want 8 MiB", h.output.MaxOutput)
	}
}

// Every response, success or failure, carries a request id, and none
// carries a token or secret.
func TestRequestIDAndNoSecretsAnywhere(t *testing.T) {
	h, logs := newTestService(t, nil)
	editor := login(t, h, "editor-app", "secret-editor-0123", "u").AccessToken
	secrets := []string{testAPIToken, testToken2, testSecret, testKey, editor, "not-a-valid-token-xyz"}
	idPattern := regexp.MustCompile(`^[0-9a-f-]{32,36}$`)
	reqs := []request{
		{path: PathHTML, headers: bearer(testAPIToken), body: minimalDesign},
		{path: PathHTML, headers: bearer(testAPIToken), body: "{}"},
		{path: PathHTML, headers: bearer("not-a-valid-token-xyz"), body: minimalDesign},
		{path: PathHTML, headers: map[string]string{"Authorization": "not-a-valid-token-xyz"}},
		{path: PathPlainText, headers: bearer(editor), body: minimalDesign},
		{method: http.MethodGet, path: PathHTML},
		{path: "/elsewhere"},
		{path: PathLogin, headers: map[string]string{"Content-Type": "application/json"}, body: `{"client_id":"alpha","client_secret":"wrong-` + testSecret + `","uid":"u"}`},
		{path: PathRefresh, headers: bearer(editor)},
		{path: PathRefresh, headers: bearer("not-a-valid-token-xyz")},
	}
	seen := map[string]bool{}
	for _, req := range reqs {
		w := do(t, h, req)
		id := w.Header().Get("X-Request-Id")
		if !idPattern.MatchString(id) || seen[id] {
			t.Errorf("%s %s: request id %q (missing, malformed or repeated)", req.method, req.path, id)
		}
		seen[id] = true
		for _, s := range secrets {
			if strings.Contains(w.Body.String(), s) {
				t.Errorf("%s: the body echoes a secret", req.path)
			}
			for k, vs := range w.Header() {
				if strings.Contains(strings.Join(vs, " "), s) {
					t.Errorf("%s: header %s echoes a secret", req.path, k)
				}
			}
		}
	}
	for _, entry := range logs.All() {
		for _, s := range secrets {
			if strings.Contains(entry.Message+" "+strings.Join(mapStrings(entry.ContextMap()), " "), s) {
				t.Errorf("log entry %q holds a secret", entry.Message)
			}
		}
	}
}

func mapStrings(m map[string]any) []string {
	var out []string
	for k, v := range m {
		if s, ok := v.(string); ok {
			out = append(out, k+"="+s)
		}
	}
	return out
}

func TestPassThru(t *testing.T) {
	h, _ := newTestService(t, func(h *Handler) { h.PassThru = true })
	if w := do(t, h, request{method: http.MethodGet, path: "/index.html"}); w.Code != 299 {
		t.Errorf("pass_thru: status %d, want the next handler's 299", w.Code)
	}
	// The service's own paths are still served.
	if w := do(t, h, request{method: http.MethodGet, path: PathHTML}); w.Code != 405 {
		t.Errorf("pass_thru export path: %d", w.Code)
	}
	h2, _ := newTestService(t, nil)
	w := do(t, h2, request{method: http.MethodGet, path: "/index.html"})
	if w.Code != 404 || exportErrorOf(t, w).Code != 404 {
		t.Errorf("without pass_thru: %d %s", w.Code, w.Body)
	}
}

func TestAcceptQuality(t *testing.T) {
	tests := []struct {
		accept string
		mt     string
		want   float64
	}{
		{"", "text/html", 0},
		{"*/*", "text/html", 1},
		{"text/*;q=0.3", "text/html", 0.3},
		{"text/html;q=0.2, */*", "text/html", 0.2},
		{"TEXT/HTML", "text/html", 1},
		{"application/json;q=0", "application/json", 0},
		{"application/json;q=abc", "application/json", 0},
		{"application/json; charset=utf-8; q=0.7", "application/json", 0.7},
		{"text/plain", "application/json", 0},
	}
	for _, tt := range tests {
		if got := acceptQuality([]string{tt.accept}, tt.mt); got != tt.want {
			t.Errorf("acceptQuality(%q, %q) = %v, want %v", tt.accept, tt.mt, got, tt.want)
		}
	}
}

// Behind Caddy's server, the request id is Caddy's {http.request.uuid}, so
// that the access log (field "uuid") and our error log share it.
func TestRequestIDIsCaddyUUID(t *testing.T) {
	h, _ := newTestService(t, nil)
	r := httptest.NewRequest(http.MethodGet, PathHTML, nil)
	w := httptest.NewRecorder()
	repl := caddy.NewReplacer()
	r = caddyhttp.PrepareRequest(r, repl, w, nil)
	if err := h.ServeHTTP(w, r, nil); err != nil {
		t.Fatal(err)
	}
	id := w.Header().Get("X-Request-Id")
	if uuid := repl.ReplaceAll("{http.request.uuid}", ""); id == "" || id != uuid {
		t.Errorf("X-Request-Id %q, {http.request.uuid} %q", id, uuid)
	}
}

// The handler is shared by all of a server's connections: concurrent
// exports, logins and refreshes (run with -race) must not interfere.
func TestConcurrentRequests(t *testing.T) {
	h, _ := newTestService(t, func(h *Handler) {
		h.RateLimit = &RateLimit{Requests: 1000000, Window: caddy.Duration(time.Second)}
	})
	tok := login(t, h, "editor-app", "secret-editor-0123", "u").AccessToken
	var wg sync.WaitGroup
	failures := make(chan string, 64)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				var req request
				switch i % 3 {
				case 0:
					req = request{path: PathHTML, headers: bearer(testAPIToken), body: minimalDesign}
				case 1:
					req = request{path: PathPlainText, headers: bearer(tok), body: minimalDesign}
				default:
					req = request{path: PathRefresh, headers: bearer(tok)}
				}
				r := httptest.NewRequest(http.MethodPost, req.path, strings.NewReader(req.body))
				for k, v := range req.headers {
					r.Header.Set(k, v)
				}
				w := httptest.NewRecorder()
				if err := h.ServeHTTP(w, r, nil); err != nil || w.Code != 200 {
					failures <- fmt.Sprintf("%s: %d %s", req.path, w.Code, w.Body)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(failures)
	for f := range failures {
		t.Error(f)
	}
}

func TestNilBody(t *testing.T) {
	h, _ := newTestService(t, nil)
	for _, path := range []string{PathHTML, PathLogin} {
		r := httptest.NewRequest(http.MethodPost, path, nil)
		r.Body = nil
		r.Header.Set("Authorization", "Bearer "+testAPIToken)
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		if err := h.ServeHTTP(w, r, nil); err != nil || w.Code != http.StatusBadRequest {
			t.Errorf("%s with a nil body: %d %v %s", path, w.Code, err, w.Body)
		}
	}
}

// TestRateLimitJSON: rate_limit and login_failure_limit take
// auth_rate_limit's shape, {"requests": 60, "window": "1m"}; requests as a
// string of digits (the earlier form) is read too, anything else refused
// naming the field.
func TestRateLimitJSON(t *testing.T) {
	want := RateLimit{Requests: 60, Window: caddy.Duration(time.Minute)}
	for _, in := range []string{`{"requests":60,"window":"1m"}`, `{"requests":"60","window":"1m"}`, `{"requests":60,"window":60000000000}`} {
		var got RateLimit
		if err := json.Unmarshal([]byte(in), &got); err != nil || got != want {
			t.Errorf("%s: %+v, %v", in, got, err)
		}
	}
	for _, in := range []string{`{"requests":"many","window":"1m"}`, `{"requests":1.5,"window":"1m"}`, `{"requests":true}`} {
		var got RateLimit
		if err := json.Unmarshal([]byte(in), &got); err == nil || !strings.Contains(err.Error(), "requests") {
			t.Errorf("%s: %+v, error %v", in, got, err)
		}
	}
}
