package designbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
	"go.uber.org/zap"

	"github.com/designbridge/caddy-designbridge/internal/addrlimit"
	"github.com/designbridge/caddy-designbridge/internal/jsonerror"
	"github.com/designbridge/caddy-designbridge/internal/loginv2"
	"github.com/designbridge/caddy-designbridge/internal/retire"
)

// Error codes of the bodies design_bridge itself writes (the content
// service's error shape: {"code", "message", "details"}).
const (
	codeBadRequestJSON = 4100
	codeCrossSite      = 4031
	codeMethod         = 4050
	codeReadTimeout    = 4080
	codeTooLarge       = 4130
	codeMediaType      = 4150
	codeRateLimited    = 4290
	codeNotConfigured  = 5000
	codeBadGateway     = 5020
	codeGatewayTimeout = 5040
	codeInvalidUID     = 5005 // LoginV2's code for a bad uid
	codeAuthMediaType  = 5001 // LoginV2's code for a body that is not JSON
	maxAuthBody        = 64 << 10
	defaultUID         = "demo-user"
	minMaskedSecret    = 8
)

// ServeHTTP forwards POSTs to the export paths and the auth path and hands
// every other request to next untouched.
func (b *Bridge) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	_, isExport := b.exportPaths[r.URL.Path]
	isAuth := r.URL.Path == b.AuthPath
	if !isExport && !isAuth {
		return next.ServeHTTP(w, r)
	}
	// A browser that navigates to one of these answers (a form posted to
	// them) must run nothing on this site's origin: the export HTML holds
	// whatever the design's html modules hold.
	w.Header().Set("Content-Security-Policy", "sandbox")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return b.fail(w, r, http.StatusMethodNotAllowed, codeMethod, "Method not allowed", "only POST is accepted on "+r.URL.Path)
	}
	if reason := b.crossSite(r); reason != "" {
		return b.fail(w, r, http.StatusForbidden, codeCrossSite, "Cross-site request refused", reason)
	}
	// Only JSON: a form (text/plain, urlencoded, multipart) or a bodiless
	// "simple" request could come from another site without a CORS
	// preflight, which this handler never grants.
	if !isJSONRequest(r.Header.Get("Content-Type")) {
		code := codeMediaType
		if isAuth {
			code = codeAuthMediaType
		}
		return b.fail(w, r, http.StatusUnsupportedMediaType, code, "Unsupported media type",
			"send the body with Content-Type: application/json")
	}
	// timeout bounds the whole exchange, the client's upload included, so
	// that a slow body cannot hold the handler longer.
	deadline := time.Now().Add(time.Duration(b.Timeout))
	// Not every writer supports it; the upstream context's deadline holds
	// all the same. readBody lifts it once the body is in.
	_ = http.NewResponseController(w).SetReadDeadline(deadline)
	if isAuth {
		if b.authLimiter != nil {
			if ok, wait := b.authLimiter.Allow(clientKey(r), time.Now()); !ok {
				secs := addrlimit.RetryAfter(wait)
				w.Header().Set("Retry-After", strconv.Itoa(secs))
				return b.fail(w, r, http.StatusTooManyRequests, codeRateLimited, "Too many requests",
					fmt.Sprintf("auth_rate_limit reached for this client; retry after %d s", secs))
			}
		}
		return b.login(w, r, deadline)
	}
	return b.export(w, r, deadline)
}

// isJSONRequest reports whether a request's Content-Type is
// application/json, with or without parameters.
func isJSONRequest(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && mt == "application/json"
}

// clientKey is the rate-limit key of the client: Caddy's client IP (which
// honours the server's trusted_proxies), else the connection's address.
func clientKey(r *http.Request) string {
	if ip, ok := caddyhttp.GetVar(r.Context(), caddyhttp.ClientIPVarKey).(string); ok && ip != "" {
		return addrlimit.Key(ip)
	}
	return addrlimit.Key(r.RemoteAddr)
}

