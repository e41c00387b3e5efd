package bridge

// Tests of loading a config: load errors and warnings that name their
// field, and the defaults taken from the environment.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

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

// TestShortSecretLoadError: a token or client_secret too short to be
// masked in answers is refused at load, naming the field; an upstream
// echoing it would otherwise hand it to the browser.
func TestShortSecretLoadError(t *testing.T) {
	load(t, site(""))
	for _, field := range []string{"token", "client_secret"} {
		t.Run(field, func(t *testing.T) {
			cfg := site("\t\t" + field + " sec1234")
			status, body, err := loadRaw([]byte(cfg), "text/caddyfile", false)
			if err != nil {
				t.Fatal(err)
			}
			want := field + ": 7 bytes; a secret must be at least 8 bytes"
			if status == 200 || !strings.Contains(string(body), want) {
				t.Errorf("load: %d %s; want an error containing %q", status, body, want)
			}
			if strings.Contains(string(body), "sec1234") {
				t.Errorf("the load error repeats the secret: %s", body)
			}
		})
	}
	// Eight bytes load.
	load(t, site("\t\ttoken sec12345\n\t\tclient_secret sec12345"))
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
// about, the literal-secret warning covers the real secrets (token,
// client_secret) and not client_id, and an unset default says
// which variable was empty.
func TestWarningsNameTheirField(t *testing.T) {
	for _, v := range []string{"CLIENT_ID", "CLIENT_SECRET"} {
		if old, ok := os.LookupEnv(v); ok {
			t.Cleanup(func() { os.Setenv(v, old) })
			os.Unsetenv(v)
		}
	}
	offset := len(readFile(t, logFile))
	load(t, site("\t\tcontent_service http://127.0.0.1:1\n\t\ttoken literal-token-1\n\t\tclient_id id"))
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

// TestUpstreamURLLoadErrorHidesUserInfo: a content_service or auth_url
// that is refused (user info is never allowed, and the URL may be wrong
// in other ways too) is named in the load error without its user info:
// a password there, from an environment variable, would otherwise be in
// the admin API's answer and Caddy's log.
func TestUpstreamURLLoadErrorHidesUserInfo(t *testing.T) {
	load(t, site(""))
	for _, c := range []struct{ name, url, want string }{
		{"scheme", "ftp://user:pw-5ecret-x@example.com", "user info, query and fragment are not allowed"},
		{"no host", "http://user:pw-5ecret-x@", "user info, query and fragment are not allowed"},
		{"bad escape", "http://user:pw%zz-5ecret-x@example.com", "not a URL"},
		{"bad port", "http://user:pw-5ecret-x@example.com:x/", "not a URL"},
		{"user info", "https://user:pw-5ecret-x@example.com", "user info, query and fragment are not allowed"},
		{"token as user", "https://pw-5ecret-x@example.com/v1", "user info, query and fragment are not allowed"},
		{"password not escaped", "http://user:pw/5ecret?x#y@example.com", "not a URL"},
	} {
		for _, field := range []string{"content_service", "auth_url"} {
			t.Run(c.name+"/"+field, func(t *testing.T) {
				t.Setenv("DB_TEST_UPSTREAM_URL", c.url)
				status, body, err := loadRaw([]byte(site("\t\t"+field+" {env.DB_TEST_UPSTREAM_URL}")), "text/caddyfile", false)
				if err != nil {
					t.Fatal(err)
				}
				if status == 200 || !strings.Contains(string(body), field+": ") || !strings.Contains(string(body), c.want) {
					t.Errorf("load: %d %s; want an error naming %s and saying %q", status, body, field, c.want)
				}
				if strings.Contains(string(body), "5ecret") {
					t.Errorf("the load error holds the URL's user info: %s", body)
				}
			})
		}
	}
}
