// Package fsp is the file system provider (FSP) the editor's file manager
// calls, as a Caddy HTTP handler (http.handlers.fsp, directive fsp): list,
// create and delete folders, upload files from a source URL (or directly),
// move and delete files, with thumbnails for raster images. Files live in a
// local folder or in S3-compatible object storage. Every failure answers
// with the FSP error table that fsp_error uses (internal/fsperr).
package fsp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/designbridge/caddy-designbridge/internal/confvalue"
	"github.com/designbridge/caddy-designbridge/internal/fsperr"
)

func init() {
	caddy.RegisterModule(Handler{})
	httpcaddyfile.RegisterHandlerDirective("fsp", parseCaddyfile)
	// Right after respond: after basic_auth and request_body (which guard
	// it) and after fsp_error (before respond), so a matcher-guarded
	// fsp_error in the same block answers first; before reverse_proxy and
	// file_server. Anchored on respond, not on fsp_error, so it does not
	// depend on which package's init runs first.
	httpcaddyfile.RegisterDirectiveOrder("fsp", httpcaddyfile.After, "respond")
}

// Defaults of the upload limits.
const (
	defaultMaxSize      = 20 << 20
	defaultFetchTimeout = 30 * time.Second
	defaultMaxUploads   = 4
	defaultRoot         = "{http.request.header.X-BEE-ClientId}/{http.request.header.X-BEE-Uid}"
	maxJSONBody         = 64 << 10
	maxKeepAttempts     = 1000
)

// Handler serves the FSP API. It always ends the handler chain.
type Handler struct {
	// Local keeps the files in a folder on this machine. Exactly one of
	// Local and S3 is set.
	Local *LocalConfig `json:"local,omitempty"`

	// S3 keeps the files in an S3-compatible bucket, which several Caddy
	// instances can share.
	S3 *S3Config `json:"s3,omitempty"`

	// Root is the template of each user's folder inside the storage;
	// placeholder values are made safe path segments (a "/" in a uid
	// does not make a folder). Default: one folder per client and uid,
	// "{http.request.header.X-BEE-ClientId}/{http.request.header.X-BEE-Uid}".
	Root string `json:"root,omitempty"`

	// PublicURL is the base of the files' public URLs: a file at storage
	// key k is at PublicURL/k. For a local folder, the same Caddy serves
	// it with file_server; for S3, a bucket website or CDN. Placeholders
	// are replaced.
	PublicURL string `json:"public_url"`

	// Shared lists read-only folders every user sees at the top of their
	// tree.
	Shared []SharedFolder `json:"shared,omitempty"`

	// MaxSize bounds an uploaded file in bytes (default 20 MiB).
	MaxSize int64 `json:"max_size,omitempty"`

	// FetchTimeout bounds fetching an upload's source (default 30s).
	FetchTimeout caddy.Duration `json:"fetch_timeout,omitempty"`

	// MaxUploads bounds the uploads handled at once (default 4). Each
	// holds up to max_size bytes in memory, so together they hold at most
	// max_uploads × max_size; further uploads wait for their turn (while
	// their client waits).
	MaxUploads int `json:"max_uploads,omitempty"`

	// AllowTypes are the sniffed media types an upload may have (default:
	// PNG, JPEG, GIF, WebP, BMP, ICO, PDF, ZIP-based documents, plain
	// text).
	AllowTypes []string `json:"allow_types,omitempty"`

	// AllowPrivate lets upload sources be on private, loopback and
	// link-local addresses. Off by default: the FSP must not become a way
	// into the host's network.
	AllowPrivate bool `json:"allow_private,omitempty"`

	// AllowAnonymous serves requests that no authentication handler
	// (basic_auth in front of fsp) has let through. Off by default, so
	// a Caddyfile that forgets basic_auth answers 3650 instead of
	// serving everyone's files.
	AllowAnonymous bool `json:"allow_anonymous,omitempty"`

	storage Storage
	fetcher *fetcher
	uploads chan struct{} // a slot per upload in progress
	logger  *zap.Logger
}