// crossSite returns why r must be refused as a cross-site call, or "".
// An Origin listed in allowed_origins is always accepted; otherwise the
// browser's Sec-Fetch-Site verdict decides (only same-origin and none
// pass), and without it the Origin must be the site's own. Requests with neither header are not from a browser
// page (curl, server-to-server) and cannot carry a victim's cookies, so
// they pass.
func (b *Bridge) crossSite(r *http.Request) string {
	origin := normalizeOrigin(r.Header.Get("Origin"))
	if origin != "" {
		if _, ok := b.allowed[origin]; ok {
			return ""
		}
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		switch strings.ToLower(site) {
		case "same-origin", "none": // "none": the user's own navigation
			return ""
		}
		// same-site is another origin (another port, another subdomain)
		// all the same; a value we do not know may be no better.
		return "Sec-Fetch-Site is " + strconv.Quote(truncate(site, 32)) + " and the Origin is not in allowed_origins"
	}
	if origin == "" {
		return ""
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if origin == strings.ToLower(scheme+"://"+r.Host) {
		return ""
	}
	return "Origin " + origin + " is neither this site's origin nor in allowed_origins"
}

// export forwards the request body unchanged to the content service.
func (b *Bridge) export(w http.ResponseWriter, r *http.Request, deadline time.Time) error {
	if b.bearer == "" {
		return b.fail(w, r, http.StatusInternalServerError, codeNotConfigured, "Content service token not configured",
			"set token (default {env.CS_API_TOKEN}) in the design_bridge block")
	}
	// The body is read whole before anything goes upstream: a slow or
	// oversized upload never holds an upstream connection, and the
	// buffered body can be sent again if a kept-alive upstream connection
	// turns out to be closed. exportShared releases it.
	body, ok, err := b.readBody(w, r, b.MaxBody)
	if !ok {
		return err
	}
	return b.exportShared(w, r, body, deadline)
}

// forward sends an export's buffered body to the content service and
// hands its answer to w.
func (b *Bridge) forward(w http.ResponseWriter, r *http.Request, body *requestBody, deadline time.Time) error {
	ctx, cancel := context.WithDeadline(r.Context(), deadline)
	defer cancel()
	out := r.Clone(context.WithValue(ctx, replayBodyKey{}, body))
	out.Body = io.NopCloser(body.Reader())
	out.ContentLength = body.Len()
	out.TransferEncoding = nil
	for _, h := range []string{"Authorization", "Cookie", "Proxy-Authorization", "Accept-Encoding"} {
		out.Header.Del(h)
	}
	out.Header.Set("Content-Type", "application/json")

	watch := newWatcher(w, b.secrets)
	if b.UnwrapHTML {
		watch.unwrapLimit = b.MaxBody
	}
	if err := b.proxy(b.exportProxy, watch, out); err != nil {
		return b.proxyError(w, r, ctx, watch, err)
	}
	if err := watch.finish(); err != nil {
		return err
	}
	if watch.status == http.StatusUnauthorized || watch.status == http.StatusForbidden {
		b.logger.Warn("content service refused the token",
			zap.Int("status", watch.status), zap.String("path", r.URL.Path),
			zap.String("hint", "the token is wrong, revoked, or lacks the \"Bearer \" prefix (design_bridge adds it when missing); check token (default {env.CS_API_TOKEN})"))
	}
	return nil
}

// readBody reads the request body, up to limit bytes (past spoolAbove into
// a temporary file, which the caller closes). When it returns false it has
// answered the client (413 when over the limit, 408 when the body did not
// arrive within timeout) and err is for Caddy.
func (b *Bridge) readBody(w http.ResponseWriter, r *http.Request, limit int64) (body *requestBody, ok bool, err error) {
	// A Content-Length over the limit is refused before any byte of the
	// body is read; "Connection: close" keeps net/http from reading (and
	// waiting for) the rest first.
	if r.ContentLength > limit {
		return nil, false, b.tooLarge(w, r, limit)
	}
	body = new(requestBody)
	if r.Body == nil || r.Body == http.NoBody {
		_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
		return body, true, nil
	}
	switch {
	case r.ContentLength > spoolAbove:
		// Straight to the file: not even spoolAbove of it in memory.
		if err := body.spool(); err != nil {
			return nil, false, caddyhttp.Error(http.StatusInternalServerError, fmt.Errorf("design_bridge: a temporary file for the body: %v", err))
		}
	case r.ContentLength > 0:
		body.mem.Grow(int(r.ContentLength) + 1) // +1: the read that sees EOF needs no growth
	}
	n, err := io.Copy(body, io.LimitReader(r.Body, limit+1))
	if err != nil || n > limit {
		body.Close()
	}
	var maxBytes *http.MaxBytesError
	switch {
	case n > limit || errors.As(err, &maxBytes):
		return nil, false, b.tooLarge(w, r, limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		return nil, false, b.fail(w, r, http.StatusRequestTimeout, codeReadTimeout, "Request body too slow",
			fmt.Sprintf("the body did not arrive within %s (timeout)", time.Duration(b.Timeout)))
	case err != nil:
		if r.Context().Err() != nil {
			return nil, false, caddyhttp.Error(499, err)
		}
		w.Header().Set("Connection", "close")
		return nil, false, b.fail(w, r, http.StatusBadRequest, codeBadRequestJSON, "Unreadable body", "reading the request body failed")
	}
	// The body is in: the deadline now only stands in the way of net/http
	// noticing a client that goes away.
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	return body, true, nil
}

// replayBodyKey is the context key of a buffered request body (a
// *requestBody), which upstreamTransport sends (and may send again).
type replayBodyKey struct{}

// proxy runs p. Caddy's reverse proxy aborts the response
// (http.ErrAbortHandler) when the upstream fails in the middle of a body;
// when that body was being held back (unwrap_html) nothing has reached
// the client yet, so the failure becomes an error to answer instead.
func (b *Bridge) proxy(p *reverseproxy.Handler, watch *responseWatcher, out *http.Request) (err error) {
	defer func() {
		if v := recover(); v != nil {
			if v != http.ErrAbortHandler || watch.sent() {
				panic(v)
			}
			err = errUpstreamBody
		}
	}()
	return p.ServeHTTP(watch, out, caddyhttp.HandlerFunc(noNext))
}

var errUpstreamBody = errors.New("upstream response body failed")

// login performs LoginV2 with the configured client credentials and hands
// the upstream's answer back unchanged.
func (b *Bridge) login(w http.ResponseWriter, r *http.Request, deadline time.Time) error {
	if b.clientID == "" || b.clientSecret == "" {
		return b.fail(w, r, http.StatusInternalServerError, codeNotConfigured, "LoginV2 credentials not configured",
			"set client_id and client_secret (defaults {env.CLIENT_ID}, {env.CLIENT_SECRET}) in the design_bridge block")
	}
	// Read even when uid is configured (and the body unused), so that the
	// same bounds apply to every auth request.
	raw, ok, err := b.readBody(w, r, maxAuthBody)
	if !ok {
		return err
	}
	uid, err := b.resolveUID(r, raw.Bytes())
	if err != nil {
		var refused *uidError
		if !errors.As(err, &refused) {
			return caddyhttp.Error(http.StatusInternalServerError, err)
		}
		return b.fail(w, r, refused.status, refused.code, refused.message, refused.details)
	}
	payload, err := json.Marshal(struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		UID          string `json:"uid"`
	}{b.clientID, b.clientSecret, uid})
	if err != nil {
		return caddyhttp.Error(http.StatusInternalServerError, err)
	}

	ctx, cancel := context.WithDeadline(r.Context(), deadline)
	defer cancel()
	out := r.Clone(context.WithValue(ctx, replayBodyKey{}, memoryBody(payload)))
	// A fresh request: nothing of the browser's request but what LoginV2
	// needs is sent.
	out.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	out.Body = io.NopCloser(bytes.NewReader(payload))
	out.ContentLength = int64(len(payload))
	out.TransferEncoding = nil
	out.Trailer = nil
	out.URL.RawQuery = ""

	watch := newWatcher(w, b.secrets)
	if err := b.proxy(b.authProxy, watch, out); err != nil {
		return b.proxyError(w, r, ctx, watch, err)
	}
	if err := watch.finish(); err != nil {
		return err
	}
	if watch.status == http.StatusUnauthorized || watch.status == http.StatusForbidden {
		b.logger.Warn("LoginV2 refused the client credentials",
			zap.Int("status", watch.status),
			zap.String("hint", "client_id or client_secret is wrong, or the application is disabled"))
	}
	return nil
}

// uidError is why a LoginV2 request's uid is refused, with the answer's
// status and error object.
type uidError struct {
	status, code     int
	message, details string
}

func (e *uidError) Error() string { return e.message + ": " + e.details }

var (
	errNoUser = &uidError{http.StatusForbidden, codeInvalidUID, "No user",
		"the configured uid is empty for this request; is authentication configured before design_bridge?"}
	errConfiguredUID = &uidError{http.StatusBadRequest, codeInvalidUID, "Invalid uid",
		"the configured uid must be 1-256 letters, digits, _ or -"}
	errAuthJSON = &uidError{http.StatusBadRequest, codeBadRequestJSON, "Invalid JSON",
		"the request body must be a JSON object such as {\"uid\": \"customer-42\"}"}
	errBodyUID = &uidError{http.StatusBadRequest, codeInvalidUID, "Invalid uid",
		"uid must be a string of 1-256 letters, digits, _ or -"}
)

// resolveUID picks the LoginV2 uid: the configured uid (resolved per
// request); only with insecure_caller_uid the body's "uid", else
// demo-user. A refusal is a *uidError.
func (b *Bridge) resolveUID(r *http.Request, raw []byte) (string, error) {
	if b.UID != "" {
		repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
		if repl == nil {
			repl = caddy.NewReplacer()
		}
		uid := repl.ReplaceAll(b.UID, "")
		if uid == "" {
			// A configured uid that resolves to nothing (for example no
			// authenticated user) must not fall back to a browser-chosen
			// one.
			return "", errNoUser
		}
		if !loginv2.ValidUID(uid) {
			return "", errConfiguredUID
		}
		return uid, nil
	}
	if !b.InsecureCallerUID {
		// Validate refuses this configuration; never let the caller choose.
		return "", errNoUser
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return defaultUID, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return "", errAuthJSON
	}
	rawUID, ok := fields["uid"]
	if !ok {
		return defaultUID, nil
	}
	var uid string
	if err := json.Unmarshal(rawUID, &uid); err != nil || firstNonSpace(rawUID) != '"' || !loginv2.ValidUID(uid) {
		return "", errBodyUID
	}
	return uid, nil
}

func noNext(http.ResponseWriter, *http.Request) error { return nil }

// tooLarge answers 413 and closes the connection, so that the rest of
// the body is neither waited for nor read.
func (b *Bridge) tooLarge(w http.ResponseWriter, r *http.Request, limit int64) error {
	w.Header().Set("Connection", "close")
	what := "max_body"
	if r.URL.Path == b.AuthPath {
		what = "the auth path's limit"
	}
	return b.fail(w, r, http.StatusRequestEntityTooLarge, codeTooLarge, "Request body too large",
		fmt.Sprintf("the body is limited to %d bytes (%s)", limit, what))
}

// proxyError turns an error of the internal reverse proxy into this
// handler's answer: 502 (unreachable, or failed in the middle of a held
// back body) and 504 (timeout) get the error body; a client that went
// away gets nothing. The answer names no upstream URL; the log does.
func (b *Bridge) proxyError(w http.ResponseWriter, r *http.Request, ctx context.Context, watch *responseWatcher, err error) error {
	if watch.sent() {
		return err // too late to change the response
	}
	// The recorder refusing the rest of an answer over its bound also
	// ends the copy: say that, not that the upstream failed.
	rec, recorded := watch.ResponseWriter.(*answerRecorder)
	tooLarge := recorded && rec.overflow
	watch.discard()
	if tooLarge {
		return b.answerTooLarge(w, r)
	}
	var he caddyhttp.HandlerError
	status := http.StatusBadGateway
	if errors.As(err, &he) && he.StatusCode != 0 {
		status = he.StatusCode
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && r.Context().Err() == nil {
		status = http.StatusGatewayTimeout
	}
	if r.Context().Err() != nil {
		return caddyhttp.Error(499, r.Context().Err())
	}
	if status == http.StatusGatewayTimeout {
		return b.failCause(w, r, status, codeGatewayTimeout, "Upstream timeout",
			fmt.Sprintf("%s did not answer within %s (timeout)", b.upstreamName(r), time.Duration(b.Timeout)), err)
	}
	return b.failCause(w, r, http.StatusBadGateway, codeBadGateway, "Upstream unreachable",
		fmt.Sprintf("%s could not be reached or failed to answer", b.upstreamName(r)), err)
}

// upstreamName names the upstream in an answer: by its role, not its URL,
// which is internal.
func (b *Bridge) upstreamName(r *http.Request) string {
	if r.URL.Path == b.AuthPath {
		return "the LoginV2 service"
	}
	return "the content service"
}

func (b *Bridge) upstreamURL(r *http.Request) string {
	if r.URL.Path == b.AuthPath {
		return b.authURL.Redacted()
	}
	return b.contentURL.Redacted()
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// errorBody is the error object of design_bridge's own answers.
type errorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Details string `json:"details"`
}

// fail answers with the error object {"code", "message", "details"},
// through jsonerror: a handle_errors route that matches the request gets
// the error, else the body is written here.
func (b *Bridge) fail(w http.ResponseWriter, r *http.Request, status, code int, message, details string) error {
	return b.failCause(w, r, status, code, message, details, nil)
}

// failCause is fail for an error with a cause the operator needs (refused
// connection, TLS or DNS failure): the cause goes to the log and to the
// error handed to handle_errors, never to the browser.
func (b *Bridge) failCause(w http.ResponseWriter, r *http.Request, status, code int, message, details string, cause error) error {
	fields := []zap.Field{zap.Int("status", status), zap.String("path", r.URL.Path), zap.String("error", details)}
	err := fmt.Errorf("design_bridge: %s: %s", message, details)
	if cause != nil {
		// Caddy's HandlerError adds its id, trace and status; the
		// operator needs the error it carries.
		var he caddyhttp.HandlerError
		if errors.As(cause, &he) && he.Err != nil {
			cause = he.Err
		}
		// The transport's errors name hosts and addresses, not headers;
		// mask anyway, in case an upstream's answer ever ends up in one.
		c := []byte(cause.Error())
		maskSecrets(c, b.secrets)
		fields = append(fields, zap.String("upstream", b.upstreamURL(r)), zap.String("cause", string(c)))
		err = fmt.Errorf("%w: %s", err, c)
	}
	if status >= 500 {
		b.logger.Error("request failed", fields...)
	} else {
		b.logger.Debug("request refused", fields...)
	}
	return jsonerror.Respond(w, r, status, errorBody{code, message, details}, err)
}

// newProxy provisions an internal reverse proxy to target. Caddy's
// reverse proxy does the proxying proper (hop-by-hop headers, streaming,
// flushing, 1xx, trailers, error statuses); upstreamTransport adds the
// secret on the way out and masks it on the way back.
func (b *Bridge) newProxy(ctx caddy.Context, target *url.URL, bearer string, endpoint bool) (*reverseproxy.Handler, error) {
	tcfg := map[string]any{"compression": false}
	if target.Scheme == "https" {
		tcfg["tls"] = map[string]any{}
	}
	raw, _ := json.Marshal(tcfg)
	// Loaded through the context so that Caddy cleans it up (closing idle
	// upstream connections) when this config is unloaded.
	mod, err := ctx.LoadModuleByID("http.reverse_proxy.transport.http", raw)
	if err != nil {
		return nil, err
	}
	retiring := retire.New(mod.(http.RoundTripper))
	b.retiring = append(b.retiring, retiring)
	t := &upstreamTransport{
		inner:    retiring,
		target:   target,
		bearer:   bearer,
		endpoint: endpoint,
		secrets:  b.secrets,
		logger:   b.logger,
	}
	h := &reverseproxy.Handler{
		Upstreams: reverseproxy.UpstreamPool{{Dial: dialAddress(target)}},
		Transport: t,
		// A connection that fails while it is being made carried nothing,
		// so it is tried once more: a content_service in the same Caddy
		// can refuse one as a reload swaps its server. Caddy retries a
		// POST only on such dial errors.
		LoadBalancing: &reverseproxy.LoadBalancing{Retries: 1},
	}
	if err := h.Provision(ctx); err != nil {
		return nil, err
	}
	return h, nil
}

// upstreamTransport points the request at the configured URL, adds the
// bearer token (after Caddy's reverse proxy has logged the request, so the
// token is in no debug log) and masks configured secrets that the upstream
// echoes back in headers, trailers or the body.
type upstreamTransport struct {
	inner  http.RoundTripper
	target *url.URL
	bearer string
	// endpoint: target is the whole URL (LoginV2), not a base that the
	// request path is appended to.
	endpoint bool
	secrets  [][]byte
	logger   *zap.Logger
}

func (t *upstreamTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	out := req.Clone(req.Context())
	out.URL.Scheme = t.target.Scheme
	out.URL.Host = t.target.Host
	out.Host = t.target.Host
	out.URL.Path = t.target.Path + req.URL.Path
	if t.endpoint {
		out.URL.Path = t.target.Path
	}
	// No contract of these paths has a query string; the browser's would
	// travel next to the bearer token.
	out.URL.RawQuery = ""
	out.URL.ForceQuery = false
	out.Header.Del("Authorization")
	if t.bearer != "" {
		out.Header.Set("Authorization", t.bearer)
	}
	out.URL.RawPath = ""
	if body, ok := req.Context().Value(replayBodyKey{}).(*requestBody); ok {
		// The body is buffered, so net/http may send it again on a new
		// connection when a kept-alive one turns out to be closed by the
		// upstream (a config reload of a content_service in the same
		// Caddy does that). A nil X-Idempotency-Key marks the request as
		// replayable without sending the header.
		out.Body, out.GetBody = http.NoBody, func() (io.ReadCloser, error) { return http.NoBody, nil }
		if body.Len() > 0 {
			out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(body.Reader()), nil }
			out.Body, _ = out.GetBody()
		}
		out.ContentLength = body.Len()
		out.Header["X-Idempotency-Key"] = nil
	}
	// Interim (1xx) responses are forwarded by Caddy's reverse proxy from
	// its own trace hook, which runs after this one on the same header.
	out = out.WithContext(httptrace.WithClientTrace(out.Context(), &httptrace.ClientTrace{
		Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
			if t.scrubHeader(http.Header(h)) {
				t.logger.Warn("removed upstream interim response headers holding a secret", zap.Int("status", code))
			}
			return nil
		},
	}))
	resp, err := t.inner.RoundTrip(out)
	if err != nil {
		if errors.Is(req.Context().Err(), context.DeadlineExceeded) {
			return nil, errUpstreamTimeout
		}
		return nil, err
	}
	// ServeHTTP has set its own (one header line, not two).
	resp.Header.Del("X-Content-Type-Options")
	// Trailer holds the announced trailer names, which Caddy announces to
	// the client before the body.
	if inHeader, inTrailer := t.scrubHeader(resp.Header), t.scrubHeader(resp.Trailer); inHeader || inTrailer {
		t.logger.Warn("removed upstream response headers holding a secret")
	}
	if maskable(t.secrets) && resp.Body != nil && resp.Body != http.NoBody {
		resp.Body = &maskingReader{src: resp.Body, secrets: t.secrets, onEOF: func() { t.scrubHeader(resp.Trailer) }}
	}
	return resp, nil
}

