package designbridge

// Exports: forwarding a design to the content service, and the answer
// recorded whole so that it can be kept or shared.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/designbridge/caddy-designbridge/internal/contract"
)

// export forwards the request body unchanged to the content service.
func (b *Bridge) export(w http.ResponseWriter, r *http.Request, deadline time.Time) error {
	if b.bearer == "" {
		return b.fail(w, r, http.StatusInternalServerError, contract.CodeNotConfigured, "Content service token not configured",
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
	// exportShared closes it once done with it; this Close (a second does
	// nothing) is for a panic on the way, after which the body would hold
	// its memory and its room in large_body_memory for good.
	defer body.Close()
	return b.exportShared(w, r, body, deadline)
}

// forward sends an export's buffered body to the content service and
// hands its answer to w.
func (b *Bridge) forward(w http.ResponseWriter, r *http.Request, body *requestBody, deadline time.Time) error {
	ctx, cancel := context.WithDeadline(r.Context(), deadline)
	defer cancel()
	out := r.Clone(context.WithValue(ctx, replayBodyKey{}, body))
	// upstreamTransport sends readers of its own; this one is closed here,
	// so that nothing reads the body through it once this call is done.
	out.Body = body.openReader()
	defer out.Body.Close()
	out.ContentLength = body.Len()
	out.TransferEncoding = nil
	// Of the browser's headers only those the export needs (headers.go);
	// none of its trailers, which Caddy's reverse proxy would pass on
	// (net/http sends none with a body of known length, which is not a
	// rule this handler should rest on).
	out.Header = b.exportHeader(r.Header)
	out.Trailer = nil

	watch := newWatcher(w, b.secrets)
	if b.UnwrapHTML {
		watch.unwrapLimit, watch.budget = b.MaxBody, b.answerMemory
	}
	// A held-back answer is given back however forward ends, a panic
	// (runCall's 500) included: its room in answer_memory would otherwise
	// be gone for the config's life.
	defer watch.dropHeld()
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

// exportShared answers an export from the cache, or joins an identical
// export already in flight, or makes the upstream call itself and shares
// its answer with those that joined.
//
// It owns body: the call that sends it closes it when done (a reader
// net/http still holds keeps it until closed, see requestBody); otherwise
// it is closed here.
func (b *Bridge) exportShared(w http.ResponseWriter, r *http.Request, body *requestBody, deadline time.Time) error {
	// A large body (past spoolAbove) is shared with identical exports in
	// flight but not kept: the cache would hold the whole design for the
	// comparison.
	design := body.Bytes()
	// PDF and image answers are never kept: a PDF link expires, an image
	// is large, and neither is worth a second render's saving.
	cache := b.cache
	if !cacheablePath(r.URL.Path) || design == nil {
		cache = nil
	}
	key, err := keyOf(b.seed, r.URL.Path, acceptKey(r.Header.Values("Accept")), body, cache != nil)
	if err != nil {
		body.Close()
		return b.internalError(w, r, fmt.Errorf("reading the buffered body: %w", err))
	}
	key.headers = b.forwardedKey(r.Header)
	key.site = siteOf(r)
	bypass := cache != nil && hasNoCache(r.Header.Get("Cache-Control"))
	if cache != nil && !bypass {
		if a, ok := cache.get(key, design); ok {
			body.Close()
			b.metrics.cache.WithLabelValues("hit").Inc()
			a.writeTo(w, "design_bridge; hit")
			return nil
		}
	}
	call := func(ctx context.Context) (*exportAnswer, error) {
		defer body.Close()
		var masked atomic.Bool
		r := r.WithContext(context.WithValue(ctx, maskedKey{}, &masked))
		rec := &answerRecorder{header: http.Header{}, budget: b.answerMemory}
		// After a panic (runCall answers it with a 500) what was recorded
		// is given back: its buffer, and its room in answer_memory, which
		// each such panic would otherwise take for the config's life.
		var a *exportAnswer
		returned := false
		defer func() {
			switch {
			case returned:
			case a != nil:
				a.release()
			default:
				rec.reset()
			}
		}()
		start := time.Now()
		err := b.forward(rec, r, body, deadline)
		b.metrics.upstreams.WithLabelValues(r.URL.Path).Observe(time.Since(start).Seconds())
		// A held-back answer (unwrap_html) written past the bound, or
		// past answer_memory's room.
		if rec.overflow || rec.busy {
			overflow := rec.overflow
			rec.reset()
			rec = &answerRecorder{header: http.Header{}, own: true}
			if overflow {
				err = b.answerTooLarge(rec, r, maxSharedAnswer)
			} else {
				err = b.answerBusy(rec, r)
			}
		}
		a = rec.answer(b.keyHeaders)
		// What the page decodes is masked too (an escaped secret in a
		// JSON string); the answer is whole here, so its length can change.
		body, changed := maskJSONStrings(a.body, b.secrets)
		if changed {
			a.body = body
			b.logger.Warn("masked a secret written with JSON escapes in the content service's answer", zap.String("path", r.URL.Path))
		}
		if changed || masked.Load() {
			dropDigests(a.header)
			dropDigests(a.trailer)
		}
		if err == nil && a.status != 0 && !rec.own {
			b.metrics.exports.WithLabelValues(r.URL.Path, strconv.Itoa(a.status)).Inc()
			if cache != nil && a.unshared == "" {
				// A fresh answer, bypass or not. The design is copied:
				// its buffer goes back to the pool with the body.
				if cache.put(key, bytes.Clone(design), a) {
					a.leaveBudget() // counted in the cache's max_size now
				}
			}
		}
		returned = true
		return a, err
	}
	a, err, joined := b.flight.do(r.Context(), key, body, call)
	if joined && err == nil && a.unshared != "" {
		// The answer was for the request that made the call alone (it
		// varies by more than the key, or is private): ask for ours.
		a.release()
		a, err = runCall(r.Context(), call)
		joined = false
	}
	if a != nil {
		defer a.release() // written (or not) by the time this returns
	}
	if joined {
		body.Close() // the call that answered sent another request's copy
	}
	unshared := err == nil && a.unshared != ""
	switch {
	case joined:
		b.metrics.cache.WithLabelValues("coalesced").Inc()
	case bypass || (unshared && cache != nil):
		b.metrics.cache.WithLabelValues("bypass").Inc()
	case cache != nil:
		b.metrics.cache.WithLabelValues("miss").Inc()
	}
	if err != nil {
		return err
	}
	if a.status == 0 {
		return nil // the call wrote nothing
	}
	status := ""
	if cache != nil {
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

// answerRecorder holds an export's answer in memory, to be shared. Interim
// (1xx) answers are dropped: they cannot be shared, and the final answer
// carries everything.
type answerRecorder struct {
	header      http.Header
	status      int
	body        []byte // a pooled buffer (exportAnswer.buf once recorded)
	overflow    bool
	finalHeader http.Header
	declared    int // the upstream's Content-Length, when it is one that may be recorded
	// budget is answer_memory: what the buffer holds past spoolAbove
	// (reserved) counts against it; busy: it had no room left.
	budget   *memoryBudget
	reserved int64
	busy     bool
	// own: what was recorded is the bridge's own error answer, not the
	// content service's (not counted as its answer in the metrics).
	own bool
}

// errAnswerBusy: an answer's buffer found no room left in answer_memory.
var errAnswerBusy = errors.New("answer_memory is taken by other answers")

// firstAnswerBuf is the room an answer is first given, or its declared
// length when that is less: the answer to an ordinary design (26 KB)
// fits. A larger answer is grown as its bytes arrive.
const firstAnswerBuf = 32 << 10

func (a *answerRecorder) Header() http.Header { return a.header }

func (a *answerRecorder) WriteHeader(code int) {
	if a.status != 0 || (code >= 100 && code < 200) {
		return
	}
	a.status = code
	a.finalHeader = a.header.Clone()
	// The declared size is no more than a hint: room for it all at once
	// would let an upstream that declares much and sends little (or
	// slowly) take memory for bytes that never come, times every export
	// in flight.
	if n, err := strconv.Atoi(a.header.Get("Content-Length")); err == nil && n > 0 && n <= maxSharedAnswer {
		a.declared = n
	}
	room := firstAnswerBuf
	if a.declared > 0 {
		room = min(a.declared, firstAnswerBuf)
	}
	a.body = getBuf(room)
}

func (a *answerRecorder) Write(p []byte) (int, error) {
	if a.status == 0 {
		a.WriteHeader(http.StatusOK)
	}
	if len(a.body)+len(p) > maxSharedAnswer {
		a.overflow = true
		return 0, errors.New("answer too large to share")
	}
	if len(a.body)+len(p) > cap(a.body) && !a.grow(len(a.body)+len(p)) {
		a.busy = true
		return 0, errAnswerBusy
	}
	a.body = append(a.body, p...)
	return len(p), nil
}

// grow gives the answer room for need bytes, as they arrive: twice its
// room (so that a large answer is copied a few times, not once a write),
// but no more than its declared length once need fits in it, and only
// within answer_memory. The buffer is pooled too, the old one given back.
func (a *answerRecorder) grow(need int) bool {
	size := max(2*cap(a.body), need)
	if a.declared >= need {
		size = min(size, a.declared)
	}
	size = min(size, maxSharedAnswer)
	// Counted as the buffer it gets, rounded up to its size class.
	if !a.budget.cover(&a.reserved, bufRoom(size)) {
		return false
	}
	grown := append(getBuf(size), a.body...)
	putBuf(a.body)
	a.body = grown
	return true
}

// FlushError has nothing to flush: the answer is sent when it is whole.
func (a *answerRecorder) FlushError() error { return nil }

// reset drops what was recorded, so that an error can be recorded in its
// place.
func (a *answerRecorder) reset() {
	a.status = 0
	putBuf(a.body) // nothing has read it yet; WriteHeader takes another
	a.body = nil
	a.finalHeader = nil
	a.overflow = false
	a.declared = 0
	a.busy = false
	a.budget.free(&a.reserved)
}

// answerBusy answers an export whose answer found no room left in
// answer_memory: held by other large answers, which will be done soon.
func (b *Bridge) answerBusy(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Retry-After", "1")
	return b.fail(w, r, http.StatusServiceUnavailable, contract.CodeBusy, "Too many large answers at once",
		fmt.Sprintf("the answers design_bridge holds for exports in flight took answer_memory (%d bytes); try again", b.AnswerMemory))
}

// answerTooLarge answers a request whose upstream answer passed limit
// bytes: maxSharedAnswer for an export, maxAuthAnswer for LoginV2.
func (b *Bridge) answerTooLarge(w http.ResponseWriter, r *http.Request, limit int64) error {
	return b.fail(w, r, http.StatusBadGateway, contract.CodeBadGateway, "Upstream answer too large",
		fmt.Sprintf("%s answered more than %d bytes", b.upstreamName(r), limit))
}

// answer is what was recorded, to be kept or shared unless it varies by
// a request header outside keyed (unsharedReason).
func (a *answerRecorder) answer(keyed map[string]bool) *exportAnswer {
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
	for _, k := range []string{"Date", "Connection", "Keep-Alive", "Transfer-Encoding", "Content-Length"} {
		h.Del(k)
	}
	// Trailers too: a client may take them as headers.
	for _, hh := range []http.Header{h, trailer} {
		for k := range hh {
			if actsOnOrigin(k) {
				delete(hh, k)
			}
		}
	}
	ans := &exportAnswer{status: a.status, header: h, trailer: trailer, body: a.body, buf: a.body, unshared: unsharedReason(h, keyed), budget: a.budget}
	ans.reserved.Store(a.reserved)
	a.reserved = 0 // the answer's now
	return ans
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

	// buf is the pooled buffer the body was recorded in (body itself, or
	// the masked copy's source). The call that recorded it holds it, and
	// every export it is handed to (flightGroup counts them); the last to
	// let go (release) gives it back. A kept answer is never given back.
	buf   []byte
	holds atomic.Int32 // references besides the call's

	// What buf holds of answer_memory, given back when buf is (or when
	// the cache, which has a bound of its own, keeps the answer).
	budget   *memoryBudget
	reserved atomic.Int64
}

// leaveBudget gives back what the answer holds of answer_memory, once.
func (a *exportAnswer) leaveBudget() {
	if n := a.reserved.Swap(0); n > 0 && a.budget != nil {
		a.budget.give(n)
	}
}

// retain takes a reference to the answer, while another is still held.
func (a *exportAnswer) retain() { a.holds.Add(1) }

// release gives back a reference; after it the answer must not be read.
func (a *exportAnswer) release() {
	if a.holds.Add(-1) == -1 {
		putBuf(a.buf)
		a.leaveBudget()
	}
}

// size is what the answer counts against the cache's bound: the memory
// its body holds (the buffer it was recorded in, which may be larger than
// the body: 32 KiB for an answer of unknown length; and a masked copy
// beside it), its headers and a fixed allowance for the entry's own
// bookkeeping.
func (a *exportAnswer) size() int64 {
	n := int64(cap(a.buf)) + 256
	if !sameMemory(a.body, a.buf) {
		n += int64(cap(a.body))
	}
	for _, h := range []http.Header{a.header, a.trailer} {
		for k, vs := range h {
			n += int64(len(k)) + headerNameCost
			for _, v := range vs {
				n += int64(len(v)) + headerValueCost
			}
		}
	}
	return n
}

// The memory a header takes beside its bytes, measured with many small
// headers (an upstream's thousands of them would otherwise keep some ten
// times max_size in the cache): a name its map slot, value slice and
// string header; a value its string header.
const (
	headerNameCost  = 128
	headerValueCost = 16
)

// sameMemory reports whether x and y reach to the same end of one array:
// the body is the recorded buffer itself, not a masked copy beside it.
func sameMemory(x, y []byte) bool {
	return cap(x) > 0 && cap(y) > 0 && &x[:cap(x)][cap(x)-1] == &y[:cap(y)][cap(y)-1]
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
