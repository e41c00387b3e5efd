package fsp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"sync"

	"github.com/designbridge/caddy-designbridge/internal/confvalue"
	"github.com/designbridge/caddy-designbridge/internal/retire"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

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
	// (default 30s); a request is tried up to three times.
	Timeout caddy.Duration `json:"timeout,omitempty"`
}

func (c *S3Config) validate() error {
	switch {
	case c.Endpoint == "":
		return errors.New("endpoint is required: the server's host:port")
	case strings.Contains(c.Endpoint, "://") || (!confvalue.HasPlaceholder(c.Endpoint) && strings.ContainsAny(c.Endpoint, "/?#@ ")):
		return fmt.Errorf("endpoint %q must be host:port, without scheme or path (a bucket goes in bucket, a key prefix in prefix)", c.Endpoint)
	case c.Bucket == "":
		return errors.New("bucket is required")
	case c.Timeout < 0:
		// A negative ResponseHeaderTimeout is none: a silent server
		// would hold requests for ever.
		return errors.New("timeout must be positive")
	}
	if _, err := cleanRoot(c.Prefix); err != nil {
		return fmt.Errorf("prefix %q must be relative, without dot segments", c.Prefix)
	}
	return nil
}

// unmarshal reads the s3 block.
func (c *S3Config) unmarshal(d *caddyfile.Dispenser) error {
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		sub := d.Val()
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
			if d.NextArg() {
				return d.ArgErr()
			}
			c.Insecure = true
			continue
		case "timeout":
			if !d.NextArg() {
				return d.ArgErr()
			}
			dur, err := caddy.ParseDuration(d.Val())
			if err != nil || dur <= 0 {
				return d.Errf("fsp: s3: timeout %q: a positive duration such as 30s", d.Val())
			}
			c.Timeout = caddy.Duration(dur)
			if d.NextArg() {
				return d.ArgErr()
			}
			continue
		default:
			return d.Errf("fsp: s3: unrecognized subdirective %q", sub)
		}
		if *target != "" {
			return d.Errf("fsp: s3: %s already specified", sub)
		}
		if !d.NextArg() {
			return d.ArgErr()
		}
		*target = d.Val()
		if d.NextArg() {
			return d.ArgErr()
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
}

func newS3Storage(c resolvedS3) (*s3Storage, error) {
	inner, err := minio.DefaultTransport(!c.insecure)
	if err != nil {
		return nil, err
	}
	// A server that takes the request and never answers fails it here,
	// not when the client gives up.
	inner.ResponseHeaderTimeout = c.timeout
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
		Transport:    transport,
		// A request waits for the client; a few retries are enough.
		MaxRetries: 3,
	})
	if err != nil {
		return nil, err
	}
	return &s3Storage{client: client, transport: transport, endpoint: c.endpoint, bucket: c.bucket, prefix: strings.Trim(c.prefix, "/")}, nil
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
	}
	return err
}

func (s *s3Storage) Stat(ctx context.Context, k string, dir bool) (Entry, error) {
	if !dir {
		info, err := s.client.StatObject(ctx, s.bucket, s.key(k), minio.StatObjectOptions{})
		if err != nil {
			return Entry{}, mapS3Err(err)
		}
		return Entry{Name: path.Base(k), Size: info.Size, ModTime: info.LastModified, ContentType: info.ContentType}, nil
	}
	prefix := s.dirPrefix(k)
	if prefix == "" {
		return Entry{Dir: true}, nil
	}
	e, found, err := s.dirInfo(ctx, prefix)
	switch {
	case err != nil:
		return Entry{}, err
	case !found:
		return Entry{}, fs.ErrNotExist
	}
	e.Name, e.Dir = path.Base(k), true
	return e, nil
}

func (s *s3Storage) Exists(ctx context.Context, k string, dir bool) error {
	if !dir {
		_, err := s.client.StatObject(ctx, s.bucket, s.key(k), minio.StatObjectOptions{})
		return mapS3Err(err)
	}
	prefix := s.dirPrefix(k)
	if prefix == "" {
		return nil
	}
	// Its marker (the folders fsp makes have one), else anything inside
	// it: the first key listed.
	if _, err := s.client.StatObject(ctx, s.bucket, prefix, minio.StatObjectOptions{}); err == nil {
		return nil
	} else if err = mapS3Err(err); !isNotExist(err) {
		return err
	}
	listCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	obj, listed := <-s.client.ListObjects(listCtx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, MaxKeys: 1})
	switch {
	case !listed:
		return fs.ErrNotExist
	case obj.Err != nil:
		return mapS3Err(obj.Err)
	}
	return nil
}

