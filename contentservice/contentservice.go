package contentservice

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/designbridge/caddy-designbridge/internal/confvalue"
	"github.com/designbridge/caddy-designbridge/internal/contract"
	"go.uber.org/zap"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/designcheck"
	"github.com/designbridge/caddy-designbridge/internal/browserpool"
	"github.com/designbridge/caddy-designbridge/internal/ratelimit"
	"github.com/designbridge/caddy-designbridge/internal/retire"
	"github.com/designbridge/caddy-designbridge/render"
)

func init() {
	caddy.RegisterModule(Handler{})
}

// Limits and lifetimes fixed by the contracts (docs/contracts.md).
const (
	// DefaultMaxBody is the export body limit when max_body is not set.
	DefaultMaxBody = 4 << 20
	// AccessTokenTTL is how long an editor access token is valid.
	AccessTokenTTL = 300 * time.Second
	// RefreshWindow is how long after a login the editor may refresh.
	RefreshWindow = 12 * time.Hour
	// DefaultLoginFailures failed logins per DefaultLoginFailureWindow
	// are allowed to one client address (login_failure_limit).
	DefaultLoginFailures      = 10
	DefaultLoginFailureWindow = time.Minute
	// MinSigningKeyLen is the shortest accepted signing key, in bytes:
	// HS256 keys shorter than the hash output weaken the MAC.
	MinSigningKeyLen = 32
	// MinSecretLen is the shortest accepted app secret and API token, in
	// bytes: design_bridge refuses a shorter client_secret or token, as
	// it could not mask it in the answers it passes on, so a shorter one
	// could never be used through it.
	MinSecretLen = 8
)

// Handler is a local content service: LoginV2 (editor tokens) and the
// export endpoints, rendering design JSON to email HTML and plain text
// with the render package. It answers
//
//	POST /loginV2                 client credentials -> editor token
//	POST /loginV2/refresh         editor token -> fresh editor token
//	POST /v1/message/html         design JSON -> HTML
//	POST /v1/message/plain-text   design JSON -> plain text
//	POST /v1/page/html            design JSON -> a web page (flexbox rows)
//	POST /v1/popup/html           design JSON -> a popup fragment to embed
//	POST /v1/{page,popup}/plain-text  as /v1/message/plain-text
//	POST /v1/{message,page,row}/check  checks + design JSON -> findings
//	POST /v1/{message,page}/pdf   HTML -> a link to a PDF (GET /v1/files/…)
//	POST /v1/{message,page}/image HTML -> PNG or JPEG
//
// and, for any other path, a 404 JSON error (or, with pass_thru, the next
// handler). Every string value may hold placeholders such as
// {env.SIGNING_KEY}; they are replaced once, at provision.
type Handler struct {
	// SigningKey is the HS256 key that signs and verifies editor access
	// tokens. Required; at least 32 bytes after placeholder replacement.
	// Instances (replicas) sharing the key accept each other's tokens.
	SigningKey string `json:"signing_key,omitempty"`

	// Apps are the applications that may log in (client ID and secret)
	// and export (API tokens). At least one is required.
	Apps []App `json:"apps,omitempty"`

	// Largest accepted export body, in bytes (the Caddyfile takes sizes
	// such as 4MiB or 500KB), as design_bridge's max_body. Default: 4 MiB.
	MaxBody int64 `json:"max_body,omitempty"`

	// Largest rendered document, in bytes (the Caddyfile takes sizes such
	// as 8MiB): a few bytes of design may stand for many bytes of HTML,
	// so the body's bound alone does not bound the answer. The renderer
	// stops as soon as the document crosses it, and the export is
	// answered 413 (code 4130). Default: 8 MiB (render.DefaultMaxOutput);
	// at most 2 GiB less one byte.
	MaxOutput int64 `json:"max_output,omitempty"`

	// RateLimit, when set, bounds export requests per API token (editor
	// tokens share their application's budget). Unset means no limit.
	RateLimit *RateLimit `json:"rate_limit,omitempty"`

	// PassThru hands requests for paths the service does not serve to the
	// next handler instead of answering 404, so that the service can share
	// a site with other handlers (file_server, …).
	PassThru bool `json:"pass_thru,omitempty"`

	// LoginFailureLimit bounds failed LoginV2 logins (unknown client_id or
	// wrong secret) per client address (Caddy's client IP, which honours
	// trusted_proxies; an IPv6 client by its /64, the /64s of one /48
	// sharing 8 times the budget): Requests failures per Window, after
	// which that address gets 429 with Retry-After, even with the right
	// secret, until the window lets it try again. Other addresses are not
	// affected. Default: 10 per 1m.
	LoginFailureLimit *RateLimit `json:"login_failure_limit,omitempty"`

	// NoLoginFailureLimit turns LoginFailureLimit off.
	NoLoginFailureLimit bool `json:"no_login_failure_limit,omitempty"`

	// Fetch bounds the fetching of the images a design points at (the
	// Check API's image weights, the images of PDF and image exports).
	// Default: see FetchConfig.
	Fetch *FetchConfig `json:"fetch,omitempty"`

	// Browser configures the PDF and image exports (headless Chromium).
	// Default: on, with /usr/bin/chromium; see BrowserConfig.
	Browser *BrowserConfig `json:"browser,omitempty"`

	// svc is what Provision built from the fields above.
	svc *service
}

