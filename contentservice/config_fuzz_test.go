package contentservice

// Bad configuration must be a load error, never a panic (or a hang). No
// network and no Chromium: the browser pool only starts Chromium with the
// first render, and its files_dir is always a temporary folder.

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
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
func loadConfig(t *testing.T, h *Handler, dir string) {
	hang := time.AfterFunc(10*time.Second, func() {
		buf := make([]byte, 1<<20)
		panic("load hangs:\n" + string(buf[:runtime.Stack(buf, true)]))
	})
	defer hang.Stop()
	if h.Browser == nil {
		h.Browser = new(BrowserConfig)
	}
	h.Browser.FilesDir = dir
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	if err := h.Provision(ctx); err == nil {
		_ = h.Validate()
	}
	_ = h.Cleanup()
}

func FuzzCaddyfileConfig(f *testing.F) {
	for _, s := range configSeeds {
		f.Add(s)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, input string) {
		// NewTestDispenser less its log.Fatalf on input the lexer refuses.
		tokens, err := caddyfile.Tokenize([]byte(input), "fuzz")
		var h Handler
		if err != nil || h.UnmarshalCaddyfile(caddyfile.NewDispenser(tokens)) != nil {
			return
		}
		loadConfig(t, &h, dir)
	})
}

func FuzzJSONConfig(f *testing.F) {
	for _, s := range configSeeds {
		var h Handler
		if tokens, err := caddyfile.Tokenize([]byte(s), "seed"); err == nil && h.UnmarshalCaddyfile(caddyfile.NewDispenser(tokens)) == nil {
			js, _ := json.Marshal(h)
			f.Add(js)
		}
	}
	key := strings.Repeat("k", 32)
	f.Add([]byte(`{"signing_key":"` + key + `","apps":[{"client_id":"a","client_secret":"s","tokens":["t"]}],"rate_limit":{"requests":"60","window":1},"login_failure_limit":{"requests":1,"window":-1},"max_body":-1,"max_output":4294967296}`))
	f.Add([]byte(`{"signing_key":"` + key + `","apps":[{"client_id":"a","client_secret":"s"},{"client_id":"a","client_secret":"s"}],"fetch":{"timeout":-1,"max_images":-1},"browser":{"tabs":-1,"timeout":-1,"public_url":"ftp://x"}}`))
	f.Add([]byte(`{"signing_key":"` + key + `","apps":[{"client_id":"a","client_secret":"s","tokens":["Bearer"," ","a b"]}],"browser":{"path":"/nonexistent","off":false}}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		var h Handler
		if json.Unmarshal(data, &h) != nil {
			return
		}
		loadConfig(t, &h, dir)
	})
}
