package fsp

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"
)

// TestValidateJSON: values only a JSON config can hold (the Caddyfile
// refuses them while parsing), and bucket names S3 refuses, are load
// errors naming their field.
func TestValidateJSON(t *testing.T) {
	s3 := func(timeout int64) *S3Config {
		return &S3Config{Endpoint: "127.0.0.1:1", Bucket: "fsp-files", Timeout: caddy.Duration(timeout)}
	}
	for _, c := range []struct {
		name string
		h    Handler
		want string
	}{
		{"no storage", Handler{PublicURL: "http://x"}, "fsp: exactly one storage is needed: local or s3, and none is given"},
		{"two storages", Handler{Local: &LocalConfig{Folder: "/tmp/x"}, S3: s3(0), PublicURL: "http://x"}, "fsp: exactly one storage is needed: local or s3, not both"},
		{"negative s3 timeout", Handler{S3: s3(-1), PublicURL: "http://x"}, "fsp: s3.timeout must be positive"},
		{"no s3 endpoint", Handler{S3: &S3Config{Bucket: "fsp-files"}, PublicURL: "http://x"}, "fsp: s3.endpoint is required: the server's host:port"},
		{"s3 endpoint a URL with keys", Handler{S3: &S3Config{Endpoint: "https://AKIA:s3cr3t@h:9000", Bucket: "fsp-files"}, PublicURL: "http://x"}, "fsp: s3.endpoint: write host:port only, without scheme or path"},
		{"no s3 bucket", Handler{S3: &S3Config{Endpoint: "127.0.0.1:1"}, PublicURL: "http://x"}, "fsp: s3.bucket is required"},
		{"s3 prefix with dot segments", Handler{S3: &S3Config{Endpoint: "127.0.0.1:1", Bucket: "fsp-files", Prefix: "a/../b"}, PublicURL: "http://x"}, "fsp: s3.prefix must be relative, without dot segments"},
		{"local without folder", Handler{Local: &LocalConfig{}, PublicURL: "http://x"}, "fsp: local.folder is required"},
		{"shared name", Handler{Local: &LocalConfig{Folder: "/tmp/x"}, PublicURL: "http://x", Shared: []SharedFolder{{Name: "A", Key: "a"}, {Name: "b/c", Key: "b"}}}, "fsp: shared[1].name: folder names match [ a-zA-Z0-9._()-]+"},
		{"shared name twice", Handler{Local: &LocalConfig{Folder: "/tmp/x"}, PublicURL: "http://x", Shared: []SharedFolder{{Name: "A", Key: "a"}, {Name: "A", Key: "b"}}}, "fsp: shared[1].name: the same as shared[0].name"},
		{"shared key with dot segments", Handler{Local: &LocalConfig{Folder: "/tmp/x"}, PublicURL: "http://x", Shared: []SharedFolder{{Name: "A", Key: "../a"}}}, "fsp: shared[0].key must be relative, without dot segments"},
		{"shared key the storage", Handler{Local: &LocalConfig{Folder: "/tmp/x"}, PublicURL: "http://x", Shared: []SharedFolder{{Name: "A", Key: "/"}}}, "fsp: shared[0].key is the storage itself, which holds every user's files; name a folder inside it"},
		{"shared key over the users", Handler{Local: &LocalConfig{Folder: "/tmp/x"}, PublicURL: "http://x", Root: "users/{http.request.header.X-BEE-Uid}", Shared: []SharedFolder{{Name: "All", Key: "users"}}}, "fsp: shared[0].key and the users' folders (root) lie one inside the other; keep shared folders apart from them"},
		{"allow_types", Handler{Local: &LocalConfig{Folder: "/tmp/x"}, PublicURL: "http://x", AllowTypes: []string{"image/png", "text/html"}}, "fsp: allow_types[1]: "},
		{"bucket name too short", Handler{S3: &S3Config{Endpoint: "127.0.0.1:1", Bucket: "b"}, PublicURL: "http://x"},
			`fsp: s3.bucket: bucket name cannot be shorter than 3 characters; a bucket name is 3 to 63 lower-case letters`},
		{"bucket name with capitals", Handler{S3: &S3Config{Endpoint: "127.0.0.1:1", Bucket: "Bad_Bucket"}, PublicURL: "http://x"},
			`fsp: s3.bucket: bucket name contains invalid characters; a bucket name is 3 to 63 lower-case letters`},
		{"bucket name an IP address", Handler{S3: &S3Config{Endpoint: "127.0.0.1:1", Bucket: "10.0.0.1"}, PublicURL: "http://x"},
			`fsp: s3.bucket: bucket name cannot be an ip address`},
		{"negative max_size", Handler{Local: &LocalConfig{Folder: "/tmp/x"}, PublicURL: "http://x", MaxSize: -1}, "fsp: max_size must be positive"},
		{"max_size over 4GiB", Handler{Local: &LocalConfig{Folder: "/tmp/x"}, PublicURL: "http://x", MaxSize: 4<<30 + 1}, "fsp: max_size 4294967297: at most 4GiB (4294967296 bytes)"},
		{"root with a dot segment", Handler{Local: &LocalConfig{Folder: "/tmp/x"}, PublicURL: "http://x", Root: "a/./{http.request.header.X-BEE-Uid}"}, `fsp: root "a/./{http.request.header.X-BEE-Uid}" must be a relative path`},
	} {
		err := c.h.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%s: %v names the secret", c.name, err)
		}
	}
	if err := (&Handler{S3: s3(0), PublicURL: "http://x"}).Validate(); err != nil {
		t.Errorf("s3 with the default timeout: %v", err)
	}
	if err := (&Handler{Local: &LocalConfig{Folder: "/tmp/x"}, PublicURL: "http://x", MaxSize: 4 << 30}).Validate(); err != nil {
		t.Errorf("max_size 4GiB, the Caddyfile's largest: %v", err)
	}
}

