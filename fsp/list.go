package fsp

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path"
	"sort"
	"strings"
	"time"

	"go.uber.org/zap"
)

// meta is one resource's description on the wire.
type meta struct {
	MimeType     string         `json:"mime-type"`
	Name         string         `json:"name"`
	Path         string         `json:"path"`
	LastModified int64          `json:"last-modified"`
	Size         int64          `json:"size"`
	Permissions  string         `json:"permissions"`
	ItemCount    *int           `json:"item-count,omitempty"`
	PublicURL    string         `json:"public-url,omitempty"`
	Thumbnail    string         `json:"thumbnail,omitempty"`
	Extra        map[string]any `json:"extra"`
}

// place is where an API path lives in the storage.
type place struct {
	key      string
	readOnly bool
	shared   *SharedFolder // the shared folder itself when p is its top
}

func (q *request) locate(p fspPath) place {
	if len(p.segs) > 0 {
		for i := range q.h.Shared {
			s := &q.h.Shared[i]
			if s.Name == p.segs[0] {
				key := joinKey(append([]string{strings.Trim(s.Key, "/")}, p.segs[1:]...)...)
				pl := place{key: key, readOnly: true}
				if len(p.segs) == 1 {
					pl.shared = s
				}
				return pl
			}
		}
	}
	return place{key: joinKey(q.root, p.rel())}
}

// fits reports whether a file's key (or a folder's, whose S3 marker
// ends in "/") is within the storage's key limit, an S3 prefix counted.
func (q *request) fits(key string, dir bool) bool {
	n := q.h.keyPrefix + len(key)
	if dir {
		n++
	}
	return n <= maxKeyLen
}

// checkKeyLen refuses (3500) a path whose key does not fit: S3 would
// refuse it, and both back ends answer the same.
func (q *request) checkKeyLen(key string, dir bool) error {
	if q.fits(key, dir) {
		return nil
	}
	return fail(3500, fmt.Sprintf("The path is too long: the storage holds paths of at most %d bytes", maxKeyLen))
}

// thumbKey is the key of the thumbnail of the file at key; false when
// its name or key would be too long (such a file has no thumbnail).
func (q *request) thumbKey(key string) (string, bool) {
	tk, ok := thumbKeyFor(key)
	return tk, ok && q.fits(tk, false)
}

func (q *request) isShared(name string) bool {
	for _, s := range q.h.Shared {
		if s.Name == name {
			return true
		}
	}
	return false
}

func perm(readOnly bool) string {
	if readOnly {
		return "ro"
	}
	return "rw"
}

// publicURL is the URL-encoded public URL of storage key.
func (q *request) publicURL(key string) string {
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return q.public + "/" + strings.Join(segs, "/")
}

