package bridge

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

// TestEncodeCompressesExports: a site's encode directive wraps
// design_bridge, so exports come back compressed, and the body is the
// upstream's once decompressed. Unwrapped JSON results are compressed too.
func TestEncodeCompressesExports(t *testing.T) {
	page := "<!doctype html><html><body>" + strings.Repeat("<p>Hello, compressed world.</p>", 200) + "</body></html>"
	wrapped, _ := json.Marshal(map[string]any{"body": map[string]string{"html": page}})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.Header.Get("Accept-Encoding") != "" {
			http.Error(w, "the bridge must not ask the upstream to compress", 500)
			return
		}
		if r.URL.Path == "/json/v1/message/html" {
			w.Header().Set("Content-Type", "application/json")
			w.Write(wrapped)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	})
	for _, block := range []string{bridgeBlock(up), "\t\tcontent_service " + up.URL + "/json\n\t\ttoken " + tokenPlain + "\n\t\tunwrap_html"} {
		t.Run(strings.Fields(block)[1], func(t *testing.T) {
			tc := load(t, site(block, "\tencode zstd gzip"))
			res := post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), map[string]string{"Accept-Encoding": "gzip"})
			if res.Status != 200 || res.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("status %d, Content-Encoding %q, %d bytes; want 200 gzip", res.Status, res.Header.Get("Content-Encoding"), len(res.Body))
			}
			zr, err := gzip.NewReader(bytes.NewReader(res.Body))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(zr)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != page {
				t.Fatalf("decompressed body differs from the upstream's (%d bytes, want %d)", len(got), len(page))
			}
			t.Logf("%d bytes compressed, %d plain", len(res.Body), len(got))
		})
	}
}

// TestMatcherRefused: a matcher on design_bridge is a load error that says
// why; wrapping it in route with a matcher is the way to limit it.
func TestMatcherRefused(t *testing.T) {
	load(t, site("")) // admin API up, with a valid config that must survive
	for _, m := range []string{"/v1/*", "@api"} {
		cfg := strings.Replace(site(""), "\tdesign_bridge {", "\t@api path /v1/*\n\tdesign_bridge "+m+" {", 1)
		status, body, err := loadRaw([]byte(cfg), "text/caddyfile", false)
		if err != nil {
			t.Fatal(err)
		}
		if status == 200 || !strings.Contains(string(body), "design_bridge takes no matcher") || !strings.Contains(string(body), "wrap it: route") || !strings.Contains(string(body), "Caddyfile:") {
			t.Errorf("matcher %s: load %d %s; want a refusal saying why", m, status, body)
		}
	}
	// The catch-all matcher and an enclosing route are fine.
	for _, cfg := range []string{
		strings.Replace(site(""), "\tdesign_bridge {", "\tdesign_bridge * {", 1),
		strings.Replace(site(""), "\tdesign_bridge {\n\n\t}", "\troute /v1/* {\n\t\tdesign_bridge\n\t}", 1),
	} {
		if status, body, err := loadRaw([]byte(cfg), "text/caddyfile", false); err != nil || status != 200 {
			t.Errorf("load: %d %s %v\n%s", status, body, err, cfg)
		}
	}
}

// TestEmptyPlaceholderLoadError: a configured secret whose placeholder
// evaluates to empty (a typo, an unset variable) refuses the config, naming
// the field and the placeholder; the running config survives.
func TestEmptyPlaceholderLoadError(t *testing.T) {
	load(t, site(""))
	for _, field := range []string{"token", "client_id", "client_secret", "content_service", "auth_url"} {
		t.Run(field, func(t *testing.T) {
			cfg := site("\t\t" + field + " {env.DB_TEST_TOKN}")
			status, body, err := loadRaw([]byte(cfg), "text/caddyfile", false)
			if err != nil {
				t.Fatal(err)
			}
			want := field + ": evaluated placeholder {env.DB_TEST_TOKN} is empty"
			if status == 200 || !strings.Contains(string(body), want) {
				t.Errorf("load: %d %s; want an error containing %q", status, body, want)
			}
		})
	}
}

