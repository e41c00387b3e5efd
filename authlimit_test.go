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
		{"missing window", "design_bridge {\n auth_rate_limit 10\n}", nil, "auth_rate_limit: want <requests> [per] <duration>, got 1 arguments"},
		{"zero requests", "design_bridge {\n auth_rate_limit 0 per 1m\n}", nil, `auth_rate_limit: "0" is not a positive number of requests`},
		{"bad window", "design_bridge {\n auth_rate_limit 5 per soon\n}", nil, `auth_rate_limit: parsing "soon"`},
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
	var none *AuthRateLimit
	if none.limiter() != nil {
		t.Error("a limiter without auth_rate_limit")
	}
}
