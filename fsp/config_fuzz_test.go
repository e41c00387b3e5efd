package fsp

// Bad configuration must be a load error, never a panic (or a hang). No
// network: an s3 block is resolved and its client built, never dialled;
// the handler is then provisioned on a local temporary folder.

import (
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/testutil/configtest"
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
func loadConfig(h *Handler, folder string) {
	defer configtest.HangGuard(10 * time.Second)()
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
	configtest.Provision(h)
}

func FuzzCaddyfileConfig(f *testing.F) {
	folder := f.TempDir()
	configtest.FuzzCaddyfile(f, configSeeds, func(t *testing.T, h *Handler) { loadConfig(h, folder) })
}

func FuzzJSONConfig(f *testing.F) {
	folder := f.TempDir()
	configtest.FuzzJSON(f, configSeeds, []string{
		`{"local":{"folder":"x"},"s3":{"endpoint":"h:1","bucket":"b"},"public_url":"http://x","max_uploads":-1,"max_size":-5,"min_upload_rate":-1,"max_image_memory":-1,"fetch_timeout":-1}`,
		`{"s3":{"endpoint":"{env.E}","bucket":"b","prefix":"/a//b","timeout":-1},"public_url":"x","shared":[{"name":"..","key":"../x"}],"allow_types":["text/html","Image/PNG"]}`,
		`{"local":{"folder":"x"},"public_url":"http://x","max_uploads":9223372036854775807,"max_size":9223372036854775807,"max_image_memory":1,"min_upload_rate":1}`,
	}, func(t *testing.T, h *Handler) { loadConfig(h, folder) })
}
