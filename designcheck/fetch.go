package designcheck

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/designbridge/caddy-designbridge/internal/retire"
	"github.com/designbridge/caddy-designbridge/internal/safefetch"
)

// HTTPWeigher weighs images over HTTP: a HEAD request's Content-Length,
// else the bytes a GET delivers, up to MaxSize. It never connects to a
// private, loopback or link-local address unless its Policy allows it, and it
// remembers answers for a while (the same images come back check after
// check).
type HTTPWeigher struct {
	client    *http.Client
	transport *retire.Transport
	maxSize   int64
	ttl       time.Duration
	failTTL   time.Duration
	maxCached int
	slots     *safefetch.Slots

	mu sync.Mutex
	// cache is keyed by the URL's SHA-256: a URL is the request's to
	// choose, up to the body's size, and 4,096 of 1 MiB each were 4 GiB.
	cache map[[sha256.Size]byte]cached
}

type cached struct {
	size    int64
	err     error
	expires time.Time
}

// WeigherConfig configures an HTTPWeigher.
type WeigherConfig struct {
	Timeout   time.Duration    // per image, redirects included
	MaxSize   int64            // bytes counted by a GET before giving up
	Policy    safefetch.Policy // the non-public addresses allowed
	CacheTTL  time.Duration    // how long a weight is remembered (failures: a tenth)
	MaxCached int              // URLs remembered at most
	// Slots bounds the images weighed at once with the other fetches
	// sharing it; an image waits for a slot until its context ends (nil:
	// no bound).
	Slots *safefetch.Slots
}

// NewHTTPWeigher returns a weigher; Close releases its connections.
func NewHTTPWeigher(cfg WeigherConfig) *HTTPWeigher {
	client, tr := safefetch.NewClient(cfg.Timeout, cfg.Policy)
	return &HTTPWeigher{
		client: client, transport: tr, maxSize: cfg.MaxSize,
		ttl: cfg.CacheTTL, failTTL: cfg.CacheTTL / 10, maxCached: cfg.MaxCached, slots: cfg.Slots,
		cache: map[[sha256.Size]byte]cached{},
	}
}

// Close retires the weigher's connections (a Caddy module's Cleanup).
func (h *HTTPWeigher) Close() { h.transport.Retire() }

// Weigh implements Weigher.
func (h *HTTPWeigher) Weigh(ctx context.Context, src string) (int64, error) {
	now := time.Now()
	key := sha256.Sum256([]byte(src))
	h.mu.Lock()
	if c, ok := h.cache[key]; ok {
		if now.Before(c.expires) {
			h.mu.Unlock()
			return c.size, c.err
		}
		delete(h.cache, key)
	}
	h.mu.Unlock()

	size, err := h.weigh(ctx, src)
	if ctx.Err() != nil || err == errBudgetSpent {
		// The caller gave up, or its requests ran out: nothing was
		// learnt about the image.
		return size, err
	}
	ttl := h.ttl
	if err != nil {
		ttl = h.failTTL
	}
	if h.maxCached <= 0 || ttl <= 0 {
		return size, err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	// Full: one arbitrary entry goes (map order), in constant time; a
	// sweep for expired ones cost the whole map on every insert. Expired
	// entries also go when looked up.
	for k := range h.cache {
		if len(h.cache) < h.maxCached {
			break
		}
		delete(h.cache, k)
	}
	h.cache[key] = cached{size: size, err: err, expires: now.Add(ttl)}
	return size, err
}

// weighError is a reason an image could not be weighed.
type weighError struct{ reason string }

func (e *weighError) Error() string { return e.reason }

func weighErr(format string, args ...any) error {
	return &weighError{reason: fmt.Sprintf(format, args...)}
}

func (h *HTTPWeigher) weigh(ctx context.Context, src string) (int64, error) {
	u, err := url.Parse(src)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return 0, weighErr("not an http or https URL")
	}
	// The slot is taken before the client's per-image timeout starts:
	// the wait is bounded by ctx alone (the check's total_timeout).
	release, err := h.slots.Acquire(ctx)
	if err != nil {
		return 0, describe(err)
	}
	defer release()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, u.String(), nil)
	if err != nil {
		return 0, weighErr("not an http or https URL")
	}
	res, err := h.client.Do(req)
	if err != nil {
		return 0, describe(err)
	}
	_ = res.Body.Close()
	if res.StatusCode/100 == 2 && res.ContentLength >= 0 {
		return res.ContentLength, nil
	}
	if res.StatusCode == http.StatusNotFound || res.StatusCode == http.StatusGone {
		return 0, weighErr("the image answered %d", res.StatusCode)
	}
	// No length, or HEAD not served: count what a GET delivers.
	req.Method = http.MethodGet
	res, err = h.client.Do(req)
	if err != nil {
		return 0, describe(err)
	}
	defer res.Body.Close()
	if res.StatusCode/100 != 2 {
		return 0, weighErr("the image answered %d", res.StatusCode)
	}
	if res.ContentLength > h.maxSize {
		return 0, weighErr("larger than %d bytes", h.maxSize)
	}
	n, err := io.Copy(io.Discard, io.LimitReader(res.Body, h.maxSize+1))
	if err != nil {
		return 0, describe(err)
	}
	if n > h.maxSize {
		return 0, weighErr("larger than %d bytes", h.maxSize)
	}
	return n, nil
}

// errBudgetSpent is an image not weighed because its check had sent all
// the requests it may (safefetch.WithBudget).
var errBudgetSpent = &weighError{reason: "too many requests in one check"}

// describe turns a client error into a reason fit for the answer.
func describe(err error) error {
	var netErr net.Error
	switch {
	case errors.Is(err, safefetch.ErrBudgetSpent):
		return errBudgetSpent
	case errors.Is(err, safefetch.ErrAddressRefused):
		return weighErr("address not allowed")
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return weighErr("timed out")
	case errors.Is(err, context.Canceled):
		return weighErr("request cancelled")
	}
	return weighErr("could not be fetched")
}
