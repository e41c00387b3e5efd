// Package fsp is the file system provider (FSP) the editor's file manager
// calls, as a Caddy HTTP handler (http.handlers.fsp, directive fsp): list,
// create and delete folders, upload files from a source URL (or directly),
// move and delete files, with thumbnails for raster images. Files live in a
// local folder or in S3-compatible object storage. Every failure answers
// with the FSP error table that fsp_error uses (internal/fsperr).
package fsp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
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
	httpcaddyfile.RegisterDirective("fsp", parseDirective)
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
	// defaultMinUploadRate: a 20 MiB upload may take half an hour.
	defaultMinUploadRate = 10 << 10
	defaultRoot          = "{http.request.header.X-BEE-ClientId}/{http.request.header.X-BEE-Uid}"
	maxJSONBody          = 64 << 10
	maxKeepAttempts      = 1000
	keepRandomAttempts   = 4
)

// maxMaxSize bounds max_size, in the Caddyfile and in JSON: an upload is
// held in memory, twice for a moment (docs/fsp.md, "Memory").
const maxMaxSize = 4 << 30

// Handler serves the FSP API (module ID http.handlers.fsp, Caddyfile
// directive fsp). It always ends the handler chain. One of Local and S3,
// and PublicURL, are required.
type Handler struct {
	// Local keeps the files in a folder on this machine. Exactly one of
	// Local and S3 is set.
	Local *LocalConfig `json:"local,omitempty"`

	// S3 keeps the files in an S3-compatible bucket, which several Caddy
	// instances can share.
	S3 *S3Config `json:"s3,omitempty"`

	// Root is the template of each user's folder inside the storage;
	// placeholder values are made safe path segments (a "/" in a uid
	// does not make a folder; on a local folder that ignores letter case,
	// capitals are escaped too), and a request that leaves one empty is
	// refused (3500). Each placeholder must have a path segment of its
	// own. Default: one folder per client and uid,
	// "{http.request.header.X-BEE-ClientId}/{http.request.header.X-BEE-Uid}".
	Root string `json:"root,omitempty"`

	// PublicURL (required) is the base of the files' public URLs: a
	// file at storage key k is at PublicURL/k, each segment
	// percent-encoded. For a local folder, the same Caddy serves it with
	// file_server; for S3, a bucket website or CDN. Placeholders are
	// replaced.
	PublicURL string `json:"public_url"`

	// Shared lists read-only folders every user sees at the top of their
	// tree. A shared folder is a folder inside the storage, never the
	// storage itself, and never is, holds or lies inside a user's folder:
	// a root that makes that so for every user is a load error, and a
	// request whose user folder overlaps a shared folder is refused (3600).
	Shared []SharedFolder `json:"shared,omitempty"`

	// MaxSize bounds an uploaded file in bytes (default 20 MiB, at most
	// 4 GiB).
	MaxSize int64 `json:"max_size,omitempty"`

	// FetchTimeout bounds fetching an upload's source (default 30s).
	FetchTimeout caddy.Duration `json:"fetch_timeout,omitempty"`

	// MaxUploads bounds the uploads handled at once (default 4). Each
	// holds up to max_size bytes in memory (twice that for a moment) and
	// one thumbnail's work, so together they hold at most
	// max_uploads × (2 × max_size + max_image_memory); further uploads
	// wait for their turn (while their client waits), and one user
	// (client and uid) holds at most half of them.
	MaxUploads int `json:"max_uploads,omitempty"`

	// MinUploadRate is the average rate, in bytes per second, below which
	// an upload's bytes (sent or fetched) are cut once their first five
	// seconds are over (default 10 KiB/s): a source that drips does not
	// keep its upload slot.
	MinUploadRate int64 `json:"min_upload_rate,omitempty"`

	// MaxImageMemory bounds the memory making one thumbnail may take,
	// worked out from the image's header before anything is decoded
	// (default 64 MiB); a larger image is stored without a thumbnail.
	MaxImageMemory int64 `json:"max_image_memory,omitempty"`

	// AllowTypes are the sniffed media types an upload may have (default:
	// PNG, JPEG, GIF, WebP, BMP, ICO, PDF, ZIP-based documents, plain
	// text, MP3, WAV, Ogg, MP4, WebM, AVI).
	AllowTypes []string `json:"allow_types,omitempty"`

	// AllowPrivate lets upload sources be on every private, loopback and
	// link-local address, Caddy's admin endpoint included (never cloud
	// metadata). Off by default: the FSP must not become a way into the
	// host's network. To reach an internal host, list its range in
	// PrivateRanges instead. The Caddyfile's "allow_private all".
	AllowPrivate bool `json:"allow_private,omitempty"`

	// PrivateRanges are the only non-public addresses upload sources may
	// be on: CIDR ranges such as "10.0.0.0/8" or "fd00::/8", or single
	// addresses such as "192.168.1.7", as Caddy's trusted_proxies takes
	// them. Not together with AllowPrivate.
	PrivateRanges []string `json:"private_ranges,omitempty"`

	// AllowAnonymous serves requests that no authentication handler
	// (basic_auth in front of fsp) has let through. Off by default, so
	// a Caddyfile that forgets basic_auth answers 3650 instead of
	// serving everyone's files.
	AllowAnonymous bool `json:"allow_anonymous,omitempty"`

	storage Storage
	// finishTimeout bounds the steps that follow a change once it has
	// taken effect (see request.detach).
	finishTimeout time.Duration
	// foldCase: the local folder ignores letter case, so the root's
	// placeholder values escape upper-case letters (rootSegment) and
	// storage keys are compared in any case.
	foldCase bool
	// keyPrefix is what an S3 prefix adds to every key (with its "/"),
	// out of maxKeyLen.
	keyPrefix int
	fetcher   *fetcher
	slots     *uploadSlots
	// thumbPNG encodes thumbnails, keeping compressors between uploads.
	thumbPNG *thumbEncoder
	logger   *zap.Logger
	// storageLog names the storage in the log of every 3100.
	storageLog []zap.Field
	life       *lifetime
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
	if h.MaxImageMemory == 0 {
		h.MaxImageMemory = defaultMaxImageMemory
	}
	if h.MinUploadRate == 0 {
		h.MinUploadRate = defaultMinUploadRate
	}
	if err := h.Validate(); err != nil {
		return err
	}
	policy, err := fetchPolicy(h.AllowPrivate, h.PrivateRanges)
	if err != nil {
		return err
	}
	if h.AllowPrivate {
		h.logger.Warn("fsp allow_private: upload sources may be on every private, loopback and link-local address, " +
			"such as Caddy's admin endpoint; list only the ranges needed (allow_private <ranges...>)")
	}
	h.thumbPNG = newThumbEncoder()
	for field, template := range map[string]string{"root": h.Root, "public_url": h.PublicURL} {
		if err := checkEnv(field, template); err != nil {
			return err
		}
	}
	if err := checkPublicURL(h.PublicURL); err != nil {
		return err
	}
	// The storage goes into h.storage only once it is open: a nil pointer
	// in the interface would be "closed" by Cleanup.
	switch {
	case h.Local != nil:
		folder, err := confvalue.Required(caddy.NewReplacer(), h.Local.Folder)
		if err != nil {
			return fmt.Errorf("fsp: local.folder: %v", err)
		}
		s, err := newLocalStorage(folder)
		if err != nil {
			return fmt.Errorf("fsp: local.folder: the folder cannot be opened or created (%v); create it and let the user Caddy runs as read and write it", err)
		}
		h.storage = s
		h.finishTimeout = finishTimeouts * defaultS3Timeout
		h.storageLog = []zap.Field{zap.String("folder", folder)}
		if err := h.probeCase(s, folder); err != nil {
			return err
		}
	case h.S3 != nil:
		cfg, err := resolveS3(*h.S3)
		if err != nil {
			return err
		}
		s, err := newS3Storage(cfg)
		if err != nil {
			return fmt.Errorf("fsp: s3.endpoint: %v", err)
		}
		h.storage = s
		h.finishTimeout = finishTimeouts * cfg.timeout
		if s.prefix != "" {
			h.keyPrefix = len(s.prefix) + 1
		}
		h.storageLog = []zap.Field{zap.String("endpoint", cfg.endpoint), zap.String("bucket", cfg.bucket)}
		if err := checkBucket(s, h.logger); err != nil {
			return err
		}
	}
	if !h.AllowAnonymous && !authInFront(ctx) {
		h.logger.Warn("no authentication handler is in front of fsp: every request will be refused with 3650; " +
			"put basic_auth before fsp (see docs/fsp.md), or set allow_anonymous when authentication happens outside Caddy")
	}
	h.fetcher = newFetcher(h.MaxSize, time.Duration(h.FetchTimeout), h.MinUploadRate, policy.Allow())
	h.slots = newUploadSlots(h.MaxUploads)
	h.life = &lifetime{close: h.release}
	return nil
}