// LocalConfig is the local folder back end.
type LocalConfig struct {
	// Folder holds every user's tree.
	Folder string `json:"folder"`
}

// SharedFolder is a read-only folder shown to every user.
type SharedFolder struct {
	// Name is the folder's name at the top of each user's tree.
	Name string `json:"name"`
	// Key is the folder's path inside the storage.
	Key string `json:"key"`
}

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.fsp",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision opens the storage and sets the defaults.
func (h *Handler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	if h.Root == "" {
		h.Root = defaultRoot
	}
	if h.MaxSize == 0 {
		h.MaxSize = defaultMaxSize
	}
	if h.FetchTimeout == 0 {
		h.FetchTimeout = caddy.Duration(defaultFetchTimeout)
	}
	if len(h.AllowTypes) == 0 {
		h.AllowTypes = defaultAllowedTypes()
	}
	if h.MaxUploads == 0 {
		h.MaxUploads = defaultMaxUploads
	}
	if err := h.Validate(); err != nil {
		return err
	}
	repl := caddy.NewReplacer()
	var err error
	switch {
	case h.Local != nil:
		h.storage, err = newLocalStorage(repl.ReplaceKnown(h.Local.Folder, ""))
	case h.S3 != nil:
		h.storage, err = newS3Storage(ctx, *h.S3, repl)
	}
	if err != nil {
		return fmt.Errorf("fsp: opening storage: %v", err)
	}
	allow := publicAddr
	if h.AllowPrivate {
		allow = nil
	}
	h.fetcher = newFetcher(h.MaxSize, time.Duration(h.FetchTimeout), allow)
	h.uploads = make(chan struct{}, h.MaxUploads)
	return nil
}

// Validate checks the configuration.
func (h *Handler) Validate() error {
	if (h.Local == nil) == (h.S3 == nil) {
		return errors.New("fsp: exactly one storage is needed: local or s3")
	}
	if h.Local != nil && h.Local.Folder == "" {
		return errors.New("fsp: local needs a folder")
	}
	if h.S3 != nil {
		if err := h.S3.validate(); err != nil {
			return fmt.Errorf("fsp: s3: %v", err)
		}
	}
	if h.PublicURL == "" {
		return errors.New("fsp: public_url is required")
	}
	if h.MaxSize < 0 {
		return errors.New("fsp: max_size must be positive")
	}
	if h.FetchTimeout < 0 {
		return errors.New("fsp: fetch_timeout must be positive")
	}
	if h.MaxUploads < 0 {
		return errors.New("fsp: max_uploads must be positive")
	}
	seen := map[string]bool{}
	for _, s := range h.Shared {
		if !validName(s.Name) {
			return fmt.Errorf("fsp: shared folder name %q: names match [ a-zA-Z0-9._()-]+", s.Name)
		}
		if seen[s.Name] {
			return fmt.Errorf("fsp: shared folder %q given twice", s.Name)
		}
		seen[s.Name] = true
		if _, err := cleanRoot(s.Key); err != nil {
			return fmt.Errorf("fsp: shared folder %q: path %q must be relative, without dot segments", s.Name, s.Key)
		}
	}
	for _, t := range h.AllowTypes {
		if mt, _, err := mime.ParseMediaType(t); err != nil || mt != t {
			return fmt.Errorf("fsp: allow_types: %q is not a media type (lower case, no parameters)", t)
		}
	}
	return nil
}