// service is a provisioned content service: the Handler's configuration
// with placeholders replaced, checked, and made ready to answer requests.
// Provision builds it with newService, and so do the tests.
type service struct {
	signingKey []byte
	apps       []resolvedApp
	apiTokens  []apiToken
	maxBody    int64
	limits     design.Limits      // the decoder's bounds
	output     render.Limits      // the renderer's bounds
	limiter    *ratelimit.Limiter // export requests per token; nil when off
	failures   *ratelimit.Limiter // failed logins per client address; nil when off
	// failureLimit is the failure limit's rate; failureKey, once the
	// limiter is shared across reloads, its key in loginFailures.
	failureLimit struct {
		requests int
		window   time.Duration
	}
	failureKey *failureKey
	passThru   bool
	logger     *zap.Logger
	fetch      fetchSettings
	weigher    *designcheck.HTTPWeigher // nil when fetch is off

	// PDF and image exports; browser is nil when they are off.
	browser          *browserpool.Pool
	browserTimeout   time.Duration
	browserTransport *retire.Transport
	files            *fileStore
	publicURL        string

	// bodyBufs recycles request body buffers (*[]byte). A decoded design
	// shares its body's memory (design.DecodeWithLimits), so a body's
	// buffer goes back only once the answer is written.
	bodyBufs sync.Pool
	// wrapBufs recycles the JSON form's answer buffers (*[]byte), each
	// back once its answer is written.
	wrapBufs sync.Pool
}

// App is one application configured on the service.
type App struct {
	// ClientID identifies the application in LoginV2 requests.
	ClientID string `json:"client_id,omitempty"`

	// ClientSecret authenticates the application in LoginV2 requests.
	ClientSecret string `json:"client_secret,omitempty"`

	// Tokens are the CS API tokens accepted as "Authorization: Bearer
	// <token>" on the export endpoints; several may be listed (e.g. during
	// a rotation). A value may be written with or without the "Bearer "
	// prefix, the same way design_bridge's token is; a value that still
	// holds whitespace after that is a configuration error, so that no
	// word of it (such as "Bearer" alone) becomes a token by itself.
	Tokens []string `json:"tokens,omitempty"`

	// Disabled makes LoginV2 and refresh answer 403 (code 5003) for this
	// application and its API tokens answer 403 (code 4003).
	Disabled bool `json:"disabled,omitempty"`

	// EditorTokens also accepts this application's editor access tokens
	// (from LoginV2) on the export endpoints; an expired one is answered
	// 401 with code 4010. Off by default: editor tokens reach the browser,
	// and the contract keeps exports for the server-side API token.
	EditorTokens bool `json:"editor_tokens,omitempty"`
}

// RateLimit is a token bucket: Requests per Window, in bursts of up to
// Requests. It has design_bridge's auth_rate_limit shape:
// {"requests": 60, "window": "1m"}; "requests" written as a string of
// digits ("60", the form of earlier versions) is read too.
type RateLimit struct {
	// Requests allowed per Window (positive).
	Requests int `json:"requests,omitempty"`

	// Window is the period over which Requests are allowed (positive).
	Window caddy.Duration `json:"window,omitempty"`
}

// errNotALimit is the error of a rate limit written as something other
// than an object (such as the Caddyfile's "off"); what was written
// follows it, as confvalue.Written tells it.
var errNotALimit = errors.New(`expected an object such as {"requests": 60, "window": "1m"}`)