// Validate checks the configuration.
func (h *Handler) Validate() error {
	switch {
	case h.Local == nil && h.S3 == nil:
		return errors.New("fsp: exactly one storage is needed: local or s3, and none is given")
	case h.Local != nil && h.S3 != nil:
		return errors.New("fsp: exactly one storage is needed: local or s3, not both")
	}
	if h.Local != nil && h.Local.Folder == "" {
		return errors.New("fsp: local.folder is required")
	}
	if h.S3 != nil {
		if err := h.S3.validate(); err != nil {
			return fmt.Errorf("fsp: %w", err)
		}
	}
	if h.Root != "" {
		if err := checkRootTemplate(h.Root); err != nil {
			return err
		}
	}
	if h.PublicURL == "" {
		return errors.New("fsp: public_url is required")
	}
	if h.MaxSize < 0 {
		return errors.New("fsp: max_size must be positive")
	}
	if h.MaxSize > maxMaxSize {
		return fmt.Errorf("fsp: max_size %d: at most 4GiB (%d bytes)", h.MaxSize, int64(maxMaxSize))
	}
	if h.FetchTimeout < 0 {
		return errors.New("fsp: fetch_timeout must be positive")
	}
	if h.MinUploadRate < 0 {
		return errors.New("fsp: min_upload_rate must be positive")
	}
	if h.MaxImageMemory < 0 {
		return errors.New("fsp: max_image_memory must be positive")
	}
	if h.MaxUploads < 0 {
		return errors.New("fsp: max_uploads must be positive")
	}
	// A shared folder is named by its place in the JSON config
	// (shared[1]), as Caddy loads it: the second shared line of a
	// Caddyfile.
	seen := map[string]int{}
	for i, s := range h.Shared {
		if !vendorFolderName(s.Name) {
			return fmt.Errorf("fsp: shared[%d].name: folder names match [ a-zA-Z0-9._()-]+", i)
		}
		if first, dup := seen[s.Name]; dup {
			return fmt.Errorf("fsp: shared[%d].name: the same as shared[%d].name; each shared folder has its own", i, first)
		}
		seen[s.Name] = i
		key, err := cleanRoot(s.Key)
		if err != nil {
			return fmt.Errorf("fsp: shared[%d].key must be relative, without dot segments", i)
		}
		if key == "" {
			// It holds every user's tree: each would read all the others'.
			return fmt.Errorf("fsp: shared[%d].key is the storage itself, which holds every user's files; name a folder inside it", i)
		}
		if root := cmp.Or(h.Root, defaultRoot); sharedOverlapsEveryRoot(root, key, h.foldCase) {
			return fmt.Errorf("fsp: shared[%d].key and the users' folders (root) lie one inside the other; keep shared folders apart from them", i)
		}
	}
	for i, t := range h.AllowTypes {
		if err := checkAllowType(t); err != nil {
			return fmt.Errorf("fsp: allow_types[%d]: %v", i, err)
		}
	}
	return nil
}

