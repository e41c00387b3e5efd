package contentservice

import (
	"math"
	"sync"
	"time"
)

// limiter is a set of token buckets, one per key (a small integer: the
// keys are fixed by the configuration, so memory is bounded and nothing
// needs evicting).
type limiter struct {
	mu      sync.Mutex
	burst   float64
	perSec  float64 // refill rate, tokens per second
	buckets []bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newLimiter(keys, requests int, window time.Duration) *limiter {
	return &limiter{
		burst:   float64(requests),
		perSec:  float64(requests) / window.Seconds(),
		buckets: make([]bucket, keys),
	}
}

// allow takes one token from key's bucket at time now. When the bucket is
// empty it returns false and how long until a token is available.
func (l *limiter) allow(key int, now time.Time) (bool, time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b := &l.buckets[key]
	if b.last.IsZero() {
		b.tokens = l.burst
	} else if elapsed := now.Sub(b.last).Seconds(); elapsed > 0 {
		b.tokens = math.Min(l.burst, b.tokens+elapsed*l.perSec)
	}
	if now.After(b.last) || b.last.IsZero() {
		b.last = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	wait := time.Duration((1 - b.tokens) / l.perSec * float64(time.Second))
	return false, wait
}

// retryAfterSeconds is the Retry-After value for a wait: whole seconds,
// rounded up, at least 1.
func retryAfterSeconds(wait time.Duration) int {
	s := int(math.Ceil(wait.Seconds()))
	if s < 1 {
		s = 1
	}
	return s
}
