package fsp

// The S3 back end, writing: objects and folder markers, each write
// whole or not at all, moves that never leave neither copy.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/minio/minio-go/v7"
)

func (s *s3Storage) putMarker(ctx context.Context, dir string, exclusive bool) error {
	opts := minio.PutObjectOptions{ContentType: "application/x-directory"}
	if exclusive {
		_, err := s.putExclusive(ctx, s.dirPrefix(dir), bytes.NewReader(nil), 0, opts)
		return err
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

func (s *s3Storage) Write(ctx context.Context, k string, data []byte, contentType string, exclusive bool) (string, error) {
	return s.put(ctx, k, bytes.NewReader(data), int64(len(data)), contentType, exclusive)
}

// Version is the object's ETag: for an object stored in one PUT (or
// copied from one), the MD5 of its bytes.
func (s *s3Storage) Version(ctx context.Context, k string) (string, error) {
	info, err := s.client.StatObject(ctx, s.bucket, s.key(k), minio.StatObjectOptions{})
	if err != nil {
		return "", mapS3Err(err)
	}
	return info.ETag, nil
}

// put stores size bytes from r at k in one request and returns the
// stored object's ETag.
func (s *s3Storage) put(ctx context.Context, k string, r io.Reader, size int64, contentType string, exclusive bool) (string, error) {
	opts := minio.PutObjectOptions{ContentType: contentType, DisableMultipart: true}
	if !inlineType(contentType) {
		// A bucket website or CDN serves the object with these headers:
		// what is not an image, PDF or text is downloaded, never shown.
		opts.ContentDisposition = "attachment"
	}
	if exclusive {
		return s.putExclusive(ctx, s.key(k), r, size, opts)
	}
	info, err := s.client.PutObject(ctx, s.bucket, s.key(k), r, size, opts)
	return info.ETag, mapS3Err(err)
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
func (s *s3Storage) putExclusive(ctx context.Context, key string, r io.Reader, size int64, opts minio.PutObjectOptions) (string, error) {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", err
	}
	writer := hex.EncodeToString(id[:])
	opts.UserMetadata = map[string]string{writerMeta: writer}
	opts.SetMatchETagExcept("*")
	put, err := s.client.PutObject(ctx, s.bucket, key, r, size, opts)
	err = mapS3Err(err)
	if !isExist(err) {
		return put.ETag, err
	}
	info, statErr := s.client.StatObject(ctx, s.bucket, key, minio.StatObjectOptions{})
	if statErr == nil && info.UserMetadata[writerMeta] == writer {
		return info.ETag, nil // our own earlier attempt stored it
	}
	return "", err
}

// WriteFirstFree learns which keys are taken (Names: one listing; a HEAD
// for each key past it) and writes, conditionally, only to one that is
// free: the bytes go up once unless another writer takes the key between
// the look and the write.
func (s *s3Storage) WriteFirstFree(ctx context.Context, keys []string, data []byte, contentType string, prepare func(int) error) (int, string, error) {
	states, err := s.Names(ctx, keys)
	if err != nil {
		return 0, "", err
	}
	for i, k := range keys {
		if states[i] == nameTaken {
			continue
		}
		if states[i] == nameUnknown {
			if taken, err := s.taken(ctx, k); err != nil {
				return 0, "", err
			} else if taken {
				continue
			}
		}
		if err := prepare(i); err != nil {
			return 0, "", err
		}
		version, err := s.Write(ctx, k, data, contentType, true)
		if err == nil {
			return i, version, nil
		}
		if !isExist(err) {
			return 0, "", err
		}
	}
	return 0, "", fs.ErrExist
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
		_, err = s.put(ctx, to, obj, info.Size, info.ContentType, true)
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
	// The copy exists: from here on, the client going away changes
	// nothing, but a server that answers a byte at a time cannot hold
	// the request for ever. Each step has time of its own, so that a
	// delete whose answer never ends can still be looked at.
	detached := context.WithoutCancel(ctx)
	step := func(do func(ctx context.Context) error) error {
		ctx, cancel := context.WithTimeout(detached, s.finish)
		defer cancel()
		return do(ctx)
	}
	delErr := step(func(ctx context.Context) error {
		return s.client.RemoveObject(ctx, s.bucket, s.key(from), minio.RemoveObjectOptions{})
	})
	if delErr == nil {
		return nil
	}
	statErr := step(func(ctx context.Context) error {
		_, err := s.client.StatObject(ctx, s.bucket, s.key(from), minio.StatObjectOptions{})
		return err
	})
	switch {
	case isNotExist(mapS3Err(statErr)):
		return nil // the delete took effect; only its answer was lost
	case statErr != nil:
		return fmt.Errorf("%w; the source %s and its copy %s may both exist", delErr, from, to)
	case exclusive:
		err := step(func(ctx context.Context) error {
			return s.client.RemoveObject(ctx, s.bucket, s.key(to), minio.RemoveObjectOptions{})
		})
		if err != nil {
			return fmt.Errorf("%w; taking the copy %s back: %v (both exist)", delErr, to, err)
		}
	}
	return delErr
}
