package designbridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
	"go.uber.org/zap"

	"github.com/designbridge/caddy-designbridge/contentservice"
	"github.com/designbridge/caddy-designbridge/internal/contract"
	"github.com/designbridge/caddy-designbridge/internal/ratelimit"
)

const (
	maxAuthBody     = 64 << 10
	maxAuthAnswer   = 1 << 20 // held back to mask; a larger one is refused (502)
	defaultUID      = "demo-user"
	minMaskedSecret = 8
)

// ServeHTTP forwards POSTs to the export paths and the auth path and hands
// every other request to next untouched.
func (b *Bridge) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	_, isExport := b.exportPaths[r.URL.Path]
	isAuth := r.URL.Path == b.AuthPath
	if !isExport && !isAuth {
		if contentservice.IsFileLink(r.URL.Path) {
			return passFileLink(w, r, next)
		}
		return next.ServeHTTP(w, r)
	}
	// A browser that navigates to one of these answers (a form posted to
	// them) must run nothing on this site's origin: the export HTML holds
	// whatever the design's html modules hold.
	w.Header().Set("Content-Security-Policy", "sandbox")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return b.fail(w, r, http.StatusMethodNotAllowed, contract.CodeMethod, "Method not allowed", "only POST is accepted on "+r.URL.Path)
	}
	if reason := b.crossSite(r); reason != "" {
		return b.fail(w, r, http.StatusForbidden, contract.CodeCrossSite, "Cross-site request refused", reason)
	}
	// Only JSON: a form (text/plain, urlencoded, multipart) or a bodiless
	// "simple" request could come from another site without a CORS
	// preflight, which this handler never grants.
	if !contract.IsJSON(r.Header.Get("Content-Type")) {
		code := contract.CodeMediaType
		if isAuth {
			code = contract.CodeLoginMediaType
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
			if ok, wait := b.authLimiter.AllowKeys(ratelimit.ClientKeys(r), time.Now()); !ok {
				secs := ratelimit.RetryAfter(wait)
				w.Header().Set("Retry-After", strconv.Itoa(secs))
				return b.fail(w, r, http.StatusTooManyRequests, contract.CodeRateLimited, "Too many requests",
					fmt.Sprintf("auth_rate_limit reached for this client; retry after %d s", secs))
			}
		}
		return b.login(w, r, deadline)
	}
	return b.export(w, r, deadline)
}

// passFileLink hands a request whose path is a content service's PDF
// link (contentservice.IsFileLink) to next, which forwards it (under a
// prefix when the service's public_url has a path). The link's name is
// the permission to read the PDF, and Caddy's access log, which no
// handler can redact, would record it; so the request is left out of
// that log when its answer is the PDF, or when next could not forward it
// (a 5xx error: the PDF may be there still). Any other answer is logged:
// whoever makes up a name cannot hide, say, a PHP script's request
// (/admin.php/v1/files/<name>.pdf) from the log.
func passFileLink(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	err := next.ServeHTTP(w, r)
	var he caddyhttp.HandlerError
	if contentservice.IsFileAnswer(r.URL.Path, w.Header()) || errors.As(err, &he) && he.StatusCode >= 500 {
		caddyhttp.SetVar(r.Context(), caddyhttp.LogSkipVar, true)
	}
	return err
}

