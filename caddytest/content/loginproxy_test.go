package content

import (
	"fmt"
	"math/rand/v2"
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

// TestLoginFailureLimitIPv6: behind a trusted load balancer, an IPv6
// client is counted by its /64, and the /64s of one /48 share 8 times the
// budget (here 3 per 1m: 24 failures): a client with a /64, a /56 or a
// /48 does not get a new budget by changing its address.
func TestLoginFailureLimitIPv6(t *testing.T) {
	tester := newTester(t)
	tester.InitServer(proxyConfig, "caddyfile")
	defer tester.InitServer(config, "caddyfile")
	site := testcaddy.URL("PROXIED")
	client := clientFrom(t, "127.0.0.40")
	// A /48 no earlier run has used: the counts outlive the test.
	network := 0x100 + rand.IntN(0xfe00)
	login := func(subnet, host int, secret string) response {
		t.Helper()
		xff := fmt.Sprintf("2001:db8:%x:%x::%x", network, subnet, host)
		return postLogin(t, client, site, secret, http.Header{"X-Forwarded-For": {xff}})
	}
	for i := range 3 {
		if r := login(0, i+1, "wrong"); r.status != 401 {
			t.Fatalf("failure %d: %d", i+1, r.status)
		}
	}
	if r := login(0, 0xffff, alphaSecret); r.status != 429 {
		t.Fatalf("another address of the same /64: %d, want 429", r.status)
	}
	// 21 more failures, 3 from each of 7 other /64s of the /48.
	for subnet := 1; subnet < 8; subnet++ {
		for i := range 3 {
			if r := login(subnet<<8, i+1, "wrong"); r.status != 401 {
				t.Fatalf("failure %d from /64 %d: %d", i+1, subnet, r.status)
			}
		}
	}
	r := login(0xffff, 1, alphaSecret)
	if r.status != 429 || r.header.Get("Retry-After") != "3" {
		t.Fatalf("a fresh /64 of the /48 after 24 failures: %d Retry-After %q, want 429 after 3 s", r.status, r.header.Get("Retry-After"))
	}
	// Another /48 is another client.
	if r := postLogin(t, client, site, alphaSecret, http.Header{"X-Forwarded-For": {fmt.Sprintf("2001:db8:%x::1", network+1)}}); r.status != 200 {
		t.Fatalf("another /48: %d %s", r.status, r.body)
	}
}