// TestCheckPublicURL: public_url is loaded only as an absolute http(s)
// URL that the files' keys can be appended to.
func TestCheckPublicURL(t *testing.T) {
	for _, c := range []struct {
		url, want string // want "" means accepted
	}{
		{"https://example.com/fsp-files", ""},
		{"http://localhost:3001/fsp-files/", ""},
		{"{http.request.scheme}://{http.request.host}/files", ""},
		{"/relative", "write an absolute URL with its scheme"},
		{"ftp://example.com/f", "write an absolute URL with its scheme"},
		{"https://e.com/f?v=1", `fsp: public_url "https://e.com/f?v=1": the files' paths are appended to it, so it takes no query or fragment`},
		{"https://e.com/f?", "so it takes no query or fragment"},
		{"https://e.com/f#top", `fsp: public_url "https://e.com/f#top": the files' paths are appended to it, so it takes no query or fragment`},
		{"https://e.com/f#", "so it takes no query or fragment"},
		{"https://e.com/f/#", "so it takes no query or fragment"},
	} {
		err := checkPublicURL(c.url)
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.url, err, c.want)
		}
	}
}

// TestCheckBucketProtocolMismatch: an endpoint that answers, but not as
// S3 over the protocol insecure picks, is a load error saying which
// setting to change; the keys are not blamed.
func TestCheckBucketProtocolMismatch(t *testing.T) {
	for _, c := range []struct {
		name     string
		tls      bool // the server's; insecure is set when it is not
		insecure bool
		want     string
	}{
		{"HTTPS to a plain HTTP server", false, false, "answers plain HTTP: add insecure to the s3 block"},
		{"plain HTTP to an HTTPS server", true, true, "answered 400 without an S3 error (\"Client sent an HTTP request to an HTTPS server.\"): check that it is an S3 server and that insecure matches it"},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
			srv := httptest.NewServer(h)
			if c.tls {
				srv.Close()
				srv = httptest.NewTLSServer(h)
			}
			defer srv.Close()
			cfg, err := resolveS3(S3Config{Endpoint: srv.Listener.Addr().String(), Bucket: "fsp-files", AccessKey: "k", SecretKey: "s", Insecure: c.insecure})
			if err != nil {
				t.Fatal(err)
			}
			s, err := newS3Storage(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			err = checkBucket(s, zap.NewNop())
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "keys") {
				t.Errorf("%v\nwant it to contain %q and not blame the keys", err, c.want)
			}
		})
	}
}