// checkRootTemplate checks the storage-root template at load: its literal
// parts make a relative path without empty or dot segments (one that
// failed would fail every request), and no segment holds two placeholders,
// whose values could run together ("a-" then "b" and "a" then "-b").
func checkRootTemplate(root string) error {
	rendered, err := markRoot(root)
	if err != nil {
		return fmt.Errorf("fsp: root %q: %v", root, err)
	}
	for _, seg := range strings.Split(rendered, "/") {
		if strings.Count(seg, rootMark) > 1 {
			return fmt.Errorf("fsp: root %q: a path segment holds two placeholders, whose values could run together; separate them with /", root)
		}
	}
	if key, err := cleanRoot(strings.ReplaceAll(rendered, rootMark, "x")); err != nil || key == "" {
		return fmt.Errorf("fsp: root %q must be a relative path without empty, \".\" or \"..\" segments", root)
	}
	return nil
}

// Cleanup closes the storage and the fetcher once the requests this
// handler is serving have ended: on a reload, an upload in flight on the
// old configuration finishes with its storage still open.
func (h *Handler) Cleanup() error {
	if h.life == nil { // Provision failed before the end
		h.release()
		return nil
	}
	h.life.shutdown()
	return nil
}

// release closes what Provision opened.
func (h *Handler) release() {
	if h.fetcher != nil {
		h.fetcher.close()
	}
	if h.storage != nil {
		if err := h.storage.Close(); err != nil {
			h.logger.Warn("closing the storage", zap.Error(err))
		}
	}
}