// readBody reads the request body, up to limit bytes (past spoolAbove into
// a temporary file, which the caller closes). When it returns false it has
// answered the client (413 when over the limit, 408 when the body did not
// arrive within timeout) and err is for Caddy.
func (b *Bridge) readBody(w http.ResponseWriter, r *http.Request, limit int64) (*requestBody, bool, error) {
	// A Content-Length over the limit is refused before any byte of the
	// body is read; "Connection: close" keeps net/http from reading (and
	// waiting for) the rest first.
	if r.ContentLength > limit {
		return nil, false, b.tooLarge(w, r, limit)
	}
	body := new(requestBody)
	// Closed unless handed to the caller: on an error, and on a panic
	// while reading (a body wrapped by another handler), after which it
	// would hold its room in large_body_memory for good.
	kept := false
	defer func() {
		if !kept {
			body.Close()
		}
	}()
	if r.Body == nil || r.Body == http.NoBody {
		_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
		kept = true
		return body, true, nil
	}
	switch {
	case r.ContentLength > spoolAbove && body.holdLarge(b.largeBodies, r.ContentLength):
	case r.ContentLength > spoolAbove:
		// Straight to the file: not even spoolAbove of it in memory.
		if err := body.spool(); err != nil {
			return nil, false, b.internalError(w, r, fmt.Errorf("a temporary file for the body: %w", err))
		}
	case r.ContentLength > 0:
		body.sizeFor(int(r.ContentLength))
	default: // the size is not known until the end
		body.sizeFor(0)
	}
	n, err := io.Copy(body, io.LimitReader(r.Body, limit+1))
	var maxBytes *http.MaxBytesError
	switch {
	case n > limit || errors.As(err, &maxBytes):
		return nil, false, b.tooLarge(w, r, limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		w.Header().Set("Connection", "close")
		return nil, false, b.fail(w, r, http.StatusRequestTimeout, contract.CodeReadTimeout, "Request body too slow",
			fmt.Sprintf("the body did not arrive within %s (timeout)", time.Duration(b.Timeout)))
	case err != nil:
		if r.Context().Err() != nil {
			return nil, false, caddyhttp.Error(499, err)
		}
		w.Header().Set("Connection", "close")
		return nil, false, b.fail(w, r, http.StatusBadRequest, contract.CodeNotJSON, "Unreadable body", "reading the request body failed")
	}
	// The body is in: the deadline now only stands in the way of net/http
	// noticing a client that goes away.
	_ = http.NewResponseController(w).SetReadDeadline(time.Time{})
	kept = true
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

func noNext(http.ResponseWriter, *http.Request) error { return nil }

// tooLarge answers 413 and closes the connection, so that the rest of
// the body is neither waited for nor read.
func (b *Bridge) tooLarge(w http.ResponseWriter, r *http.Request, limit int64) error {
	w.Header().Set("Connection", "close")
	what := "max_body"
	if r.URL.Path == b.AuthPath {
		what = "the auth path's limit"
	}
	return b.fail(w, r, http.StatusRequestEntityTooLarge, contract.CodeBodyTooLarge, "Request body too large",
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
	tooLarge, limit := recorded && rec.overflow, int64(maxSharedAnswer)
	if watch.overflow {
		tooLarge, limit = true, watch.unwrapLimit
	}
	busy := recorded && rec.busy
	watch.discard()
	if recorded {
		rec.own = true // whatever is written now is the bridge's
	}
	if tooLarge {
		return b.answerTooLarge(w, r, limit)
	}
	if busy {
		return b.answerBusy(w, r)
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
	if errors.Is(err, errUpstreamEncoded) {
		return b.failCause(w, r, http.StatusBadGateway, contract.CodeBadGateway, "Upstream answer refused",
			fmt.Sprintf("%s answered compressed (Content-Encoding), which the bridge does not accept: it could not check the answer for secrets", b.upstreamName(r)), err)
	}
	if errors.Is(err, errUpstreamInterim) {
		return b.failCause(w, r, http.StatusBadGateway, contract.CodeBadGateway, "Upstream answer refused",
			fmt.Sprintf("%s sent more than %d interim (1xx) responses", b.upstreamName(r), maxInterim), err)
	}
	if errors.Is(err, errUpstreamSwitched) {
		return b.failCause(w, r, http.StatusBadGateway, contract.CodeBadGateway, "Upstream answer refused",
			fmt.Sprintf("%s answered 101 Switching Protocols, which the bridge never asks for", b.upstreamName(r)), err)
	}
	if status == http.StatusGatewayTimeout {
		return b.failCause(w, r, status, contract.CodeGatewayTimeout, "Upstream timeout",
			fmt.Sprintf("%s did not answer within %s (timeout)", b.upstreamName(r), time.Duration(b.Timeout)), err)
	}
	return b.failCause(w, r, http.StatusBadGateway, contract.CodeBadGateway, "Upstream unreachable",
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

// fail answers with the error object {"code", "message", "details"},
// written here (the error policy in CONTRIBUTING.md): handle_errors never
// sees it, and nothing is returned to Caddy.
func (b *Bridge) fail(w http.ResponseWriter, r *http.Request, status, code int, message, details string) error {
	return b.failCause(w, r, status, code, message, details, nil)
}

// internalError answers 500 with code 4200 for a failure of the bridge
// itself (a temporary file, a buffered body that cannot be read back): the
// cause goes to the log only.
func (b *Bridge) internalError(w http.ResponseWriter, r *http.Request, cause error) error {
	return b.failCause(w, r, http.StatusInternalServerError, contract.CodeInternal, "Internal error",
		"design_bridge failed; the ERROR log line \"request failed\" says why", cause)
}

// failCause is fail for an error with a cause the operator needs (refused
// connection, TLS or DNS failure): the cause goes to the log, never to the
// browser.
func (b *Bridge) failCause(w http.ResponseWriter, r *http.Request, status, code int, message, details string, cause error) error {
	fields := []zap.Field{zap.Int("status", status), zap.String("path", r.URL.Path), zap.String("error", details)}
	if cause != nil {
		// Caddy's HandlerError adds its id, trace and status; the
		// operator needs the error it carries.
		var he caddyhttp.HandlerError
		if errors.As(cause, &he) && he.Err != nil {
			cause = he.Err
		}
		// The transport masks the errors it returns; mask again, in any
		// case and quoted form, for an error that came another way.
		c, _ := maskText(cause.Error(), b.secrets)
		fields = append(fields, zap.String("cause", c))
		if status == http.StatusBadGateway || status == http.StatusGatewayTimeout {
			fields = append(fields, zap.String("upstream", b.upstreamURL(r)))
		}
	}
	if status >= 500 {
		b.logger.Error("request failed", fields...)
	} else {
		b.logger.Debug("request refused", fields...)
	}
	// A write that fails is a client gone: nothing is left to tell it.
	var body any = contract.Error{Code: code, Message: message, Details: details}
	if r.URL.Path == b.AuthPath {
		body = contract.AuthPathError{Code: code, Message: message, Details: details, StatusCode: status}
	}
	_ = contract.Write(w, r, status, body)
	return nil
}
