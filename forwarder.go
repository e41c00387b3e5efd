package designbridge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
	"go.uber.org/zap"

	"github.com/designbridge/caddy-designbridge/internal/jsonerror"
)

// Error codes of the bodies design_bridge itself writes (the content
// service's error shape: {"code", "message", "details"}).
const (
	codeBadRequestJSON = 4100
	codeCrossSite      = 4031
	codeMethod         = 4050
	codeTooLarge       = 4130
	codeNotConfigured  = 5000
	codeBadGateway     = 5020
	codeGatewayTimeout = 5040
	codeInvalidUID     = 5005 // LoginV2's code for a bad uid
	maxAuthBody        = 64 << 10
	maxUIDLength       = 128
	defaultUID         = "demo-user"
	minMaskedSecret    = 8
)

var uidPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ServeHTTP forwards POSTs to the export paths and the auth path and hands
// every other request to next untouched.
func (b *Bridge) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	_, isExport := b.exportPaths[r.URL.Path]
	isAuth := r.URL.Path == b.AuthPath
	if !isExport && !isAuth {
		return next.ServeHTTP(w, r)
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return b.fail(w, r, http.StatusMethodNotAllowed, codeMethod, "Method not allowed", "only POST is accepted on "+r.URL.Path)
	}
	if reason := b.crossSite(r); reason != "" {
		return b.fail(w, r, http.StatusForbidden, codeCrossSite, "Cross-site request refused", reason)
	}
	if isAuth {
		return b.login(w, r)
	}
	return b.export(w, r)
}