// Cleanup closes the storage.
func (h *Handler) Cleanup() error {
	if h.fetcher != nil {
		h.fetcher.close()
	}
	if h.storage != nil {
		return h.storage.Close()
	}
	return nil
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	fsp [<matcher>] {
//	    local <folder>
//	    s3 {
//	        endpoint   <host:port>
//	        bucket     <name>
//	        prefix     <key prefix>
//	        region     <region>
//	        access_key <id>
//	        secret_key <secret>
//	        insecure
//	    }
//	    root          <template>
//	    public_url    <base URL>
//	    shared        <name> <storage path>
//	    max_size      <size>
//	    fetch_timeout <duration>
//	    max_uploads   <number>
//	    allow_types   <media type>...
//	    allow_private
//	    allow_anonymous
//	}
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // consume directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	for d.NextBlock(0) {
		sub := d.Val()
		switch sub {
		case "local":
			if h.Local != nil || h.S3 != nil {
				return d.Errf("fsp: storage already specified")
			}
			if !d.NextArg() {
				return d.ArgErr()
			}
			h.Local = &LocalConfig{Folder: d.Val()}
			if d.NextArg() {
				return d.ArgErr()
			}
		case "s3":
			if h.Local != nil || h.S3 != nil {
				return d.Errf("fsp: storage already specified")
			}
			if d.NextArg() {
				return d.ArgErr()
			}
			h.S3 = new(S3Config)
			if err := h.S3.unmarshal(d); err != nil {
				return err
			}
		case "root", "public_url":
			target := &h.Root
			if sub == "public_url" {
				target = &h.PublicURL
			}
			if *target != "" {
				return d.Errf("fsp: %s already specified", sub)
			}
			if !d.NextArg() {
				return d.ArgErr()
			}
			*target = d.Val()
			if d.NextArg() {
				return d.ArgErr()
			}
		case "shared":
			args := d.RemainingArgs()
			if len(args) != 2 {
				return d.ArgErr()
			}
			h.Shared = append(h.Shared, SharedFolder{Name: args[0], Key: args[1]})
		case "max_size":
			if !d.NextArg() {
				return d.ArgErr()
			}
			size, err := confvalue.Size(d.Val())
			if err != nil || size > 1<<32 {
				return d.Errf("fsp: max_size %q: a size such as 20MB, at most 4GiB", d.Val())
			}
			h.MaxSize = size
			if d.NextArg() {
				return d.ArgErr()
			}
		case "fetch_timeout":
			if !d.NextArg() {
				return d.ArgErr()
			}
			dur, err := caddy.ParseDuration(d.Val())
			if err != nil || dur <= 0 {
				return d.Errf("fsp: fetch_timeout %q: a positive duration such as 30s", d.Val())
			}
			h.FetchTimeout = caddy.Duration(dur)
			if d.NextArg() {
				return d.ArgErr()
			}
		case "max_uploads":
			if !d.NextArg() {
				return d.ArgErr()
			}
			n, err := strconv.Atoi(d.Val())
			if err != nil || n <= 0 {
				return d.Errf("fsp: max_uploads %q: a positive number", d.Val())
			}
			h.MaxUploads = n
			if d.NextArg() {
				return d.ArgErr()
			}
		case "allow_types":
			args := d.RemainingArgs()
			if len(args) == 0 {
				return d.ArgErr()
			}
			h.AllowTypes = append(h.AllowTypes, args...)
		case "allow_private", "allow_anonymous":
			if d.NextArg() {
				return d.ArgErr()
			}
			if sub == "allow_private" {
				h.AllowPrivate = true
			} else {
				h.AllowAnonymous = true
			}
		default:
			return d.Errf("fsp: unrecognized subdirective %q", sub)
		}
	}
	return nil
}

func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	fh := new(Handler)
	err := fh.UnmarshalCaddyfile(h.Dispenser)
	return fh, err
}

// fspError is a failure answered with a code of the table; reason goes to
// the log only, details (if any) to the client.
type fspError struct {
	code    int
	details string
	cause   error
}

func (e *fspError) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("fsp %d: %v", e.code, e.cause)
	}
	return fmt.Sprintf("fsp %d: %s", e.code, e.details)
}

func fail(code int, details string) error { return &fspError{code: code, details: details} }

// storageFail is an unexpected error of the storage (3100); the cause is
// logged, never shown.
func storageFail(err error) error { return &fspError{code: 3100, cause: err} }

