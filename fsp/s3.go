package fsp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/designbridge/caddy-designbridge/internal/confvalue"
	"github.com/designbridge/caddy-designbridge/internal/retire"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// S3Config is the S3-compatible object storage back end. Folders are key
// prefixes, each with an empty marker object "<folder>/" so that empty
// folders exist.
type S3Config struct {
	// Endpoint is the server's host:port (no scheme).
	Endpoint string `json:"endpoint"`

	// Bucket holds every user's tree.
	Bucket string `json:"bucket"`

	// Prefix is put before every key (no leading or trailing slash);
	// public_url then names the bucket's URL including it.
	Prefix string `json:"prefix,omitempty"`

	// Region of the bucket (default us-east-1).
	Region string `json:"region,omitempty"`

	// AccessKey is the access key ID; use an {env.…} placeholder so that
	// it stays out of the config.
	AccessKey string `json:"access_key,omitempty"`

	// SecretKey is the secret key; use an {env.…} placeholder so that it
	// stays out of the config.
	SecretKey string `json:"secret_key,omitempty"`

	// Insecure talks plain HTTP to the endpoint (a server on loopback).
	Insecure bool `json:"insecure,omitempty"`

	// Timeout bounds the wait for the server's answer to one S3 request
	// (default 30s); a request is tried up to five times.
	Timeout caddy.Duration `json:"timeout,omitempty"`
}

// validate checks the s3 block's values that hold no placeholder. An
// error names the value by its path in the JSON config (s3.bucket), never
// by the value: an endpoint written as a URL may hold the keys.
func (c *S3Config) validate() error {
	switch {
	case c.Endpoint == "":
		return errors.New("s3.endpoint is required: the server's host:port")
	case strings.Contains(c.Endpoint, "://") || (!confvalue.HasPlaceholder(c.Endpoint) && strings.ContainsAny(c.Endpoint, "/?#@ ")):
		return errEndpointNotHostPort
	case c.Bucket == "":
		return errors.New("s3.bucket is required")
	case !confvalue.HasPlaceholder(c.Bucket) && checkBucketName(c.Bucket) != nil:
		return checkBucketName(c.Bucket)
	case c.Timeout < 0:
		// A negative ResponseHeaderTimeout is none: a silent server
		// would hold requests for ever.
		return errors.New("s3.timeout must be positive")
	}
	if _, err := cleanRoot(c.Prefix); err != nil {
		return errors.New("s3.prefix must be relative, without dot segments")
	}
	return nil
}

// errEndpointNotHostPort is the error of an endpoint that is more than
// host:port.
var errEndpointNotHostPort = errors.New("s3.endpoint: write host:port only, without scheme or path (a bucket goes in bucket, a key prefix in prefix)")

// checkBucketName refuses a bucket name S3 refuses, by the rule AWS
// applies to new buckets and MinIO and versitygw apply (s3utils' strict
// check). Such a name fails every request: minio-go refuses some itself
// (a short one never reaches the server, as if it were down), and a
// server's InvalidBucketName answer would look like refused keys.
func checkBucketName(name string) error {
	err := s3utils.CheckValidBucketNameStrict(name)
	if err == nil {
		return nil
	}
	why := err.Error() // "Bucket name cannot be …"
	why = strings.ToLower(why[:1]) + why[1:]
	return fmt.Errorf("s3.bucket: %s; a bucket name is 3 to 63 lower-case letters, digits, dots and hyphens, starting and ending with a letter or digit, and not an IP address", why)
}

// unmarshal reads the s3 block.
func (c *S3Config) unmarshal(d *caddyfile.Dispenser) error {
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		sub := d.Val()
		if seen[sub] {
			return d.Errf("fsp: s3: %s given twice", sub)
		}
		seen[sub] = true
		var target *string
		switch sub {
		case "endpoint":
			target = &c.Endpoint
		case "bucket":
			target = &c.Bucket
		case "prefix":
			target = &c.Prefix
		case "region":
			target = &c.Region
		case "access_key":
			target = &c.AccessKey
		case "secret_key":
			target = &c.SecretKey
		case "insecure":
			if err := confvalue.Flag(d, "fsp: s3: insecure"); err != nil {
				return err
			}
			c.Insecure = true
			if err := confvalue.NoBlock(d, "fsp: s3: insecure"); err != nil {
				return err
			}
			continue
		case "timeout":
			v, err := confvalue.OneValue(d, "fsp: s3: timeout")
			if err != nil {
				return err
			}
			dur, err := caddy.ParseDuration(v)
			if err != nil || dur <= 0 {
				return d.Errf("fsp: s3: timeout %q: a positive duration such as 30s", v)
			}
			c.Timeout = caddy.Duration(dur)
			if err := confvalue.NoBlock(d, "fsp: s3: timeout"); err != nil {
				return err
			}
			continue
		default:
			return d.Errf("fsp: s3: unrecognized subdirective %q", sub)
		}
		v, err := confvalue.OneValue(d, "fsp: s3: "+sub)
		if err != nil {
			return err
		}
		*target = v
		if err := confvalue.NoBlock(d, "fsp: s3: "+sub); err != nil {
			return err
		}
	}
	return nil
}

// s3Storage keeps files as objects. Exclusive writes are conditional
// (If-None-Match: *), so they hold across several Caddy instances.
type s3Storage struct {
	client    *minio.Client
	transport *retire.Transport
	endpoint  string
	bucket    string
	prefix    string
	// finish bounds what follows a change once it has taken effect, as
	// Handler.finishTimeout does.
	finish time.Duration
}

