package ratelimit

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func TestAllowRefills(t *testing.T) {
	l := New(3, time.Minute, 0)
	now := time.Unix(1000, 0)
	for i := 0; i < 3; i++ {
		if ok, _ := l.Allow("a", now); !ok {
			t.Fatalf("request %d refused", i+1)
		}
	}
	ok, wait := l.Allow("a", now)
	if ok || wait != 20*time.Second {
		t.Fatalf("4th: ok=%v wait=%v, want refused for 20s", ok, wait)
	}
	if ok, _ := l.Allow("b", now); !ok {
		t.Fatal("another key was refused")
	}
	if ok, _ := l.Allow("a", now.Add(20*time.Second)); !ok {
		t.Fatal("refused after the refill")
	}
	if ok, _ := l.Allow("a", now.Add(20*time.Second)); ok {
		t.Fatal("a refill of one token allowed two requests")
	}
}

// TestPartialRefill: half a token allows nothing, a whole one a request,
// and a clock going backwards neither refills nor breaks the bucket.
func TestPartialRefill(t *testing.T) {
	start := time.Unix(1000, 0)
	l := New(3, 3*time.Second, 0) // one per second
	for i := range 3 {
		if ok, _ := l.Allow("a", start); !ok {
			t.Fatalf("burst request %d refused", i)
		}
	}
	if ok, wait := l.Allow("a", start); ok || wait != time.Second {
		t.Fatalf("4th: ok=%v wait=%v", ok, wait)
	}
	if ok, _ := l.Allow("a", start.Add(500*time.Millisecond)); ok {
		t.Error("half a token allowed a request")
	}
	if ok, _ := l.Allow("a", start.Add(time.Second)); !ok {
		t.Error("refill did not happen")
	}
	if ok, _ := l.Allow("a", start); ok {
		t.Error("backwards clock refilled")
	}
}

// TestLongWindows: however long the window, a key's requests past its
// limit are refused, with a wait (x/time/rate reads a wait of about
// math.MaxInt64 nanoseconds as a negative one and allows the request).
func TestLongWindows(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, tt := range []struct {
		n      int
		window time.Duration
	}{
		{1, 106751 * 24 * time.Hour},
		{1, math.MaxInt64},
		{1, math.MaxInt64 - 500},
		{2, math.MaxInt64},
	} {
		l := New(tt.n, tt.window, 0)
		for i := range tt.n {
			if ok, _ := l.Allow("a", now); !ok {
				t.Fatalf("%d per %v: request %d refused", tt.n, tt.window, i+1)
			}
		}
		if ok, wait := l.Allow("a", now); ok || wait <= 0 {
			t.Errorf("%d per %v: request %d: allowed %v, wait %v", tt.n, tt.window, tt.n+1, ok, wait)
		}
		l.Charge("b", now, true)
		if blocked, wait := l.Blocked("b", now); tt.n == 1 && (!blocked || wait <= 0) {
			t.Errorf("%d per %v: blocked %v, wait %v after a failure", tt.n, tt.window, blocked, wait)
		}
	}
}

func TestBlockedCharge(t *testing.T) {
	l := New(2, time.Minute, 0)
	now := time.Unix(1000, 0)
	for i := 0; i < 5; i++ {
		if blocked, _ := l.Blocked("a", now); blocked {
			t.Fatal("Blocked without any failure")
		}
		if ok, _ := l.Charge("a", now, false); !ok {
			t.Fatal("a success refused")
		}
	}
	// Charges in turn, each settled under the lock: the third finds the
	// bucket empty, failure or not, and is refused with the wait.
	for i, tt := range []struct {
		failed bool
		ok     bool
	}{{true, true}, {true, true}, {true, false}, {false, false}} {
		ok, wait := l.Charge("a", now, tt.failed)
		if ok != tt.ok || !ok && wait != 30*time.Second {
			t.Fatalf("charge %d (failed %v): ok=%v wait=%v, want ok=%v", i+1, tt.failed, ok, wait, tt.ok)
		}
	}
	if blocked, wait := l.Blocked("a", now); !blocked || wait != 30*time.Second {
		t.Fatalf("blocked=%v wait=%v after two failures", blocked, wait)
	}
	if blocked, _ := l.Blocked("a", now.Add(30*time.Second)); blocked {
		t.Fatal("still blocked after the refill")
	}
}