// request is one request's view: the user's root key and its answers.
type request struct {
	h      *Handler
	w      http.ResponseWriter // for the body's read deadline
	r      *http.Request
	root   string // storage key of the user's tree
	public string // public URL base, placeholders replaced
}

// finishTimeouts is how many storage timeouts the steps after a change
// may take in all: a few requests (a thumbnail's write, a look at the
// file), each of which the storage bounds on its own.
const finishTimeouts = 4

// detach gives the steps that follow a change once it has taken effect
// a context that the client going away no longer ends (or a thumbnail
// of a file replaced, moved or removed would stay), but finishTimeout
// does: a storage server that answers a byte at a time must not hold
// them for ever.
func (q *request) detach(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), q.h.finishTimeout)
}

// ServeHTTP answers the FSP API; it never calls next.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	var data any
	var err error
	if h.life.acquire() {
		data, err = h.serveCounted(w, r)
	} else {
		err = storageFail(errors.New("the handler was closed by a reload"))
	}
	if err != nil {
		var fe *fspError
		if !errors.As(err, &fe) {
			errors.As(storageFail(err), &fe)
		}
		if fe.code == 3100 || fe.code == 3001 || fe.code == 3600 {
			h.logger.Error("storage failure", append([]zap.Field{zap.Error(fe.cause),
				zap.String("method", r.Method), zap.String("uri", r.RequestURI)}, h.storageLog...)...)
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
// serveCounted is serve for a request that acquired h.life: the count
// goes down however serve ends, a panic included, or a reload would never
// close this configuration's storage.
func (h *Handler) serveCounted(w http.ResponseWriter, r *http.Request) (any, error) {
	defer h.life.done()
	return h.serve(w, r)
}

func (h *Handler) serve(w http.ResponseWriter, r *http.Request) (any, error) {
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
	rendered, err := repl.ReplaceFunc(h.Root, func(key string, val any) (any, error) {
		// An empty or unknown value must not vanish from the root: "{a}/{b}"
		// with a empty would be b's value alone, the parent of the folders
		// of whichever a is called that; unknown would be one folder for all.
		v := ""
		if val != nil {
			v = caddy.ToString(val)
		}
		if v == "" {
			return nil, emptyRootValue(key)
		}
		return rootSegment(v, h.foldCase), nil
	})
	var empty emptyRootValue
	if errors.As(err, &empty) {
		return nil, fail(3500, fmt.Sprintf("The storage root needs {%s}, which this request leaves empty", string(empty)))
	}
	if err != nil {
		return nil, &fspError{code: 3600, cause: err}
	}
	root, err := cleanRoot(rendered)
	if err != nil || root == "" {
		return nil, &fspError{code: 3600, cause: fmt.Errorf("storage root %q is not usable", rendered)}
	}
	if s := h.sharedOverlap(root); s != nil {
		return nil, &fspError{code: 3600, cause: fmt.Errorf("storage root %q and shared folder %q (%q) lie one inside the other", root, s.Name, s.Key)}
	}
	q := &request{h: h, w: w, r: r, root: root, public: strings.TrimSuffix(repl.ReplaceKnown(h.PublicURL, ""), "/")}

	p, err := parseRequestPath(r.URL.EscapedPath())
	if orig, ok := r.Context().Value(caddyhttp.OriginalRequestCtxKey).(http.Request); ok && orig.URL != nil && err == nil {
		err = checkOriginalPath(orig.URL.EscapedPath())
	}
	if err := pathFail(err); err != nil {
		return nil, err
	}
	if err := q.checkKeyLen(q.locate(p).key, p.dir); err != nil {
		return nil, err
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

// UnmarshalJSON reads the handler's JSON config as Caddy does, with an
// error naming the field it is about (a bad duration's names none).
func (h *Handler) UnmarshalJSON(b []byte) error {
	type plain Handler // the fields without this method
	return confvalue.DecodeStrict(b, (*plain)(h))
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.Validator             = (*Handler)(nil)
	_ caddy.CleanerUpper          = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
	_ caddyfile.Unmarshaler       = (*Handler)(nil)
)