// TestDefaultsFromEnvironment: with no token or client fields, the
// defaults {env.CS_API_TOKEN}, {env.CLIENT_ID} and {env.CLIENT_SECRET}
// are used when set.
func TestDefaultsFromEnvironment(t *testing.T) {
	t.Setenv("CS_API_TOKEN", tokenEnv)
	t.Setenv("CLIENT_ID", clientID)
	t.Setenv("CLIENT_SECRET", clientSecret)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"x"}`)
	})
	tc := load(t, site(fmt.Sprintf("\t\tcontent_service %s\n\t\tauth_url %s/loginV2\n\t\tuid u1", up.URL, up.URL)))
	if res := post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), nil); res.Status != 200 || up.last(t).Header.Get("Authorization") != "Bearer "+tokenEnv {
		t.Errorf("export: %d %s, Authorization %q", res.Status, res.Body, up.last(t).Header.Get("Authorization"))
	}
	res := post(t, tc, "/proxy/bee-auth", []byte(`{"uid":"u1"}`), nil)
	var sent map[string]string
	json.Unmarshal(up.last(t).Body, &sent)
	if res.Status != 200 || sent["client_id"] != clientID || sent["client_secret"] != clientSecret {
		t.Errorf("login: %d %s, sent %v", res.Status, res.Body, sent)
	}
}

// logEntries returns the design_bridge log entries written to logFile
// after offset.
func logEntries(t *testing.T, offset int) []map[string]any {
	t.Helper()
	data := readFile(t, logFile)
	var out []map[string]any
	for _, line := range bytes.Split(data[min(offset, len(data)):], []byte("\n")) {
		var e map[string]any
		if json.Unmarshal(line, &e) == nil && e["logger"] == "http.handlers.design_bridge" {
			out = append(out, e)
		}
	}
	return out
}

// TestWarningsNameTheirField: load-time warnings name the field they are
// about, short-secret and literal-secret warnings cover the real secrets
// (token, client_secret) and not client_id, and an unset default says
// which variable was empty.
func TestWarningsNameTheirField(t *testing.T) {
	for _, v := range []string{"CLIENT_ID", "CLIENT_SECRET"} {
		if old, ok := os.LookupEnv(v); ok {
			t.Cleanup(func() { os.Setenv(v, old) })
			os.Unsetenv(v)
		}
	}
	offset := len(readFile(t, logFile))
	load(t, site("\t\tcontent_service http://127.0.0.1:1\n\t\ttoken short1\n\t\tclient_id id"))
	type warning struct{ msg, field string }
	got := map[warning]map[string]any{}
	for _, e := range logEntries(t, offset) {
		if e["level"] == "warn" {
			f, _ := e["field"].(string)
			msg, _ := e["msg"].(string)
			got[warning{msg, f}] = e
		}
	}
	for _, w := range []warning{
		{"secret too short to mask in responses", "token"},
		{"secret configured as a literal", "token"},
		{"secret not set; requests that need it are refused", "client_secret"},
	} {
		if _, ok := got[w]; !ok {
			t.Errorf("no warning %q for field %s; got %v", w.msg, w.field, got)
		}
	}
	if e := got[warning{"secret not set; requests that need it are refused", "client_secret"}]; e != nil && e["default"] != "{env.CLIENT_SECRET}" {
		t.Errorf("unset default names %v, want {env.CLIENT_SECRET}", e["default"])
	}
	for w := range got {
		if w.field == "client_id" || w.field == "" {
			t.Errorf("warning %q about %q; client_id is not a secret and every warning names its field", w.msg, w.field)
		}
	}
}

// TestUpstreamFailureLogsCause: a 502 is logged at ERROR with its cause
// (refused connection, TLS mismatch), not only "could not be reached", and
// the browser gets the error body without the cause.
func TestUpstreamFailureLogsCause(t *testing.T) {
	plain := newUpstream(t, nil)
	cases := []struct {
		name, contentService, cause string
	}{
		{"refused", "http://" + closedPort(t), "connection refused"},
		{"TLS to a plain HTTP server", "https://" + strings.TrimPrefix(plain.URL, "http://"), "tls: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tc := load(t, site("\t\tcontent_service "+c.contentService+"\n\t\ttoken "+tokenPlain))
			offset := len(readFile(t, logFile))
			res := post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), nil)
			if res.Status != 502 {
				t.Fatalf("status %d %s", res.Status, res.Body)
			}
			assertErrorBody(t, res, 5020)
			if bytes.Contains(res.Body, []byte(c.cause)) {
				t.Errorf("the browser sees the cause: %s", res.Body)
			}
			var found bool
			for _, e := range logEntries(t, offset) {
				cause, _ := e["cause"].(string)
				if e["level"] == "error" && strings.Contains(cause, c.cause) {
					found = true
					t.Logf("%s: %s (%s)", e["msg"], e["error"], cause)
				}
			}
			if !found {
				t.Errorf("no ERROR entry with a cause containing %q in\n%s", c.cause, readFile(t, logFile)[offset:])
			}
		})
	}
}

// handleErrorsRecipe is docs/troubleshooting.md's recipe: a site-wide
// handle_errors that leaves design_bridge's paths out, so the bridge's JSON
// error bodies (which the page's alert shows) stay.
const handleErrorsRecipe = `	handle_errors {
		@page not path /v1/message/* /proxy/bee-auth
		handle @page {
			respond "Sorry, that went wrong ({err.status_code})." {err.status_code}
		}
	}`

// TestHandleErrorsRecipe: with the recipe, the bridge's errors keep their
// JSON body and the site's own errors get the site's page; without the
// path matcher, handle_errors takes the bridge's errors over.
func TestHandleErrorsRecipe(t *testing.T) {
	block := "\t\tcontent_service http://" + closedPort(t) + "\n\t\ttoken " + tokenPlain
	tc := load(t, site(block, handleErrorsRecipe))
	res := post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), nil)
	if res.Status != 502 {
		t.Fatalf("export: %d %s", res.Status, res.Body)
	}
	assertErrorBody(t, res, 5020)
	res = do(t, tc, http.MethodGet, "/v1/message/html", nil, nil)
	if res.Status != 405 {
		t.Fatalf("GET export path: %d %s", res.Status, res.Body)
	}
	assertErrorBody(t, res, 4050)
	res = do(t, tc, http.MethodGet, "/no-such-page", nil, nil)
	if res.Status != 404 || string(res.Body) != "Sorry, that went wrong (404)." {
		t.Errorf("site error: %d %q, want the site's own error page", res.Status, res.Body)
	}

	// The same handle_errors without the matcher answers the bridge's
	// errors itself: this is what the recipe avoids.
	naive := strings.Replace(strings.Replace(handleErrorsRecipe, "handle @page", "handle", 1), "\t\t@page not path /v1/message/* /proxy/bee-auth\n", "", 1)
	tc = load(t, site(block, naive))
	res = post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), nil)
	if res.Status != 502 || string(res.Body) != "Sorry, that went wrong (502)." {
		t.Errorf("without the matcher: %d %q", res.Status, res.Body)
	}
}

// TestHandleErrorsSeesBody: an error handed to handle_errors carries its
// JSON body in {vars.error_body}, so a route can answer with it (or add to
// it) instead of losing it; any handler in a matching route takes the
// error, whatever its module (no list of module names decides).
func TestHandleErrorsSeesBody(t *testing.T) {
	block := "\t\tcontent_service http://" + closedPort(t) + "\n\t\ttoken " + tokenPlain
	tc := load(t, site(block, `	handle_errors {
		@bridge path /v1/message/* /proxy/bee-auth
		handle @bridge {
			header Content-Type application/json
			header X-Handled-By site
			respond {vars.error_body} {err.status_code}
		}
	}`))
	res := post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), nil)
	if res.Status != 502 || res.Header.Get("X-Handled-By") != "site" {
		t.Fatalf("export: %d %q %s", res.Status, res.Header.Get("X-Handled-By"), res.Body)
	}
	assertErrorBody(t, res, 5020)

	// A route with only a header handler takes the error too: Caddy then
	// answers with the status alone.
	tc = load(t, site(block, "\thandle_errors {\n\t\theader X-Seen yes\n\t}"))
	res = post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), nil)
	if res.Status != 502 || res.Header.Get("X-Seen") != "yes" || len(res.Body) != 0 {
		t.Errorf("header-only route: %d X-Seen=%q body %q", res.Status, res.Header.Get("X-Seen"), res.Body)
	}
}