// request is one request's view: the user's root key and its answers.
type request struct {
	h      *Handler
	r      *http.Request
	root   string // storage key of the user's tree
	public string // public URL base, placeholders replaced
}

// ServeHTTP answers the FSP API; it never calls next.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	data, err := h.serve(r)
	if err != nil {
		var fe *fspError
		if !errors.As(err, &fe) {
			fe = &fspError{code: 3100, cause: err}
		}
		if fe.code == 3100 || fe.code == 3001 {
			h.logger.Error("storage failure", zap.Error(fe.cause),
				zap.String("method", r.Method), zap.String("uri", r.RequestURI))
		} else if fe.cause != nil {
			h.logger.Debug("request refused", zap.Int("code", fe.code), zap.Error(fe.cause))
		}
		body, status := fsperr.Answer(fe.code, fe.details)
		if werr := fsperr.Write(w, r, body, status); werr != nil {
			return caddyhttp.Error(http.StatusInternalServerError, werr)
		}
		return nil
	}
	encoded, err := json.Marshal(struct {
		Status string `json:"status"`
		Data   any    `json:"data"`
	}{"success", data})
	if err != nil {
		return caddyhttp.Error(http.StatusInternalServerError, err)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Length", strconv.Itoa(len(encoded)))
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(encoded)
	return err
}

// serve runs the operation and returns the success data.
func (h *Handler) serve(r *http.Request) (any, error) {
	repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	if repl == nil {
		repl = caddy.NewReplacer()
	}
	if !h.AllowAnonymous {
		// Set by Caddy's authentication handler once it accepted the
		// credentials.
		if user, _ := repl.GetString("http.auth.user.id"); user == "" {
			return nil, fail(3650, "")
		}
	}
	clientID := strings.TrimSpace(r.Header.Get("X-BEE-ClientId"))
	uid := strings.TrimSpace(r.Header.Get("X-BEE-Uid"))
	if clientID == "" || uid == "" {
		return nil, fail(3500, "The X-BEE-ClientId and X-BEE-Uid headers are required")
	}
	rendered, err := repl.ReplaceFunc(h.Root, func(_ string, val any) (any, error) {
		return rootSegment(fmt.Sprint(val)), nil
	})
	if err != nil {
		return nil, &fspError{code: 3600, cause: err}
	}
	root, err := cleanRoot(rendered)
	if err != nil || root == "" {
		return nil, &fspError{code: 3600, cause: fmt.Errorf("storage root %q is not usable", rendered)}
	}
	q := &request{h: h, r: r, root: root, public: strings.TrimSuffix(repl.ReplaceKnown(h.PublicURL, ""), "/")}

	p, err := parseRequestPath(r.URL.EscapedPath())
	if orig, ok := r.Context().Value(caddyhttp.OriginalRequestCtxKey).(http.Request); ok && orig.URL != nil && err == nil {
		err = checkOriginalPath(orig.URL.EscapedPath())
	}
	if errors.Is(err, errOutside) {
		return nil, fail(3300, "The path leaves your folder")
	} else if err != nil {
		return nil, fail(3500, "Names may hold letters, digits, spaces and . _ ( ) - only")
	}
	ctx := r.Context()
	switch {
	case r.Method == http.MethodGet && p.dir:
		return q.list(ctx, p, strings.EqualFold(strings.TrimSpace(r.Header.Get("X-BEE-Fsp-Flags")), "move"))
	case r.Method == http.MethodGet:
		return q.fileMeta(ctx, p)
	case r.Method == http.MethodPost && p.dir:
		return q.mkdir(ctx, p)
	case r.Method == http.MethodPost:
		return q.upload(ctx, p)
	case r.Method == http.MethodDelete && p.dir:
		return nil, q.rmdir(ctx, p)
	case r.Method == http.MethodDelete:
		return nil, q.remove(ctx, p)
	case r.Method == http.MethodPatch && !p.dir:
		return q.move(ctx, p)
	}
	return nil, fail(3500, "Method "+r.Method+" is not an operation on this path")
}

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

