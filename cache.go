package designbridge

import (
	"bytes"
	"container/list"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/prometheus/client_golang/prometheus"
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
// are a pure function of the export path, the Accept header, the values
// of the headers forward_headers names and the design, so a repeated
// export can be answered without calling the content service again.
type ExportCache struct {
	// Most bytes the kept answers hold: their buffers, designs and keys
	// (Caddy size syntax in the Caddyfile, e.g. 64MiB). An answer larger
	// than an eighth of it is not kept.
	// Default: 64 MiB.
	MaxSize int64 `json:"max_size,omitempty"`

	// How long an answer is kept. Default: 10m.
	TTL caddy.Duration `json:"ttl,omitempty"`
}

// provisionShared sets up what the exports share: the metrics, and the
// cache when one is configured.
func (b *Bridge) provisionShared(ctx caddy.Context) error {
	b.flight = &flightGroup{calls: map[exportKey]*flightCall{}}
	b.seed = maphash.MakeSeed()
	b.largeBodies = newMemoryBudget(max(b.LargeBodyMemory, 0))
	b.answerMemory = newMemoryBudget(b.AnswerMemory)
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

// cacheablePath reports whether answers to an export path may be kept:
// not those of PDF and image renders (.../pdf, .../image).
func cacheablePath(p string) bool {
	return !strings.HasSuffix(p, "/pdf") && !strings.HasSuffix(p, "/image")
}

// keyHeaders are the request headers an answer may vary by and still be
// kept: Accept is in the key, and the bridge sends every export with the
// same Content-Type and Accept-Encoding. The headers forward_headers names
// are in the key too (Bridge.keyHeaders adds them).
var keyHeaders = map[string]bool{"Accept": true, "Accept-Encoding": true, "Content-Type": true}

// unsharedReason says why an answer may be given only to the request that
// asked for it ("" when it may be kept and shared): its Cache-Control
// says private or no-store (or no-cache: not without asking again), or its
// Vary names a request header outside the key (keyed), which two
// requests of the same key may differ in.
func unsharedReason(h http.Header, keyed map[string]bool) string {
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
			if name = strings.TrimSpace(name); name != "" && !keyed[http.CanonicalHeaderKey(name)] {
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

// exportKey identifies an export by everything its answer depends on: the
// site it came to, the path, the Accept header (acceptKey: it picks the
// answer's form) and the design; an answer that says it depends on more is not kept
// (unsharedReason). The design is in the key as a 64-bit hash only, so
// the cache and the calls in flight also hold the design itself and
// compare it whole before an answer is given for it: two designs of one
// hash are two exports, each answered by its own call.
//
// That makes the hash a matter of speed, not of correctness, so it is
// hash/maphash (AES-based where the CPU has it, about 3.5 µs for a 40 KB
// design, seeded at random per bridge, so collisions cannot be aimed at)
// rather than SHA-256 (about 20 µs for the same design), and the full
// comparison costs one memory compare, only when the hash matches. Where
// nothing is kept the hash covers only the design's length and ends
// (keyOf).
type exportKey struct {
	// site is where the export came to, as the content service is told
	// (siteOf): an answer that writes it into its links is the answer of
	// that site only, as a shared HTTP cache keys by the URL's host.
	site         exportSite
	path, accept string
	headers      string // forward_headers' values (Bridge.forwardedKey)
	sum          uint64
}

// exportSite is the host and scheme an export came to, and those a proxy
// in front of Caddy said it came to (X-Forwarded-Host, -Proto): what
// Caddy's reverse proxy passes on to the content service, before it
// decides whether to trust the proxy.
type exportSite struct {
	host, fwdHost, fwdProto string
	tls                     bool
}

// siteOf is r's exportSite.
func siteOf(r *http.Request) exportSite {
	return exportSite{host: r.Host, tls: r.TLS != nil,
		fwdHost: r.Header.Get("X-Forwarded-Host"), fwdProto: r.Header.Get("X-Forwarded-Proto")}
}

// keyOf is the key of an export of body; whole says that it is to be
// kept (the cache is on for it).
//
// A body that may be kept is hashed whole: the cache holds one answer per
// key, so designs that differ anywhere must have keys of their own. Any
// other body is only shared with identical exports in flight, which
// compare it whole before they join; its key only has to tell bodies
// apart most of the time, so it hashes the length and keySample bytes at
// each end rather than every byte (0.8 µs against 3.5 µs for a 40 KB
// design, a millisecond for 10 MiB). Bodies in flight together that differ only in
// the middle meet in one key, and the comparison sends each to its own
// call.
func keyOf(seed maphash.Seed, path, accept string, body *requestBody, whole bool) (exportKey, error) {
	key := exportKey{path: path, accept: accept}
	size := body.Len()
	if b := body.Bytes(); b != nil && (whole || size <= 2*keySample) {
		key.sum = maphash.Bytes(seed, b)
		return key, nil
	}
	var h maphash.Hash
	h.SetSeed(seed)
	_, _ = h.Write(binary.LittleEndian.AppendUint64(nil, uint64(size)))
	var buf [keySample]byte
	for _, off := range []int64{0, size - keySample} {
		n, err := body.ReadAt(buf[:], off)
		if n < len(buf) {
			return key, fmt.Errorf("reading the body's key at %d: %w", off, err)
		}
		_, _ = h.Write(buf[:])
	}
	key.sum = h.Sum64()
	return key, nil
}

// keySample is what the key of a body that is not kept hashes at each of
// its ends.
const keySample = 4 << 10

// sameBody reports whether two buffered bodies hold the same bytes; a
// body that cannot be read back (closed) is never the same.
func sameBody(a, b *requestBody) bool {
	if a.Len() != b.Len() {
		return false
	}
	if x, y := a.Bytes(), b.Bytes(); x != nil && y != nil {
		return bytes.Equal(x, y)
	}
	ra, rb := a.Reader(), b.Reader()
	bufA, bufB := make([]byte, 32<<10), make([]byte, 32<<10)
	for {
		n, errA := io.ReadFull(ra, bufA)
		m, errB := io.ReadFull(rb, bufB)
		if n != m || !bytes.Equal(bufA[:n], bufB[:m]) {
			return false
		}
		if errA == io.EOF || errA == io.ErrUnexpectedEOF {
			return errB == errA
		}
		if errA != nil || errB != nil {
			return false
		}
	}
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
	entries map[exportKey]*list.Element
}

type cacheEntry struct {
	key     exportKey
	design  []byte // the request body the answer is for, compared whole
	answer  *exportAnswer
	size    int64
	expires time.Time
}

// newExportCache returns an empty cache whose entries expire by now.
func newExportCache(max int64, ttl time.Duration, held prometheus.Gauge, now func() time.Time) *exportCache {
	return &exportCache{
		max: max, ttl: ttl, now: now, held: held,
		order:   list.New(),
		entries: map[exportKey]*list.Element{},
	}
}

// get returns the answer kept for key and design, if it has not expired.
func (c *exportCache) get(key exportKey, design []byte) (*exportAnswer, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok {
		return nil, false
	}
	e := el.Value.(*cacheEntry)
	if !bytes.Equal(e.design, design) {
		return nil, false // another design of the same hash
	}
	if !c.now().Before(e.expires) {
		c.remove(el)
		return nil, false
	}
	c.order.MoveToFront(el)
	return e.answer, true
}

// put keeps a 200 answer to design (which then must not change) no larger,
// with the design, than an eighth of the bound, making room by dropping
// the least recently used entries. It reports whether the answer was kept.
// An entry of the same key is replaced, whatever its design.
func (c *exportCache) put(key exportKey, design []byte, a *exportAnswer) bool {
	if a.status != http.StatusOK {
		return false
	}
	size := a.size() + int64(cap(design)+len(key.path)+len(key.accept)+len(key.headers))
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
	// The cache's reference is never given back: a hit may be writing the
	// answer at any time, so an evicted answer is left to the collector
	// rather than reused.
	a.retain()
	c.entries[key] = c.order.PushFront(&cacheEntry{key: key, design: design, answer: a, size: size, expires: c.now().Add(c.ttl)})
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
