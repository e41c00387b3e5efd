package designbridge

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

func TestAuthRateLimitCaddyfile(t *testing.T) {
	minute := caddy.Duration(time.Minute)
	for _, tc := range []struct {
		name, input string
		want        *AuthRateLimit
		wantErr     string
	}{
		{"with per", "design_bridge {\n auth_rate_limit 10 per 1m\n}", &AuthRateLimit{Requests: 10, Window: minute}, ""},
		{"without per", "design_bridge {\n auth_rate_limit 3 30s\n}", &AuthRateLimit{Requests: 3, Window: caddy.Duration(30 * time.Second)}, ""},
		{"off", "design_bridge {\n auth_rate_limit off\n}", &AuthRateLimit{Off: true}, ""},
		{"missing window", "design_bridge {\n auth_rate_limit 10\n}", nil, "auth_rate_limit: want <requests> [per] <duration> or off, got 1 arguments"},
		{"zero requests", "design_bridge {\n auth_rate_limit 0 per 1m\n}", nil, `auth_rate_limit: "0" is not a positive number of requests`},
		{"bad window", "design_bridge {\n auth_rate_limit 5 per soon\n}", nil, `auth_rate_limit: "soon" is not a duration`},
		{"negative window", "design_bridge {\n auth_rate_limit 5 per -1m\n}", nil, `window "-1m" must be positive`},
		{"twice", "design_bridge {\n auth_rate_limit 5 1m\n auth_rate_limit 5 1m\n}", nil, "specified more than once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b Bridge
			err := b.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tc.input))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(b.AuthRateLimit, tc.want) {
				t.Errorf("got %+v, want %+v", b.AuthRateLimit, tc.want)
			}
		})
	}
}

func TestAuthRateLimitValidate(t *testing.T) {
	if err := (&Bridge{AuthRateLimit: &AuthRateLimit{Requests: 0, Window: caddy.Duration(time.Minute)}}).Validate(); err == nil ||
		!strings.Contains(err.Error(), "auth_rate_limit") {
		t.Errorf("zero requests (JSON): %v", err)
	}
}

// TestAuthLimitPool: a bridge provisioned while another of the same limit
// is loaded (a reload) shares its counts; the last one out frees them.
func TestAuthLimitPool(t *testing.T) {
	mk := func(rl *AuthRateLimit) *Bridge {
		b := &Bridge{AuthURL: "https://pool-test.example/loginV2", AuthRateLimit: rl}
		if err := b.resolve(); err != nil {
			t.Fatal(err)
		}
		if err := b.provisionAuthLimit(); err != nil {
			t.Fatal(err)
		}
		return b
	}
	old := mk(nil)
	if old.authLimiter == nil {
		t.Fatal("no limit by default")
	}
	now := time.Now()
	for range DefaultAuthRequests {
		old.authLimiter.Allow("192.0.2.1", now)
	}
	reloaded := mk(nil)
	old.releaseAuthLimit()
	if ok, _ := reloaded.authLimiter.Allow("192.0.2.1", now); ok {
		t.Error("the reloaded config forgot the counts")
	}
	other := mk(&AuthRateLimit{Requests: 5, Window: caddy.Duration(time.Minute)})
	if ok, _ := other.authLimiter.Allow("192.0.2.1", now); !ok {
		t.Error("another limit shares the counts")
	}
	other.releaseAuthLimit()
	reloaded.releaseAuthLimit()
	if n, ok := authLimiters.References(authLimitKey{"https://pool-test.example/loginV2", DefaultAuthPath, DefaultAuthRequests, DefaultAuthWindow}); ok || n != 0 {
		t.Errorf("limiter still held: %d", n)
	}
	if off := mk(&AuthRateLimit{Off: true}); off.authLimiter != nil {
		t.Error("a limiter although off")
	}
}
