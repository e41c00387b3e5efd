package content

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
)

// proxyConfig: one content_service whose server trusts a load balancer at
// 127.0.0.40, without trusted_proxies_strict (Caddy's client IP is then
// the leftmost address of X-Forwarded-For).
const proxyConfig = `{
	admin localhost:{$PORT_ADMIN}
	http_port {$PORT_HTTP}
	https_port {$PORT_HTTPS}
	skip_install_trust
	persist_config off
	servers {
		trusted_proxies static 127.0.0.40/32
	}
}

:{$PORT_PROXIED} {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		login_failure_limit 3 per 1m
	}
}
`

// TestLoginFailureLimitBehindProxy: behind a trusted load balancer, which
// appends the address it saw to X-Forwarded-For, the failure limit counts
// that address. What the client wrote in front of it (the leftmost
// entries, Caddy's client IP without trusted_proxies_strict) neither
// gives it a new budget on every try nor charges its failures to another
// client, such as a host that calls the service directly.
func TestLoginFailureLimitBehindProxy(t *testing.T) {
	tester := newTester(t)
	tester.InitServer(proxyConfig, "caddyfile")
	defer tester.InitServer(config, "caddyfile")
	site := testcaddy.URL("PROXIED")
	login := func(from, xff, secret string) int {
		t.Helper()
		var h http.Header
		if xff != "" {
			h = http.Header{"X-Forwarded-For": {xff}}
		}
		return postLogin(t, clientFrom(t, from), site, secret, h).status
	}
	const lb = "127.0.0.40"
	realA, direct := freshIP(10), freshIP(127)
	for _, tt := range []struct {
		name string
		// spoof is what the client writes in front of its own address
		// for its i-th failure.
		spoof func(i int) string
		// real is the client's address, which the balancer appends.
		real string
		// then the right secret from: an address and X-Forwarded-For
		from, xff string
		want      int
	}{
		{
			name:  "a new address on every try",
			spoof: func(i int) string { return fmt.Sprintf("203.0.113.%d", i+1) },
			real:  realA,
			from:  lb, xff: "203.0.113.99, " + realA,
			want: 429,
		},
		{
			name:  "the address of a host calling directly",
			spoof: func(int) string { return direct },
			real:  freshIP(10),
			from:  direct,
			want:  200,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for i := 0; i < 3; i++ {
				if got := login(lb, tt.spoof(i)+", "+tt.real, "wrong"); got != 401 {
					t.Fatalf("failure %d: %d", i+1, got)
				}
			}
			if got := login(tt.from, tt.xff, alphaSecret); got != tt.want {
				t.Fatalf("then the right secret from %s (X-Forwarded-For %q): %d, want %d", tt.from, tt.xff, got, tt.want)
			}
		})
	}
}

// TestLoginFailureLimitFlood: an address past its failure limit stays
// blocked while many other addresses come and go. Requests that count no
// failure (here, 10,000 of the wrong media type, each from another
// address) are not remembered, so they cannot push the blocked address
// out of the limiter's table (and give it a new budget).
func TestLoginFailureLimitFlood(t *testing.T) {
	tester := newTester(t)
	tester.InitServer(proxyConfig, "caddyfile")
	defer tester.InitServer(config, "caddyfile")
	site := testcaddy.URL("PROXIED")
	client := clientFrom(t, "127.0.0.40")
	login := func(from, contentType, secret string) int {
		t.Helper()
		return postLogin(t, client, site, secret, http.Header{"Content-Type": {contentType}, "X-Forwarded-For": {from}}).status
	}
	attacker := freshIP(10)
	for i := 0; i < 3; i++ {
		if got := login(attacker, "application/json", "wrong"); got != 401 {
			t.Fatalf("failure %d: %d", i+1, got)
		}
	}
	for i := 0; i < 10000; i++ {
		if got := login(fmt.Sprintf("198.18.%d.%d", i/250, i%250+1), "text/plain", alphaSecret); got != 415 {
			t.Fatalf("request %d: %d", i, got)
		}
	}
	if got := login(attacker, "application/json", alphaSecret); got != 429 {
		t.Fatalf("the blocked address after 10,000 others: %d, want 429", got)
	}
}
