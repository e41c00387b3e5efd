package designbridge

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/designbridge/caddy-designbridge/internal/confvalue"
	"github.com/designbridge/caddy-designbridge/internal/jsonerror"
)

// Cache defaults, stated in the Caddyfile documentation.
const (
	DefaultCacheSize = 64 << 20
	DefaultCacheTTL  = 10 * time.Minute
)

// maxSharedAnswer bounds an answer held to be shared with the exports
// that waited for it.
const maxSharedAnswer = 64 << 20

// ExportCache configures design_bridge's export cache: answers to exports
// are a pure function of the export path, the Accept header and the
// design, so a repeated export can be answered without calling the
// content service again.
type ExportCache struct {
	// Most bytes of answers kept (Caddy size syntax in the Caddyfile, e.g.
	// 64MiB). An answer larger than an eighth of it is not kept.
	// Default: 64 MiB.
	MaxSize int64 `json:"max_size,omitempty"`

	// How long an answer is kept. Default: 10m.
	TTL caddy.Duration `json:"ttl,omitempty"`
}

// parseCacheCaddyfile reads the cache subdirective:
//
//	cache [<max_size> [<ttl>]]
//	cache {
//		max_size <size>
//		ttl      <duration>
//	}
func parseCacheCaddyfile(d *caddyfile.Dispenser) (*ExportCache, error) {
	c := new(ExportCache)
	set := func(name, v string) error {
		switch name {
		case "max_size":
			size, err := confvalue.Size(v)
			if err != nil {
				return d.Errf("cache max_size: %v", err)
			}
			c.MaxSize = size
		case "ttl":
			dur, err := caddy.ParseDuration(v)
			if err != nil || dur <= 0 {
				return d.Errf("cache ttl: %q is not a positive duration", v)
			}
			c.TTL = caddy.Duration(dur)
		default:
			return d.Errf("cache: unrecognized subdirective %q", name)
		}
		return nil
	}
	args := d.RemainingArgs()
	if len(args) > 2 {
		return nil, d.ArgErr()
	}
	for i, name := range []string{"max_size", "ttl"}[:len(args)] {
		if err := set(name, args[i]); err != nil {
			return nil, err
		}
	}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		name := d.Val()
		var v string
		if !d.AllArgs(&v) {
			return nil, d.ArgErr()
		}
		if err := set(name, v); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// provisionShared sets up what the exports share: the metrics, and the
// cache when one is configured.
func (b *Bridge) provisionShared(ctx caddy.Context) error {
	b.flight = &flightGroup{calls: map[[sha256.Size]byte]*flightCall{}}
	var err error
	if b.metrics, err = newBridgeMetrics(ctx.GetMetricsRegistry()); err != nil {
		return fmt.Errorf("metrics: %v", err)
	}
	if b.Cache == nil {
		return nil
	}
	if b.Cache.MaxSize == 0 {
		b.Cache.MaxSize = DefaultCacheSize
	}
	if b.Cache.TTL == 0 {
		b.Cache.TTL = caddy.Duration(DefaultCacheTTL)
	}
	b.cache = newExportCache(b.Cache.MaxSize, time.Duration(b.Cache.TTL), b.metrics.held, time.Now)
	return nil
}

// exportShared answers an export from the cache, or joins an identical
// export already in flight, or makes the upstream call itself and shares
// its answer with those that joined.
//
// It owns body: the call that sends it closes it when done (the call may
// outlive this request, see flightGroup); otherwise it is closed here.
func (b *Bridge) exportShared(w http.ResponseWriter, r *http.Request, body *requestBody, deadline time.Time) error {
	key, err := exportKey(r.URL.Path, acceptKey(r.Header.Values("Accept")), body)
	if err != nil {
		body.Close()
		return caddyhttp.Error(http.StatusInternalServerError, fmt.Errorf("design_bridge: reading the buffered body: %v", err))
	}
	bypass := b.cache != nil && hasNoCache(r.Header.Get("Cache-Control"))
	if b.cache != nil && !bypass {
		if a, ok := b.cache.get(key); ok {
			body.Close()
			b.metrics.cache.WithLabelValues("hit").Inc()
			a.writeTo(w, "design_bridge; hit")
			return nil
		}
	}
	call := func(ctx context.Context) (*exportAnswer, error) {
		defer body.Close()
		r := r.WithContext(ctx)
		rec := &answerRecorder{header: http.Header{}}
		start := time.Now()
		err := b.forward(rec, r, body, deadline)
		b.metrics.upstreams.WithLabelValues(r.URL.Path).Observe(time.Since(start).Seconds())
		if rec.overflow { // a held-back answer, unwrapped past the bound
			rec = &answerRecorder{header: http.Header{}}
			err = b.answerTooLarge(rec, r)
		}
		a := rec.answer()
		// What the page decodes is masked too (an escaped secret in a
		// JSON string); the answer is whole here, so its length can change.
		if body, changed := maskJSONStrings(a.body, b.secrets); changed {
			a.body = body
			a.header.Del("ETag")
			b.logger.Warn("masked a secret written with JSON escapes in the content service's answer", zap.String("path", r.URL.Path))
		}
		if err == nil && a.status != 0 {
			b.metrics.exports.WithLabelValues(r.URL.Path, strconv.Itoa(a.status)).Inc()
			if b.cache != nil && a.unshared == "" {
				b.cache.put(key, a) // a fresh answer, bypass or not
			}
		}
		return a, err
	}
	a, err, joined := b.flight.do(r.Context(), key, call)
	if joined && err == nil && a.unshared != "" {
		// The answer was for the request that made the call alone (it
		// varies by more than the key, or is private): ask for ours.
		a, err = runCall(r.Context(), call)
		joined = false
	}
	if joined {
		body.Close() // the call that answered sent another request's copy
	}
	unshared := err == nil && a.unshared != ""
	switch {
	case joined:
		b.metrics.cache.WithLabelValues("coalesced").Inc()
	case bypass || (unshared && b.cache != nil):
		b.metrics.cache.WithLabelValues("bypass").Inc()
	case b.cache != nil:
		b.metrics.cache.WithLabelValues("miss").Inc()
	}
	if err != nil {
		if joined {
			jsonerror.Adopt(r, err) // the body handle_errors sees was set on the first request
		}
		return err
	}
	if a.status == 0 {
		return nil // the call wrote nothing
	}
	status := ""
	if b.cache != nil {
		status = "design_bridge; fwd=miss"
		switch {
		case bypass:
			status = "design_bridge; fwd=bypass"
		case unshared:
			status = "design_bridge; fwd=bypass; stored=false; detail=" + a.unshared
		}
	}
	a.writeTo(w, status)
	return nil
}

// runCall runs fn as net/http runs a handler: a panic fails the call with
// a 500, its stack in the error (which Caddy logs), instead of ending the
// process, since no net/http recover stands above the call's goroutine.
func runCall(ctx context.Context, fn func(context.Context) (*exportAnswer, error)) (a *exportAnswer, err error) {
	defer func() {
		if v := recover(); v != nil {
			a, err = nil, caddyhttp.Error(http.StatusInternalServerError,
				fmt.Errorf("design_bridge: panic in a shared export: %v\n%s", v, debug.Stack()))
		}
	}()
	return fn(ctx)
}

// flightGroup runs one upstream call for identical exports that arrive
// while it is in flight. Unlike x/sync/singleflight it counts who waits:
// the call is cancelled only when every client waiting for it has gone,
// so one client going away never costs the others their answer.
type flightGroup struct {
	mu    sync.Mutex
	calls map[[sha256.Size]byte]*flightCall
}

type flightCall struct {
	done    chan struct{}
	answer  *exportAnswer
	err     error
	waiters int
	cancel  context.CancelFunc
}

// do returns the answer of the call for key, starting it with fn when
// none is in flight; joined reports that another export started it. When
// ctx ends first, do returns 499 (the client went away).
func (g *flightGroup) do(ctx context.Context, key [sha256.Size]byte, fn func(context.Context) (*exportAnswer, error)) (a *exportAnswer, err error, joined bool) {
	g.mu.Lock()
	c, joined := g.calls[key]
	if joined {
		c.waiters++
	} else {
		// The call's context keeps the first request's values (request
		// id, replacer, logger) but not its cancellation.
		callCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		c = &flightCall{done: make(chan struct{}), waiters: 1, cancel: cancel}
		g.calls[key] = c
		// The call runs apart from every waiter; fn is bounded by timeout.
		go func() {
			defer cancel()
			c.answer, c.err = runCall(callCtx, fn)
			g.mu.Lock()
			if g.calls[key] == c {
				delete(g.calls, key)
			}
			g.mu.Unlock()
			close(c.done)
		}()
	}
	g.mu.Unlock()
	select {
	case <-c.done:
		return c.answer, c.err, joined
	case <-ctx.Done():
		g.mu.Lock()
		c.waiters--
		if c.waiters == 0 {
			// Nobody wants this answer any more; an export arriving now
			// starts a call of its own.
			c.cancel()
			if g.calls[key] == c {
				delete(g.calls, key)
			}
		}
		g.mu.Unlock()
		return nil, caddyhttp.Error(499, ctx.Err()), joined
	}
}

// hasNoCache reports whether a request's Cache-Control asks for a fresh
// answer (no-cache, or no-store).
func hasNoCache(cc string) bool {
	for _, d := range strings.Split(cc, ",") {
		d = strings.ToLower(strings.TrimSpace(d))
		if d == "no-cache" || d == "no-store" || strings.HasPrefix(d, "no-cache=") {
			return true
		}
	}
	return false
}

// answerRecorder holds an export's answer in memory, to be shared. Interim
// (1xx) answers are dropped: they cannot be shared, and the final answer
// carries everything.
type answerRecorder struct {
	header      http.Header
	status      int
	body        bytes.Buffer
	overflow    bool
	finalHeader http.Header
}

func (a *answerRecorder) Header() http.Header { return a.header }

func (a *answerRecorder) WriteHeader(code int) {
	if a.status != 0 || (code >= 100 && code < 200) {
		return
	}
	a.status = code
	a.finalHeader = a.header.Clone()
}

func (a *answerRecorder) Write(p []byte) (int, error) {
	if a.status == 0 {
		a.WriteHeader(http.StatusOK)
	}
	if a.body.Len()+len(p) > maxSharedAnswer {
		a.overflow = true
		return 0, errors.New("answer too large to share")
	}
	return a.body.Write(p)
}

// FlushError has nothing to flush: the answer is sent when it is whole.
func (a *answerRecorder) FlushError() error { return nil }

// reset drops what was recorded, so that an error can be recorded in its
// place.
func (a *answerRecorder) reset() {
	a.status = 0
	a.body = bytes.Buffer{}
	a.finalHeader = nil
	a.overflow = false
}

// answerTooLarge answers an export whose answer passed maxSharedAnswer.
func (b *Bridge) answerTooLarge(w http.ResponseWriter, r *http.Request) error {
	return b.fail(w, r, http.StatusBadGateway, codeBadGateway, "Upstream answer too large",
		fmt.Sprintf("%s answered more than %d bytes", b.upstreamName(r), maxSharedAnswer))
}

func (a *answerRecorder) answer() *exportAnswer {
	h := a.header.Clone()
	// Trailers: values of the names the Trailer header announced, and
	// names set with http.TrailerPrefix, both set once the body is written.
	trailer := http.Header{}
	for _, list := range h.Values("Trailer") {
		for _, name := range strings.Split(list, ",") {
			name = http.CanonicalHeaderKey(strings.TrimSpace(name))
			if vs, ok := a.header[name]; ok && !slices.Equal(vs, a.finalHeader[name]) {
				trailer[name] = vs
				h.Del(name)
			}
		}
	}
	h.Del("Trailer")
	for k, vs := range a.header {
		if name, ok := strings.CutPrefix(k, http.TrailerPrefix); ok {
			trailer[http.CanonicalHeaderKey(name)] = vs
			h.Del(k)
		}
	}
	// Per-response headers are the server's to set anew for each client.
	for _, k := range []string{"Date", "Set-Cookie", "Connection", "Keep-Alive", "Transfer-Encoding", "Content-Length"} {
		h.Del(k)
	}
	return &exportAnswer{status: a.status, header: h, trailer: trailer, body: a.body.Bytes(), unshared: unsharedReason(h)}
}

// keyHeaders are the request headers an answer may vary by and still be
// kept: Accept is in the key, and the bridge sends every export with the
// same Content-Type and no Accept-Encoding.
var keyHeaders = map[string]bool{"Accept": true, "Accept-Encoding": true, "Content-Type": true}

// unsharedReason says why an answer may be given only to the request that
// asked for it ("" when it may be kept and shared): its Cache-Control
// says private or no-store (or no-cache: not without asking again), or its
// Vary names a request header outside the key, which two requests of the
// same key may differ in.
func unsharedReason(h http.Header) string {
	for _, line := range h.Values("Cache-Control") {
		for _, d := range strings.Split(line, ",") {
			name, _, _ := strings.Cut(strings.TrimSpace(d), "=")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "private", "no-store", "no-cache":
				return "cache-control"
			}
		}
	}
	for _, line := range h.Values("Vary") {
		for _, name := range strings.Split(line, ",") {
			if name = strings.TrimSpace(name); name != "" && !keyHeaders[http.CanonicalHeaderKey(name)] {
				return "vary"
			}
		}
	}
	return ""
}