func (q *request) dirMeta(p fspPath, e Entry, readOnly bool) meta {
	count := e.ItemCount
	return meta{
		MimeType: "application/directory", Name: p.name(), Path: p.String(),
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
// exist (they are made on first write).
func (q *request) statDir(ctx context.Context, p fspPath, pl place) (Entry, error) {
	e, err := q.h.storage.Stat(ctx, pl.key, true)
	if err == nil {
		return e, nil
	}
	if isNotExist(err) {
		if len(p.segs) == 0 || pl.shared != nil {
			return Entry{Dir: true}, nil
		}
		return Entry{}, fail(3200, "")
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
	hidden := map[string]bool{}
	for _, e := range entries {
		if strings.HasPrefix(e.Name, ".") {
			hidden[e.Name] = true
		}
	}
	items := make([]meta, 0, len(entries)+len(q.h.Shared))
	top := len(p.segs) == 0
	for _, e := range entries {
		if strings.HasPrefix(e.Name, ".") || !validName(e.Name) || (top && q.isShared(e.Name)) {
			continue
		}
		if e.Dir {
			items = append(items, q.dirMeta(p.child(e.Name, true), e, pl.readOnly))
		} else if !dirsOnly {
			items = append(items, q.fileMeta0(p.child(e.Name, false), joinKey(pl.key, e.Name), e, pl.readOnly, hidden[thumbName(e.Name)]))
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
		}
	}
	sort.Slice(items, func(i, j int) bool {
		di, dj := items[i].MimeType == "application/directory", items[j].MimeType == "application/directory"
		if di != dj {
			return di
		}
		return items[i].Name < items[j].Name
	})
	self.ItemCount = len(items)
	return map[string]any{"meta": q.dirMeta(p, self, pl.readOnly), "items": items}, nil
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
	thumbKey := joinKey(path.Dir(pl.key), thumbName(p.name()))
	_, terr := q.h.storage.Stat(ctx, thumbKey, false)
	if terr != nil && !isNotExist(terr) {
		return meta{}, storageFail(terr)
	}
	return q.fileMeta0(p, pl.key, e, pl.readOnly, terr == nil), nil
}

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
	q.dropThumb(ctx, pl.key)
	return nil
}

// dropThumb removes the thumbnail of the file at key, if any; a failure
// only leaves an unlisted file behind, so it is logged, not answered.
func (q *request) dropThumb(ctx context.Context, key string) {
	tk := joinKey(path.Dir(key), thumbName(path.Base(key)))
	if err := q.h.storage.Remove(ctx, tk); err != nil && !isNotExist(err) {
		q.h.logger.Warn("removing a thumbnail", zap.String("key", tk), zap.Error(err))
	}
}

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
	if ext == name {
		ext = ""
	}
	return strings.TrimSuffix(name, ext) + "_" + strconv.Itoa(n) + ext
}

func (q *request) upload(ctx context.Context, p fspPath) (any, error) {
	pl := q.locate(p)
	if pl.readOnly {
		return nil, fail(3300, "")
	}
	// A slot before the body is read: the body and the fetched file are
	// what an upload holds in memory.
	select {
	case q.h.uploads <- struct{}{}:
		defer func() { <-q.h.uploads }()
	case <-ctx.Done():
		return nil, uploadFail(uploadErr("the client went away while the upload waited for its turn"))
	}
	source, strat, direct, err := q.readUploadRequest()
	if err != nil {
		return nil, err
	}
	autoCreate, err := q.ensureParent(ctx, p, false)
	if err != nil {
		return nil, err
	}
	if strat == strategyAsk {
		// Answer a known conflict before fetching anything.
		if _, err := q.h.storage.Stat(ctx, pl.key, false); err == nil {
			return nil, fail(3400, "")
		} else if !isNotExist(err) {
			return nil, storageFail(err)
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
		if thumb, err = makeThumbnail(data); err != nil {
			return nil, uploadFail(uploadErr("the image could not be decoded"))
		}
	}
	if autoCreate {
		if _, err := q.ensureParent(ctx, p, true); err != nil {
			return nil, err
		}
	}
	final, err := q.place(ctx, p, func(candidate fspPath, exclusive bool) error {
		return q.h.storage.Write(ctx, q.locate(candidate).key, data, typeForName(candidate.name()), exclusive)
	}, strat)
	if err != nil {
		return nil, err
	}
	fk := q.locate(final).key
	if thumb != nil {
		tk := joinKey(path.Dir(fk), thumbName(final.name()))
		if err := q.h.storage.Write(ctx, tk, thumb, "image/png", false); err != nil {
			// Leave nothing behind: the file goes with its thumbnail.
			if rmErr := q.h.storage.Remove(ctx, fk); rmErr != nil {
				q.h.logger.Error("removing a file whose thumbnail failed", zap.String("key", fk), zap.Error(rmErr))
			}
			return nil, storageFail(err)
		}
	} else if strat == strategyReplace {
		q.dropThumb(ctx, fk) // the replaced file's thumbnail
	}
	m, err := q.statFile(ctx, final)
	if err != nil {
		return nil, err
	}
	return map[string]any{"meta": m}, nil
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
		if err := put(p, false); err != nil {
			return fspPath{}, storageError(err)
		}
		return p, nil
	case strategyKeep:
		for n := 0; n < maxKeepAttempts; n++ {
			candidate := p.parent().child(keepName(p.name(), n), false)
			if !validName(candidate.name()) {
				break
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
		if err := put(p, true); isExist(err) {
			return fspPath{}, fail(3400, "")
		} else if err != nil {
			return fspPath{}, storageError(err)
		}
		return p, nil
	}
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

func (q *request) readMultipart() (string, strategy, []byte, error) {
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
		if err != nil {
			return "", "", nil, fail(3500, "The multipart body could not be read")
		}
		switch part.FormName() {
		case "file":
			if data != nil {
				return "", "", nil, fail(3500, "Only one file per upload")
			}
			if data, err = readLimited(part, q.h.MaxSize); err != nil {
				return "", "", nil, uploadFail(err)
			}
		case "conflict_strategy":
			text, err := io.ReadAll(io.LimitReader(part, 64))
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
	if errors.Is(err, errOutside) {
		return nil, fail(3300, "The path leaves your folder")
	} else if err != nil {
		return nil, fail(3500, "new_path must be a folder path such as /photos/")
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
	if _, err := q.h.storage.Stat(ctx, src.key, false); isNotExist(err) {
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
	_, hadThumb := q.h.storage.Stat(ctx, joinKey(path.Dir(src.key), thumbName(p.name())), false)
	target := dest.child(p.name(), false)
	final, err := q.place(ctx, target, func(candidate fspPath, exclusive bool) error {
		return q.h.storage.Move(ctx, src.key, q.locate(candidate).key, exclusive)
	}, strat)
	if err != nil {
		return nil, err
	}
	fk := q.locate(final).key
	oldThumb := joinKey(path.Dir(src.key), thumbName(p.name()))
	newThumb := joinKey(path.Dir(fk), thumbName(final.name()))
	if hadThumb == nil {
		if err := q.h.storage.Move(ctx, oldThumb, newThumb, false); err != nil && !isNotExist(err) {
			q.h.logger.Warn("moving a thumbnail", zap.String("key", oldThumb), zap.Error(err))
		}
	} else if strat == strategyReplace {
		q.dropThumb(ctx, fk)
	}
	return q.fileMeta(ctx, final)
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.Validator             = (*Handler)(nil)
	_ caddy.CleanerUpper          = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
	_ caddyfile.Unmarshaler       = (*Handler)(nil)
)
