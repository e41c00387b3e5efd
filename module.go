package designbridge

import (
	"errors"
	"fmt"
	"hash/maphash"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
	"go.uber.org/zap"

	"github.com/designbridge/caddy-designbridge/internal/confvalue"
	"github.com/designbridge/caddy-designbridge/internal/contract"
	"github.com/designbridge/caddy-designbridge/internal/retire"

	"github.com/designbridge/caddy-designbridge/internal/ratelimit"
)

func init() {
	caddy.RegisterModule(Bridge{})
	httpcaddyfile.RegisterDirective("design_bridge", parseCaddyfile)
	// Right after encode, so that a site's encode compresses the answers;
	// that is also after the authentication directives (so
	// {http.auth.user.id} is known when uid uses it), and before handle,
	// route, respond, reverse_proxy and file_server, which would otherwise
	// answer the export requests themselves.
	httpcaddyfile.RegisterDirectiveOrder("design_bridge", httpcaddyfile.After, "encode")
}

// Defaults of the Bridge fields, applied at Provision when a field is empty.
const (
	DefaultContentService  = "https://api.getbee.io"
	DefaultToken           = "{env.CS_API_TOKEN}"
	DefaultClientID        = "{env.CLIENT_ID}"
	DefaultClientSecret    = "{env.CLIENT_SECRET}"
	DefaultAuthURL         = "https://auth.getbee.io/loginV2"
	DefaultAuthPath        = "/proxy/bee-auth"
	DefaultMaxBody         = 10 << 20
	DefaultLargeBodyMemory = 64 << 20
	DefaultAnswerMemory    = 256 << 20
	DefaultTimeout         = 30 * time.Second
)

// DefaultExportPaths are the content service's endpoints that the
// editor's host page calls: exports, PDF and image renders, and checks.
var DefaultExportPaths = []string{
	"/v1/message/html", "/v1/message/plain-text", "/v1/message/pdf", "/v1/message/image",
	"/v1/page/html", "/v1/page/plain-text", "/v1/popup/html", "/v1/popup/plain-text",
	"/v1/page/pdf", "/v1/page/image",
	"/v1/message/check", "/v1/page/check", "/v1/row/check",
}

