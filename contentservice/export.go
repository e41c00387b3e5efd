package contentservice

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-json-experiment/json/jsontext"
	"go.uber.org/zap"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/internal/contract"
	"github.com/designbridge/caddy-designbridge/internal/ratelimit"
	"github.com/designbridge/caddy-designbridge/render"
)

// Export error codes (docs/contracts.md); internal/contract holds the
// table.
const (
	CodeNoAuthorization  = contract.CodeNoAuthorization
	CodeMalformedBearer  = contract.CodeMalformedBearer
	CodeForbiddenToken   = contract.CodeForbiddenToken
	CodeTokenExpired     = contract.CodeTokenExpired
	CodeNotJSON          = contract.CodeNotJSON
	CodeNotDesign        = contract.CodeNotDesign
	CodeBodyTooLarge     = contract.CodeBodyTooLarge
	CodeMediaType        = contract.CodeMediaType
	CodeInternal         = contract.CodeInternal
	CodeRateLimited      = contract.CodeRateLimited
	maxWarningHeaders    = 20  // X-Design-Warnings values per response
	maxWarningHeaderSize = 200 // bytes per value
)

// exportFormat is one of the two export endpoints.
type exportFormat struct {
	rawType  string // the raw form's media type, for Accept matching
	rawCType string // the raw form's Content-Type
	jsonKey  string // member of "body" in the JSON form
	// render is render.HTMLWithLimits or render.PlainTextWithLimits.
	render func(*design.Design, render.Limits) (*render.Output, error)
}

var (
	formatHTML = exportFormat{rawType: "text/html", rawCType: "text/html; charset=utf-8", jsonKey: "html", render: render.HTMLWithLimits}
	formatText = exportFormat{rawType: "text/plain", rawCType: "text/plain; charset=utf-8", jsonKey: "text", render: render.PlainTextWithLimits}
)

// serveExport answers POST /v1/{message,page,popup}/{html,plain-text}.
// The checks run in this order: method, authentication, rate limit, media
// type, size, design, rendering; so an unauthenticated caller learns
// nothing about the body.
func (s *service) serveExport(w http.ResponseWriter, r *http.Request, f exportFormat) {
	id := requestID(r)
	// Every answer's single-valued headers share one backing array (a
	// slice each is an allocation each); each value's slice is capped, so
	// an Add to one header cannot reach another's value.
	vals := make([]string, 5)
	hdr := w.Header()
	vals[0], vals[1], vals[2] = id, "sandbox", "nosniff"
	hdr["X-Request-Id"] = vals[0:1:1]
	// The HTML holds whatever the design's html modules hold: a browser
	// that navigates to this answer must run none of it on this origin.
	hdr["Content-Security-Policy"] = vals[1:2:2]
	hdr["X-Content-Type-Options"] = vals[2:3:3]
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, http.StatusMethodNotAllowed, "Method not allowed", "use POST")
		return
	}

	key, ok := s.authorizeExport(w, r)
	if !ok {
		return
	}
	if s.limiter != nil {
		if allowed, wait := s.limiter.Allow(strconv.Itoa(key), time.Now()); !allowed {
			secs := ratelimit.RetryAfter(wait)
			s.logRefusal(w, r, "export rate-limited", "rate_limit reached", zap.String("client_id", s.keyApp(key)), zap.Int("retry_after_s", secs))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			writeError(w, http.StatusTooManyRequests, CodeRateLimited, "Rate limit exceeded",
				fmt.Sprintf("retry after %d s", secs))
			return
		}
	}

	if ct := r.Header.Get("Content-Type"); ct != "" && !contract.IsJSON(ct) {
		writeError(w, http.StatusUnsupportedMediaType, CodeMediaType, "Unsupported media type",
			"the body must be application/json")
		return
	}
	if r.ContentLength > s.maxBody {
		s.writeTooLarge(w)
		return
	}
	body, release, err := s.readBody(http.MaxBytesReader(w, r.Body, s.maxBody), r.ContentLength)
	defer release()
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			s.writeTooLarge(w)
			return
		}
		writeError(w, http.StatusBadRequest, CodeNotJSON, "Body unreadable", "the request body could not be read")
		return
	}

	out, failure := s.renderSafely(body, f, layoutOf(r.URL.Path))
	if failure != nil {
		if failure.status == http.StatusInternalServerError {
			s.logger.Error("rendering failed",
				zap.String("request_id", id),
				zap.String("path", r.URL.Path),
				zap.Int("body_bytes", len(body)),
				zap.String("error", failure.internal),
				zap.String("stack", failure.stack))
			writeError(w, http.StatusInternalServerError, CodeInternal, "Internal error", "request id "+id)
			return
		}
		writeError(w, failure.status, failure.code, failure.message, failure.details)
		return
	}

	// Writers must not retain what they are given (io.Writer), so the
	// body's buffer can serve a later render once it is written.
	defer out.Release()
	setWarnings(hdr, out.Warnings)
	answer, ctype := out.Body, f.rawCType
	if wantsJSON(r.Header.Values("Accept"), f.rawType) {
		bufp := s.wrapBufs.Get().(*[]byte)
		answer, ctype = wrapBody(*bufp, f.jsonKey, out.Body), "application/json"
		defer func() {
			if cap(answer) <= maxPooledBody {
				*bufp = answer[:0]
				s.wrapBufs.Put(bufp)
			}
		}()
	}
	// Content-Length, so that the answer goes out in one piece rather
	// than chunked.
	vals[3], vals[4] = ctype, strconv.Itoa(len(answer))
	hdr["Content-Type"] = vals[3:4:4]
	hdr["Content-Length"] = vals[4:5:5]
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(answer)
}

