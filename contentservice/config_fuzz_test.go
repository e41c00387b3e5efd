package contentservice

// Bad configuration must be a load error, never a panic (or a hang). No
// network and no Chromium: the browser pool only starts Chromium with the
// first render, and its files_dir is always a temporary folder.

import (
	"strings"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/testutil/configtest"
)

var configSeeds = []string{
	"content_service",
	"content_service {\n signing_key {env.SIGNING_KEY}\n app {env.CLIENT_ID} {\n secret {env.CLIENT_SECRET}\n token {env.CS_API_TOKEN}\n }\n rate_limit 120 per 1m\n}",
	"content_service {\n signing_key " + strings.Repeat("k", 32) + "\n app my-client {\n secret secret-s\n token token-01 token-02\n token \"Bearer token-03\"\n disabled\n editor_tokens\n }\n app other {\n secret secret-s2\n }\n max_body 1MiB\n max_output 16MiB\n rate_limit 60 1m\n pass_thru\n login_failure_limit 5 per 10m\n browser off\n}",
	"content_service {\n signing_key " + strings.Repeat("k", 32) + "\n app a {\n secret secret-s\n }\n login_failure_limit off\n fetch {\n allow_private all\n timeout 3s\n total_timeout 20s\n max_size 2MiB\n cache_ttl 1m\n max_images 50\n max_concurrent 8\n }\n browser {\n path /usr/bin/chromium\n tabs 2\n timeout 30s\n files_dir /tmp/x\n files_ttl 24h\n public_url https://example.com/cs\n }\n}",
	"content_service {\n signing_key " + strings.Repeat("k", 32) + "\n app a {\n secret secret-s\n }\n fetch off\n browser off\n}",
}

// loadConfig runs h through Provision, Validate and Cleanup as Caddy does,
// with the PDF folder moved to dir.
func loadConfig(h *Handler, dir string) {
	defer configtest.HangGuard(10 * time.Second)()
	if h.Browser == nil {
		h.Browser = new(BrowserConfig)
	}
	h.Browser.FilesDir = dir
	configtest.Provision(h)
}

func FuzzCaddyfileConfig(f *testing.F) {
	dir := f.TempDir()
	configtest.FuzzCaddyfile(f, configSeeds, func(t *testing.T, h *Handler) { loadConfig(h, dir) })
}

func FuzzJSONConfig(f *testing.F) {
	key := strings.Repeat("k", 32)
	dir := f.TempDir()
	configtest.FuzzJSON(f, configSeeds, []string{
		`{"signing_key":"` + key + `","apps":[{"client_id":"a","client_secret":"s","tokens":["t"]}],"rate_limit":{"requests":"60","window":1},"login_failure_limit":{"requests":1,"window":-1},"max_body":-1,"max_output":4294967296}`,
		`{"signing_key":"` + key + `","apps":[{"client_id":"a","client_secret":"s"},{"client_id":"a","client_secret":"s"}],"fetch":{"timeout":-1,"max_images":-1},"browser":{"tabs":-1,"timeout":-1,"public_url":"ftp://x"}}`,
		`{"signing_key":"` + key + `","apps":[{"client_id":"a","client_secret":"s","tokens":["Bearer"," ","a b"]}],"browser":{"path":"/nonexistent","off":false}}`,
	}, func(t *testing.T, h *Handler) { loadConfig(h, dir) })
}