// acceptKey is the Accept part of the key: every Accept line, as the
// content service reads them all, with the list's items trimmed and
// joined, so that one line "a, b" and two lines "a" and "b" (the same
// header to HTTP) are one key, and a second line is never ignored.
func acceptKey(lines []string) string {
	var items []string
	for _, line := range lines {
		for _, item := range strings.Split(line, ",") {
			if item = strings.TrimSpace(item); item != "" {
				items = append(items, item)
			}
		}
	}
	return strings.Join(items, ",")
}

// exportAnswer is an export's answer as the client was sent it: after the
// secrets were masked and the headers scrubbed, so that what is kept or
// shared is never more than one client already saw.
type exportAnswer struct {
	status   int
	header   http.Header
	trailer  http.Header
	body     []byte
	unshared string // why it is neither kept nor shared; "" when it may be
}

// size is what the answer counts against the cache's bound: its body, its
// headers and a fixed allowance for the entry's own bookkeeping.
func (a *exportAnswer) size() int64 {
	n := int64(len(a.body)) + 256
	for _, h := range []http.Header{a.header, a.trailer} {
		for k, vs := range h {
			for _, v := range vs {
				n += int64(len(k) + len(v) + 4)
			}
		}
	}
	return n
}

// writeTo sends the answer with a Cache-Status header (RFC 9211) saying
// what the cache did. Headers already set on w (the bridge's own, such as
// its sandbox policy) stay, beside the answer's, as a proxy adds them.
func (a *exportAnswer) writeTo(w http.ResponseWriter, cacheStatus string) {
	h := w.Header()
	for k, vs := range a.header {
		for _, v := range vs {
			if !slices.Contains(h[k], v) {
				h[k] = append(h[k], v)
			}
		}
	}
	if cacheStatus != "" {
		h.Set("Cache-Status", cacheStatus)
	}
	if len(a.trailer) == 0 {
		h.Set("Content-Length", strconv.Itoa(len(a.body)))
	} else {
		for k := range a.trailer {
			h.Add("Trailer", k)
		}
	}
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
	for k, vs := range a.trailer {
		h[k] = append([]string(nil), vs...)
	}
}

