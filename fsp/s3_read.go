package fsp

// The S3 back end, reading: whether names exist, what folders hold.

import (
	"context"
	"io"
	"io/fs"
	"path"
	"strings"
	"sync"

	"github.com/minio/minio-go/v7"
)

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
	if len(prefix) > maxKeyLen {
		return Entry{}, fs.ErrNotExist // no folder's keys are that long
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
	if len(prefix) > maxKeyLen {
		// No folder's keys are that long; S3 would refuse the question
		// (the name of a file of the longest key is free as a folder's).
		return fs.ErrNotExist
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

// dirInfo describes the folder at prefix ("a/b/") from one listing of up
// to maxDirCount+2 keys: found when its marker or anything inside it
// exists; its last-modified is the newest of its marker and the files
// directly inside it, its item-count its listed children, or 0 (unknown)
// when the listing has more keys than it reads. A folder of 100,000 keys
// costs at most two requests (S3 pages hold 1,000 keys).
func (s *s3Storage) dirInfo(ctx context.Context, prefix string) (e Entry, found bool, err error) {
	listCtx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the lister after the first page
	seen := 0
	// The folder's own marker, maxDirCount children and one more: seeing
	// that many keys shows the count past the bound.
	const limit = maxDirCount + 2
	for obj := range s.client.ListObjects(listCtx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, MaxKeys: limit}) {
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
		if seen++; seen == limit {
			e.ItemCount = 0
			break
		}
	}
	return e, found, nil
}

// dirWorkers bounds the folder descriptions one listing asks for at once.
const dirWorkers = 8

func (s *s3Storage) List(ctx context.Context, dir string) ([]Entry, error) {
	prefix := s.dirPrefix(dir)
	var entries []Entry
	listCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	n := 0
	for obj := range s.client.ListObjects(listCtx, s.bucket, minio.ListObjectsOptions{Prefix: prefix}) {
		if obj.Err != nil {
			return nil, mapS3Err(obj.Err)
		}
		if n++; n > maxListEntries {
			return nil, errTooManyEntries
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

// Read's version is the ETag of the object the GET answered with, so it
// is that of the bytes read.
func (s *s3Storage) Read(ctx context.Context, k string, max int64) ([]byte, string, error) {
	obj, err := s.client.GetObject(ctx, s.bucket, s.key(k), minio.GetObjectOptions{})
	if err != nil {
		return nil, "", mapS3Err(err)
	}
	defer obj.Close()
	info, err := obj.Stat()
	if err != nil {
		return nil, "", mapS3Err(err)
	}
	if info.Size > max {
		return nil, "", errTooLarge
	}
	data, err := io.ReadAll(io.LimitReader(obj, max+1))
	if err != nil {
		return nil, "", mapS3Err(err)
	}
	if int64(len(data)) > max {
		return nil, "", errTooLarge
	}
	return data, info.ETag, nil
}