// scrubHeader removes every header whose name or value holds a secret,
// compared without regard to case (net/http changes the case of names).
// It reports whether it removed any.
func (t *upstreamTransport) scrubHeader(h http.Header) bool {
	removed := false
	for name, values := range h {
		if containsSecretFold(name, t.secrets) {
			delete(h, name)
			removed = true
			continue
		}
		for _, v := range values {
			if containsSecretFold(v, t.secrets) {
				delete(h, name)
				removed = true
				break
			}
		}
	}
	return removed
}

func containsSecretFold(s string, secrets [][]byte) bool {
	for _, sec := range secrets {
		if len(sec) >= minMaskedSecret && len(s) >= len(sec) && strings.Contains(strings.ToLower(s), strings.ToLower(string(sec))) {
			return true
		}
	}
	return false
}

func maskable(secrets [][]byte) bool {
	for _, s := range secrets {
		if len(s) >= minMaskedSecret {
			return true
		}
	}
	return false
}

// errUpstreamTimeout is a net.Error with Timeout() true, which Caddy's
// reverse proxy maps to 504.
var errUpstreamTimeout error = timeoutError{}

type timeoutError struct{}

func (timeoutError) Error() string   { return "upstream did not answer in time" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return false }

// maskingReader replaces each occurrence of a secret in the stream with as
// many '*' (so Content-Length stays right), holding back the last
// longest-secret-minus-one bytes of each read until more data shows whether
// they begin a secret.
type maskingReader struct {
	src     io.ReadCloser
	secrets [][]byte
	onEOF   func()
	buf     []byte // buf[:n] holds data: buf[r:ready] masked and safe, buf[ready:n] held back
	r       int
	ready   int
	n       int
	err     error // src's terminal error, once seen
}