// taken reports whether a file or a folder holds the name of k.
func (s *s3Storage) taken(ctx context.Context, k string) (bool, error) {
	for _, dir := range []bool{false, true} {
		if err := s.Exists(ctx, k, dir); err == nil {
			return true, nil
		} else if !isNotExist(err) {
			return false, err
		}
	}
	return false, nil
}

// namePages bounds the listing pages Names reads.
const namePages = 2

// Names lists the folder once, from the longest prefix the names share
// (at most namePages pages, in key order): a name listed is taken; a
// name not listed is free when the listing got past it (or to its end),
// and unknown otherwise. A keep upload past n taken names then costs a
// listing instead of n HEAD requests (and n listings for folders).
func (s *s3Storage) Names(ctx context.Context, keys []string) ([]nameState, error) {
	states := make([]nameState, len(keys))
	if len(keys) == 0 {
		return states, nil
	}
	dir := path.Dir(keys[0])
	common := path.Base(keys[0])
	for _, k := range keys[1:] {
		if path.Dir(k) != dir {
			return states, nil // not one folder: nothing known
		}
		common = common[:commonPrefix(common, path.Base(k))]
	}
	prefix := s.dirPrefix(dir)
	if dir == "." {
		prefix = s.dirPrefix("")
	}
	listCtx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the lister after the pages read
	seen := map[string]bool{}
	last, complete := "", true // last: the last key listed, after prefix
	n := 0
	for obj := range s.client.ListObjects(listCtx, s.bucket, minio.ListObjectsOptions{Prefix: prefix + common}) {
		if obj.Err != nil {
			return nil, mapS3Err(obj.Err)
		}
		if n++; n > namePages*maxDirCount {
			complete = false
			break
		}
		// A file's key, or a folder's common prefix (name + "/").
		last = strings.TrimPrefix(obj.Key, prefix)
		seen[strings.TrimSuffix(last, "/")] = true
	}
	for i, k := range keys {
		switch name := path.Base(k); {
		case seen[name]:
			states[i] = nameTaken
		case complete || name+"/" < last:
			// Both of its keys, the file's and the folder's ("name" <
			// "name/"), sort before the last listed: either would have
			// been listed.
			states[i] = nameFree
		}
	}
	return states, nil
}

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// dirInfo describes the folder at prefix ("a/b/") from one listing page
// of up to maxDirCount keys: found when its marker or anything inside it
// exists; its last-modified is the newest of its marker and the files
// directly inside it, its item-count its listed children. A folder of
// 100,000 keys costs this one request: it is counted as maxDirCount.
func (s *s3Storage) dirInfo(ctx context.Context, prefix string) (e Entry, found bool, err error) {
	listCtx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the lister after the first page
	seen := 0
	// One more than maxDirCount: the folder's own marker is listed too.
	for obj := range s.client.ListObjects(listCtx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, MaxKeys: maxDirCount + 1}) {
		if obj.Err != nil {
			return Entry{}, false, mapS3Err(obj.Err)
		}
		found = true
		if obj.LastModified.After(e.ModTime) {
			e.ModTime = obj.LastModified
		}
		if name := strings.TrimSuffix(strings.TrimPrefix(obj.Key, prefix), "/"); name != "" && listable(name) {
			e.ItemCount++
		}
		if seen++; seen > maxDirCount {
			break
		}
	}
	e.ItemCount = min(e.ItemCount, maxDirCount)
	return e, found, nil
}

// dirWorkers bounds the folder descriptions one listing asks for at once.
const dirWorkers = 8