// Bridge (http.handlers.design_bridge) lets a page served by Caddy use a
// content service and LoginV2 without the browser ever holding the
// secrets: POSTs to the export paths are forwarded to the content service
// with the server's bearer token, and a POST to the auth path performs
// LoginV2 with the server's client credentials. Every other request goes to
// the next handler untouched.
//
// All string fields accept placeholders: global ones such as {env.X} are
// resolved once at provision; uid is resolved per request (for example
// {http.auth.user.id}).
type Bridge struct {
	// Base URL of the content service; the export path is appended to it.
	// Default: https://api.getbee.io
	ContentService string `json:"content_service,omitempty"`

	// The content service API token. "Bearer " is prepended when missing.
	// Default: {env.CS_API_TOKEN}
	Token string `json:"token,omitempty"`

	// LoginV2 client ID. Default: {env.CLIENT_ID}
	ClientID string `json:"client_id,omitempty"`

	// LoginV2 client secret. Default: {env.CLIENT_SECRET}
	ClientSecret string `json:"client_secret,omitempty"`

	// The LoginV2 endpoint. Default: https://auth.getbee.io/loginV2
	AuthURL string `json:"auth_url,omitempty"`

	// The editor user's id sent to LoginV2: the host's authentication,
	// such as {http.auth.user.id} behind basic_auth (behind forward_auth,
	// a header it copies from the identity service's answer), or a fixed
	// id for a single-user site. Required when LoginV2 is
	// configured, unless insecure_caller_uid is set: a uid taken from the
	// caller would let anyone obtain an editor token for any user.
	UID string `json:"uid,omitempty"`

	// For development only: without uid, take the uid member of the
	// request's JSON body (else "demo-user"), so that any caller obtains
	// a token for the user it names. Logged as a warning at load.
	InsecureCallerUID bool `json:"insecure_caller_uid,omitempty"`

	// Paths (exact match) whose POSTs are forwarded to the content
	// service. Default: /v1/message/html /v1/message/plain-text
	// /v1/message/pdf /v1/message/image /v1/page/html /v1/page/plain-text
	// /v1/popup/html /v1/popup/plain-text /v1/page/pdf /v1/page/image
	// /v1/message/check /v1/page/check /v1/row/check
	ExportPaths []string `json:"export_paths,omitempty"`

	// Path whose POST performs LoginV2. Default: /proxy/bee-auth
	AuthPath string `json:"auth_path,omitempty"`

	// Largest request body forwarded, in bytes (the Caddyfile takes sizes
	// such as 10MiB or 500KB), as content_service's max_body. A body is
	// read whole before it is forwarded: in memory up to 1 MiB, past that
	// in memory within large_body_memory, else in an unlinked temporary
	// file. Default: 10 MiB.
	MaxBody int64 `json:"max_body,omitempty"`

	// Memory, in bytes, that the bodies past 1 MiB of this handler may
	// hold at once (the Caddyfile takes sizes; off or 0 there, a negative
	// number here, holds none). A large body that does not fit, or comes
	// without a Content-Length, waits in an unlinked temporary file: the
	// file keeps memory flat, memory costs less CPU (a 10 MiB export about
	// 1.1× reverse_proxy's against 1.5×, docs/benchmarks.md).
	// Default: 64 MiB.
	LargeBodyMemory int64 `json:"large_body_memory,omitempty"`

	// Memory, in bytes, that the answers of the exports in flight may
	// hold together past their first 1 MiB each (the Caddyfile takes
	// sizes): an export's answer is held whole before it is sent (it may
	// be shared with identical exports, or kept), in memory that grows as
	// it arrives. An answer that finds no room left is refused with 503
	// and Retry-After (code 5030); with unwrap_html, one held back to be
	// unwrapped is passed on as it is. At least 64 MiB, the largest
	// answer. Default: 256 MiB.
	AnswerMemory int64 `json:"answer_memory,omitempty"`

	// Longest time an exchange may take, from reading the request body
	// (408 when it is not in by then) to the upstream's answer (504).
	// Default: 30s.
	Timeout caddy.Duration `json:"timeout,omitempty"`

	// Rewrite 2xx export responses that are HTML wrappers
	// ({"body": {"html": …}}, by the page's rule, whatever their
	// Content-Type) to raw text/html. Such a response is held back up to
	// max_body, within answer_memory; one larger, or finding no room left
	// there, passes as it came.
	UnwrapHTML bool `json:"unwrap_html,omitempty"`

	// Request headers that exports pass on to the content service besides
	// their own, such as tracing headers (traceparent, X-Request-Id). An
	// export sends the bearer token, Content-Type: application/json,
	// Content-Length, the request's Accept and Accept-Encoding: identity;
	// Caddy's reverse proxy adds X-Forwarded-For, -Proto, -Host and Via.
	// Nothing else of the browser's request reaches the content service,
	// which may be a third party. Each named header's values are part of
	// the key under which answers are kept and shared. Headers that carry
	// credentials or a user's identity, hop-by-hop, conditional and range
	// headers, and those the export sets itself are refused at load.
	ForwardHeaders []string `json:"forward_headers,omitempty"`

	// Origins (scheme://host[:port]) allowed to call the export and auth
	// paths besides the site's own origin.
	AllowedOrigins []string `json:"allowed_origins,omitempty"`

	// Allow sending secrets over plain HTTP to a host that is not loopback.
	InsecureHTTP bool `json:"insecure_http,omitempty"`

	// Keep 200 answers of exports in memory and answer identical exports
	// from it. Off when absent. Identical exports in flight at the same
	// time share one upstream call whether or not the cache is on.
	Cache *ExportCache `json:"cache,omitempty"`

	// Limits POSTs to the auth path per client address (Caddy's client IP,
	// which honours trusted_proxies; an IPv6 client by its /64, the /64s
	// of one /48 sharing 8 times the budget). Over the limit: 429 with
	// Retry-After. Default: 30 per minute; {"off": true} turns it off.
	// The counts survive a reload that keeps the limit, auth_url and
	// auth_path.
	AuthRateLimit *AuthRateLimit `json:"auth_rate_limit,omitempty"`

	// Resolved at Provision.
	contentURL   *url.URL
	authURL      *url.URL
	bearer       string // "Bearer <token>", or "" when no token is configured
	clientID     string
	clientSecret string
	secrets      [][]byte // values that must never reach a response or log
	exportPaths  map[string]struct{}
	allowed      map[string]struct{}
	// forward_headers, canonical, each once; keyHeaders with them added.
	forwardHeaders []string
	keyHeaders     map[string]bool

	exportProxy *reverseproxy.Handler
	authProxy   *reverseproxy.Handler
	retiring    []*retire.Transport // the two proxies' transports, retired by Cleanup
	logger      *zap.Logger

	cache        *exportCache  // nil when Cache is
	flight       *flightGroup  // identical exports in flight
	seed         maphash.Seed  // of the designs' hashes in exportKey
	largeBodies  *memoryBudget // of export bodies past spoolAbove
	answerMemory *memoryBudget // of export answers past spoolAbove
	metrics      *bridgeMetrics
	authLimiter  *ratelimit.Limiter // nil when auth_rate_limit is off
	authLimitKey *authLimitKey      // its key in authLimiters
}