const maskChunk = 32 << 10

var maskBufPool = sync.Pool{New: func() any { b := make([]byte, 0, maskChunk); return &b }}

func (m *maskingReader) Read(p []byte) (int, error) {
	for m.r == m.ready {
		if m.err != nil {
			return 0, m.err
		}
		keep := longest(m.secrets) - 1
		if m.buf == nil {
			m.buf = *maskBufPool.Get().(*[]byte)
			if cap(m.buf) < maskChunk+keep {
				m.buf = make([]byte, 0, maskChunk+keep)
			}
			m.buf = m.buf[:cap(m.buf)]
		}
		// Move the held-back bytes to the front and read after them.
		m.n = copy(m.buf, m.buf[m.ready:m.n])
		m.r, m.ready = 0, 0
		read, err := m.src.Read(m.buf[m.n:])
		m.n += read
		maskSecrets(m.buf[:m.n], m.secrets)
		if err != nil {
			m.err = err
			m.ready = m.n
			if err == io.EOF && m.onEOF != nil {
				m.onEOF()
			}
		} else {
			m.ready = max(m.n-keep, 0)
		}
	}
	n := copy(p, m.buf[m.r:m.ready])
	m.r += n
	return n, nil
}

func (m *maskingReader) Close() error {
	if m.buf != nil {
		b := m.buf[:0]
		m.buf = nil
		maskBufPool.Put(&b)
	}
	return m.src.Close()
}