// TestUnchargedKeysNotRemembered: Blocked and a successful Charge do not
// remember a new key, so that a flood of addresses that fail nothing
// cannot push out the key of one past its limit.
func TestUnchargedKeysNotRemembered(t *testing.T) {
	l := New(2, time.Minute, 100)
	now := time.Unix(1000, 0)
	l.Charge("a", now, true)
	l.Charge("a", now, true)
	for i := 0; i < 1000; i++ {
		k := fmt.Sprint("k", i)
		if blocked, _ := l.Blocked(k, now); blocked {
			t.Fatalf("%s blocked", k)
		}
		if ok, _ := l.Charge(k, now, false); !ok {
			t.Fatalf("%s refused", k)
		}
	}
	if n := l.Len(); n != 1 {
		t.Fatalf("%d keys remembered, want 1", n)
	}
	if blocked, _ := l.Blocked("a", now); !blocked {
		t.Fatal("a is no longer blocked")
	}
}

func TestBoundedKeys(t *testing.T) {
	l := New(1, time.Hour, 100)
	now := time.Unix(1000, 0)
	for i := 0; i < 1000; i++ {
		l.Allow(fmt.Sprint("k", i), now.Add(time.Duration(i)*time.Millisecond))
	}
	if n := l.Len(); n > 100 {
		t.Fatalf("%d keys kept, limit 100", n)
	}
	// The most recent key is still limited.
	if ok, _ := l.Allow("k999", now.Add(time.Second)); ok {
		t.Fatal("the newest key was forgotten")
	}
}

// TestAddrKeys: an IPv4 address is one key; an IPv6 address two, its
// /64 and its /48 (at NetworkScale); an IPv4-mapped IPv6 address is its
// IPv4 address; a zone and a port do not matter.
func TestAddrKeys(t *testing.T) {
	const wide = NetworkScale
	for _, tt := range []struct {
		in   string
		want []Key
	}{
		{"127.0.0.1:5555", []Key{{Name: "127.0.0.1"}}},
		{"127.0.0.1", []Key{{Name: "127.0.0.1"}}},
		{"[::ffff:10.0.0.1]:80", []Key{{Name: "10.0.0.1"}}},
		{"::ffff:203.0.113.9", []Key{{Name: "203.0.113.9"}}},
		{"[2001:db8:1:2:3:4:5:6]:443", []Key{{Name: "2001:db8:1:2::/64"}, {Name: "2001:db8:1::/48", Scale: wide}}},
		{"2001:db8:1:2:ffff:4:5:6", []Key{{Name: "2001:db8:1:2::/64"}, {Name: "2001:db8:1::/48", Scale: wide}}},
		{"2001:db8:1:ff00::1", []Key{{Name: "2001:db8:1:ff00::/64"}, {Name: "2001:db8:1::/48", Scale: wide}}},
		{"2001:db8:2:2::1", []Key{{Name: "2001:db8:2:2::/64"}, {Name: "2001:db8:2::/48", Scale: wide}}},
		{"[fe80::1%eth0]:1", []Key{{Name: "fe80::/64"}, {Name: "fe80::/48", Scale: wide}}},
		{"::1", []Key{{Name: "::/64"}, {Name: "::/48", Scale: wide}}},
		{"not-an-address", []Key{{Name: "not-an-address"}}},
	} {
		if got := AddrKeys(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("AddrKeys(%q) = %v, want %v", tt.in, got, tt.want)
		}
		if got := AddrKey(tt.in); got != tt.want[0].Name {
			t.Errorf("AddrKey(%q) = %q, want %q", tt.in, got, tt.want[0].Name)
		}
	}
}

// TestNetworkBudget: the /64s of one /48 share NetworkScale times the
// budget of one; a request refused by either bucket takes from neither;
// another /48 is not affected.
func TestNetworkBudget(t *testing.T) {
	const n = 3
	now := time.Unix(1000, 0)
	for _, tt := range []struct {
		name string
		// take is called for the i-th request from addr and reports
		// whether it was let through.
		take func(l *Limiter, addr string) bool
	}{
		{"Allow", func(l *Limiter, addr string) bool {
			ok, _ := l.AllowKeys(AddrKeys(addr), now)
			return ok
		}},
		{"Charge", func(l *Limiter, addr string) bool {
			if blocked, _ := l.BlockedKeys(AddrKeys(addr), now); blocked {
				return false
			}
			ok, _ := l.ChargeKeys(AddrKeys(addr), now, true)
			return ok
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := New(n, time.Minute, 0)
			// One /64 takes its budget; the next one is refused.
			for i := range n {
				if !tt.take(l, fmt.Sprintf("2001:db8:7:0::%x", i+1)) {
					t.Fatalf("request %d of the first /64 refused", i+1)
				}
			}
			if tt.take(l, "2001:db8:7:0::ffff") {
				t.Fatal("the first /64 past its budget was let through")
			}
			// The other /64s of the /48 share what is left of its budget.
			for i := n; i < n*NetworkScale; i++ {
				if !tt.take(l, fmt.Sprintf("2001:db8:7:%x::1", i)) {
					t.Fatalf("request %d of the /48 refused", i+1)
				}
			}
			if tt.take(l, "2001:db8:7:ffff::1") {
				t.Fatalf("a fresh /64 of a /48 past its %d requests was let through", n*NetworkScale)
			}
			if !tt.take(l, "2001:db8:8::1") {
				t.Fatal("another /48 was refused")
			}
			if ok, wait := l.BlockedKeys(AddrKeys("2001:db8:7:ffff::1"), now); !ok || wait != time.Minute/(n*NetworkScale) {
				t.Errorf("the /48's wait: %v %v, want %v", ok, wait, time.Minute/(n*NetworkScale))
			}
		})
	}
}