// CaddyModule returns the Caddy module information.
func (Bridge) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.design_bridge",
		New: func() caddy.Module { return new(Bridge) },
	}
}

// Provision resolves global placeholders, applies defaults and builds the
// two internal reverse proxies (content service and LoginV2).
func (b *Bridge) Provision(ctx caddy.Context) error {
	b.logger = ctx.Logger()
	if err := b.resolve(); err != nil {
		return err
	}
	if b.InsecureCallerUID && b.UID == "" {
		b.logger.Warn("insecure_caller_uid: LoginV2 mints a token for any uid the caller names; for development only",
			zap.String("use", "uid {http.auth.user.id} (or a fixed uid) in production"))
	}
	if err := b.AuthRateLimit.validate(); err != nil {
		return err
	}
	if err := b.provisionAuthLimit(); err != nil {
		return err
	}
	var err error
	if b.exportProxy, err = b.newProxy(ctx, b.contentURL, b.bearer, false); err != nil {
		return fmt.Errorf("content service proxy: %v", err)
	}
	if b.authProxy, err = b.newProxy(ctx, b.authURL, "", true); err != nil {
		return fmt.Errorf("auth proxy: %v", err)
	}
	return b.provisionShared(ctx)
}

// resolve applies defaults and resolves global placeholders ({env.X}) into
// the unexported fields that requests use.
func (b *Bridge) resolve() error {
	if b.logger == nil {
		b.logger = zap.NewNop()
	}
	b.secrets, b.bearer = nil, ""
	repl := caddy.NewReplacer()
	// value resolves a field's global placeholders. A configured value must
	// resolve: an unknown or empty placeholder (a typo, an unset variable)
	// is a load error naming the field and the placeholder. An unset field
	// takes its default, which may be empty.
	value := func(field, raw, def string) (v string, configured bool, err error) {
		if raw == "" {
			return strings.TrimSpace(repl.ReplaceKnown(def, "")), false, nil
		}
		if v, err = confvalue.Required(repl, raw); err != nil {
			return "", true, fmt.Errorf("%s: %v", field, err)
		}
		return strings.TrimSpace(v), true, nil
	}

	contentService, _, err := value("content_service", b.ContentService, DefaultContentService)
	if err != nil {
		return err
	}
	if b.contentURL, err = parseUpstreamURL(contentService); err != nil {
		return fmt.Errorf("content_service: %v", err)
	}
	authURL, _, err := value("auth_url", b.AuthURL, DefaultAuthURL)
	if err != nil {
		return err
	}
	if b.authURL, err = parseUpstreamURL(authURL); err != nil {
		return fmt.Errorf("auth_url: %v", err)
	}

	secrets := []struct {
		field, raw, def, needs string
		secret                 bool // masked and warned about; client_id is an identifier
		dst                    *string
	}{
		{"token", b.Token, DefaultToken, "exports", true, &b.bearer},
		{"client_id", b.ClientID, DefaultClientID, "LoginV2 (auth_path)", false, &b.clientID},
		{"client_secret", b.ClientSecret, DefaultClientSecret, "LoginV2 (auth_path)", true, &b.clientSecret},
	}
	for _, s := range secrets {
		v, configured, err := value(s.field, s.raw, s.def)
		if err != nil {
			return err
		}
		if s.field == "token" && (configured || v != "") {
			tok, err := contract.Token(v)
			if err != nil {
				return fmt.Errorf("token: %v", err)
			}
			v = tok
		}
		*s.dst = v
		if v == "" {
			b.logger.Warn("secret not set; requests that need it are refused",
				zap.String("field", s.field), zap.String("default", s.def), zap.String("refused", s.needs))
			continue
		}
		// Masking client_id too costs nothing and keeps an identifier the
		// page never needs out of responses.
		b.secrets = append(b.secrets, []byte(v))
		if !s.secret {
			continue
		}
		// A shorter value could not be masked without also masking
		// ordinary text of the answers, so an upstream echoing it would
		// reach the browser.
		if len(v) < minMaskedSecret {
			return fmt.Errorf("%s: %d bytes; a secret must be at least %d bytes, so that it can be masked in what the upstream answers", s.field, len(v), minMaskedSecret)
		}
		if configured {
			confvalue.WarnIfLiteralSecret(b.logger, s.field, s.raw)
		}
	}
	b.secrets = withEchoForms(b.secrets)
	if b.bearer != "" {
		b.bearer = "Bearer " + b.bearer
	}

	paths := b.ExportPaths
	if len(paths) == 0 {
		paths = DefaultExportPaths
	}
	b.exportPaths = make(map[string]struct{}, len(paths))
	for _, p := range paths {
		b.exportPaths[p] = struct{}{}
	}
	if b.AuthPath == "" {
		b.AuthPath = DefaultAuthPath
	}
	if b.MaxBody == 0 {
		b.MaxBody = DefaultMaxBody
	}
	if b.LargeBodyMemory == 0 {
		b.LargeBodyMemory = DefaultLargeBodyMemory
	}
	if b.AnswerMemory == 0 {
		b.AnswerMemory = DefaultAnswerMemory
	}
	if b.Timeout == 0 {
		b.Timeout = caddy.Duration(DefaultTimeout)
	}
	if err := b.resolveForwardHeaders(); err != nil {
		return err
	}
	b.allowed = make(map[string]struct{}, len(b.AllowedOrigins))
	for i, o := range b.AllowedOrigins {
		field := fmt.Sprintf("allowed_origins[%d]", i)
		v, _, err := value(field, o, "")
		if err != nil {
			return err
		}
		o = normalizeOrigin(v)
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || o != u.Scheme+"://"+u.Host {
			return fmt.Errorf("%s is not an origin: write scheme://host[:port]", field)
		}
		b.allowed[o] = struct{}{}
	}
	return nil
}