func maskSecrets(b []byte, secrets [][]byte) {
	for _, s := range secrets {
		if len(s) < minMaskedSecret {
			continue
		}
		for i := bytes.Index(b, s); i >= 0; {
			for j := range s {
				b[i+j] = '*'
			}
			next := bytes.Index(b[i+len(s):], s)
			if next < 0 {
				break
			}
			i += len(s) + next
		}
	}
}

func longest(secrets [][]byte) int {
	n := 1
	for _, s := range secrets {
		if len(s) >= minMaskedSecret && len(s) > n {
			n = len(s)
		}
	}
	return n
}

// responseWatcher notes the status the proxy writes and, when unwrap_html
// is on, holds back a 2xx response (up to unwrapLimit bytes) so that
// finish can rewrite an HTML wrapper to raw HTML.
type responseWatcher struct {
	*caddyhttp.ResponseWriterWrapper
	status      int
	wroteHeader bool
	unwrapLimit int64 // 0: never buffer
	buffering   bool
	buf         bytes.Buffer
	secrets     [][]byte    // masked again in unwrapped HTML
	own         http.Header // the response's headers before the upstream's were added
}

func newWatcher(w http.ResponseWriter, secrets [][]byte) *responseWatcher {
	return &responseWatcher{
		ResponseWriterWrapper: &caddyhttp.ResponseWriterWrapper{ResponseWriter: w},
		secrets:               secrets,
		own:                   w.Header().Clone(),
	}
}

