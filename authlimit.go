package designbridge

import (
	"fmt"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/designbridge/caddy-designbridge/internal/addrlimit"
)

// AuthRateLimit is a token bucket per client address on the auth path:
// Requests per Window, in bursts of up to Requests.
type AuthRateLimit struct {
	// Requests allowed per Window (positive).
	Requests int `json:"requests,omitempty"`

	// Window is the period over which Requests are allowed (positive).
	Window caddy.Duration `json:"window,omitempty"`
}

// limiter builds the limiter of rl, nil when rl is.
func (rl *AuthRateLimit) limiter() *addrlimit.Limiter {
	if rl == nil || rl.Requests <= 0 || rl.Window <= 0 {
		return nil
	}
	return addrlimit.New(rl.Requests, time.Duration(rl.Window), 0)
}

func (rl *AuthRateLimit) validate() error {
	if rl == nil {
		return nil
	}
	if rl.Requests <= 0 || rl.Window <= 0 {
		return fmt.Errorf("auth_rate_limit: requests and window must be positive")
	}
	return nil
}

// parseAuthRateLimit reads "auth_rate_limit <requests> [per] <duration>";
// the dispenser is on the subdirective's name.
func parseAuthRateLimit(d *caddyfile.Dispenser) (*AuthRateLimit, error) {
	args := d.RemainingArgs()
	if len(args) == 3 && args[1] == "per" {
		args = []string{args[0], args[2]}
	}
	if len(args) != 2 {
		return nil, d.Errf("auth_rate_limit: want <requests> [per] <duration>, got %d arguments", len(args))
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n <= 0 {
		return nil, d.Errf("auth_rate_limit: %q is not a positive number of requests", args[0])
	}
	window, err := caddy.ParseDuration(args[1])
	if err != nil {
		return nil, d.Errf("auth_rate_limit: parsing %q: %v", args[1], err)
	}
	if window <= 0 {
		return nil, d.Errf("auth_rate_limit: window %q must be positive", args[1])
	}
	return &AuthRateLimit{Requests: n, Window: caddy.Duration(window)}, nil
}
