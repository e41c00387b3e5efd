package ratelimit

import (
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// FuzzParseArgs: any subdirective's arguments parse to a load error
// or to a limit that a Limiter takes and uses without panicking: a new
// key is let through n times at once, then refused with a wait of at
// most the window, never none.
func FuzzParseArgs(f *testing.F) {
	for _, s := range []string{"auth_rate_limit 30 per 1m", "rate_limit 5 10s", "login_failure_limit off",
		"rate_limit 5 per 1m x", "rate_limit 1 1ns", "rate_limit 9223372036854775807 1d", "rate_limit {env.N} 1m", "rate_limit 1 1e300d", "rate_limit 1 106751d", "rate_limit 3 2562047h", "rate_limit 1 2562047h47m16.854775807s"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, input string, offOK bool) {
		tokens, err := caddyfile.Tokenize([]byte(input), "fuzz")
		if err != nil {
			return
		}
		d := caddyfile.NewDispenser(tokens)
		d.Next()
		n, window, off, err := ParseArgs(d.RemainingArgs(), offOK)
		if err != nil || off {
			return
		}
		if n <= 0 || window <= 0 {
			t.Fatalf("accepted %d per %v", n, window)
		}
		l, now := New(n, window, 1), time.Now()
		if n <= 64 {
			for i := range n {
				if ok, _ := l.Allow("burst", now); !ok {
					t.Fatalf("%d per %v: request %d of a new key refused", n, window, i+1)
				}
			}
			ok, wait := l.Allow("burst", now)
			// A float's rounding may add a little to the window.
			if ok || wait <= 0 || float64(wait) > float64(window)*(1+1e-6)+1 {
				t.Fatalf("%d per %v: request %d at once: allowed %v, wait %v", n, window, n+1, ok, wait)
			}
		}
		for i := 0; i < 3; i++ {
			_, wait := l.Allow(AddrKey("[::1]:80"), now)
			_ = RetryAfter(wait)
			_, wait = l.Blocked("k", now)
			l.Charge("k2", now, true)
			_ = RetryAfter(wait)
		}
	})
}
