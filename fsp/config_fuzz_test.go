package fsp

// Bad configuration must be a load error, never a panic (or a hang). No
// network: an s3 block is resolved and its client built, never dialled;
// the handler is then provisioned on a local temporary folder.

import (
	"context"
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

var configSeeds = []string{
	"fsp",
	"fsp {\n local /srv/fsp\n public_url https://example.com/fsp-files\n}",
	"fsp {\n local tmp/fsp\n public_url http://localhost:3001/fsp-files\n max_size 20MB\n}",
	"fsp {\n s3 {\n endpoint 127.0.0.1:9000\n bucket fsp-files\n prefix p/q\n region eu-west-1\n access_key {env.AK}\n secret_key {env.SK}\n insecure\n timeout 10s\n }\n public_url https://cdn.example.com/p\n}",
	"fsp {\n local /x\n root {http.request.header.X-BEE-ClientId}/{http.request.header.X-BEE-Uid}\n public_url {http.request.scheme}://{http.request.host}/files\n shared Shared common/assets\n shared Logos brand/logos\n}",
	"fsp {\n local /x\n public_url http://x\n max_size 4GiB\n fetch_timeout 30s\n max_uploads 4\n max_image_memory 64MiB\n min_upload_rate 10KiB/s\n allow_types image/png image/jpeg application/pdf\n allow_private all\n allow_anonymous\n}",
	"fsp {\n local /x\n public_url http://x\n root a/{http.request.header.X-BEE-Uid}{http.request.header.X}\n}",
}

// loadConfig runs h through Provision, Validate and Cleanup as Caddy does,
// with every storage replaced by folder.
func loadConfig(t *testing.T, h *Handler, folder string) {
	hang := time.AfterFunc(10*time.Second, func() {
		buf := make([]byte, 1<<20)
		panic("load hangs:\n" + string(buf[:runtime.Stack(buf, true)]))
	})
	defer hang.Stop()
	_ = h.Validate() // as configured, both storages or none included
	if h.S3 != nil {
		if cfg, err := resolveS3(*h.S3); err == nil {
			if s, err := newS3Storage(cfg); err == nil {
				_ = s.Close()
			}
		}
		h.S3 = nil
		if h.Local == nil {
			h.Local = &LocalConfig{Folder: folder}
		}
	}
	if h.Local != nil && h.Local.Folder != "" {
		h.Local.Folder = folder
	}
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
	folder := f.TempDir()
	f.Fuzz(func(t *testing.T, input string) {
		// NewTestDispenser less its log.Fatalf on input the lexer refuses.
		tokens, err := caddyfile.Tokenize([]byte(input), "fuzz")
		var h Handler
		if err != nil || h.UnmarshalCaddyfile(caddyfile.NewDispenser(tokens)) != nil {
			return
		}
		loadConfig(t, &h, folder)
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
	f.Add([]byte(`{"local":{"folder":"x"},"s3":{"endpoint":"h:1","bucket":"b"},"public_url":"http://x","max_uploads":-1,"max_size":-5,"min_upload_rate":-1,"max_image_memory":-1,"fetch_timeout":-1}`))
	f.Add([]byte(`{"s3":{"endpoint":"{env.E}","bucket":"b","prefix":"/a//b","timeout":-1},"public_url":"x","shared":[{"name":"..","key":"../x"}],"allow_types":["text/html","Image/PNG"]}`))
	f.Add([]byte(`{"local":{"folder":"x"},"public_url":"http://x","max_uploads":9223372036854775807,"max_size":9223372036854775807,"max_image_memory":1,"min_upload_rate":1}`))
	folder := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		var h Handler
		if json.Unmarshal(data, &h) != nil {
			return
		}
		loadConfig(t, &h, folder)
	})
}