// exportKey identifies an export by everything its answer depends on: the
// path, the Accept header (acceptKey: it picks the answer's form) and the
// body; an answer that says it depends on more is not kept
// (unsharedReason). Each
// part is length-prefixed so that no two different triples hash alike.
func exportKey(path, accept string, body *requestBody) (key [sha256.Size]byte, err error) {
	h := sha256.New()
	var n [8]byte
	for _, part := range []string{path, accept} {
		binary.BigEndian.PutUint64(n[:], uint64(len(part)))
		h.Write(n[:])
		io.WriteString(h, part)
	}
	binary.BigEndian.PutUint64(n[:], uint64(body.Len()))
	h.Write(n[:])
	if _, err := io.Copy(h, body.Reader()); err != nil {
		return key, err
	}
	h.Sum(key[:0])
	return key, nil
}

// exportCache keeps 200 answers of exports in memory, least recently used
// first out, each for a time to live. The bytes it holds never exceed max.
type exportCache struct {
	max  int64
	ttl  time.Duration
	now  func() time.Time // time.Now; a test's clock
	held prometheus.Gauge // shared by the bridges of one config: added to, never set

	mu      sync.Mutex
	bytes   int64
	order   *list.List // of *cacheEntry, most recently used in front
	entries map[[sha256.Size]byte]*list.Element
}