// UnmarshalJSON reads a RateLimit, with requests as a number or as a
// string of digits. An error names the field inside the limit it is
// about (a *confvalue.FieldError), which the handler's config joins to
// the limit's own name. Like confvalue.DecodeStrict's, it never repeats
// a string's text, nor a number where none belongs: either may be a
// secret put in the wrong place.
func (rl *RateLimit) UnmarshalJSON(b []byte) error {
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		// encoding/json would name a Go type of its own here.
		return fmt.Errorf("%w, got %s", errNotALimit, confvalue.Written(t, false))
	}
	var raw struct {
		Requests json.RawMessage `json:"requests"`
		Window   caddy.Duration  `json:"window"`
	}
	if err := confvalue.DecodeStrict(b, &raw); err != nil {
		return err
	}
	rl.Requests, rl.Window = 0, raw.Window
	if len(raw.Requests) == 0 || string(raw.Requests) == "null" {
		return nil // unset, as null is for every other field
	}
	const want = "expected a whole number such as 60"
	var text string
	if json.Unmarshal(raw.Requests, &text) == nil {
		n, err := strconv.Atoi(strings.TrimSpace(text))
		if err != nil {
			return &confvalue.FieldError{Path: "requests", Err: errors.New(want + ", got a string of other text")}
		}
		rl.Requests = n
		return nil
	}
	if err := json.Unmarshal(raw.Requests, &rl.Requests); err != nil {
		return &confvalue.FieldError{Path: "requests", Err: fmt.Errorf("%s, got %s", want, confvalue.Written(raw.Requests, true))}
	}
	return nil
}

// UnmarshalJSON reads the handler's JSON config as Caddy does (unknown
// fields refused), naming the field an error is about. A
// login_failure_limit that is not an object is most often the
// Caddyfile's "off": the error says how JSON turns it off.
func (h *Handler) UnmarshalJSON(b []byte) error {
	type plain Handler // the fields without this method
	err := confvalue.DecodeStrict(b, (*plain)(h))
	var ferr *confvalue.FieldError
	if errors.As(err, &ferr) && strings.EqualFold(ferr.Path, "login_failure_limit") && errors.Is(err, errNotALimit) {
		return fmt.Errorf(`%w; to turn it off, set "no_login_failure_limit": true`, err)
	}
	return err
}

// validate refuses a limit that is not positive; field is the limit's
// name in the config.
func (rl *RateLimit) validate(field string) error {
	if rl.Requests <= 0 {
		return fmt.Errorf("%s.requests: %d is not a positive number of requests", field, rl.Requests)
	}
	if rl.Window <= 0 {
		return fmt.Errorf("%s.window: %s must be positive", field, time.Duration(rl.Window))
	}
	return nil
}

// resolvedApp is an App after placeholder replacement; secrets are kept
// as SHA-256 digests so that comparisons take the same time whatever
// their lengths.
type resolvedApp struct {
	clientID     string
	ref          string // names the app inside editor tokens; see appRef
	idDigest     [sha256.Size]byte
	secretDigest [sha256.Size]byte
	disabled     bool
	editorTokens bool
}

// apiToken is one accepted export token, by digest, and its application.
type apiToken struct {
	digest [sha256.Size]byte
	app    int
}

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.content_service",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision replaces placeholders and prepares digests, limits and the
// rate limiter.
func (h *Handler) Provision(ctx caddy.Context) error {
	svc, err := newService(h, caddy.NewReplacer(), ctx.Logger())
	if err != nil {
		return err
	}
	// Set before sharing: should that fail, Cleanup still stops the
	// browser.
	h.svc = svc
	return svc.shareFailures()
}