func newS3Storage(c resolvedS3) (*s3Storage, error) {
	inner, err := minio.DefaultTransport(!c.insecure)
	if err != nil {
		return nil, err
	}
	// A server that takes the request and never answers fails it here,
	// not when the client gives up.
	inner.ResponseHeaderTimeout = c.timeout
	// Nor one that stops in the middle of an answer (or of reading a
	// request's body): after a file is in place, the thumbnail's requests
	// no longer end with the client's.
	dial := inner.DialContext
	inner.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &stallConn{Conn: conn, wait: c.timeout}, nil
	}
	transport := retire.New(inner)
	region := c.region
	if region == "" {
		region = "us-east-1"
	}
	client, err := minio.New(c.endpoint, &minio.Options{
		Creds:        credentials.NewStaticV4(c.accessKey, c.secretKey, ""),
		Secure:       !c.insecure,
		Region:       region,
		BucketLookup: minio.BucketLookupPath,
		Transport:    boundedAnswers{transport},
		// A request waits for the client, so retries are few; five (with
		// minio-go's backoff, about 3 s in all) ride out a server that
		// resets connections for a moment under load, seen with
		// versitygw as a "broken pipe" on a PUT that three did not.
		MaxRetries: 5,
	})
	if err != nil {
		return nil, err
	}
	return &s3Storage{client: client, transport: transport, endpoint: c.endpoint, bucket: c.bucket, prefix: strings.Trim(c.prefix, "/"), finish: finishTimeouts * c.timeout}, nil
}

// maxS3Answer bounds the body of an S3 answer other than an object's
// bytes (which Read bounds itself): a listing page of 1000 keys of 1024
// bytes, each URL-encoded, is under 4 MiB.
const maxS3Answer = 16 << 20

// errS3AnswerTooLarge is an answer body past maxS3Answer.
var errS3AnswerTooLarge = fmt.Errorf("the S3 server's answer is larger than %d bytes", maxS3Answer)

// boundedAnswers cuts every answer body but an object's bytes at
// maxS3Answer: minio-go decodes a listing page or an error whole, and
// drains the body of every other answer, so a server that sends one
// without end would take memory or time without end. An object GET
// answered with an error is cut too.
type boundedAnswers struct{ http.RoundTripper }

func (t boundedAnswers) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := t.RoundTripper.RoundTrip(req)
	if err != nil {
		return res, err
	}
	objectBytes := req.Method == http.MethodGet && !req.URL.Query().Has("list-type") && res.StatusCode < 300
	if objectBytes {
		return res, nil
	}
	res.Body = &cappedBody{ReadCloser: res.Body, left: maxS3Answer}
	return res, nil
}

// cappedBody fails once more than left bytes are read.
type cappedBody struct {
	io.ReadCloser
	left int64
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, errS3AnswerTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.ReadCloser.Read(p)
	if b.left -= int64(n); b.left < 0 {
		return n, errS3AnswerTooLarge
	}
	return n, err
}

// stallConn is a connection to the S3 server on which a read or a write
// fails once it has waited wait for the server. A write (a request going
// out) also gives the read that awaits the answer its full wait.
type stallConn struct {
	net.Conn
	wait time.Duration
}

func (c *stallConn) Read(p []byte) (int, error) {
	_ = c.Conn.SetReadDeadline(time.Now().Add(c.wait))
	return c.Conn.Read(p)
}

func (c *stallConn) Write(p []byte) (int, error) {
	deadline := time.Now().Add(c.wait)
	_ = c.Conn.SetWriteDeadline(deadline)
	_ = c.Conn.SetReadDeadline(deadline)
	return c.Conn.Write(p)
}

func (s *s3Storage) Close() error {
	s.transport.Retire()
	return nil
}

func (s *s3Storage) key(k string) string { return joinKey(s.prefix, k) }

// dirPrefix is the prefix of everything inside directory k ("" or "a/").
func (s *s3Storage) dirPrefix(k string) string {
	full := s.key(k)
	if full == "" {
		return ""
	}
	return full + "/"
}

// mapS3Err turns the server's answers into the fs sentinels.
func mapS3Err(err error) error {
	if err == nil {
		return nil
	}
	resp := minio.ToErrorResponse(err)
	switch {
	case resp.Code == "NoSuchKey":
		// Only a missing key: a missing bucket is a broken storage.
		return fmt.Errorf("%w: %v", fs.ErrNotExist, err)
	case resp.Code == "PreconditionFailed" || resp.StatusCode == http.StatusPreconditionFailed:
		return fmt.Errorf("%w: %v", fs.ErrExist, err)
	case s3ConfigErrors[resp.Code]:
		return fmt.Errorf("%w: %v", errStorageInvalid, err)
	}
	return err
}

// s3ConfigErrors are the S3 error codes that say the configured storage
// is not usable as configured (bucket, credentials, permissions), not
// that it failed for a while: the contract's 3600 "User Error".
var s3ConfigErrors = map[string]bool{
	"NoSuchBucket":          true,
	"InvalidBucketName":     true,
	"AccessDenied":          true,
	"AllAccessDisabled":     true,
	"InvalidAccessKeyId":    true,
	"SignatureDoesNotMatch": true,
}