// sent reports whether the final response has started to reach the
// client, after which it can no longer be replaced by an error. An
// export's answer never has: it is recorded whole before anyone is sent
// it (answerRecorder), so an upstream failing in the middle of its body
// is answered with an error like one failing before it.
func (rw *responseWatcher) sent() bool {
	if _, recorded := rw.ResponseWriter.(*answerRecorder); recorded {
		return false
	}
	return rw.wroteHeader && !rw.buffering
}

// discard drops a held-back or recorded response and the upstream's
// headers, so that an error can be answered in its place.
func (rw *responseWatcher) discard() {
	rec, recorded := rw.ResponseWriter.(*answerRecorder)
	if !rw.buffering && !recorded {
		return
	}
	h := rw.Header()
	clear(h)
	maps.Copy(h, rw.own)
	rw.buffering = false
	rw.wroteHeader = false
	rw.buf = bytes.Buffer{}
	if recorded {
		rec.reset()
	}
}

func (rw *responseWatcher) WriteHeader(code int) {
	if rw.wroteHeader {
		return
	}
	if code >= 100 && code < 200 {
		rw.ResponseWriter.WriteHeader(code)
		return
	}
	rw.wroteHeader, rw.status = true, code
	// Whatever its Content-Type: the page reads every answer as text and
	// unwraps a wrapper sent as text/html too, so the bridge must as well.
	if rw.unwrapLimit > 0 && code >= 200 && code < 300 {
		rw.buffering = true
		return
	}
	rw.ResponseWriter.WriteHeader(code)
}

