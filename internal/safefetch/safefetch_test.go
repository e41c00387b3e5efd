package safefetch

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestPublic(t *testing.T) {
	for _, tc := range []struct {
		addr string
		want bool
	}{
		{"93.184.216.34", true},
		{"2606:2800:220:1::1", true},
		{"127.0.0.1", false},
		{"127.9.9.9", false},
		{"::1", false},
		{"::", false},
		{"::ffff:10.0.0.1", false},
		{"10.1.2.3", false},
		{"172.16.0.1", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false}, // cloud metadata
		{"168.63.129.16", false},   // Azure's platform endpoint (WireServer)
		{"168.63.129.17", true},
		{"fe80::1", false},
		{"fc00::1", false},
		{"0.0.0.0", false},
		{"100.64.0.1", false},
		{"::ffff:127.0.0.1", false},
		{"64:ff9b::7f00:1", false},
		{"224.0.0.1", false},
		{"192.0.2.1", false},
		{"198.51.100.7", false},
		{"203.0.113.9", false},
		{"192.88.99.1", false},
		{"::7f00:1", false},                             // IPv4-compatible 127.0.0.1
		{"::ffff:0:a9fe:a9fe", false},                   // IPv4-translated 169.254.169.254
		{"64:ff9b:1::a9fe:a9fe", false},                 // local-use NAT64
		{"2002:7f00:1::1", false},                       // 6to4 of 127.0.0.1
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", false}, // Teredo
		{"2001:db8::1", false},
		{"100::1", false},
		{"fec0::1", false},
		{"100:0:0:1::1", false},              // dummy prefix (RFC 9780)
		{"3fff::1", false},                   // documentation (RFC 9637)
		{"3fff:fff:ffff::1", false},          // the end of 3fff::/20
		{"5f00:1:2::1", false},               // SRv6 SIDs, an operator's own network (RFC 9602)
		{"3fff:1000::1", true},               // past 3fff::/20
		{"4000::1", false},                   // outside global unicast (2000::/3): reserved
		{"1fff:ffff::1", false},              // below 2000::/3
		{"2000::1", true},                    // the start of 2000::/3
		{"2001:4860:4860::8888", true},       // 2001:4860 is past 2001::/23
		{"2001:4860:4860::8888%eth0", false}, // a zone belongs to link-local addresses only
		{"8.8.8.8", true},
	} {
		if got := Public(netip.MustParseAddr(tc.addr)); got != tc.want {
			t.Errorf("Public(%s) = %v, want %v", tc.addr, got, tc.want)
		}
	}
}

// TestZonedAddressesRefused: a zone (fe80::1%eth0, "%25" in a URL) does
// not hide the range of the address it is attached to. netip.Prefix never
// contains a zoned address, so the listed ranges let through NAT64, 6to4,
// IPv4-compatible and the other wrapped or non-global addresses when
// written with a zone, and the client dialled them.
func TestZonedAddressesRefused(t *testing.T) {
	client, tr := NewClient(2*time.Second, Policy{})
	defer tr.Retire()
	for _, host := range []string{
		"64:ff9b::7f00:1%25lo",                      // NAT64 of 127.0.0.1
		"64:ff9b::a9fe:a9fe%25lo",                   // NAT64 of 169.254.169.254
		"64:ff9b:1::a9fe:a9fe%25lo",                 // local-use NAT64
		"::7f00:1%25lo",                             // IPv4-compatible 127.0.0.1
		"::ffff:0:a9fe:a9fe%25lo",                   // IPv4-translated 169.254.169.254
		"2002:7f00:1::1%25lo",                       // 6to4 of 127.0.0.1
		"2001:0:4136:e378:8000:63bf:3fff:fdd2%25lo", // Teredo
		"fec0::1%25lo",
		"100::1%25lo",
		"2001:db8::1%25lo",
	} {
		if Public(netip.MustParseAddr(strings.ReplaceAll(host, "%25", "%"))) {
			t.Errorf("Public(%s) = true", host)
		}
		res, err := client.Get("http://[" + host + "]:80/")
		if err == nil {
			res.Body.Close()
		}
		if !errors.Is(err, ErrAddressRefused) {
			t.Errorf("[%s]: err %v, want ErrAddressRefused (the address was dialled)", host, err)
		}
	}
}

// TestClientRefusesLoopback: a loopback server is not reached unless
// private addresses are allowed, and a redirect to it is refused too.
func TestClientRefusesLoopback(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()

	client, tr := NewClient(2*time.Second, Policy{})
	defer tr.Retire()
	_, err := client.Get(srv.URL)
	if !errors.Is(err, ErrAddressRefused) {
		t.Fatalf("loopback fetch: err %v, want ErrAddressRefused", err)
	}
	if hits != 0 {
		t.Fatalf("the loopback server was reached %d times", hits)
	}

	open, tr2 := NewClient(2*time.Second, Policy{AllowPrivate: true})
	defer tr2.Retire()
	res, err := open.Get(srv.URL)
	if err != nil {
		t.Fatalf("allowPrivate: %v", err)
	}
	res.Body.Close()
	if hits != 1 {
		t.Fatalf("allowPrivate: %d hits, want 1", hits)
	}
}

