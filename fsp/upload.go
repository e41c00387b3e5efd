package fsp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
)

// strategy is a conflict_strategy.
type strategy string

const (
	strategyAsk     strategy = "ask"
	strategyKeep    strategy = "keep"
	strategyReplace strategy = "replace"
)

func parseStrategy(text string) (strategy, error) {
	switch text {
	case "", "ask":
		return strategyAsk, nil
	case "keep":
		return strategyKeep, nil
	case "replace":
		return strategyReplace, nil
	}
	return "", fail(3500, `conflict_strategy must be "ask", "keep" or "replace"`)
}

// keepName is the n-th free-name candidate: pizza.jpg, pizza_1.jpg, …
func keepName(name string, n int) string {
	if n == 0 {
		return name
	}
	ext := path.Ext(name)
	if _, stored := fileTypes[strings.ToLower(ext)]; ext == name && !stored {
		// ".hidden" is a name, not an extension; ".png" is a PNG's
		// extension, kept so that the free name is stored as a PNG too.
		ext = ""
	}
	return strings.TrimSuffix(name, ext) + "_" + strconv.Itoa(n) + ext
}

func (q *request) upload(ctx context.Context, p fspPath) (any, error) {
	pl := q.locate(p)
	if pl.readOnly {
		return nil, fail(3300, "")
	}
	// Refuse a name fsp would never store before reading anything.
	if err := checkName(p.name(), q.h.AllowTypes); err != nil {
		return nil, uploadFail(err)
	}
	// A slot before the body is read: the body and the fetched file are
	// what an upload holds in memory.
	release, ok := q.h.slots.acquire(ctx, q.root)
	if !ok {
		return nil, uploadFail(uploadErr("the client went away while the upload waited for its turn"))
	}
	defer release()
	// The body is cut when it arrives too slowly: its read deadline is
	// moved to now, which ends the read waiting for the next bytes.
	rc := http.NewResponseController(q.w)
	body := newRateReader(q.r.Body, q.h.MinUploadRate, minRateGrace, func() { _ = rc.SetReadDeadline(time.Now()) })
	defer body.stop()
	q.r.Body = struct {
		io.Reader
		io.Closer
	}{body, q.r.Body}
	source, strat, direct, err := q.readUploadRequest()
	body.stop()
	if body.cut.Load() {
		return nil, uploadFail(uploadErr("the upload arrived too slowly"))
	}
	if err != nil {
		return nil, err
	}
	autoCreate, err := q.ensureParent(ctx, p, false)
	if err != nil {
		return nil, err
	}
	// Answer a known conflict before fetching anything: a folder of
	// that name (whatever the strategy but keep), or a file (ask).
	if strat != strategyKeep {
		if err := q.noFolderAt(ctx, p); err != nil {
			return nil, err
		}
	}
	if strat == strategyAsk {
		if err := q.askFree(ctx, pl.key); err != nil {
			return nil, err
		}
	}
	data := direct
	if data == nil {
		fetchCtx, cancel := context.WithTimeout(ctx, time.Duration(q.h.FetchTimeout))
		data, err = q.h.fetcher.fetch(fetchCtx, source)
		cancel()
		if err != nil {
			return nil, uploadFail(err)
		}
	}
	sniffed, err := checkContent(p.name(), data, q.h.AllowTypes)
	if err != nil {
		return nil, uploadFail(err)
	}
	var thumb []byte
	if isRaster(sniffed) {
		if thumb, err = makeThumbnail(data, q.h.MaxImageMemory, q.h.thumbPNG); err != nil {
			return nil, uploadFail(uploadErr("the image could not be decoded"))
		}
	}
	if autoCreate {
		if _, err := q.ensureParent(ctx, p, true); err != nil {
			return nil, err
		}
	}
	switch strat {
	case strategyAsk:
		if err := q.clearLeftThumb(ctx, pl.key); err != nil {
			return nil, err
		}
	case strategyReplace:
		if err := q.clearThumb(ctx, pl.key); err != nil {
			return nil, storageFail(err)
		}
	}
	var final fspPath
	var version string
	if strat == strategyKeep {
		final, version, err = q.writeKeep(ctx, p, data)
	} else {
		final, err = q.place(ctx, p, func(candidate fspPath, exclusive bool) (err error) {
			version, err = q.h.storage.Write(ctx, q.locate(candidate).key, data, typeForName(candidate.name()), exclusive)
			return err
		}, strat)
	}
	if err != nil {
		return nil, err
	}
	// The file is in place: the client going away changes nothing from
	// here on, or the thumbnail of the file replaced would stay.
	thumbCtx, cancel := q.detach(ctx)
	q.storeThumb(thumbCtx, q.locate(final).key, version, thumb)
	cancel()
	// The answer's look at the file gets time of its own.
	ctx, cancel = q.detach(ctx)
	defer cancel()
	m, err := q.statFile(ctx, final)
	if err != nil {
		return nil, err
	}
	return map[string]any{"meta": m}, nil
}