func (rw *responseWatcher) Write(p []byte) (int, error) {
	if !rw.wroteHeader {
		rw.WriteHeader(http.StatusOK)
	}
	if rw.buffering {
		if int64(rw.buf.Len()+len(p)) <= rw.unwrapLimit {
			return rw.buf.Write(p)
		}
		// Too big to be worth unwrapping: pass it on as it is.
		rw.buffering = false
		rw.ResponseWriter.WriteHeader(rw.status)
		if _, err := rw.ResponseWriter.Write(rw.buf.Bytes()); err != nil {
			return 0, err
		}
		rw.buf = bytes.Buffer{}
	}
	return rw.ResponseWriter.Write(p)
}

// ReadFrom keeps io.Copy going through Write (the embedded wrapper's
// ReadFrom would bypass it).
func (rw *responseWatcher) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(struct{ io.Writer }{rw}, r)
}

// FlushError flushes unless the response is being held back.
func (rw *responseWatcher) FlushError() error {
	if rw.buffering {
		return nil
	}
	if !rw.wroteHeader {
		rw.WriteHeader(http.StatusOK)
		if rw.buffering {
			return nil
		}
	}
	return http.NewResponseController(rw.ResponseWriter).Flush()
}

// finish writes a held-back response, unwrapped when it is an HTML wrapper.
func (rw *responseWatcher) finish() error {
	if !rw.buffering {
		return nil
	}
	rw.buffering = false
	body, wrapped := unwrapMasked(rw.buf.Bytes(), rw.secrets)
	if wrapped {
		h := rw.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Length", fmt.Sprint(len(body)))
		h.Del("Content-Encoding")
		h.Del("ETag")
	}
	rw.ResponseWriter.WriteHeader(rw.status)
	_, err := rw.ResponseWriter.Write(body)
	return err
}

// unwrapMasked returns the HTML of an HTML wrapper, with the secrets
// masked again: the upstream's text was masked as it arrived, but a
// secret written with JSON escapes ("\u0074ok…") only appears once the
// string is decoded. Anything else is returned as it is.
func unwrapMasked(body []byte, secrets [][]byte) ([]byte, bool) {
	html, wrapped := HTMLResult(body)
	if !wrapped {
		return body, false
	}
	maskSecrets(html, secrets)
	return html, true
}

// Interface guards
var (
	_ http.RoundTripper = (*upstreamTransport)(nil)
	_ net.Error         = timeoutError{}
	_ io.ReaderFrom     = (*responseWatcher)(nil)
)