// newService resolves the configuration cfg: placeholders replaced with
// repl, secrets reduced to digests, limits and rate limiters prepared.
// The service logs to logger.
func newService(cfg *Handler, repl *caddy.Replacer, logger *zap.Logger) (*service, error) {
	s := &service{passThru: cfg.PassThru, logger: logger}
	s.bodyBufs.New = func() any { return new([]byte) }
	s.wrapBufs.New = func() any { return new([]byte) }

	if cfg.SigningKey == "" {
		return nil, fmt.Errorf("signing_key is required (e.g. signing_key {env.SIGNING_KEY} with %d or more random bytes, such as the output of `openssl rand -base64 48`)", MinSigningKeyLen)
	}
	key, err := confvalue.Replace(repl, cfg.SigningKey)
	if err != nil {
		return nil, fmt.Errorf("signing_key: %v", err)
	}
	if len(key) < MinSigningKeyLen {
		return nil, fmt.Errorf("signing_key: %d bytes after replacement; at least %d are required (e.g. `openssl rand -base64 48`)", len(key), MinSigningKeyLen)
	}
	s.signingKey = []byte(key)
	confvalue.WarnIfLiteralSecret(logger, "signing_key", cfg.SigningKey)

	if len(cfg.Apps) == 0 {
		return nil, fmt.Errorf("no app configured: add an app block with its client ID, secret and tokens")
	}
	s.apps = make([]resolvedApp, 0, len(cfg.Apps))
	// An error names the value by its path in the JSON that Caddy loads
	// (apps[1].tokens[0]), as Caddy's own modules name theirs by index:
	// never by the value, which may be a secret. The Caddyfile names
	// literal values' faults itself, with their line.
	seenIDs := make(map[string]int)
	seenTokens := make(map[[sha256.Size]byte]string)
	for i, app := range cfg.Apps {
		at := fmt.Sprintf("apps[%d]", i)
		id, err := confvalue.Required(repl, app.ClientID)
		if err != nil {
			return nil, fmt.Errorf("%s.client_id: %v", at, err)
		}
		if first, dup := seenIDs[id]; dup {
			return nil, fmt.Errorf("%s.client_id: the same as apps[%d].client_id; each app has its own", at, first)
		}
		seenIDs[id] = i
		secret, err := confvalue.Required(repl, app.ClientSecret)
		if err == nil {
			err = checkSecretLen("client_secret", secret)
		}
		if err != nil {
			return nil, fmt.Errorf("%s.client_secret: %v", at, err)
		}
		confvalue.WarnIfLiteralSecret(logger, "app "+id+" secret", app.ClientSecret)
		secretDigest := sha256.Sum256([]byte(secret))
		s.apps = append(s.apps, resolvedApp{
			clientID:     id,
			ref:          appRef(s.signingKey, id, secretDigest),
			idDigest:     sha256.Sum256([]byte(id)),
			secretDigest: secretDigest,
			disabled:     app.Disabled,
			editorTokens: app.EditorTokens,
		})
		for j, raw := range app.Tokens {
			path := fmt.Sprintf("%s.tokens[%d]", at, j)
			value, err := confvalue.Required(repl, raw)
			if err == nil {
				confvalue.WarnIfLiteralSecret(logger, fmt.Sprintf("app %s token #%d", id, j+1), raw)
				value, err = contract.Token(value)
			}
			if err == nil {
				err = checkSecretLen("token", value)
			}
			if err != nil {
				return nil, fmt.Errorf("%s: %v", path, err)
			}
			digest := sha256.Sum256([]byte(value))
			if other, dup := seenTokens[digest]; dup {
				return nil, fmt.Errorf("%s: the same token as %s; a token belongs to one app", path, other)
			}
			seenTokens[digest] = path
			s.apiTokens = append(s.apiTokens, apiToken{digest: digest, app: len(s.apps) - 1})
		}
	}

	s.maxBody = DefaultMaxBody
	if cfg.MaxBody < 0 {
		return nil, fmt.Errorf("max_body must not be negative")
	}
	if cfg.MaxBody > 0 {
		s.maxBody = cfg.MaxBody
	}

	// max_body is the one size bound; the decoder's other bounds (depth,
	// counts, string sizes) keep their defaults.
	s.limits = design.Limits{MaxBytes: int(s.maxBody)}

	switch {
	case cfg.MaxOutput < 0:
		return nil, fmt.Errorf("max_output must not be negative")
	}
	if err := checkMaxOutput(cfg.MaxOutput); err != nil {
		return nil, err
	}
	s.output = render.Limits{MaxOutput: render.DefaultMaxOutput}
	if cfg.MaxOutput > 0 {
		s.output.MaxOutput = int(cfg.MaxOutput)
	}

	if cfg.RateLimit != nil {
		if err := cfg.RateLimit.validate("rate_limit"); err != nil {
			return nil, err
		}
		// One bucket per API token, then one per application for its
		// editor tokens: a fixed set, so nothing is ever evicted.
		keys := len(s.apiTokens) + len(s.apps)
		s.limiter = ratelimit.New(cfg.RateLimit.Requests, time.Duration(cfg.RateLimit.Window), keys)
	}

	if !cfg.NoLoginFailureLimit {
		n, window := DefaultLoginFailures, DefaultLoginFailureWindow
		if rl := cfg.LoginFailureLimit; rl != nil {
			if err := rl.validate("login_failure_limit"); err != nil {
				return nil, err
			}
			n, window = rl.Requests, time.Duration(rl.Window)
		}
		s.failures = ratelimit.New(n, window, 0)
		s.failureLimit.requests, s.failureLimit.window = n, window
	}
	if err := s.setupFetch(cfg.Fetch, cfg.Browser == nil || !cfg.Browser.Off); err != nil {
		return nil, err
	}
	if err := s.setupBrowser(cfg.Browser); err != nil {
		if s.weigher != nil {
			s.weigher.Close()
		}
		return nil, err
	}
	return s, nil
}

