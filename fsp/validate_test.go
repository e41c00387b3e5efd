package fsp

import (
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

// TestValidateJSON: values only a JSON config can hold (the Caddyfile
// refuses them while parsing) are load errors naming their field.
func TestValidateJSON(t *testing.T) {
	s3 := func(timeout int64) *S3Config {
		return &S3Config{Endpoint: "127.0.0.1:1", Bucket: "b", Timeout: caddy.Duration(timeout)}
	}
	for _, c := range []struct {
		name string
		h    Handler
		want string
	}{
		{"no storage", Handler{PublicURL: "http://x"}, "fsp: exactly one storage is needed: local or s3, and none is given"},
		{"two storages", Handler{Local: &LocalConfig{Folder: "/tmp/x"}, S3: s3(0), PublicURL: "http://x"}, "fsp: exactly one storage is needed: local or s3, not both"},
		{"negative s3 timeout", Handler{S3: s3(-1), PublicURL: "http://x"}, "fsp: s3: timeout must be positive"},
		{"negative max_size", Handler{Local: &LocalConfig{Folder: "/tmp/x"}, PublicURL: "http://x", MaxSize: -1}, "fsp: max_size must be positive"},
		{"root with a dot segment", Handler{Local: &LocalConfig{Folder: "/tmp/x"}, PublicURL: "http://x", Root: "a/./{http.request.header.X-BEE-Uid}"}, `fsp: root "a/./{http.request.header.X-BEE-Uid}" must be a relative path`},
	} {
		err := c.h.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if err := (&Handler{S3: s3(0), PublicURL: "http://x"}).Validate(); err != nil {
		t.Errorf("s3 with the default timeout: %v", err)
	}
}