// TestResolveS3BucketName: a bucket name from a placeholder is checked
// once replaced.
func TestResolveS3BucketName(t *testing.T) {
	t.Setenv("FSP_TEST_BUCKET", "Bad_Bucket")
	c := S3Config{Endpoint: "127.0.0.1:1", Bucket: "{env.FSP_TEST_BUCKET}"}
	if err := c.validate(); err != nil {
		t.Fatalf("validate checks a placeholder: %v", err)
	}
	_, err := resolveS3(c)
	if want := `fsp: s3.bucket: bucket name contains invalid characters`; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("resolveS3: %v, want %q", err, want)
	}
}

// TestCheckBucketAnswers: the load-time look at the bucket tells the
// operator which setting to correct from the server's answer; keys are
// blamed only for an answer about them.
func TestCheckBucketAnswers(t *testing.T) {
	for _, c := range []struct {
		name, code string
		status     int
		want, not  string
	}{
		{"invalid bucket name", "InvalidBucketName", 400, `refuses the bucket name "fsp-files" as invalid (400 InvalidBucketName); correct bucket`, "keys"},
		{"missing bucket", "NoSuchBucket", 404, `bucket "fsp-files" does not exist at endpoint`, "keys"},
		{"refused keys", "AccessDenied", 403, `refused the keys for bucket "fsp-files" (403 AccessDenied); check access_key and secret_key`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(c.status)
				fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>no</Message><BucketName>fsp-files</BucketName></Error>`, c.code)
			}))
			defer srv.Close()
			cfg, err := resolveS3(S3Config{Endpoint: srv.Listener.Addr().String(), Bucket: "fsp-files", AccessKey: "k", SecretKey: "s", Insecure: true})
			if err != nil {
				t.Fatal(err)
			}
			s, err := newS3Storage(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			err = checkBucket(s, zap.NewNop())
			if err == nil || !strings.Contains(err.Error(), c.want) || (c.not != "" && strings.Contains(err.Error(), c.not)) {
				t.Errorf("%v\nwant it to contain %q and not %q", err, c.want, c.not)
			}
		})
	}
}

// TestResolveS3Errors: a value of the s3 block that is wrong once its
// placeholders are replaced is named by its path, never by its value,
// which may hold keys.
func TestResolveS3Errors(t *testing.T) {
	t.Setenv("FSP_TEST_ENDPOINT", "https://AKIA:s3cr3t@h:9000")
	for _, c := range []struct {
		name string
		cfg  S3Config
		want string
	}{
		{"endpoint a URL with keys", S3Config{Endpoint: "{env.FSP_TEST_ENDPOINT}", Bucket: "fsp-files"}, "fsp: s3.endpoint: write host:port only, without scheme or path"},
		{"endpoint unset", S3Config{Endpoint: "{env.FSP_TEST_UNSET}", Bucket: "fsp-files"}, "fsp: s3.endpoint: evaluated placeholder {env.FSP_TEST_UNSET} is empty"},
		{"region empty", S3Config{Endpoint: "127.0.0.1:1", Bucket: "fsp-files", Region: "{env.FSP_TEST_UNSET}"}, "fsp: s3.region: "},
		{"secret_key unset", S3Config{Endpoint: "127.0.0.1:1", Bucket: "fsp-files", AccessKey: "k", SecretKey: "{env.FSP_TEST_UNSET}"}, "fsp: s3.secret_key: "},
		{"keys apart", S3Config{Endpoint: "127.0.0.1:1", Bucket: "fsp-files", AccessKey: "k"}, "fsp: s3.access_key and s3.secret_key go together; set both or neither"},
	} {
		_, err := resolveS3(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "s3cr3t") {
			t.Errorf("%s: %v, want %q and no secret", c.name, err, c.want)
		}
	}
}