// unixMilli is t in Unix milliseconds, 0 when t is unknown (a user's root
// folder before anything is stored, an S3 prefix without a marker).
func unixMilli(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// listable reports whether an entry the storage holds is listed: every
// name a request can name (so every listed item can be moved and deleted),
// whoever stored it; not the provider's own files, and not names no
// request could name (a backslash or a control character, put there by
// another system). Folder counts use the same rule, so they agree with
// the listings.
func listable(name string) bool { return checkSegment(name) == nil }

// rootName is the name of a user's root folder, as in the vendor's example.
const rootName = "root"

func (q *request) dirMeta(p fspPath, e Entry, readOnly bool) meta {
	count := e.ItemCount
	name := p.name()
	if len(p.segs) == 0 {
		name = rootName
	}
	return meta{
		MimeType: "application/directory", Name: name, Path: p.String(),
		LastModified: unixMilli(e.ModTime), Permissions: perm(readOnly),
		ItemCount: &count, Extra: map[string]any{},
	}
}

func (q *request) fileMeta0(p fspPath, key string, e Entry, readOnly, thumb bool) meta {
	m := meta{
		MimeType: typeForName(p.name()), Name: p.name(), Path: p.String(),
		LastModified: unixMilli(e.ModTime), Size: e.Size, Permissions: perm(readOnly),
		PublicURL: q.publicURL(key), Extra: map[string]any{},
	}
	if thumb {
		m.Thumbnail = q.publicURL(joinKey(path.Dir(key), thumbName(p.name())))
	}
	if !readOnly {
		m.Extra["can-move"] = true
	}
	return m
}

// statDir describes directory p; the user's root and shared folders always
// exist (they are made on first write). A symbolic link in their place
// is a storage failure (errLink), elsewhere a folder that is not there.
func (q *request) statDir(ctx context.Context, p fspPath, pl place) (Entry, error) {
	e, err := q.h.storage.Stat(ctx, pl.key, true)
	if err == nil {
		return e, nil
	}
	if isNotExist(err) {
		switch {
		case len(p.segs) > 0 && pl.shared == nil:
			return Entry{}, fail(3200, "")
		case !errors.Is(err, errLink):
			return Entry{Dir: true}, nil
		}
	}
	return Entry{}, storageFail(err)
}

func (q *request) list(ctx context.Context, p fspPath, dirsOnly bool) (any, error) {
	pl := q.locate(p)
	self, err := q.statDir(ctx, p, pl)
	if err != nil {
		return nil, err
	}
	entries, err := q.h.storage.List(ctx, pl.key)
	if err != nil && !(isNotExist(err) && (len(p.segs) == 0 || pl.shared != nil)) {
		if isNotExist(err) {
			return nil, fail(3200, "")
		}
		return nil, storageFail(err)
	}
	// thumbs are the thumbnails there: files only, since on S3 a folder
	// (a prefix another tool made) can have a thumbnail's name.
	thumbs := map[string]bool{}
	for _, e := range entries {
		if !e.Dir && strings.HasPrefix(e.Name, thumbPrefix) {
			thumbs[e.Name] = true
		}
	}
	if !pl.readOnly {
		q.sweepThumbs(ctx, pl.key, entries)
	}
	items := make([]meta, 0, len(entries)+len(q.h.Shared))
	top := len(p.segs) == 0
	children := 0 // item-count: every child, also those a move listing leaves out
	for _, e := range entries {
		if !listable(e.Name) || (top && q.isShared(e.Name)) {
			continue
		}
		children++
		if e.Dir {
			items = append(items, q.dirMeta(p.child(e.Name, true), e, pl.readOnly))
		} else if !dirsOnly {
			items = append(items, q.fileMeta0(p.child(e.Name, false), joinKey(pl.key, e.Name), e, pl.readOnly, thumbs[thumbName(e.Name)]))
		}
	}
	if top {
		for _, s := range q.h.Shared {
			sp := p.child(s.Name, true)
			e, err := q.statDir(ctx, sp, q.locate(sp))
			if err != nil {
				return nil, err
			}
			items = append(items, q.dirMeta(sp, e, true))
			children++
		}
	}
	sort.Slice(items, func(i, j int) bool {
		di, dj := items[i].MimeType == "application/directory", items[j].MimeType == "application/directory"
		if di != dj {
			return di
		}
		return items[i].Name < items[j].Name
	})
	self.ItemCount = children
	return map[string]any{"meta": q.dirMeta(p, self, pl.readOnly), "items": items}, nil
}

// maxSweep bounds the left thumbnails one listing removes (each costs a
// look at its file and a delete): more are removed by the next listings.
const maxSweep = 16

// sweepThumbs removes the thumbnails listed in folder dir whose file is
// not there. A delete or move whose removal of the thumbnail failed, or
// was cut off, leaves one behind; nobody sees it and nothing else would
// remove it but a file taking its name or the folder's deletion. The
// file is looked at again first: one stored since the listing keeps its
// thumbnail. The listing's answer does not depend on how this goes.
func (q *request) sweepThumbs(ctx context.Context, dir string, entries []Entry) {
	files := map[string]bool{}
	for _, e := range entries {
		if !e.Dir {
			files[e.Name] = true
		}
	}
	swept := 0
	for _, e := range entries {
		name, isThumb := strings.CutPrefix(e.Name, thumbPrefix)
		name, isPNG := strings.CutSuffix(name, ".png")
		if e.Dir || !isThumb || !isPNG || files[name] || checkSegment(name) != nil {
			continue
		}
		if swept++; swept > maxSweep {
			return
		}
		if err := q.h.storage.Exists(ctx, joinKey(dir, name), false); !isNotExist(err) {
			continue // there after all, or unknown
		}
		if err := q.h.storage.Remove(ctx, joinKey(dir, e.Name)); err != nil && !isNotExist(err) {
			q.h.logger.Warn("removing a thumbnail of no file", append([]zap.Field{zap.String("key", joinKey(dir, e.Name)), zap.Error(err)}, q.h.storageLog...)...)
		}
	}
}

func (q *request) fileMeta(ctx context.Context, p fspPath) (any, error) {
	m, err := q.statFile(ctx, p)
	if err != nil {
		return nil, err
	}
	return map[string]any{"meta": m}, nil
}

// statFile is the meta of file p, with its thumbnail if there is one.
func (q *request) statFile(ctx context.Context, p fspPath) (meta, error) {
	pl := q.locate(p)
	e, err := q.h.storage.Stat(ctx, pl.key, false)
	if isNotExist(err) {
		return meta{}, fail(3200, "")
	} else if err != nil {
		return meta{}, storageFail(err)
	}
	thumb := false
	if tk, ok := q.thumbKey(pl.key); ok {
		_, terr := q.h.storage.Stat(ctx, tk, false)
		if terr != nil && !isNotExist(terr) {
			// The file is there: answer it, without its thumbnail.
			q.h.logger.Warn("looking for a thumbnail", append([]zap.Field{zap.String("key", tk), zap.Error(terr)}, q.h.storageLog...)...)
		}
		thumb = terr == nil
	}
	return q.fileMeta0(p, pl.key, e, pl.readOnly, thumb), nil
}
