package fsp

import (
	"context"
	"errors"

	"go.uber.org/zap"
)

func (q *request) remove(ctx context.Context, p fspPath) error {
	pl := q.locate(p)
	if pl.readOnly {
		return fail(3300, "")
	}
	if err := q.h.storage.Remove(ctx, pl.key); isNotExist(err) {
		return fail(3200, "")
	} else if err != nil {
		return storageFail(err)
	}
	// The file is gone: the client going away changes nothing from here
	// on, or its thumbnail would stay, of no file.
	ctx, cancel := q.detach(ctx)
	defer cancel()
	q.dropThumb(ctx, pl.key)
	return nil
}

// dropThumb removes the thumbnail of the file at key, if any, where a
// failure is only logged: after the file is gone, or once clearThumb has
// removed the one the file at key had.
func (q *request) dropThumb(ctx context.Context, key string) {
	if err := q.clearThumb(ctx, key); err != nil {
		q.h.logger.Warn("removing a thumbnail", zap.String("key", key), zap.Error(err))
	}
}

// clearThumb removes the thumbnail of the file at key, if any. An upload
// or move onto a name it knows calls it before placing the file: were the
// removal tried after, and failed, the new file would be listed with the
// replaced file's thumbnail; before, a failure leaves the old state.
func (q *request) clearThumb(ctx context.Context, key string) error {
	tk, ok := q.thumbKey(key)
	if !ok {
		return nil
	}
	if err := q.h.storage.Remove(ctx, tk); err != nil && !isNotExist(err) {
		return err
	}
	return nil
}

func (q *request) move(ctx context.Context, p fspPath) (any, error) {
	var body struct {
		NewPath          *string `json:"new_path"`
		ConflictStrategy string  `json:"conflict_strategy"`
	}
	if err := decodeJSON(q.r.Body, &body); err != nil {
		return nil, err
	}
	if body.NewPath == nil {
		return nil, fail(3500, "new_path is required")
	}
	dest, err := parseDirPath(*body.NewPath)
	var ne *nameError
	if errors.Is(err, errBadPath) && !errors.As(err, &ne) {
		return nil, fail(3500, "new_path must be a folder path such as /photos/")
	} else if err != nil {
		return nil, pathFail(err)
	}
	if err := q.checkKeyLen(q.locate(dest.child(p.name(), false)).key, false); err != nil {
		return nil, err
	}
	strat, err := parseStrategy(body.ConflictStrategy)
	if err != nil {
		return nil, err
	}
	src := q.locate(p)
	dpl := q.locate(dest)
	if src.readOnly || dpl.readOnly {
		return nil, fail(3300, "")
	}
	if err := q.h.storage.Exists(ctx, src.key, false); isNotExist(err) {
		return nil, fail(3200, "")
	} else if err != nil {
		return nil, storageFail(err)
	}
	if _, err := q.statDir(ctx, dest, dpl); err != nil {
		return nil, err
	}
	if dest.String() == p.parent().String() {
		return q.fileMeta(ctx, p) // already there
	}
	if len(dest.segs) == 0 {
		if err := q.h.storage.Mkdir(ctx, dpl.key, true); err != nil {
			return nil, storageFail(err)
		}
	}
	oldThumb, hadThumb := q.thumbKey(src.key)
	if hadThumb {
		// A thumbnail that cannot be looked at may be there: moving the
		// file without it would leave the file without one and the
		// thumbnail without its file, so nothing moves (3100).
		err := q.h.storage.Exists(ctx, oldThumb, false)
		if err != nil && !isNotExist(err) {
			return nil, storageFail(err)
		}
		hadThumb = err == nil
	}
	target := dest.child(p.name(), false)
	if strat == strategyAsk {
		// A known conflict changes nothing, the thumbnail there included.
		if err := q.askFree(ctx, q.locate(target).key); err != nil {
			return nil, err
		}
	}
	if strat != strategyKeep {
		if err := q.clearThumb(ctx, q.locate(target).key); err != nil {
			return nil, storageFail(err)
		}
	}
	final, err := q.place(ctx, target, func(candidate fspPath, exclusive bool) error {
		return q.h.storage.Move(ctx, src.key, q.locate(candidate).key, exclusive)
	}, strat)
	if err != nil {
		return nil, err
	}
	// The file has moved: the client going away changes nothing from
	// here on, or a thumbnail of the file replaced could stay.
	thumbCtx, cancel := q.detach(ctx)
	fk := q.locate(final).key
	newThumb, newOK := q.thumbKey(fk)
	switch {
	case hadThumb && newOK:
		if err := q.h.storage.Move(thumbCtx, oldThumb, newThumb, false); err != nil {
			if !isNotExist(err) {
				q.h.logger.Warn("moving a thumbnail", zap.String("key", oldThumb), zap.Error(err))
			}
			q.dropThumb(thumbCtx, fk) // a replaced file's would stay
		}
	case hadThumb: // the new name leaves no room for one
		q.dropThumb(thumbCtx, src.key)
	default:
		// The replaced file's, or one a failed delete left: another
		// file's either way.
		q.dropThumb(thumbCtx, fk)
	}
	cancel()
	// The answer's look at the file gets time of its own.
	ctx, cancel = q.detach(ctx)
	defer cancel()
	return q.fileMeta(ctx, final)
}
