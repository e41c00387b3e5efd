// Package ratelimit is the modules' one keyed rate limiter: a token bucket
// (golang.org/x/time/rate) per key, in a bounded table. design_bridge
// limits its auth path per client address with it, content_service its
// exports per API token and its failed logins per client address.
package ratelimit

import (
	"container/list"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"golang.org/x/time/rate"
)

// DefaultMaxKeys bounds the keys a Limiter remembers at once.
const DefaultMaxKeys = 10000

// Limiter holds one bucket of requests tokens per key, refilled at
// requests per window; a key not seen before starts full.
type Limiter struct {
	mu      sync.Mutex
	limit   rate.Limit
	burst   int
	maxKeys int
	keys    map[string]*list.Element // of *entry
	order   *list.List               // most recently used in front
}

type entry struct {
	key    string
	bucket *rate.Limiter
}

// maxWindow is the longest window a Limiter keeps (some 146 years): the
// wait for a token of a window near math.MaxInt64 nanoseconds overflows
// time.Duration, and x/time/rate then lets the request through.
const maxWindow = time.Duration(math.MaxInt64 / 2)

// New returns a limiter of requests per window for each key, remembering
// at most maxKeys keys (DefaultMaxKeys when maxKeys <= 0). A window past
// maxWindow is taken as maxWindow.
func New(requests int, window time.Duration, maxKeys int) *Limiter {
	if maxKeys <= 0 {
		maxKeys = DefaultMaxKeys
	}
	window = min(window, maxWindow)
	return &Limiter{
		limit:   rate.Limit(float64(requests) / window.Seconds()),
		burst:   requests,
		maxKeys: maxKeys,
		keys:    make(map[string]*list.Element),
		order:   list.New(),
	}
}

// Allow takes a token from key's bucket. When there is none it takes
// nothing and returns false and the wait until one is available.
func (l *Limiter) Allow(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.bucketLocked(key, now)
	if b.AllowN(now, 1) {
		return true, 0
	}
	return false, l.wait(b.TokensAt(now))
}

// Blocked reports whether key's bucket is empty, and for how long, without
// taking a token: the failure limit checks it before reading a login, and
// Charge charges only a failure.
func (l *Limiter) Blocked(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.knownLocked(key)
	if b == nil {
		return false, 0
	}
	if tokens := b.TokensAt(now); tokens < 1 {
		return true, l.wait(tokens)
	}
	return false, 0
}

// Charge settles an attempt whose outcome is known: when key's bucket is
// empty it returns false and the wait, and the attempt's outcome must not
// be told; else it takes a token if the attempt failed. Checking and
// taking under one lock is what bounds attempts that are judged at once:
// a check before them all (Blocked) would let every one through.
func (l *Limiter) Charge(key string, now time.Time, failed bool) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.knownLocked(key)
	if b == nil {
		if failed {
			l.bucketLocked(key, now).AllowN(now, 1)
		}
		return true, 0
	}
	if tokens := b.TokensAt(now); tokens < 1 {
		return false, l.wait(tokens)
	}
	if failed {
		b.AllowN(now, 1)
	}
	return true, 0
}

// wait is how long a bucket holding tokens (< 1) takes to hold one.
func (l *Limiter) wait(tokens float64) time.Duration {
	return time.Duration((1 - tokens) / float64(l.limit) * float64(time.Second))
}

// knownLocked returns key's bucket, or nil for a key not remembered
// (whose bucket would be full). Blocked and Charge remember a key only
// once it is charged: requests that take nothing would otherwise fill
// the table with full buckets and push out the ones of clients past
// their limit.
func (l *Limiter) knownLocked(key string) *rate.Limiter {
	el, ok := l.keys[key]
	if !ok {
		return nil
	}
	l.order.MoveToFront(el)
	return el.Value.(*entry).bucket
}

// bucketLocked returns key's bucket, made (full) when the key is new.
func (l *Limiter) bucketLocked(key string, now time.Time) *rate.Limiter {
	if b := l.knownLocked(key); b != nil {
		return b
	}
	if len(l.keys) >= l.maxKeys {
		l.evictLocked(now)
	}
	e := &entry{key: key, bucket: rate.NewLimiter(l.limit, l.burst)}
	l.keys[key] = l.order.PushFront(e)
	return e.bucket
}

// evictLocked makes room, in constant time for each key ever added (a
// sweep of the table was 900 times slower per new key once full, under
// one lock): it forgets the least recently used buckets that have
// refilled (they would start full anyway), else the least recently used
// one.
func (l *Limiter) evictLocked(now time.Time) {
	l.removeLocked(l.order.Back())
	for back := l.order.Back(); back != nil && back.Value.(*entry).bucket.TokensAt(now) >= float64(l.burst); back = l.order.Back() {
		l.removeLocked(back)
	}
}

func (l *Limiter) removeLocked(el *list.Element) {
	delete(l.keys, l.order.Remove(el).(*entry).key)
}

// Len is the number of keys remembered.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.keys)
}

// ClientKey is the key of the client that sent r: Caddy's client IP
// (which honours the server's trusted_proxies), else the connection's
// address, reduced by AddrKey. From a trusted proxy, without
// trusted_proxies_strict, Caddy's client IP is the leftmost address of
// the client IP headers, which is whatever the client wrote there: it
// would choose its key, a new one per try or another client's. The
// rightmost address, which the nearest proxy added, is taken instead.
func ClientKey(r *http.Request) string {
	ctx := r.Context()
	ip, _ := caddyhttp.GetVar(ctx, caddyhttp.ClientIPVarKey).(string)
	if trusted, _ := caddyhttp.GetVar(ctx, caddyhttp.TrustedProxyVarKey).(bool); trusted {
		if srv, ok := ctx.Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server); ok && srv.TrustedProxiesStrict == 0 {
			if nearest, ok := nearestForwarded(r.Header, srv.ClientIPHeaders); ok {
				ip = nearest.String()
			}
		}
	}
	if ip != "" {
		return AddrKey(ip)
	}
	return AddrKey(r.RemoteAddr)
}

// nearestForwarded returns the rightmost address of the first of headers
// that holds one, read as Caddy reads them (a port or zone is dropped,
// what does not parse is skipped).
func nearestForwarded(h http.Header, headers []string) (netip.Addr, bool) {
	for _, name := range headers {
		parts := strings.Split(strings.Join(h.Values(name), ","), ",")
		for i := len(parts) - 1; i >= 0; i-- {
			host := strings.TrimSpace(parts[i])
			if hp, _, err := net.SplitHostPort(host); err == nil {
				host = hp
			}
			host, _, _ = strings.Cut(host, "%")
			if ip, err := netip.ParseAddr(host); err == nil {
				return ip, true
			}
		}
	}
	return netip.Addr{}, false
}

// AddrKey returns the limiter key of a client address ("ip", "ip:port" or
// "[ip]:port"): the IPv4 address, or the /64 of an IPv6 address, since
// one host usually holds a whole /64. An address that does not parse is
// its own key.
func AddrKey(addr string) string {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		p, _ := ip.Prefix(64)
		return p.String()
	}
	return ip.String()
}

// RetryAfter is the Retry-After value for a wait: whole seconds, rounded
// up, at least 1.
func RetryAfter(wait time.Duration) int {
	return max(int(math.Ceil(wait.Seconds())), 1)
}
