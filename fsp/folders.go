package fsp

import (
	"context"
	"errors"
)

func (q *request) mkdir(ctx context.Context, p fspPath) (any, error) {
	if len(p.segs) == 0 {
		return nil, fail(3400, "")
	}
	pl := q.locate(p)
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
			if isNotExist(err) || isExist(err) {
				return true, fail(3200, "") // a file where a folder should be
			}
			return true, storageFail(err)
		}
		return true, nil
	}
	if _, err := q.h.storage.Stat(ctx, pl.key, true); isNotExist(err) {
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
	if _, err := q.h.storage.Stat(ctx, pl.key, true); isNotExist(err) {
		return fail(3200, "")
	} else if err != nil {
		return storageFail(err)
	}
	if err := q.h.storage.Rmdir(ctx, pl.key); errors.Is(err, errNotEmpty) {
		return fail(3500, "Only an empty folder can be deleted")
	} else if isNotExist(err) {
		return fail(3200, "")
	} else if err != nil {
		return storageFail(err)
	}
	return nil
}
