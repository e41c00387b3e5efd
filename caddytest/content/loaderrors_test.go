package content

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// loadCaddyfile loads a Caddyfile as the admin API would and returns the status
// and the answer's text.
func loadCaddyfile(t *testing.T, caddyfile string) (int, string) {
	t.Helper()
	status, body, err := load(caddyfile, false)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	var answer struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(body, &answer); err == nil && answer.Error != "" {
		return status, answer.Error
	}
	return status, string(body)
}

// A bad configuration is refused when it loads, with an error naming the
// problem (and never a secret); the running config stays in place.
func TestLoadErrors(t *testing.T) {
	tester := start(t) // a running Caddy with the good config
	site := func(block string) string {
		return globalOptions + ":{$PORT_LOADERR} {\n\tcontent_service {\n" + block + "\n\t}\n}\n"
	}
	t.Setenv("CS_IT_SHORT_SECRET", "abc")
	t.Setenv("CS_IT_TOKEN", "t-load-secret-token-2")
	validApp := "app a {\n secret secret-a\n token t-load-secret-token\n }"
	tests := []struct {
		name  string
		block string
		want  string
	}{
		{"no signing_key", validApp, "signing_key is required"},
		{"short literal key", "signing_key abc\n" + validApp, "signing_key: 3 bytes; at least 32"},
		{"key from an unset variable", "signing_key {env.CS_IT_UNSET_VARIABLE}\n" + validApp, "signing_key"},
		{"no app", "signing_key {env.CS_IT_SIGNING_KEY}", "no app configured"},
		{"app without secret", "signing_key {env.CS_IT_SIGNING_KEY}\napp a {\n token t-load-secret-token\n }", `app "a": secret is required`},
		{"secret from an unset variable", "signing_key {env.CS_IT_SIGNING_KEY}\napp a {\n secret {env.CS_IT_UNSET_VARIABLE}\n }", "secret"},
		{"unknown subdirective", "signing_key {env.CS_IT_SIGNING_KEY}\n" + validApp + "\nverbose", `unrecognized content_service subdirective "verbose"`},
		{"bad max_body", "signing_key {env.CS_IT_SIGNING_KEY}\n" + validApp + "\nmax_body lots", `max_body: "lots" is not a size from 1 byte to 1TiB: write a number of bytes with an optional unit, such as 4MiB, 1.5MB or 1048576`},
		{"max_output over the largest", "signing_key {env.CS_IT_SIGNING_KEY}\n" + validApp + "\nmax_output 3GiB", "max_output: 3221225472 bytes, more than the largest accepted (2147483647 bytes, 2GiB less one byte), at Caddyfile:"},
		{"bad rate_limit", "signing_key {env.CS_IT_SIGNING_KEY}\n" + validApp + "\nrate_limit 5 per fortnight", `"fortnight" is not a duration`},
		{"chromium missing", "signing_key {env.CS_IT_SIGNING_KEY}\n" + validApp + "\nbrowser {\n path /nonexistent/chromium\n }", `browser.path: chromium not found at "/nonexistent/chromium": exec: "/nonexistent/chromium": stat /nonexistent/chromium: no such file or directory (install chromium, give its path with "path <chromium>" in the browser block, or turn the PDF and image endpoints off with the line "browser off"`},
		{"bad public_url", "signing_key {env.CS_IT_SIGNING_KEY}\n" + validApp + "\nbrowser {\n public_url ftp://x\n }", "public_url"},
		{"short literal secret", "signing_key {env.CS_IT_SIGNING_KEY}\napp a {\n secret abc\n }", `app "a": secret: 3 bytes; at least 8 are required (design_bridge refuses a shorter client_secret, which it could not mask)`},
		{"short secret from a variable", "signing_key {env.CS_IT_SIGNING_KEY}\napp a {\n secret {env.CS_IT_SHORT_SECRET}\n }", `apps[0].client_secret: 3 bytes; at least 8 are required`},
		{"short literal token", "signing_key {env.CS_IT_SIGNING_KEY}\n" + validApp + "\napp b {\n secret secret-b\n token abc\n }", `app "b": token #1: 3 bytes; at least 8 are required (design_bridge refuses a shorter token, which it could not mask)`},
		{"same token twice", "signing_key {env.CS_IT_SIGNING_KEY}\n" + validApp + "\napp b {\n secret secret-b\n token t-load-secret-token\n }", `app "b": token #1 is also configured for app "a", at Caddyfile:`},
		{"same token from a variable twice", "signing_key {env.CS_IT_SIGNING_KEY}\n" + validApp + "\napp b {\n secret secret-b\n token {env.CS_IT_TOKEN}\n }\napp c {\n secret secret-c\n token {env.CS_IT_TOKEN}\n }", "apps[2].tokens[0]: the same token as apps[1].tokens[0]; a token belongs to one app"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := loadCaddyfile(t, site(tt.block))
			if status == 200 {
				t.Fatalf("config loaded; want an error containing %q", tt.want)
			}
			if !strings.Contains(body, tt.want) {
				t.Errorf("error %s\nwant it to contain %q", body, tt.want)
			}
			if strings.Contains(body, "t-load-secret-token") || strings.Contains(body, "secret-b") {
				t.Error("the load error names a token")
			}
		})
	}
	// The good config is restored (and the running one never broke).
	tester.InitServer(config, "caddyfile")
	if r := post(t, tester, http.MethodPost, mainSite+"/v1/message/html", nil, nil); r.status != 401 {
		t.Errorf("after the load errors: %d", r.status)
	}
}