// clearLeftThumb removes, before an ask upload's write, a thumbnail at
// the name it takes (one a failed delete left), as clearThumb does for
// replace. A file may have taken the name while the upload arrived, and
// its thumbnail must stay: the name is looked at again, but only when a
// thumbnail is there to remove. Otherwise the exclusive write that
// follows answers such a file (3400), so a free name costs one look
// before the write, not two.
func (q *request) clearLeftThumb(ctx context.Context, key string) error {
	tk, ok := q.thumbKey(key)
	if !ok {
		return nil
	}
	if err := q.h.storage.Exists(ctx, tk, false); isNotExist(err) {
		return nil
	} else if err != nil {
		return storageFail(err)
	}
	if err := q.askFree(ctx, key); err != nil {
		return err
	}
	if err := q.clearThumb(ctx, key); err != nil {
		return storageFail(err)
	}
	return nil
}

// storeThumb stores thumb as the thumbnail of the file just stored at fk
// in version, or, with none, removes the one there: the replaced file's,
// or one a failed delete left. Whatever happens, the file stays; a
// thumbnail that cannot be written (a name too long for it, a storage
// failure) only leaves the file without one. Another upload that
// replaced the file meanwhile may have written its thumbnail before ours
// overwrote it: the thumbnail is then made again from the file now
// stored, so that the last upload's file keeps one, never another
// file's; a file replaced again meanwhile has none.
func (q *request) storeThumb(ctx context.Context, fk, version string, thumb []byte) {
	tk, ok := q.thumbKey(fk)
	if !ok || thumb == nil {
		q.dropThumb(ctx, fk)
		return
	}
	for remade := 0; ; remade++ {
		if _, err := q.h.storage.Write(ctx, tk, thumb, "image/png", false); err != nil {
			q.h.logger.Warn("storing a file without its thumbnail", append([]zap.Field{zap.String("key", tk), zap.Error(err)}, q.h.storageLog...)...)
			q.dropThumb(ctx, fk) // the replaced file's, which no longer matches
			return
		}
		now, err := q.h.storage.Version(ctx, fk)
		if err == nil && now == version {
			return
		}
		if err == nil && remade < maxThumbRemakes {
			thumb, version, err = q.remakeThumb(ctx, fk)
		}
		if err != nil || thumb == nil || remade == maxThumbRemakes {
			q.h.logger.Debug("the file was replaced while its thumbnail was stored; removing the thumbnail",
				zap.String("key", tk), zap.Error(err))
			q.dropThumb(ctx, fk)
			return
		}
	}
}

// maxThumbRemakes bounds how often one upload makes the thumbnail of a
// file other uploads keep replacing.
const maxThumbRemakes = 2

// remakeThumb reads the file at fk and makes its thumbnail (nil when it
// gets none), returning it with the version it was made from.
func (q *request) remakeThumb(ctx context.Context, fk string) ([]byte, string, error) {
	data, version, err := q.h.storage.Read(ctx, fk, q.h.MaxSize)
	if err != nil {
		return nil, "", err
	}
	sniffed, err := checkContent(path.Base(fk), data, q.h.AllowTypes)
	if err != nil || !isRaster(sniffed) {
		return nil, version, nil
	}
	thumb, err := makeThumbnail(data, q.h.MaxImageMemory, q.h.thumbPNG)
	return thumb, version, err
}

func uploadFail(err error) error {
	var ue *uploadError
	if errors.As(err, &ue) {
		return &fspError{code: 3450, details: "The file could not be uploaded: " + ue.reason, cause: err}
	}
	return &fspError{code: 3450, cause: err}
}

