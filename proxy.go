package designbridge

// The internal reverse proxies and their transport: where the upstream
// is dialled, the secret added on the way out and scrubbed on the way back.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
	"go.uber.org/zap"

	"github.com/designbridge/caddy-designbridge/internal/retire"
)

// newProxy provisions an internal reverse proxy to target. Caddy's
// reverse proxy does the proxying proper (hop-by-hop headers, streaming,
// flushing, 1xx, trailers, error statuses); upstreamTransport adds the
// secret on the way out and masks it on the way back.
func (b *Bridge) newProxy(ctx caddy.Context, target *url.URL, bearer string, endpoint bool) (*reverseproxy.Handler, error) {
	// Answer headers are held whole, copied and scanned for secrets, per
	// export in flight and outside answer_memory: net/http's default
	// allows 10 MiB of them.
	tcfg := map[string]any{"compression": false, "max_response_header_size": maxAnswerHeader}
	if !endpoint {
		tcfg["write_buffer_size"] = exportWriteBuffer
	}
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
	if ht, ok := mod.(*reverseproxy.HTTPTransport); ok && !endpoint && ht.Transport != nil {
		sendFromChunks(ht.Transport)
	}
	retiring := retire.New(mod.(http.RoundTripper))
	b.retiring = append(b.retiring, retiring)
	t := &upstreamTransport{
		inner:    retiring,
		target:   target,
		bearer:   bearer,
		endpoint: endpoint,
		secrets:  b.secrets,
		folded:   foldSecrets(b.secrets),
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

// exportWriteBuffer is the write buffer of each connection to the content
// service (net/http's default is 4 KiB): an ordinary design and its
// request's headers fit, so that an export is sent in one write, without
// a copy buffer of its own (requestBody.sendReaders). It is held as long
// as the connection, kept alive or not.
const exportWriteBuffer = 64 << 10

// maxAnswerHeader bounds an upstream answer's header (each interim
// answer's too); past it the answer is 502.
const maxAnswerHeader = 64 << 10

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
	folded   []string // secrets in lower case, for headers (foldSecrets)
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
	// Without Accept-Encoding any coding is acceptable (RFC 9110, 12.5.3),
	// and a compressed answer could not be checked for secrets.
	out.Header.Set("Accept-Encoding", "identity")
	if t.bearer != "" {
		out.Header.Set("Authorization", t.bearer)
	}
	out.URL.RawPath = ""
	var wrote func() // the transport is done with one of the body's readers
	if body, ok := req.Context().Value(replayBodyKey{}).(*requestBody); ok {
		// The body is buffered, so net/http may send it again on a new
		// connection when a kept-alive one turns out to be closed by the
		// upstream (a config reload of a content_service in the same
		// Caddy does that). A nil X-Idempotency-Key marks the request as
		// replayable without sending the header.
		out.Body, out.GetBody = http.NoBody, func() (io.ReadCloser, error) { return http.NoBody, nil }
		if body.Len() > 0 {
			// Each reader holds the body until net/http is done with
			// it, which may be after the answer has arrived.
			out.GetBody, wrote = body.sendReaders()
			out.Body, _ = out.GetBody()
		}
		out.ContentLength = body.Len()
		out.Header["X-Idempotency-Key"] = nil
	}
	// The inner transport closes the body even when it fails, but not
	// when it panics (runCall answers that with a 500): the reader would
	// hold the buffered body, and its room in large_body_memory, for good.
	// A second Close does nothing.
	handed := false
	defer func() {
		if !handed && out.Body != nil {
			out.Body.Close()
		}
	}()
	// Interim (1xx) responses are forwarded by Caddy's reverse proxy from
	// its own trace hook, which runs after this one on the same header.
	// net/http bounds the interim answers only of a client that does not
	// look at them; these hooks do, and an upstream could send them
	// without end until timeout, each one read, copied and scanned. Past
	// maxInterim the request is cancelled: an error this hook returns
	// would be dropped (httptrace returns the error of the hook it was
	// composed with, Caddy's). Nothing else cancels it: it ends with the
	// caller's context.
	ctx, stop := context.WithCancelCause(out.Context())
	interim := 0
	out = out.WithContext(httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
			if interim++; interim > maxInterim {
				stop(errUpstreamInterim)
				return errUpstreamInterim
			}
			if t.scrubHeader(http.Header(h)) {
				t.logger.Warn("removed upstream interim response headers holding a secret", zap.Int("status", code))
			}
			return nil
		},
		WroteRequest: func(httptrace.WroteRequestInfo) {
			if wrote != nil {
				wrote()
			}
		},
	}))
	resp, err := t.inner.RoundTrip(out)
	handed = true
	if err != nil {
		if errors.Is(req.Context().Err(), context.DeadlineExceeded) {
			return nil, errUpstreamTimeout
		}
		if cause := context.Cause(ctx); cause == errUpstreamInterim {
			return nil, cause
		}
		// Caddy's reverse proxy logs the error, which may quote the
		// upstream's malformed answer.
		return nil, maskError(err, t.secrets)
	}
	// The bridge never asks to switch protocols; after a 101 the
	// connection would be a tunnel whose bytes no masking reads.
	if resp.StatusCode == http.StatusSwitchingProtocols {
		resp.Body.Close()
		return nil, errUpstreamSwitched
	}
	// Masking reads the bytes as sent: in a compressed answer a secret
	// would pass unseen, and the browser would decompress it.
	if encoded(resp.Header) {
		resp.Body.Close()
		ce := strings.Join(resp.Header.Values("Content-Encoding"), ", ")
		return nil, maskError(fmt.Errorf("%w (Content-Encoding %q)", errUpstreamEncoded, ce), t.secrets)
	}
	// ServeHTTP has set its own (one header line, not two).
	resp.Header.Del("X-Content-Type-Options")
	// Trailer holds the announced trailer names, which Caddy announces to
	// the client before the body.
	if inHeader, inTrailer := t.scrubHeader(resp.Header), t.scrubHeader(resp.Trailer); inHeader || inTrailer {
		t.logger.Warn("removed upstream response headers holding a secret")
	}
	// Caddy's reverse proxy makes the reason phrase the request's
	// {http.reverse_proxy.status_text}, which a site may log or send.
	if containsSecretFold(resp.Status, t.folded) {
		resp.Status = strings.TrimSpace(strconv.Itoa(resp.StatusCode) + " " + http.StatusText(resp.StatusCode))
		t.logger.Warn("replaced an upstream status text holding a secret", zap.Int("status", resp.StatusCode))
	}
	if maskable(t.secrets) && resp.Body != nil && resp.Body != http.NoBody {
		masked, _ := req.Context().Value(maskedKey{}).(*atomic.Bool)
		resp.Body = &maskingReader{src: resp.Body, secrets: t.secrets, masked: masked, onEOF: func() { t.scrubHeader(resp.Trailer) }}
	}
	return resp, nil
}