// Validate refuses configurations that would leak secrets or cannot work.
func (b *Bridge) Validate() error {
	if b.MaxBody < 0 {
		return fmt.Errorf("max_body must not be negative")
	}
	if b.Timeout < 0 {
		return fmt.Errorf("timeout must not be negative")
	}
	if b.AnswerMemory != 0 && b.AnswerMemory < maxSharedAnswer {
		return fmt.Errorf("answer_memory: %d bytes; it must be at least %d (64 MiB), so that the largest answer an export may have fits", b.AnswerMemory, maxSharedAnswer)
	}
	if b.Cache != nil && b.Cache.MaxSize < 0 {
		return fmt.Errorf("cache.max_size must not be negative")
	}
	if b.Cache != nil && b.Cache.TTL < 0 {
		return fmt.Errorf("cache.ttl must not be negative")
	}
	if err := b.AuthRateLimit.validate(); err != nil {
		return err
	}
	if err := b.validateUID(); err != nil {
		return err
	}
	if !strings.HasPrefix(b.AuthPath, "/") {
		return fmt.Errorf("auth_path must start with /")
	}
	for i, p := range b.ExportPaths {
		if !strings.HasPrefix(p, "/") {
			return fmt.Errorf("export_paths[%d] must start with /", i)
		}
		if p == b.AuthPath {
			return fmt.Errorf("auth_path: the same as export_paths[%d]", i)
		}
	}
	if len(b.ExportPaths) == 0 && slices.Contains(DefaultExportPaths, b.AuthPath) {
		return fmt.Errorf("auth_path: the same as one of the default export_paths")
	}
	if !b.InsecureHTTP {
		if b.bearer != "" && !secureTransport(b.contentURL) {
			return fmt.Errorf("content_service %s would receive the token over plain HTTP on a non-loopback host; use https or set insecure_http", b.contentURL.Redacted())
		}
		if (b.clientID != "" || b.clientSecret != "") && !secureTransport(b.authURL) {
			return fmt.Errorf("auth_url %s would receive the client secret over plain HTTP on a non-loopback host; use https or set insecure_http", b.authURL.Redacted())
		}
	}
	return nil
}

