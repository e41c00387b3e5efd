package designbridge

import (
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/designbridge/caddy-designbridge/internal/ratelimit"
)

// The auth path's limit when auth_rate_limit is not set: generous for
// people (a login per editor session and its renewals), a wall for a
// script minting tokens.
const (
	DefaultAuthRequests = 30
	DefaultAuthWindow   = time.Minute
)

// AuthRateLimit is a token bucket per client address on the auth path:
// Requests per Window, in bursts of up to Requests. Unset, the default of
// 30 per minute applies.
type AuthRateLimit struct {
	// Requests allowed per Window (positive).
	Requests int `json:"requests,omitempty"`

	// Window is the period over which Requests are allowed (positive).
	Window caddy.Duration `json:"window,omitempty"`

	// Off turns the limit off (for a host that limits logins itself).
	Off bool `json:"off,omitempty"`
}

// authLimiters holds the auth path's limiters across config reloads: a
// reload provisions the new bridge before the old one is cleaned up, so
// the new one finds the old one's counts under the same key and a client
// cannot reset its budget by waiting for (or causing) a reload. The one
// package-level value, as Caddy's own modules keep state that outlives a
// config (reverse_proxy's hosts); entries go with the last config that
// uses them.
var authLimiters = caddy.NewUsagePool()

// pooledLimiter is an ratelimit.Limiter in authLimiters.
type pooledLimiter struct{ *ratelimit.Limiter }

func (pooledLimiter) Destruct() error { return nil }

// authLimitKey identifies the limiter shared across reloads: the same
// LoginV2 endpoint, auth path and limit keep their counts.
type authLimitKey struct {
	authURL, authPath string
	requests          int
	window            time.Duration
}

// provisionAuthLimit takes the limiter of b's configuration from
// authLimiters (nil when the limit is off); Cleanup gives it back.
func (b *Bridge) provisionAuthLimit() error {
	rl := b.AuthRateLimit
	if rl == nil {
		rl = &AuthRateLimit{Requests: DefaultAuthRequests, Window: caddy.Duration(DefaultAuthWindow)}
	}
	if rl.Off {
		return nil
	}
	key := authLimitKey{b.authURL.String(), b.AuthPath, rl.Requests, time.Duration(rl.Window)}
	v, _, err := authLimiters.LoadOrNew(key, func() (caddy.Destructor, error) {
		return pooledLimiter{ratelimit.New(rl.Requests, time.Duration(rl.Window), 0)}, nil
	})
	if err != nil {
		return fmt.Errorf("auth_rate_limit: %v", err)
	}
	b.authLimiter, b.authLimitKey = v.(pooledLimiter).Limiter, &key
	return nil
}

// releaseAuthLimit gives b's limiter back to authLimiters.
func (b *Bridge) releaseAuthLimit() {
	if b.authLimitKey != nil {
		_, _ = authLimiters.Delete(*b.authLimitKey)
		b.authLimitKey, b.authLimiter = nil, nil
	}
}

func (rl *AuthRateLimit) validate() error {
	if rl == nil || rl.Off {
		return nil
	}
	if rl.Requests <= 0 {
		return fmt.Errorf(`auth_rate_limit.requests: %d is not a positive number of requests (or set "off": true)`, rl.Requests)
	}
	if rl.Window <= 0 {
		return fmt.Errorf(`auth_rate_limit.window: %s must be positive (or set "off": true)`, time.Duration(rl.Window))
	}
	return nil
}
