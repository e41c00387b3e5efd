package fsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"go.uber.org/zap"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/caddyauth"

	"github.com/designbridge/caddy-designbridge/internal/confvalue"
	"github.com/designbridge/caddy-designbridge/internal/safefetch"
)

// defaultS3Timeout bounds the wait for one S3 answer.
const defaultS3Timeout = 30 * time.Second

// bucketCheckTimeout bounds the look at the S3 bucket made at load.
const bucketCheckTimeout = 5 * time.Second

// envPlaceholder is an {env.NAME} placeholder.
var envPlaceholder = regexp.MustCompile(`\{env\.([^{}]+)\}`)

// checkEnv refuses a template (evaluated per request, so it may hold
// request placeholders) whose environment placeholders are unset or empty:
// they would give every user the same, wrong folder or URL.
func checkEnv(field, template string) error {
	for _, m := range envPlaceholder.FindAllStringSubmatch(template, -1) {
		if os.Getenv(m[1]) == "" {
			return fmt.Errorf("fsp: %s: the placeholder %s is empty; set the environment variable %s", field, m[0], m[1])
		}
	}
	return nil
}

// checkPublicURL refuses a public_url that is not an absolute http(s) URL
// once its load-time placeholders are replaced (a URL without scheme would
// be taken as a path by every client).
func checkPublicURL(raw string) error {
	if err := checkEnv("public_url", raw); err != nil {
		return err
	}
	v := caddy.NewReplacer().ReplaceKnown(raw, "")
	if strings.HasPrefix(v, "{") {
		return nil // the scheme comes from a request placeholder
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("fsp: public_url %q: write an absolute URL with its scheme, such as https://example.com/fsp-files", raw)
	}
	// A file's URL is public_url + "/" + its key: after a query or a
	// fragment the key would not be part of the path. An empty fragment
	// ("…/files#") leaves no mark on u, so the text is read.
	if strings.ContainsAny(v, "?#") {
		return fmt.Errorf("fsp: public_url %q: the files' paths are appended to it, so it takes no query or fragment", raw)
	}
	return nil
}

// resolvedS3 is the s3 block with its placeholders replaced.
type resolvedS3 struct {
	endpoint, bucket, prefix, region, accessKey, secretKey string
	insecure                                               bool
	timeout                                                time.Duration
}

// resolveS3 replaces the s3 block's load-time placeholders, refusing
// empty ones and an endpoint that is more than host:port.
func resolveS3(c S3Config) (resolvedS3, error) {
	repl := caddy.NewReplacer()
	r := resolvedS3{insecure: c.Insecure, timeout: time.Duration(c.Timeout)}
	if r.timeout == 0 {
		r.timeout = defaultS3Timeout
	}
	for _, f := range []struct {
		name     string
		raw      string
		out      *string
		required bool
	}{
		{"endpoint", c.Endpoint, &r.endpoint, true},
		{"bucket", c.Bucket, &r.bucket, true},
		{"prefix", c.Prefix, &r.prefix, false},
		{"region", c.Region, &r.region, false},
		{"access_key", c.AccessKey, &r.accessKey, false},
		{"secret_key", c.SecretKey, &r.secretKey, false},
	} {
		var err error
		if f.required {
			*f.out, err = confvalue.Required(repl, f.raw)
		} else if f.raw != "" {
			*f.out, err = confvalue.Replace(repl, f.raw)
			if err == nil && strings.TrimSpace(*f.out) == "" {
				err = fmt.Errorf("value is empty after placeholder replacement")
			}
		}
		if err != nil {
			// Never the value itself, only what is wrong with it (the
			// error names a placeholder that is one whole value).
			if f.name == "secret_key" || f.name == "access_key" {
				return r, fmt.Errorf("fsp: s3.%s: %v; set the environment variable it names", f.name, err)
			}
			return r, fmt.Errorf("fsp: s3.%s: %v", f.name, err)
		}
	}
	if strings.Contains(r.endpoint, "://") || strings.ContainsAny(r.endpoint, "/?#@ ") {
		return r, fmt.Errorf("fsp: %w", errEndpointNotHostPort)
	}
	if err := checkBucketName(r.bucket); err != nil {
		return r, fmt.Errorf("fsp: %v", err)
	}
	if (r.accessKey == "") != (r.secretKey == "") {
		return r, fmt.Errorf("fsp: s3.access_key and s3.secret_key go together; set both or neither")
	}
	return r, nil
}

