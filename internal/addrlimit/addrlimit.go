// Package addrlimit is a token-bucket limiter keyed by client address,
// with a bounded table: design_bridge limits its auth path with it and
// content_service the failed logins of each address.
package addrlimit

import (
	"math"
	"net"
	"net/netip"
	"sync"
	"time"
)

// DefaultMaxKeys bounds the addresses a Limiter remembers at once.
const DefaultMaxKeys = 10000

// Limiter holds one bucket of Burst tokens per key, refilled at
// Burst/Window; a key not seen before starts full.
type Limiter struct {
	mu      sync.Mutex
	burst   float64
	perSec  float64
	maxKeys int
	buckets map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// New returns a limiter of requests per window for each key, remembering
// at most maxKeys keys (DefaultMaxKeys when maxKeys <= 0).
func New(requests int, window time.Duration, maxKeys int) *Limiter {
	if maxKeys <= 0 {
		maxKeys = DefaultMaxKeys
	}
	return &Limiter{
		burst:   float64(requests),
		perSec:  float64(requests) / window.Seconds(),
		maxKeys: maxKeys,
		buckets: make(map[string]*bucket),
	}
}

// Allow takes a token from key's bucket. When there is none it takes
// nothing and returns false and the wait until one is available.
func (l *Limiter) Allow(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ok, wait := l.peekLocked(key, now)
	if ok {
		l.buckets[key].tokens--
	}
	return ok, wait
}

// Blocked reports whether key's bucket is empty, and for how long, without
// taking a token: the failure limit checks it before a login, and Take
// charges only a failure.
func (l *Limiter) Blocked(key string, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ok, wait := l.peekLocked(key, now)
	return !ok, wait
}

// Take removes a token from key's bucket (down to zero).
func (l *Limiter) Take(key string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.peekLocked(key, now)
	if b := l.buckets[key]; b.tokens >= 1 {
		b.tokens--
	} else {
		b.tokens = 0
	}
}

// peekLocked refills key's bucket (creating it, full) and reports whether
// it holds a token, else how long until it does.
func (l *Limiter) peekLocked(key string, now time.Time) (bool, time.Duration) {
	b := l.buckets[key]
	if b == nil {
		if len(l.buckets) >= l.maxKeys {
			l.evictLocked(now)
		}
		b = &bucket{tokens: l.burst, last: now}
		l.buckets[key] = b
	}
	if elapsed := now.Sub(b.last).Seconds(); elapsed > 0 {
		b.tokens = math.Min(l.burst, b.tokens+elapsed*l.perSec)
		b.last = now
	}
	if b.tokens >= 1 {
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.perSec * float64(time.Second))
}

// evictLocked makes room: it forgets every bucket that has refilled (it
// would start full anyway), else the least recently used one.
func (l *Limiter) evictLocked(now time.Time) {
	var oldestKey string
	var oldest time.Time
	removed := false
	for k, b := range l.buckets {
		if b.tokens+now.Sub(b.last).Seconds()*l.perSec >= l.burst {
			delete(l.buckets, k)
			removed = true
			continue
		}
		if oldestKey == "" || b.last.Before(oldest) {
			oldestKey, oldest = k, b.last
		}
	}
	if !removed && oldestKey != "" {
		delete(l.buckets, oldestKey)
	}
}

// Len is the number of keys remembered.
func (l *Limiter) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// Key returns the limiter key of a client address ("ip", "ip:port" or
// "[ip]:port"): the IPv4 address, or the /64 of an IPv6 address, since
// one host usually holds a whole /64. An address that does not parse is
// its own key.
func Key(addr string) string {
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