type cacheEntry struct {
	key     [sha256.Size]byte
	answer  *exportAnswer
	size    int64
	expires time.Time
}

// newExportCache returns an empty cache whose entries expire by now.
func newExportCache(max int64, ttl time.Duration, held prometheus.Gauge, now func() time.Time) *exportCache {
	return &exportCache{
		max: max, ttl: ttl, now: now, held: held,
		order:   list.New(),
		entries: map[[sha256.Size]byte]*list.Element{},
	}
}

// get returns the answer kept for key, if it has not expired.
func (c *exportCache) get(key [sha256.Size]byte) (*exportAnswer, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if !c.now().Before(e.expires) {
		c.remove(el)
		return nil, false
	}
	c.order.MoveToFront(el)
	return e.answer, true
}

// put keeps a 200 answer no larger than an eighth of the bound, making
// room by dropping the least recently used entries. It reports whether
// the answer was kept.
func (c *exportCache) put(key [sha256.Size]byte, a *exportAnswer) bool {
	if a.status != http.StatusOK {
		return false
	}
	size := a.size()
	if size > c.max/8 {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.entries[key]; ok {
		c.remove(el)
	}
	for c.bytes+size > c.max {
		c.remove(c.order.Back())
	}
	c.entries[key] = c.order.PushFront(&cacheEntry{key: key, answer: a, size: size, expires: c.now().Add(c.ttl)})
	c.bytes += size
	c.held.Add(float64(size))
	return true
}

// remove drops one entry; c.mu is held.
func (c *exportCache) remove(el *list.Element) {
	e := c.order.Remove(el).(*cacheEntry)
	delete(c.entries, e.key)
	c.bytes -= e.size
	c.held.Sub(float64(e.size))
}

// clear drops every entry, giving its bytes back to the gauge (Cleanup).
func (c *exportCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.order.Len() > 0 {
		c.remove(c.order.Back())
	}
}

// heldBytes is the bytes the cache counts as held.
func (c *exportCache) heldBytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bytes
}