// maxPooledBody bounds the body buffers kept for reuse, so that a few
// large designs do not pin their memory.
const maxPooledBody = 1 << 20

// firstBodyRoom is the room a body buffer gets first; it then doubles as
// bytes arrive.
const firstBodyRoom = 16 << 10

// readBody reads the whole body into a recycled buffer. The buffer grows
// as bytes arrive, never past one byte more than Content-Length (so that
// the read seeing EOF does not grow it): sized from Content-Length up
// front, it let a client that announced max_body and sent nothing hold
// that much memory per connection. release returns the buffer; the body
// must not be used after it.
func (s *service) readBody(r io.Reader, contentLength int64) (body []byte, release func(), err error) {
	bufp := s.bodyBufs.Get().(*[]byte)
	buf := (*bufp)[:0]
	for {
		if len(buf) == cap(buf) {
			buf = growBody(buf, contentLength)
		}
		var n int
		n, err = r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			break
		}
	}
	release = func() {
		if cap(buf) <= maxPooledBody {
			*bufp = buf[:0]
			s.bodyBufs.Put(bufp)
		}
	}
	return buf, release, err
}

// growBody returns buf with room for more: twice its capacity (at least
// firstBodyRoom), or, with a stated length the next doubling would
// reach, room for all of it and one byte more (so that the read seeing
// EOF does not grow it again).
func growBody(buf []byte, contentLength int64) []byte {
	room := max(2*cap(buf), firstBodyRoom)
	if limit := contentLength + 1; contentLength >= 0 && int64(len(buf)) < limit && int64(2*room) >= limit {
		room = int(limit)
	}
	grown := make([]byte, len(buf), room)
	copy(grown, buf)
	return grown
}

func (s *service) writeTooLarge(w http.ResponseWriter) {
	writeError(w, http.StatusRequestEntityTooLarge, CodeBodyTooLarge, "Body too large",
		fmt.Sprintf("the limit is %d bytes", s.maxBody))
}

