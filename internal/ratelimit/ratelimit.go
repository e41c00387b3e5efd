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
	return l.AllowKeys([]Key{{Name: key}}, now)
}

// Blocked reports whether key's bucket is empty, and for how long, without
// taking a token: the failure limit checks it before reading a login, and
// Charge charges only a failure.
func (l *Limiter) Blocked(key string, now time.Time) (bool, time.Duration) {
	return l.BlockedKeys([]Key{{Name: key}}, now)
}

// Charge settles an attempt whose outcome is known: when key's bucket is
// empty it returns false and the wait, and the attempt's outcome must not
// be told; else it takes a token if the attempt failed. Checking and
// taking under one lock is what bounds attempts that are judged at once:
// a check before them all (Blocked) would let every one through.
func (l *Limiter) Charge(key string, now time.Time, failed bool) (bool, time.Duration) {
	return l.ChargeKeys([]Key{{Name: key}}, now, failed)
}

// A Key names a bucket. Its Scale multiplies the limiter's requests (and
// so its rate) for this bucket; 0 counts as 1. A name is one bucket: it
// must always come with the same Scale.
type Key struct {
	Name  string
	Scale int
}

// AllowKeys is Allow for a request counted in several buckets (a client
// address and its network): it takes a token from each only when each
// has one; else it takes nothing and returns false and the longest wait.
func (l *Limiter) AllowKeys(keys []Key, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	buckets := make([]*rate.Limiter, len(keys))
	for i, k := range keys {
		buckets[i] = l.bucketLocked(k, now)
	}
	if blocked, wait := emptiest(buckets, now); blocked {
		return false, wait
	}
	for _, b := range buckets {
		b.AllowN(now, 1)
	}
	return true, 0
}

// BlockedKeys is Blocked for several buckets: whether any of them is
// empty, and the longest wait.
func (l *Limiter) BlockedKeys(keys []Key, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return emptiest(l.knownKeysLocked(keys), now)
}

// ChargeKeys is Charge for several buckets: refused (false and the
// longest wait) when any of them is empty, else a failure takes a token
// from each.
func (l *Limiter) ChargeKeys(keys []Key, now time.Time, failed bool) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if blocked, wait := emptiest(l.knownKeysLocked(keys), now); blocked {
		return false, wait
	}
	if failed {
		for _, k := range keys {
			l.bucketLocked(k, now).AllowN(now, 1)
		}
	}
	return true, 0
}

// knownKeysLocked returns the buckets of keys that are remembered.
func (l *Limiter) knownKeysLocked(keys []Key) []*rate.Limiter {
	var buckets []*rate.Limiter
	for _, k := range keys {
		if b := l.knownLocked(k.Name); b != nil {
			buckets = append(buckets, b)
		}
	}
	return buckets
}

// emptiest reports whether any of buckets holds less than one token at
// now, and the longest wait until each holds one.
func emptiest(buckets []*rate.Limiter, now time.Time) (bool, time.Duration) {
	blocked, longest := false, time.Duration(0)
	for _, b := range buckets {
		if tokens := b.TokensAt(now); tokens < 1 {
			blocked, longest = true, max(longest, wait(b, tokens))
		}
	}
	return blocked, longest
}

// wait is how long b, holding tokens (< 1), takes to hold one.
func wait(b *rate.Limiter, tokens float64) time.Duration {
	return time.Duration((1 - tokens) / float64(b.Limit()) * float64(time.Second))
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
func (l *Limiter) bucketLocked(key Key, now time.Time) *rate.Limiter {
	if b := l.knownLocked(key.Name); b != nil {
		return b
	}
	if len(l.keys) >= l.maxKeys {
		l.evictLocked(now)
	}
	scale := max(key.Scale, 1)
	e := &entry{key: key.Name, bucket: rate.NewLimiter(l.limit*rate.Limit(scale), l.burst*scale)}
	l.keys[key.Name] = l.order.PushFront(e)
	return e.bucket
}

// evictLocked makes room, in constant time for each key ever added (a
// sweep of the table was 900 times slower per new key once full, under
// one lock): it forgets the least recently used buckets that have
// refilled (they would start full anyway), else the least recently used
// one.
func (l *Limiter) evictLocked(now time.Time) {
	l.removeLocked(l.order.Back())
	for back := l.order.Back(); back != nil && full(back.Value.(*entry).bucket, now); back = l.order.Back() {
		l.removeLocked(back)
	}
}

// full reports whether b has refilled.
func full(b *rate.Limiter, now time.Time) bool {
	return b.TokensAt(now) >= float64(b.Burst())
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

// ClientKeys are the keys of the client that sent r: Caddy's client IP
// (which honours the server's trusted_proxies), else the connection's
// address, reduced by AddrKeys. From a trusted proxy, without
// trusted_proxies_strict, Caddy's client IP is the leftmost address of
// the client IP headers, which is whatever the client wrote there: it
// would choose its key, a new one per try or another client's. The
// rightmost address, which the nearest proxy added, is taken instead.
func ClientKeys(r *http.Request) []Key {
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
		return AddrKeys(ip)
	}
	return AddrKeys(r.RemoteAddr)
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

// The prefixes an IPv6 client is counted by. One host usually holds a
// whole /64, and one customer a /56 or a /48 (a tunnel broker gives a
// /48 to anyone who asks): each /64 has the limit's budget, and the /48
// around it NetworkScale times that, shared by all its /64s, so that a
// client with a /48 gets at most NetworkScale budgets rather than 65,536.
const (
	HostPrefix    = 64
	NetworkPrefix = 48
	NetworkScale  = 8
)

// AddrKey returns the limiter key of a client address ("ip", "ip:port" or
// "[ip]:port"): the IPv4 address (an IPv4-mapped IPv6 address is its
// IPv4 address), or the /64 of an IPv6 address. An address that does not
// parse is its own key.
func AddrKey(addr string) string {
	return AddrKeys(addr)[0].Name
}

// AddrKeys returns the keys a client address is counted under: AddrKey's,
// and for an IPv6 address also its /48, at NetworkScale.
func AddrKeys(addr string) []Key {
	host := addr
	if h, _, err := net.SplitHostPort(addr); err == nil {
		host = h
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return []Key{{Name: host}}
	}
	ip = ip.Unmap().WithZone("")
	if !ip.Is6() {
		return []Key{{Name: ip.String()}}
	}
	hostNet, _ := ip.Prefix(HostPrefix)
	network, _ := ip.Prefix(NetworkPrefix)
	return []Key{{Name: hostNet.String()}, {Name: network.String(), Scale: NetworkScale}}
}

// RetryAfter is the Retry-After value for a wait: whole seconds, rounded
// up, at least 1.
func RetryAfter(wait time.Duration) int {
	return max(int(math.Ceil(wait.Seconds())), 1)
}