func (s *s3Storage) List(ctx context.Context, dir string) ([]Entry, error) {
	prefix := s.dirPrefix(dir)
	var entries []Entry
	listCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	for obj := range s.client.ListObjects(listCtx, s.bucket, minio.ListObjectsOptions{Prefix: prefix}) {
		if obj.Err != nil {
			return nil, mapS3Err(obj.Err)
		}
		name := strings.TrimPrefix(obj.Key, prefix)
		if name == "" {
			continue // the folder's own marker
		}
		if strings.HasSuffix(name, "/") {
			entries = append(entries, Entry{Name: strings.TrimSuffix(name, "/"), Dir: true})
			continue
		}
		entries = append(entries, Entry{Name: name, Size: obj.Size, ModTime: obj.LastModified, ContentType: obj.ContentType})
	}
	// A folder's time and count come from listing it: a few at once,
	// all done before List returns.
	var wg sync.WaitGroup
	sem := make(chan struct{}, dirWorkers)
	errs := make([]error, len(entries))
	for i := range entries {
		if !entries[i].Dir || !listable(entries[i].Name) {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func(e *Entry, errp *error) {
			defer wg.Done()
			defer func() { <-sem }()
			info, _, err := s.dirInfo(ctx, prefix+e.Name+"/")
			e.ModTime, e.ItemCount, *errp = info.ModTime, info.ItemCount, err
		}(&entries[i], &errs[i])
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return entries, nil
}

func (s *s3Storage) putMarker(ctx context.Context, dir string, exclusive bool) error {
	opts := minio.PutObjectOptions{ContentType: "application/x-directory"}
	if exclusive {
		return s.putExclusive(ctx, s.dirPrefix(dir), bytes.NewReader(nil), 0, opts)
	}
	_, err := s.client.PutObject(ctx, s.bucket, s.dirPrefix(dir), bytes.NewReader(nil), 0, opts)
	return mapS3Err(err)
}

func (s *s3Storage) Mkdir(ctx context.Context, dir string, parents bool) error {
	if parents {
		// Markers are idempotent: no need to look first.
		segs := strings.Split(dir, "/")
		for i := range segs {
			if segs[i] == "" {
				continue
			}
			if err := s.putMarker(ctx, strings.Join(segs[:i+1], "/"), false); err != nil {
				return err
			}
		}
		return nil
	}
	parent := path.Dir(dir)
	if parent == "." {
		parent = ""
	}
	if _, err := s.Stat(ctx, parent, true); err != nil {
		return err
	}
	if _, err := s.Stat(ctx, dir, true); err == nil {
		return fs.ErrExist
	} else if !isNotExist(err) {
		return err
	}
	// A file's name is taken, as on a local disk.
	if _, err := s.client.StatObject(ctx, s.bucket, s.key(dir), minio.StatObjectOptions{}); err == nil {
		return fs.ErrExist
	} else if err = mapS3Err(err); !isNotExist(err) {
		return err
	}
	return s.putMarker(ctx, dir, true)
}

func (s *s3Storage) Rmdir(ctx context.Context, dir string) error {
	prefix := s.dirPrefix(dir)
	listCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	for obj := range s.client.ListObjects(listCtx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true, MaxKeys: 2}) {
		if obj.Err != nil {
			return mapS3Err(obj.Err)
		}
		if obj.Key != prefix {
			return errNotEmpty
		}
	}
	return mapS3Err(s.client.RemoveObject(ctx, s.bucket, prefix, minio.RemoveObjectOptions{}))
}

func (s *s3Storage) Write(ctx context.Context, k string, data []byte, contentType string, exclusive bool) error {
	return s.put(ctx, k, bytes.NewReader(data), int64(len(data)), contentType, exclusive)
}

// put stores size bytes from r at k in one request.
func (s *s3Storage) put(ctx context.Context, k string, r io.Reader, size int64, contentType string, exclusive bool) error {
	opts := minio.PutObjectOptions{ContentType: contentType, DisableMultipart: true}
	if !inlineType(contentType) {
		// A bucket website or CDN serves the object with these headers:
		// what is not an image, PDF or text is downloaded, never shown.
		opts.ContentDisposition = "attachment"
	}
	if exclusive {
		return s.putExclusive(ctx, s.key(k), r, size, opts)
	}
	_, err := s.client.PutObject(ctx, s.bucket, s.key(k), r, size, opts)
	return mapS3Err(err)
}

// writerMeta is the user metadata (x-amz-meta-fsp-writer) that names the
// conditional write which stored an object.
const writerMeta = "Fsp-Writer"

// putExclusive stores the object at key only if no object is there
// (If-None-Match: *). The client sends a request again after a timeout, a
// reset connection or a 5xx, when the server may already have stored the
// first one: the resent request then fails its precondition on our own
// object. Each call marks its object with a random writer id, so such a
// failure is told apart from another writer's object by one HEAD.
func (s *s3Storage) putExclusive(ctx context.Context, key string, r io.Reader, size int64, opts minio.PutObjectOptions) error {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return err
	}
	writer := hex.EncodeToString(id[:])
	opts.UserMetadata = map[string]string{writerMeta: writer}
	opts.SetMatchETagExcept("*")
	_, err := s.client.PutObject(ctx, s.bucket, key, r, size, opts)
	err = mapS3Err(err)
	if !isExist(err) {
		return err
	}
	info, statErr := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if statErr == nil && info.UserMetadata[writerMeta] == writer {
		return nil // our own earlier attempt stored it
	}
	return err
}

