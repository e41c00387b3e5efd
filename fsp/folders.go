package fsp

import (
	"context"
	"errors"
	"strings"
)

func (q *request) mkdir(ctx context.Context, p fspPath) (any, error) {
	if len(p.segs) == 0 {
		return nil, fail(3400, "")
	}
	// The contract's folder names; a file's name may hold more.
	if !vendorFolderName(p.segs[len(p.segs)-1]) {
		return nil, fail(3500, "A folder name may hold only the letters A-Z and a-z, digits, spaces and . _ - ( )")
	}
	pl := q.locate(p)
	if len(p.segs) == 1 && q.isShared(p.segs[0]) {
		return nil, fail(3400, "") // it exists (it is only not writable)
	}
	if pl.readOnly {
		return nil, fail(3300, "")
	}
	if _, err := q.ensureParent(ctx, p, true); err != nil {
		return nil, err
	}
	if err := q.h.storage.Mkdir(ctx, pl.key, false); isExist(err) {
		return nil, fail(3400, "")
	} else if isNotExist(err) {
		return nil, fail(3200, "")
	} else if err != nil {
		return nil, storageFail(err)
	}
	e, err := q.h.storage.Stat(ctx, pl.key, true)
	if err != nil {
		return nil, storageFail(err)
	}
	return map[string]any{"meta": q.dirMeta(p, e, false)}, nil
}

// ensureParent checks that the directory holding p exists; the user's root
// and, for uploads, /editor_images/ and /favicon_images/ are created
// instead. With create false those are only reported by autoCreate, so
// that an upload creates them once its content passed every check.
func (q *request) ensureParent(ctx context.Context, p fspPath, create bool) (autoCreate bool, err error) {
	parent := p.parent()
	pl := q.locate(parent)
	autoCreate = len(parent.segs) == 0 ||
		(!p.dir && len(parent.segs) == 1 && (parent.segs[0] == "editor_images" || parent.segs[0] == "favicon_images"))
	if autoCreate {
		if !create {
			return true, nil
		}
		if err := q.h.storage.Mkdir(ctx, pl.key, true); err != nil {
			if errors.Is(err, errLink) {
				return true, storageFail(err) // the user's root, or a folder on the way, is a link
			}
			if isNotExist(err) || isExist(err) {
				return true, fail(3200, "") // a file where a folder should be
			}
			return true, storageFail(err)
		}
		return true, nil
	}
	if err := q.h.storage.Exists(ctx, pl.key, true); isNotExist(err) {
		return false, fail(3200, "The folder "+parent.String()+" does not exist")
	} else if err != nil {
		return false, storageFail(err)
	}
	return false, nil
}

func (q *request) rmdir(ctx context.Context, p fspPath) error {
	pl := q.locate(p)
	if len(p.segs) == 0 || pl.readOnly {
		return fail(3300, "")
	}
	if err := q.h.storage.Exists(ctx, pl.key, true); isNotExist(err) {
		return fail(3200, "")
	} else if err != nil {
		return storageFail(err)
	}
	err := q.h.storage.Rmdir(ctx, pl.key)
	if errors.Is(err, errNotEmpty) {
		err = q.rmdirUnlisted(ctx, pl.key)
	}
	if errors.Is(err, errNotEmpty) {
		return fail(3500, "Only an empty folder can be deleted")
	} else if errors.Is(err, errUnlisted) {
		return fail(3500, "The folder holds files whose names the file manager cannot show (a \\ or a control character); remove them from the storage itself")
	} else if isNotExist(err) {
		return fail(3200, "")
	} else if err != nil {
		return storageFail(err)
	}
	return nil
}

// errUnlisted: a folder that looks empty holds names no request can give.
var errUnlisted = errors.New("folder holds unlisted names")

// rmdirUnlisted looks into a folder that the storage found not empty.
// With listed items it stays errNotEmpty. Thumbnails whose file is gone
// (left by a failed delete) are removed and the folder with them; names
// no request could give make errUnlisted, so the user learns why a folder
// that lists nothing cannot be deleted.
func (q *request) rmdirUnlisted(ctx context.Context, key string) error {
	entries, err := q.h.storage.List(ctx, key)
	if err != nil {
		return err
	}
	files := map[string]bool{}
	for _, e := range entries {
		if listable(e.Name) {
			return errNotEmpty
		}
		files[e.Name] = !e.Dir
	}
	var orphans []string
	for _, e := range entries {
		if e.Dir || !strings.HasPrefix(e.Name, thumbPrefix) {
			if !strings.HasPrefix(e.Name, tempPrefix) {
				return errUnlisted
			}
			return errNotEmpty // a write in progress
		}
		if base := strings.TrimSuffix(strings.TrimPrefix(e.Name, thumbPrefix), ".png"); files[base] {
			return errNotEmpty
		}
		orphans = append(orphans, e.Name)
	}
	for _, name := range orphans {
		if err := q.h.storage.Remove(ctx, joinKey(key, name)); err != nil && !isNotExist(err) {
			return err
		}
	}
	return q.h.storage.Rmdir(ctx, key)
}