func TestRetryAfter(t *testing.T) {
	for wait, want := range map[time.Duration]int{0: 1, time.Millisecond: 1, time.Second: 1, 1500 * time.Millisecond: 2, 30 * time.Second: 30} {
		if got := RetryAfter(wait); got != want {
			t.Errorf("RetryAfter(%v) = %d, want %d", wait, got, want)
		}
	}
}

// BenchmarkNewKeyWhenFull: a key not seen before, with the table full of
// buckets that have not refilled (many clients failing logins): the cost
// of making room.
func BenchmarkNewKeyWhenFull(b *testing.B) {
	l := New(10, time.Minute, 0)
	now := time.Unix(1000, 0)
	for i := range DefaultMaxKeys {
		k := fmt.Sprint("p", i)
		l.Blocked(k, now)
		l.Charge(k, now, true)
	}
	keys := make([]string, b.N)
	for i := range keys {
		keys[i] = fmt.Sprint("n", i)
	}
	b.ResetTimer()
	for i := range b.N {
		t := now.Add(time.Duration(i) * time.Microsecond)
		l.Blocked(keys[i], t)
		l.Charge(keys[i], t, true)
	}
}

// TestClientKey: the key is Caddy's client IP, except from a trusted proxy
// without trusted_proxies_strict, where Caddy's is the leftmost address of
// the client IP headers (the client's own words) and the key is the
// rightmost one (the nearest proxy's).
func TestClientKey(t *testing.T) {
	for _, tt := range []struct {
		name     string
		clientIP string // Caddy's client_ip var; "" for none
		trusted  bool
		strict   bool
		headers  []string // the server's client_ip_headers
		xff      []string
		realIP   string
		want     string
	}{
		{name: "no vars", want: "192.0.2.1"},
		{name: "not from a proxy", clientIP: "192.0.2.1", xff: []string{"203.0.113.5"}, want: "192.0.2.1"},
		{name: "strict", clientIP: "198.51.100.7", trusted: true, strict: true, xff: []string{"203.0.113.5, 198.51.100.7"}, want: "198.51.100.7"},
		{name: "leftmost spoofed", clientIP: "203.0.113.5", trusted: true, xff: []string{"203.0.113.5, 198.51.100.7"}, want: "198.51.100.7"},
		{name: "several header lines", clientIP: "203.0.113.5", trusted: true, xff: []string{"203.0.113.5", "198.51.100.7:4321"}, want: "198.51.100.7"},
		{name: "garbage skipped", clientIP: "203.0.113.5", trusted: true, xff: []string{"203.0.113.5, [2001:db8::1%eth0]:80, nonsense"}, want: "2001:db8::/64"},
		{name: "first configured header", clientIP: "203.0.113.5", trusted: true, headers: []string{"X-Real-IP", "X-Forwarded-For"},
			xff: []string{"203.0.113.5, 198.51.100.9"}, realIP: "198.51.100.7", want: "198.51.100.7"},
		{name: "no address in the headers", clientIP: "203.0.113.5", trusted: true, xff: []string{"unknown"}, want: "203.0.113.5"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/", nil)
			r.RemoteAddr = "192.0.2.1:1234"
			for _, v := range tt.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if tt.realIP != "" {
				r.Header.Set("X-Real-IP", tt.realIP)
			}
			if tt.clientIP != "" {
				headers := tt.headers
				if headers == nil {
					headers = []string{"X-Forwarded-For"}
				}
				srv := &caddyhttp.Server{ClientIPHeaders: headers}
				if tt.strict {
					srv.TrustedProxiesStrict = 1
				}
				vars := map[string]any{caddyhttp.ClientIPVarKey: tt.clientIP, caddyhttp.TrustedProxyVarKey: tt.trusted}
				ctx := context.WithValue(r.Context(), caddyhttp.VarsCtxKey, vars)
				r = r.WithContext(context.WithValue(ctx, caddyhttp.ServerCtxKey, srv))
			}
			if got := ClientKeys(r)[0].Name; got != tt.want {
				t.Errorf("ClientKeys = %q, want %q", got, tt.want)
			}
		})
	}
}