// WriteFirstFree looks at each key (HEAD) and writes, conditionally, only
// to one that is free: the bytes go up once unless another writer takes
// the key between the look and the write.
func (s *s3Storage) WriteFirstFree(ctx context.Context, keys []string, data []byte, contentType string) (int, error) {
	states, err := s.Names(ctx, keys)
	if err != nil {
		return 0, err
	}
	for i, k := range keys {
		if states[i] == nameTaken {
			continue
		}
		if states[i] == nameUnknown {
			if taken, err := s.taken(ctx, k); err != nil {
				return 0, err
			} else if taken {
				continue
			}
		}
		err = s.Write(ctx, k, data, contentType, true)
		if err == nil {
			return i, nil
		}
		if !isExist(err) {
			return 0, err
		}
	}
	return 0, fs.ErrExist
}

func (s *s3Storage) Remove(ctx context.Context, k string) error {
	// S3 answers a delete of a missing key with success: look first.
	if _, err := s.client.StatObject(ctx, s.bucket, s.key(k), minio.StatObjectOptions{}); err != nil {
		return mapS3Err(err)
	}
	if err := s.keepFolder(ctx, k); err != nil {
		return err
	}
	return mapS3Err(s.client.RemoveObject(ctx, s.bucket, s.key(k), minio.RemoveObjectOptions{}))
}

// keepFolder writes the marker of the folder holding k, before k leaves
// it: a folder stays when its last file goes, as on a local disk (where
// the folder's time changes too).
func (s *s3Storage) keepFolder(ctx context.Context, k string) error {
	parent := path.Dir(k)
	if parent == "." {
		return nil // the storage's base
	}
	return s.putMarker(ctx, parent, false)
}

// Move copies, then deletes the source. S3 has no rename: between the two
// steps both exist (never neither). An exclusive move goes through a
// conditional write, so concurrent moves to one name cannot both win.
//
// The source's delete may take effect while its answer is lost (a 500, a
// timeout, a reset connection): the source is looked at before anything is
// undone. Gone: the move is done. Still there: an exclusive move takes the
// copy back (nothing changed); a replace leaves both. Unknown: both are
// left, never neither.
func (s *s3Storage) Move(ctx context.Context, from, to string, exclusive bool) error {
	if err := s.keepFolder(ctx, from); err != nil {
		return err
	}
	if exclusive {
		obj, err := s.client.GetObject(ctx, s.bucket, s.key(from), minio.GetObjectOptions{})
		if err != nil {
			return mapS3Err(err)
		}
		info, err := obj.Stat()
		if err != nil {
			obj.Close()
			return mapS3Err(err)
		}
		// Streamed from the source to the conditional write: the file
		// is never held in memory whole.
		err = s.put(ctx, to, obj, info.Size, info.ContentType, true)
		obj.Close()
		if err != nil {
			return err
		}
	} else {
		_, err := s.client.CopyObject(ctx,
			minio.CopyDestOptions{Bucket: s.bucket, Object: s.key(to)},
			minio.CopySrcOptions{Bucket: s.bucket, Object: s.key(from)})
		if err != nil {
			return mapS3Err(err)
		}
	}
	// The copy exists: from here on, the client going away changes nothing.
	ctx = context.WithoutCancel(ctx)
	delErr := s.client.RemoveObject(ctx, s.bucket, s.key(from), minio.RemoveObjectOptions{})
	if delErr == nil {
		return nil
	}
	_, statErr := s.client.StatObject(ctx, s.bucket, s.key(from), minio.StatObjectOptions{})
	switch {
	case isNotExist(mapS3Err(statErr)):
		return nil // the delete took effect; only its answer was lost
	case statErr != nil:
		return fmt.Errorf("%w; the source %s and its copy %s may both exist", delErr, from, to)
	case exclusive:
		if err := s.client.RemoveObject(ctx, s.bucket, s.key(to), minio.RemoveObjectOptions{}); err != nil {
			return fmt.Errorf("%w; taking the copy %s back: %v (both exist)", delErr, to, err)
		}
	}
	return delErr
}