// place writes (or moves) into p following the strategy and returns where
// the file ended up. put is called with exclusive=false only for replace.
func (q *request) place(ctx context.Context, p fspPath, put func(fspPath, bool) error, strat strategy) (fspPath, error) {
	switch strat {
	case strategyReplace:
		// A file never replaces a folder.
		if err := q.noFolderAt(ctx, p); err != nil {
			return fspPath{}, err
		}
		if err := put(p, false); isExist(err) {
			return fspPath{}, folderConflict(p)
		} else if err != nil {
			return fspPath{}, storageError(err)
		}
		return p, nil
	case strategyKeep:
		candidates := q.keepCandidates(p)
		keys := make([]string, len(candidates))
		for i, c := range candidates {
			keys[i] = q.locate(c).key
		}
		states, err := q.h.storage.Names(ctx, keys)
		if err != nil {
			return fspPath{}, storageFail(err)
		}
		for i, candidate := range candidates {
			// A name seen taken is skipped without moving anything (on
			// S3 each attempt copies the whole file).
			if states[i] == nameTaken {
				continue
			}
			if states[i] == nameUnknown {
				if err := q.h.storage.Exists(ctx, keys[i], false); err == nil {
					continue
				}
				if err := q.h.storage.Exists(ctx, keys[i], true); err == nil {
					continue // a folder's name is taken too
				}
			}
			// The thumbnail the free name holds goes first, as for
			// ask and replace (clearThumb).
			if err := q.clearThumb(ctx, keys[i]); err != nil {
				return fspPath{}, storageFail(err)
			}
			err := put(candidate, true)
			if err == nil {
				return candidate, nil
			}
			if !isExist(err) {
				return fspPath{}, storageError(err)
			}
			if ctx.Err() != nil {
				return fspPath{}, storageFail(ctx.Err())
			}
		}
		return fspPath{}, fail(3400, "No free name was found")
	default:
		if err := q.noFolderAt(ctx, p); err != nil {
			return fspPath{}, err
		}
		if err := put(p, true); isExist(err) {
			return fspPath{}, fail(3400, "")
		} else if err != nil {
			return fspPath{}, storageError(err)
		}
		return p, nil
	}
}

// askFree answers 3400 when a file holds the name at key: an ask upload
// or move then changes nothing.
func (q *request) askFree(ctx context.Context, key string) error {
	if err := q.h.storage.Exists(ctx, key, false); err == nil {
		return fail(3400, "")
	} else if !isNotExist(err) {
		return storageFail(err)
	}
	return nil
}

// noFolderAt answers 3400 when a folder holds the name of file p: a
// conflict the user can resolve (keep, another name), not a failure.
func (q *request) noFolderAt(ctx context.Context, p fspPath) error {
	err := q.h.storage.Exists(ctx, q.locate(p).key, true)
	switch {
	case err == nil:
		return folderConflict(p)
	case isNotExist(err):
		return nil
	}
	return storageFail(err)
}

func folderConflict(p fspPath) error {
	return fail(3400, "A folder named "+p.name()+" is already there")
}

// keepCandidates are the names a keep upload or move of p may take, in
// order: p, p_1, p_2, … p_999, then a few p_N of random N past those, so
// that a folder holding all of the first ones still gets a free name of
// the same form instead of an error. Names too long for a name or a key
// are left out.
func (q *request) keepCandidates(p fspPath) []fspPath {
	var out []fspPath
	add := func(n int) bool {
		c := p.parent().child(keepName(p.name(), n), false)
		if checkSegment(c.name()) != nil || !q.fits(q.locate(c).key, false) {
			return false
		}
		out = append(out, c)
		return true
	}
	for n := 0; n < maxKeepAttempts; n++ {
		if !add(n) {
			return out
		}
	}
	for range keepRandomAttempts {
		add(maxKeepAttempts + rand.IntN(1e9))
	}
	return out
}

// writeKeep stores data under the first free name of keepCandidates,
// writing the bytes once, and returns it with the file's version.
func (q *request) writeKeep(ctx context.Context, p fspPath, data []byte) (fspPath, string, error) {
	candidates := q.keepCandidates(p)
	keys := make([]string, len(candidates))
	for i, c := range candidates {
		keys[i] = q.locate(c).key
	}
	// The thumbnail a name holds is removed before the name is taken, as
	// for ask and replace (clearThumb).
	i, version, err := q.h.storage.WriteFirstFree(ctx, keys, data, typeForName(p.name()), func(i int) error {
		return q.clearThumb(ctx, keys[i])
	})
	if isExist(err) {
		return fspPath{}, "", fail(3400, "No free name was found")
	} else if err != nil {
		return fspPath{}, "", storageError(err)
	}
	return candidates[i], version, nil
}