// crossSite returns why r must be refused as a cross-site call, or "".
// An Origin listed in allowed_origins is always accepted; otherwise the
// browser's Sec-Fetch-Site verdict decides, and without it the Origin must
// be the site's own. Requests with neither header are not from a browser
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
		if strings.EqualFold(site, "cross-site") {
			return "Sec-Fetch-Site is cross-site and the Origin is not in allowed_origins"
		}
		return ""
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
func (b *Bridge) export(w http.ResponseWriter, r *http.Request) error {
	if b.bearer == "" {
		return b.fail(w, r, http.StatusInternalServerError, codeNotConfigured, "Content service token not configured",
			"set token (default {env.CS_API_TOKEN}) in the design_bridge block")
	}
	// Content-Length lets us refuse before anything is sent upstream. A
	// body of unknown length is streamed through a counting reader that
	// fails once it passes the limit: the upstream then sees an aborted
	// request, never a complete oversized one, and we buffer nothing.
	if r.ContentLength > b.MaxBody {
		return b.tooLarge(w, r)
	}
	ctx, cancel := context.WithTimeout(r.Context(), time.Duration(b.Timeout))
	defer cancel()
	out := r.Clone(ctx)
	body := &limitedBody{ReadCloser: r.Body, remaining: b.MaxBody}
	if r.Body == nil || r.Body == http.NoBody {
		out.Body = http.NoBody
	} else {
		out.Body = body
	}
	for _, h := range []string{"Authorization", "Cookie", "Proxy-Authorization", "Accept-Encoding"} {
		out.Header.Del(h)
	}
	out.Header.Set("Content-Type", "application/json")

	watch := &responseWatcher{ResponseWriterWrapper: &caddyhttp.ResponseWriterWrapper{ResponseWriter: w}}
	if b.UnwrapHTML {
		watch.unwrapLimit = b.MaxBody
	}
	err := b.exportProxy.ServeHTTP(watch, out, caddyhttp.HandlerFunc(noNext))
	if body.exceeded && !watch.wroteHeader {
		return b.tooLarge(w, r)
	}
	if err != nil {
		return b.proxyError(w, r, watch, err)
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

// login performs LoginV2 with the configured client credentials and hands
// the upstream's answer back unchanged.
func (b *Bridge) login(w http.ResponseWriter, r *http.Request) error {
	if b.clientID == "" || b.clientSecret == "" {
		return b.fail(w, r, http.StatusInternalServerError, codeNotConfigured, "LoginV2 credentials not configured",
			"set client_id and client_secret (defaults {env.CLIENT_ID}, {env.CLIENT_SECRET}) in the design_bridge block")
	}
	uid, err := b.resolveUID(r)
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

	ctx, cancel := context.WithTimeout(r.Context(), time.Duration(b.Timeout))
	defer cancel()
	out := r.Clone(ctx)
	// A fresh request: nothing of the browser's request but what LoginV2
	// needs is sent.
	out.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	out.Body = io.NopCloser(bytes.NewReader(payload))
	out.ContentLength = int64(len(payload))
	out.TransferEncoding = nil
	out.Trailer = nil
	out.URL.RawQuery = ""

	watch := &responseWatcher{ResponseWriterWrapper: &caddyhttp.ResponseWriterWrapper{ResponseWriter: w}}
	if err := b.authProxy.ServeHTTP(watch, out, caddyhttp.HandlerFunc(noNext)); err != nil {
		return b.proxyError(w, r, watch, err)
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
		"the configured uid must be 1-128 letters, digits, _ or -"}
	errUnreadable = &uidError{http.StatusBadRequest, codeBadRequestJSON, "Unreadable body",
		"reading the request body failed"}
	errAuthTooLarge = &uidError{http.StatusRequestEntityTooLarge, codeTooLarge, "Request body too large",
		fmt.Sprintf("the auth request body is limited to %d bytes", maxAuthBody)}
	errAuthJSON = &uidError{http.StatusBadRequest, codeBadRequestJSON, "Invalid JSON",
		"the request body must be a JSON object such as {\"uid\": \"customer-42\"}"}
	errBodyUID = &uidError{http.StatusBadRequest, codeInvalidUID, "Invalid uid",
		"uid must be a string of 1-128 letters, digits, _ or -"}
)

// resolveUID picks the LoginV2 uid: the configured uid (resolved per
// request), else the body's "uid", else demo-user. A refusal is a
// *uidError.
func (b *Bridge) resolveUID(r *http.Request) (string, error) {
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
		if !validUID(uid) {
			return "", errConfiguredUID
		}
		return uid, nil
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, maxAuthBody+1))
	if err != nil {
		return "", errUnreadable
	}
	if len(raw) > maxAuthBody {
		return "", errAuthTooLarge
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
	if err := json.Unmarshal(rawUID, &uid); err != nil || firstNonSpace(rawUID) != '"' || !validUID(uid) {
		return "", errBodyUID
	}
	return uid, nil
}

func validUID(s string) bool {
	return len(s) <= maxUIDLength && uidPattern.MatchString(s)
}

func noNext(http.ResponseWriter, *http.Request) error { return nil }

// tooLarge answers 413.
func (b *Bridge) tooLarge(w http.ResponseWriter, r *http.Request) error {
	return b.fail(w, r, http.StatusRequestEntityTooLarge, codeTooLarge, "Request body too large",
		fmt.Sprintf("the body is limited to %d bytes (max_body)", b.MaxBody))
}

// proxyError turns an error of the internal reverse proxy into this
// handler's answer: 502 (unreachable) and 504 (timeout) get the error body;
// a client that went away gets nothing.
func (b *Bridge) proxyError(w http.ResponseWriter, r *http.Request, watch *responseWatcher, err error) error {
	if watch.wroteHeader {
		return err // too late to change the response
	}
	var he caddyhttp.HandlerError
	status := http.StatusBadGateway
	if errors.As(err, &he) && he.StatusCode != 0 {
		status = he.StatusCode
	}
	switch {
	case r.Context().Err() != nil:
		return caddyhttp.Error(499, r.Context().Err())
	case status == http.StatusGatewayTimeout:
		return b.failCause(w, r, status, codeGatewayTimeout, "Upstream timeout",
			fmt.Sprintf("%s did not answer within %s (timeout)", b.upstreamName(r), time.Duration(b.Timeout)), err)
	default:
		return b.failCause(w, r, http.StatusBadGateway, codeBadGateway, "Upstream unreachable",
			fmt.Sprintf("%s could not be reached", b.upstreamName(r)), err)
	}
}

func (b *Bridge) upstreamName(r *http.Request) string {
	if r.URL.Path == b.AuthPath {
		return "the LoginV2 service " + b.authURL.Redacted()
	}
	return "the content service " + b.contentURL.Redacted()
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
		fields = append(fields, zap.String("cause", string(c)))
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
	port := target.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[target.Scheme]
	}
	h := &reverseproxy.Handler{
		Upstreams: reverseproxy.UpstreamPool{{Dial: net.JoinHostPort(target.Hostname(), port)}},
		Transport: &upstreamTransport{
			inner:    mod.(http.RoundTripper),
			target:   target,
			bearer:   bearer,
			endpoint: endpoint,
			secrets:  b.secrets,
			logger:   b.logger,
		},
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
	out.Header.Del("Authorization")
	if t.bearer != "" {
		out.Header.Set("Authorization", t.bearer)
	}
	out.URL.RawPath = ""
	resp, err := t.inner.RoundTrip(out)
	if err != nil {
		if errors.Is(req.Context().Err(), context.DeadlineExceeded) {
			return nil, errUpstreamTimeout
		}
		return nil, err
	}
	if t.scrubHeader(resp.Header) {
		t.logger.Warn("removed upstream response headers holding a secret")
	}
	if maskable(t.secrets) && resp.Body != nil && resp.Body != http.NoBody {
		resp.Body = &maskingReader{src: resp.Body, secrets: t.secrets, onEOF: func() { t.scrubHeader(resp.Trailer) }}
	}
	return resp, nil
}

// scrubHeader removes every header whose value holds a secret. It reports
// whether it removed any.
func (t *upstreamTransport) scrubHeader(h http.Header) bool {
	removed := false
	for name, values := range h {
		for _, v := range values {
			if containsSecret([]byte(v), t.secrets) {
				delete(h, name)
				removed = true
				break
			}
		}
	}
	return removed
}

func containsSecret(b []byte, secrets [][]byte) bool {
	for _, s := range secrets {
		if len(s) >= minMaskedSecret && bytes.Contains(b, s) {
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

// limitedBody fails once more than remaining bytes are read, and records
// that it did.
type limitedBody struct {
	io.ReadCloser
	remaining int64
	exceeded  bool
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if l.exceeded {
		return 0, errBodyTooLarge
	}
	if int64(len(p)) > l.remaining+1 {
		p = p[:l.remaining+1]
	}
	n, err := l.ReadCloser.Read(p)
	if int64(n) > l.remaining {
		l.exceeded = true
		return 0, errBodyTooLarge
	}
	l.remaining -= int64(n)
	return n, err
}

var errBodyTooLarge = errors.New("request body exceeds max_body")

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
// is on, holds back a 2xx JSON response (up to unwrapLimit bytes) so that
// finish can rewrite an HTML wrapper to raw HTML.
type responseWatcher struct {
	*caddyhttp.ResponseWriterWrapper
	status      int
	wroteHeader bool
	unwrapLimit int64 // 0: never buffer
	buffering   bool
	buf         bytes.Buffer
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
	if rw.unwrapLimit > 0 && code >= 200 && code < 300 && isJSONType(rw.Header().Get("Content-Type")) {
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
	body := rw.buf.Bytes()
	if html, wrapped := HTMLResult(body); wrapped {
		h := rw.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Length", fmt.Sprint(len(html)))
		h.Del("Content-Encoding")
		h.Del("ETag")
		body = html
	}
	rw.ResponseWriter.WriteHeader(rw.status)
	_, err := rw.ResponseWriter.Write(body)
	return err
}

func isJSONType(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// Interface guards
var (
	_ http.RoundTripper = (*upstreamTransport)(nil)
	_ net.Error         = timeoutError{}
	_ io.ReaderFrom     = (*responseWatcher)(nil)
)