// authorizeExport checks the bearer token. It returns the rate-limit key
// of the caller, or false after answering the failure. Tokens are never
// echoed or logged.
func (s *service) authorizeExport(w http.ResponseWriter, r *http.Request) (int, bool) {
	token, err := bearerToken(r)
	if errors.Is(err, errNoAuthorization) {
		s.logRefusal(w, r, "export refused", "no Authorization header")
		writeError(w, http.StatusUnauthorized, CodeNoAuthorization, "Missing Authorization header",
			"send Authorization: Bearer <CS API token>")
		return 0, false
	}
	if err != nil {
		s.logRefusal(w, r, "export refused", "malformed Authorization header")
		writeError(w, http.StatusUnauthorized, CodeMalformedBearer, "Malformed Authorization header",
			"expected Authorization: Bearer <token>")
		return 0, false
	}
	if i := s.lookupAPIToken(token); i >= 0 {
		if app := s.apps[s.apiTokens[i].app]; app.disabled {
			s.logRefusal(w, r, "export refused", "token of a disabled application", zap.String("client_id", app.clientID))
			writeError(w, http.StatusForbidden, CodeForbiddenToken, "Forbidden", "the token is revoked")
			return 0, false
		}
		return i, true
	}
	// Not an API token: maybe an editor token of an application that
	// allows them. Editor tokens share their application's budget.
	if claims, err := s.parseEditorToken(token); err == nil {
		if app := s.appByRef(claims.AppRef); app >= 0 && s.apps[app].editorTokens && !s.apps[app].disabled {
			if tokenExpired(claims) {
				s.logRefusal(w, r, "export refused", "editor token expired", zap.String("client_id", s.apps[app].clientID))
				writeError(w, http.StatusUnauthorized, CodeTokenExpired, "Token expired",
					"refresh the editor token (POST "+PathRefresh+")")
				return 0, false
			}
			return len(s.apiTokens) + app, true
		}
	}
	s.logRefusal(w, r, "export refused", "unknown token")
	writeError(w, http.StatusForbidden, CodeForbiddenToken, "Forbidden", "unknown or revoked token")
	return 0, false
}

// keyApp names the application a rate-limit key belongs to.
func (s *service) keyApp(key int) string {
	if key < len(s.apiTokens) {
		return s.apps[s.apiTokens[key].app].clientID
	}
	return s.apps[key-len(s.apiTokens)].clientID
}

// logRefusal logs a refused login, token or export at DEBUG, as the
// error policy has refusals (CONTRIBUTING.md): a refusal is the client's
// doing, and at a higher level anyone holding the URL could fill the log.
// The entry has the request id the answer carries (also in Caddy's access
// log), never a token, secret or anything else the client sent.
func (s *service) logRefusal(w http.ResponseWriter, r *http.Request, msg, reason string, fields ...zap.Field) {
	s.logger.Debug(msg, append([]zap.Field{
		zap.String("reason", reason),
		zap.String("path", r.URL.Path),
		zap.String("request_id", w.Header().Get("X-Request-Id")),
	}, fields...)...)
}

// layoutOf is the HTML layout of the collection an export path names:
// pages and popups are laid out as the vendor's page and popup exports
// are, anything else as an email.
func layoutOf(path string) render.Layout {
	switch path {
	case PathPageHTML, PathPagePlainText:
		return render.LayoutPage
	case PathPopupHTML, PathPopupPlainText:
		return render.LayoutPopup
	}
	return render.LayoutEmail
}

// renderFailure is a failed export, before it is written.
type renderFailure struct {
	status, code     int
	message, details string
	internal, stack  string // for the log of a 500, never the response
}