// storageError maps an error of a write or move.
func storageError(err error) error {
	if isNotExist(err) {
		return fail(3200, "")
	}
	return storageFail(err)
}

// readUploadRequest reads the upload's JSON body ({"source", "conflict_strategy"})
// or, for multipart/form-data, the file bytes themselves.
func (q *request) readUploadRequest() (source string, strat strategy, direct []byte, err error) {
	r := q.r
	mediaType, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mediaType == "multipart/form-data" {
		return q.readMultipart()
	}
	var body struct {
		Source           *string `json:"source"`
		ConflictStrategy string  `json:"conflict_strategy"`
	}
	if err := decodeJSON(r.Body, &body); err != nil {
		return "", "", nil, err
	}
	if body.Source == nil || *body.Source == "" {
		return "", "", nil, fail(3500, "source is required")
	}
	strat, err = parseStrategy(body.ConflictStrategy)
	return *body.Source, strat, nil, err
}

// multipartRoom is what a direct upload's body may hold besides its file:
// boundaries, part headers, the conflict_strategy field.
const multipartRoom = 64 << 10

func (q *request) readMultipart() (string, strategy, []byte, error) {
	// The whole body is bounded, not only the file part: parts of other
	// names are read (and dropped) too, and would otherwise keep the
	// upload's slot for as long as they keep coming.
	q.r.Body = struct {
		io.Reader
		io.Closer
	}{&cappedReader{r: q.r.Body, max: q.h.MaxSize + multipartRoom}, q.r.Body}
	mr, err := q.r.MultipartReader()
	if err != nil {
		return "", "", nil, fail(3500, "The multipart body could not be read")
	}
	var data []byte
	strat := strategyAsk
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		var ue *uploadError
		if errors.As(err, &ue) {
			return "", "", nil, uploadFail(err)
		}
		if err != nil {
			return "", "", nil, fail(3500, "The multipart body could not be read")
		}
		switch part.FormName() {
		case "file":
			if data != nil {
				return "", "", nil, fail(3500, "Only one file per upload")
			}
			if data, err = readLimited(part, q.h.MaxSize, "the file"); err != nil {
				return "", "", nil, uploadFail(err)
			}
		case "conflict_strategy":
			text, err := io.ReadAll(io.LimitReader(part, 64))
			if errors.As(err, &ue) {
				return "", "", nil, uploadFail(err)
			}
			if err != nil {
				return "", "", nil, fail(3500, "The multipart body could not be read")
			}
			if strat, err = parseStrategy(string(text)); err != nil {
				return "", "", nil, err
			}
		}
	}
	if data == nil {
		return "", "", nil, fail(3500, "The field file is required")
	}
	return "", strat, data, nil
}

// cappedReader fails (an uploadError) once more than max bytes are read,
// or once request_body's limit in front of fsp is reached: a body too
// large is 3450 wherever in the form it ends, as fsp_error answers
// request_body's 413.
type cappedReader struct {
	r      io.Reader
	n, max int64
}

func (c *cappedReader) Read(p []byte) (int, error) {
	if c.n > c.max {
		return 0, uploadErr("the request is larger than %d bytes", c.max)
	}
	if left := c.max - c.n + 1; int64(len(p)) > left {
		p = p[:left] // one byte past max is enough to know
	}
	n, err := c.r.Read(p)
	if c.n += int64(n); c.n > c.max {
		return n, uploadErr("the request is larger than %d bytes", c.max)
	}
	if tooLarge, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return n, uploadErr("the request is larger than %d bytes", tooLarge.Limit)
	}
	return n, err
}

func decodeJSON(body io.Reader, v any) error {
	raw, err := io.ReadAll(io.LimitReader(body, maxJSONBody+1))
	if err != nil {
		return fail(3500, "The request body could not be read")
	}
	if len(raw) > maxJSONBody {
		return fail(3500, "The request body is too large")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fail(3500, "The request body is not the expected JSON")
	}
	return nil
}