// validateUID refuses a LoginV2 configuration whose uid the caller would
// choose: the token minted is the named user's, with that user's files.
func (b *Bridge) validateUID() error {
	if b.UID != "" {
		if b.InsecureCallerUID {
			return fmt.Errorf("insecure_caller_uid: set together with uid, which always wins; remove one of them")
		}
		return checkUID(b.UID)
	}
	if b.InsecureCallerUID || b.clientID == "" || b.clientSecret == "" {
		return nil // LoginV2 off (refused per request) or the development opt-in
	}
	return fmt.Errorf("uid: not set, so LoginV2 would mint an editor token for whatever uid the caller sends; " +
		"take it from the host's authentication, e.g. uid {http.auth.user.id} after basic_auth, or a header forward_auth copies, " +
		"or set a fixed uid for a single-user site; for development only, insecure_caller_uid lets the caller choose")
}

// checkUID refuses at load a uid that could never be sent: a literal (or
// one of global placeholders only, such as {env.UID}) that is empty or
// not 1-256 letters, digits, _ or -. One with request placeholders is
// checked per request.
func checkUID(uid string) error {
	v, err := caddy.NewReplacer().ReplaceOrErr(uid, true, false)
	if err != nil {
		return fmt.Errorf("uid: %v", err)
	}
	if confvalue.HasPlaceholder(v) {
		return nil
	}
	if !contract.ValidUID(v) {
		return fmt.Errorf("uid: %q is not 1-%d letters, digits, _ or -, as LoginV2 requires; "+
			"to send an e-mail address or a name with dots, map it to such an id first (see the README)", v, contract.MaxUIDLen)
	}
	return nil
}

// Cleanup stops the internal proxies and retires their transports (see
// retire.Transport): a request the replaced server still serves closes its
// upstream connection.
func (b *Bridge) Cleanup() error {
	b.releaseAuthLimit()
	for _, t := range b.retiring {
		t.Retire()
	}
	if b.cache != nil {
		b.cache.clear()
	}
	var firstErr error
	for _, p := range []*reverseproxy.Handler{b.exportProxy, b.authProxy} {
		if p == nil {
			continue
		}
		if err := p.Cleanup(); err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr
}

// parseUpstreamURL accepts an absolute http(s) URL without query, fragment
// or user info (credentials belong in token/client_secret, not the URL).
// An error never quotes the URL: its user info or query may hold a
// secret.
func parseUpstreamURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, errors.New("not a URL: write an http(s) URL such as https://cs.example.com")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("user info, query and fragment are not allowed")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, errors.New("scheme must be http or https")
	}
	if u.Host == "" || u.Hostname() == "" {
		return nil, errors.New("missing host")
	}
	if port := u.Port(); port != "" {
		if _, err := net.LookupPort("tcp", port); err != nil {
			return nil, errors.New("bad port")
		}
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u, nil
}

// UnmarshalJSON reads the handler's JSON config as Caddy does, with an
// error naming the field it is about (a bad duration's names none).
func (b *Bridge) UnmarshalJSON(data []byte) error {
	type plain Bridge // the fields without this method
	return confvalue.DecodeStrict(data, (*plain)(b))
}

// Interface guards
var (
	_ caddy.Provisioner           = (*Bridge)(nil)
	_ caddy.Validator             = (*Bridge)(nil)
	_ caddy.CleanerUpper          = (*Bridge)(nil)
	_ caddyhttp.MiddlewareHandler = (*Bridge)(nil)
	_ caddyfile.Unmarshaler       = (*Bridge)(nil)
)