// maskedKey is the context key of an *atomic.Bool that the transport
// sets when it masked a secret in the answer's body.
type maskedKey struct{}

// scrubHeader removes every header whose name or value holds a secret,
// compared without regard to case (net/http changes the case of names).
// It reports whether it removed any.
func (t *upstreamTransport) scrubHeader(h http.Header) bool {
	removed := false
	for name, values := range h {
		if containsSecretFold(name, t.folded) {
			delete(h, name)
			removed = true
			continue
		}
		for _, v := range values {
			if containsSecretFold(v, t.folded) {
				delete(h, name)
				removed = true
				break
			}
		}
	}
	return removed
}

// encoded reports whether an answer names a content coding other than
// identity on any of its Content-Encoding lines: a client applies the
// codings of every line (curl decodes "identity" and then "gzip"), not
// only those of the first.
func encoded(h http.Header) bool {
	for _, line := range h.Values("Content-Encoding") {
		for _, coding := range strings.Split(line, ",") {
			if coding = strings.TrimSpace(coding); coding != "" && !strings.EqualFold(coding, "identity") {
				return true
			}
		}
	}
	return false
}

// errUpstreamEncoded: the upstream answered in a content coding, which
// the bridge asked it not to use and cannot check for secrets.
var errUpstreamEncoded = errors.New("upstream answered with a content coding")

// errUpstreamSwitched: the upstream answered 101 Switching Protocols.
// maxInterim bounds the interim (1xx) answers to one request; a
// content service sends one or two (103 Early Hints) if any.
const maxInterim = 16

var errUpstreamInterim = fmt.Errorf("upstream sent more than %d interim (1xx) responses", maxInterim)

var errUpstreamSwitched = errors.New("upstream switched protocols (101), which the bridge never asks for")

// errUpstreamTimeout is a net.Error with Timeout() true, which Caddy's
// reverse proxy maps to 504.
var errUpstreamTimeout error = timeoutError{}

type timeoutError struct{}

func (timeoutError) Error() string { return "upstream did not answer in time" }

func (timeoutError) Timeout() bool { return true }

func (timeoutError) Temporary() bool { return false }

// secureTransport reports whether secrets may be sent to u: over HTTPS, or
// to a loopback host where plain HTTP never leaves the machine. Loopback
// is a literal loopback address or the name localhost itself, which
// dialAddress dials as 127.0.0.1 without asking a resolver; any other name
// (app.localhost included) is resolved, and a resolver that answers with
// another host would receive the secret in clear.
func secureTransport(u *url.URL) bool {
	if u.Scheme == "https" {
		return true
	}
	host := u.Hostname()
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// dialAddress is the host:port the proxy to u dials: localhost is
// 127.0.0.1, never looked up (a resolver, or a hosts file, could send it
// elsewhere); every other host as written. An upstream that listens only
// on ::1 is written http://[::1]:port.
func dialAddress(u *url.URL) string {
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// Interface guards
var (
	_ http.RoundTripper = (*upstreamTransport)(nil)
	_ net.Error         = timeoutError{}
)

// sendFromChunks makes the connections t dials send a large body held in
// memory straight from its chunks (bodyConn).
func sendFromChunks(t *http.Transport) {
	dial := t.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return bodyConn{c}, nil
	}
}

// bodyConn is a connection to the content service that writes a large
// body held in memory from its chunks, a write each (bodyReader.sendTo).
// net/http hands a request's body, limited to its length, to the
// connection's ReadFrom, which copies any reader but a file or a socket
// through a 32 KiB buffer, a write each: for a 10 MiB body that copy
// costs a fifth of the export's CPU.
type bodyConn struct{ net.Conn }

func (c bodyConn) ReadFrom(r io.Reader) (int64, error) {
	if lr, ok := r.(*io.LimitedReader); ok {
		if br, ok := lr.R.(*bodyReader); ok {
			n, sent, err := br.sendTo(c.Conn, lr.N)
			lr.N -= n
			if sent {
				return n, err
			}
		}
	}
	return io.Copy(c.Conn, r) // the connection's own ReadFrom
}