// bridgeMetrics are design_bridge's collectors in Caddy's metrics registry
// (the admin endpoint's /metrics). The registry belongs to the loaded
// config, so a reload starts them afresh; the bridges of one config share
// them.
type bridgeMetrics struct {
	exports   *prometheus.CounterVec   // by path and upstream status
	cache     *prometheus.CounterVec   // by result: hit, miss, bypass, coalesced
	held      prometheus.Gauge         // bytes the caches hold
	upstreams *prometheus.HistogramVec // upstream time by path
}

func newBridgeMetrics(reg prometheus.Registerer) (*bridgeMetrics, error) {
	const ns, sub = "caddy", "design_bridge"
	m := &bridgeMetrics{
		exports: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "exports_total",
			Help: "Exports answered by the content service, by export path and upstream status.",
		}, []string{"path", "status"}),
		cache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "cache_requests_total",
			Help: "Exports by what the cache and coalescing did: hit, miss, bypass, or coalesced (waited for an identical export in flight).",
		}, []string{"result"}),
		held: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Subsystem: sub, Name: "cache_bytes",
			Help: "Bytes held by the export caches.",
		}),
		upstreams: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Subsystem: sub, Name: "upstream_duration_seconds",
			Help:    "Time the content service took to answer an export, by export path.",
			Buckets: prometheus.DefBuckets,
		}, []string{"path"}),
	}
	var err error
	if m.exports, err = registerOnce(reg, m.exports); err != nil {
		return nil, err
	}
	if m.cache, err = registerOnce(reg, m.cache); err != nil {
		return nil, err
	}
	if m.held, err = registerOnce(reg, m.held); err != nil {
		return nil, err
	}
	if m.upstreams, err = registerOnce(reg, m.upstreams); err != nil {
		return nil, err
	}
	return m, nil
}

// registerOnce registers c, or returns the collector of the same name
// another bridge of this config registered first.
func registerOnce[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	err := reg.Register(c)
	var dup prometheus.AlreadyRegisteredError
	if errors.As(err, &dup) {
		if existing, ok := dup.ExistingCollector.(C); ok {
			return existing, nil
		}
	}
	return c, err
}