// maxMaxOutput bounds max_output: a bound no answer should reach, and
// one every platform's int holds.
const maxMaxOutput = math.MaxInt32

// checkMaxOutput refuses a max_output over maxMaxOutput, in the
// Caddyfile and in JSON alike.
func checkMaxOutput(n int64) error {
	if n > maxMaxOutput {
		return fmt.Errorf("max_output: %d bytes, more than the largest accepted (%d bytes, 2GiB less one byte)", n, maxMaxOutput)
	}
	return nil
}

// checkSecretLen refuses an app secret or API token shorter than
// MinSecretLen; bridgeField is its name in design_bridge. The value is
// never quoted.
func checkSecretLen(bridgeField, value string) error {
	if len(value) >= MinSecretLen {
		return nil
	}
	return fmt.Errorf("%d bytes; at least %d are required (design_bridge refuses a shorter %s, which it could not mask)", len(value), MinSecretLen, bridgeField)
}

// Validate refuses a handler that was not provisioned; Provision has
// already refused anything unusable.
func (h *Handler) Validate() error {
	if h.svc == nil {
		return fmt.Errorf("not provisioned")
	}
	return nil
}

// ServeHTTP dispatches the service's endpoints.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	return h.svc.ServeHTTP(w, r, next)
}

// ServeHTTP answers the service's endpoints, and any other path with a 404
// or, with pass_thru, the next handler.
func (s *service) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if r.Body == nil {
		// Servers never pass a nil body; other callers might.
		r.Body = http.NoBody
	}
	switch r.URL.Path {
	case PathLogin, PathRefresh, PathHTML, PathPlainText, PathPageHTML, PathPagePlainText, PathPopupHTML, PathPopupPlainText,
		PathMessageCheck, PathPageCheck, PathRowCheck,
		PathMessagePDF, PathPagePDF, PathMessageImage, PathPageImage:
	default:
		if strings.HasPrefix(r.URL.Path, PathFiles) {
			break
		}
		if s.passThru {
			return next.ServeHTTP(w, r)
		}
	}
	s.serve(w, r)
	return nil
}

// serve dispatches the service's endpoints; each writes its own answer,
// errors included (see respondError).
func (s *service) serve(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case PathLogin, PathRefresh:
		w.Header().Set("X-Request-Id", requestID(r))
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeLoginError(w, http.StatusMethodNotAllowed, http.StatusMethodNotAllowed, "Method not allowed: use POST")
			return
		}
		if r.URL.Path == PathLogin {
			s.serveLogin(w, r)
		} else {
			s.serveRefresh(w, r)
		}
		return
	case PathHTML, PathPageHTML, PathPopupHTML:
		s.serveExport(w, r, formatHTML)
		return
	case PathPlainText, PathPagePlainText, PathPopupPlainText:
		s.serveExport(w, r, formatText)
		return
	}
	if coll, ok := checkCollection(r.URL.Path); ok {
		s.serveCheck(w, r, coll)
		return
	}
	switch {
	case r.URL.Path == PathMessagePDF || r.URL.Path == PathPagePDF:
		s.servePDF(w, r)
		return
	case r.URL.Path == PathMessageImage || r.URL.Path == PathPageImage:
		s.serveImage(w, r)
		return
	case strings.HasPrefix(r.URL.Path, PathFiles):
		s.serveFile(w, r)
		return
	}
	w.Header().Set("X-Request-Id", requestID(r))
	writeError(w, http.StatusNotFound, http.StatusNotFound, "Not found",
		"this content service serves POST "+PathLogin+", "+PathRefresh+", "+PathHTML+", "+PathPlainText+", /v1/{page,popup}/{html,plain-text}, /v1/{message,page,row}/check and /v1/{message,page}/{pdf,image}")
}

// The endpoints' paths (match the request path exactly; use handle_path
// to mount the service under a prefix).
const (
	PathLogin     = "/loginV2"
	PathRefresh   = "/loginV2/refresh"
	PathHTML      = "/v1/message/html"
	PathPlainText = "/v1/message/plain-text"

	// Page and popup designs render with the renderer's page and popup
	// layouts (export.go's layoutOf); the fidelity instrument
	// (caddytest/fidelity) holds them to the vendor's page and popup
	// exports.
	PathPageHTML       = "/v1/page/html"
	PathPagePlainText  = "/v1/page/plain-text"
	PathPopupHTML      = "/v1/popup/html"
	PathPopupPlainText = "/v1/popup/plain-text"
)

// Interface guards
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.Validator             = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
)