// checkBucket looks at the bucket with the configured keys. A missing or
// invalid bucket or refused keys are load errors; a store that cannot be
// reached now is only logged, since it may come up after Caddy.
func checkBucket(s *s3Storage, logger *zap.Logger) error {
	ctx, cancel := context.WithTimeout(context.Background(), bucketCheckTimeout)
	defer cancel()
	// A listing, not a HEAD: its error answer has a body with the code
	// that tells a missing bucket from refused keys.
	var err error
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{MaxKeys: 1}) {
		err = obj.Err
		break
	}
	cancel() // stops the lister
	if err == nil {
		return nil
	}
	resp := minio.ToErrorResponse(err)
	switch {
	case strings.Contains(err.Error(), "server gave HTTP response to HTTPS client"):
		// net/http's words for a plain-HTTP answer to a TLS hello; no
		// error value of its own carries them.
		return fmt.Errorf("fsp: s3: endpoint %s answers plain HTTP: add insecure to the s3 block (for a server on loopback), or give its HTTPS port", s.endpoint)
	case resp.StatusCode >= 400 && strings.ContainsRune(resp.Code, ' '):
		// An S3 error code is one word; minio-go puts the HTTP status
		// line there when the body is not an S3 error, such as a TLS
		// server's answer to plain HTTP. The keys were not the problem.
		return fmt.Errorf("fsp: s3: endpoint %s answered %d without an S3 error (%q): check that it is an S3 server and that insecure matches it (insecure is plain HTTP)", s.endpoint, resp.StatusCode, resp.Message)
	case resp.Code == "NoSuchBucket":
		return fmt.Errorf("fsp: s3: bucket %q does not exist at endpoint %s; create it or correct bucket", s.bucket, s.endpoint)
	case resp.Code == "InvalidBucketName":
		// The keys were not the problem: never blame them.
		return fmt.Errorf("fsp: s3: endpoint %s refuses the bucket name %q as invalid (%d %s); correct bucket", s.endpoint, s.bucket, resp.StatusCode, resp.Code)
	case resp.StatusCode >= 400 && resp.StatusCode < 500:
		// The server answered and refused: the keys (AccessDenied,
		// InvalidAccessKeyId, SignatureDoesNotMatch, or a server's own
		// code for an unknown key) or their rights on the bucket.
		return fmt.Errorf("fsp: s3: endpoint %s refused the keys for bucket %q (%d %s); check access_key and secret_key, and that they may list the bucket",
			s.endpoint, s.bucket, resp.StatusCode, resp.Code)
	}
	logger.Warn("the S3 storage cannot be reached now; requests answer 3100 until it can",
		zap.String("endpoint", s.endpoint), zap.String("bucket", s.bucket), zap.Error(err))
	return nil
}

// authInFront reports whether an authentication handler is in one of the
// route lists around this handler (a site's routes, a handle block's):
// without one, and without allow_anonymous, every request is refused.
func authInFront(ctx caddy.Context) bool {
	hasAuth := func(routes caddyhttp.RouteList) bool {
		for _, r := range routes {
			for _, h := range r.Handlers {
				if _, ok := h.(*caddyauth.Authentication); ok {
					return true
				}
			}
			// The route being provisioned (basic_auth and fsp in one
			// route) has its handlers still in raw form.
			for _, raw := range r.HandlersRaw {
				var h struct {
					Handler string `json:"handler"`
				}
				if json.Unmarshal(raw, &h) == nil && h.Handler == "authentication" {
					return true
				}
			}
		}
		return false
	}
	for _, m := range ctx.Modules() {
		switch m := m.(type) {
		case *caddyhttp.Subroute:
			if hasAuth(m.Routes) {
				return true
			}
		case *caddyhttp.App:
			for _, srv := range m.Servers {
				if hasAuth(srv.Routes) {
					return true
				}
			}
		}
	}
	return false
}

// fetchPolicy reads the non-public addresses upload sources may be on.
func fetchPolicy(allowPrivate bool, ranges []string) (safefetch.Policy, error) {
	p := safefetch.Policy{AllowPrivate: allowPrivate}
	if allowPrivate && len(ranges) > 0 {
		return p, errors.New("fsp: private_ranges: allow_private already allows every address; set one of them (the Caddyfile's \"allow_private <ranges>\" sets private_ranges only)")
	}
	for i, s := range ranges {
		r, err := safefetch.ParseRange(s)
		if err != nil {
			return p, fmt.Errorf("fsp: private_ranges[%d]: %v", i, err)
		}
		p.Ranges = append(p.Ranges, r)
	}
	return p, nil
}