// renderSafely decodes and renders body, turning decode errors (and the
// renderer's refusal of a design, a *design.PathError as well) into the
// contract's codes and any panic into a 500, so that no input can take the
// server down.
func (s *service) renderSafely(body []byte, f exportFormat, layout render.Layout) (out *render.Output, failure *renderFailure) {
	defer func() {
		if v := recover(); v != nil {
			out = nil
			failure = &renderFailure{status: http.StatusInternalServerError,
				internal: fmt.Sprintf("panic: %v", v), stack: string(debug.Stack())}
		}
	}()
	d, err := design.DecodeWithLimits(body, s.limits)
	if err != nil {
		return nil, classifyDecodeError(err)
	}
	// The output is the renderer's own memory: the design's tree can go
	// back for the next request's (design.Design.Release).
	defer d.Release()
	lim := s.output
	lim.Layout = layout
	out, err = f.render(d, lim)
	var pathErr *design.PathError
	switch {
	case errors.As(err, &pathErr):
		// The renderer refuses a block it cannot read as Decode refuses
		// a malformed design: the client's fault.
		return nil, classifyDecodeError(err)
	case errors.Is(err, render.ErrOutputTooLarge):
		// Over max_output: as a body over max_body, the design is too
		// large for this service (export.md's 413).
		return nil, &renderFailure{status: http.StatusRequestEntityTooLarge, code: CodeBodyTooLarge,
			message: "Rendered document too large",
			details: fmt.Sprintf("the design renders to more than %d bytes (max_output)", s.output.MaxOutput)}
	case err != nil:
		return nil, &renderFailure{status: http.StatusInternalServerError, internal: err.Error()}
	}
	if out == nil {
		return nil, &renderFailure{status: http.StatusInternalServerError, internal: "renderer returned no output"}
	}
	return out, nil
}

// classifyDecodeError maps design.Decode errors to the contract. An error
// of no known kind is the decoder's fault, hence a 500.
func classifyDecodeError(err error) *renderFailure {
	var pathErr *design.PathError
	switch {
	case errors.As(err, &pathErr):
		return &renderFailure{status: http.StatusBadRequest, code: CodeNotDesign,
			message: "Invalid design", details: pathErr.Path + ": " + pathErr.Msg}
	case errors.Is(err, design.ErrTooLarge):
		return &renderFailure{status: http.StatusRequestEntityTooLarge, code: CodeBodyTooLarge,
			message: "Design too large", details: err.Error()}
	case errors.Is(err, design.ErrNotJSON):
		return &renderFailure{status: http.StatusBadRequest, code: CodeNotJSON,
			message: "Body is not JSON", details: err.Error()}
	}
	return &renderFailure{status: http.StatusInternalServerError, internal: "decode: " + err.Error()}
}

// setWarnings lists the renderer's warnings in X-Design-Warnings, one
// header value each, reduced to printable ASCII (header values cannot
// carry control characters, and warnings quote parts of the design).
func setWarnings(hdr http.Header, warnings []string) {
	for i, warning := range warnings {
		if i == maxWarningHeaders {
			hdr.Add("X-Design-Warnings", fmt.Sprintf("%d more warnings", len(warnings)-i))
			break
		}
		hdr.Add("X-Design-Warnings", headerSafe(warning, maxWarningHeaderSize))
	}
}

// headerSafe keeps printable ASCII of s, other bytes as '?', and cuts at
// max bytes.
func headerSafe(s string, max int) string {
	var sb strings.Builder
	for i := 0; i < len(s) && sb.Len() < max; i++ {
		c := s[i]
		if c < 0x20 || c > 0x7e {
			c = '?'
		}
		sb.WriteByte(c)
	}
	return sb.String()
}

// wrapBody returns {"body":{"<key>":"<body as a JSON string>"}}, written
// directly into dst's memory (grown as needed): it is on every JSON-form
// export.
func wrapBody(dst []byte, key string, body []byte) []byte {
	buf := slices.Grow(dst[:0], len(body)+len(body)/8+len(key)+16)
	buf = append(buf, `{"body":{"`...)
	buf = append(buf, key...)
	buf = append(buf, `":`...)
	// Invalid UTF-8 becomes U+FFFD, as encoding/json has it; the error
	// only says there was some.
	buf, _ = jsontext.AppendQuote(buf, body)
	return append(buf, "}}"...)
}