// TestRedirectToPrivateRefused: a redirect from an allowed host to a
// refused address, in any spelling, reaches nothing. The "public" host is
// 127.0.0.2, the one address the test allows besides public ones.
func TestRedirectToPrivateRefused(t *testing.T) {
	var hits atomic.Int64
	inner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer inner.Close()
	_, port, _ := net.SplitHostPort(inner.Listener.Addr().String())
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skip("127.0.0.2 is not available:", err)
	}
	outer := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	}))
	outer.Listener.Close()
	outer.Listener = ln
	outer.Start()
	defer outer.Close()

	allow := func(ip netip.Addr) bool { return ip == netip.MustParseAddr("127.0.0.2") || Public(ip) }
	client, tr := NewClientAllowing(2*time.Second, allow)
	defer tr.Retire()
	for _, to := range []string{
		"http://127.0.0.1:" + port + "/",
		"http://localhost:" + port + "/",
		"http://[::ffff:127.0.0.1]:" + port + "/",
		"http://0.0.0.0:" + port + "/",
		"http://2130706433:" + port + "/",
		"http://0177.0.0.1:" + port + "/",
		"http://[::1]:" + port + "/",
	} {
		res, err := client.Get(outer.URL + "/?to=" + url.QueryEscape(to))
		if err == nil {
			res.Body.Close()
			t.Errorf("redirect to %s: answered %d, want an error", to, res.StatusCode)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback server was reached %d times through redirects", n)
	}
	// The same client reaches the allowed host: the test can fail.
	res, err := client.Get(outer.URL + "/?to=" + url.QueryEscape(outer.URL+"/x"))
	if err == nil {
		res.Body.Close()
	}
	if err == nil || !strings.Contains(err.Error(), "too many redirects") {
		t.Errorf("allowed host: err %v, want it reached (until the redirect limit)", err)
	}
}

// TestResponseHeadersBounded: a response's header is read up to
// MaxHeaderBytes. Under net/http's default (10 MiB) each fetch held about
// 8 MiB of a hostile server's header whatever bounded the body (16 weighed
// at once: 133 MiB of heap).
func TestResponseHeadersBounded(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header int // bytes of header lines the server sends
		ok     bool
	}{
		{"ordinary", 4 << 10, true},
		{"just under", MaxHeaderBytes - 1024, true},
		{"over", MaxHeaderBytes + 1024, false},
		{"huge", 8 << 20, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				// Lines of 1,016 bytes: "X-Pad-000001: " and 1,000 more.
				line := strings.Repeat("a", 1000)
				for i := range tc.header / 1016 {
					w.Header().Set(fmt.Sprintf("X-Pad-%06d", i), line)
				}
				w.Header().Set("Content-Type", "image/png")
				_, _ = w.Write([]byte("body"))
			}))
			defer srv.Close()
			client, tr := NewClient(5*time.Second, Policy{AllowPrivate: true})
			defer tr.Retire()
			res, err := client.Get(srv.URL)
			if err == nil {
				res.Body.Close()
			}
			if ok := err == nil; ok != tc.ok {
				t.Errorf("%d bytes of header: err %v, want ok %v", tc.header, err, tc.ok)
			}
		})
	}
}

// TestMaxRedirects: a client follows MaxRedirects redirects, and refuses
// the one after (it stopped one short, at 4).
func TestMaxRedirects(t *testing.T) {
	srv, client := hopServer(t, nil)
	for _, tc := range []struct {
		redirects int
		ok        bool
	}{{0, true}, {MaxRedirects - 1, true}, {MaxRedirects, true}, {MaxRedirects + 1, false}} {
		res, err := client.Get(srv.URL + "/hop/" + strconv.Itoa(tc.redirects))
		if err == nil {
			_ = res.Body.Close()
		}
		if (err == nil) != tc.ok {
			t.Errorf("%d redirects: err %v, want followed %v", tc.redirects, err, tc.ok)
		}
	}
}

// hopServer serves /hop/<n>, which redirects n times and then answers,
// counting each request in hits (when not nil), and returns it with a
// client that may reach it; both end with t.
func hopServer(t *testing.T, hits *atomic.Int64) (*httptest.Server, *http.Client) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if hits != nil {
			hits.Add(1)
		}
		n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop/"))
		if n > 0 {
			http.Redirect(w, r, "/hop/"+strconv.Itoa(n-1), http.StatusFound)
			return
		}
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(srv.Close)
	client, tr := NewClient(5*time.Second, Policy{AllowPrivate: true})
	t.Cleanup(tr.Retire)
	return srv, client
}
