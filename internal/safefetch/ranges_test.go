package safefetch

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseRange(t *testing.T) {
	for _, tc := range []struct {
		in, want, err string
	}{
		{in: "10.0.0.0/8", want: "10.0.0.0/8"},
		{in: "10.1.2.3/8", want: "10.0.0.0/8"}, // masked, as Caddy's trusted_proxies keeps it
		{in: "192.168.1.7", want: "192.168.1.7/32"},
		{in: "127.0.0.2/32", want: "127.0.0.2/32"},
		{in: "fd00::/8", want: "fd00::/8"},
		{in: "fd00::7", want: "fd00::7/128"},
		{in: "0.0.0.0/0", want: "0.0.0.0/0"},
		{in: "", err: `"" is not an IP address`},
		{in: "10.0.0.300", err: `"10.0.0.300" is not an IP address: write one such as 192.168.1.7`},
		{in: "10.0.0.0/33", err: `"10.0.0.0/33" is not a CIDR range: write one such as 10.0.0.0/8`},
		{in: "10.0.0.0/", err: `"10.0.0.0/" is not a CIDR range`},
		{in: "intranet.local", err: `"intranet.local" is not an IP address`},
		{in: "fe80::1%eth0", err: `"fe80::1%eth0" is not an IP address`},
		{in: "::ffff:10.0.0.0/104", err: `"::ffff:10.0.0.0/104" is an IPv4-mapped IPv6 range: write it in IPv4`},
		{in: "::ffff:10.1.2.3", err: `IPv4-mapped`},
	} {
		got, err := ParseRange(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseRange(%q) = %v, %v; want error containing %q", tc.in, got, err, tc.err)
			}
		case err != nil || got.String() != tc.want:
			t.Errorf("ParseRange(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}

// TestParseAllowPrivate: "all" alone opens every address, ranges only
// themselves; nothing at all, or "all" beside ranges, is refused.
func TestParseAllowPrivate(t *testing.T) {
	for _, c := range []struct {
		name   string
		args   []string
		all    bool
		ranges []string
		err    string
	}{
		{name: "all", args: []string{"all"}, all: true},
		{name: "ranges", args: []string{"10.0.0.0/8", "fd00::7"}, ranges: []string{"10.0.0.0/8", "fd00::7"}},
		{name: "none", err: `name the ranges to allow, such as 10.0.0.0/8 fd00::/8, or write "all"`},
		{name: "all and a range", args: []string{"all", "10.0.0.0/8"}, err: `"all" already allows every address`},
		{name: "a range and all", args: []string{"10.0.0.0/8", "all"}, err: `"all" already allows every address`},
		{name: "bad range", args: []string{"10.0.0.0/8", "everything"}, err: `"everything" is not an IP address`},
	} {
		t.Run(c.name, func(t *testing.T) {
			all, ranges, err := ParseAllowPrivate(c.args)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				if all || ranges != nil {
					t.Errorf("an error, yet all %v and ranges %q", all, ranges)
				}
				return
			}
			if err != nil || all != c.all || !slices.Equal(ranges, c.ranges) {
				t.Errorf("got %v, %q, %v; want %v, %q", all, ranges, err, c.all, c.ranges)
			}
		})
	}
}

func TestPolicyAllow(t *testing.T) {
	ranges := func(list ...string) []netip.Prefix {
		var ps []netip.Prefix
		for _, s := range list {
			p, err := ParseRange(s)
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, p)
		}
		return ps
	}
	intranet := Policy{Ranges: ranges("10.0.0.0/8", "fd00::/8", "192.168.1.7")}
	for _, tc := range []struct {
		policy Policy
		addr   string
		want   bool
	}{
		{intranet, "10.1.2.3", true},
		{intranet, "::ffff:10.1.2.3", true}, // the mapped form of an allowed address
		{intranet, "fd00::1", true},
		{intranet, "192.168.1.7", true},
		{intranet, "8.8.8.8", true}, // public addresses stay allowed
		{intranet, "192.168.1.8", false},
		{intranet, "127.0.0.1", false}, // loopback: Caddy's admin API
		{intranet, "::1", false},
		{intranet, "169.254.169.254", false}, // cloud metadata
		{intranet, "fd00:ec2::254", false},   // AWS metadata, though inside fd00::/8, which the operator listed
		{intranet, "fd00:ec2::253", true},
		{intranet, "172.16.0.1", false},
		{intranet, "0.0.0.0", false},
		{intranet, "64:ff9b::a01:203", false}, // NAT64 of 10.1.2.3: not a listed range
		{intranet, "fe80::1%eth0", false},
		{Policy{Ranges: ranges("fe80::/10")}, "fe80::1%eth0", true}, // the zone does not hide an allowed range
		{Policy{Ranges: ranges("fe80::/10")}, "fe80::1", true},
		{Policy{Ranges: ranges("fe80::/10")}, "fd00::1", false},
		{Policy{}, "10.1.2.3", false},
		{Policy{}, "8.8.8.8", true},
		{Policy{AllowPrivate: true}, "127.0.0.1", true},
		{Policy{AllowPrivate: true}, "169.254.169.254", false}, // cloud metadata: never
		{Policy{AllowPrivate: true}, "::ffff:169.254.169.254", false},
		{Policy{AllowPrivate: true}, "169.254.169.253", true},
		{Policy{AllowPrivate: true}, "fd00:ec2::254", false},
		{Policy{AllowPrivate: true}, "168.63.129.16", false},
		{Policy{AllowPrivate: true}, "100.100.100.200", false},
		{Policy{Ranges: ranges("169.254.0.0/16")}, "169.254.169.254", false},
		{Policy{Ranges: ranges("169.254.0.0/16")}, "169.254.170.2", false},
		{Policy{Ranges: ranges("169.254.0.0/16")}, "169.254.1.1", true},
		{Policy{Ranges: ranges("100.64.0.0/10")}, "100.100.100.200", false},
		{Policy{Ranges: ranges("100.64.0.0/10")}, "100.100.100.201", true},
		{Policy{AllowPrivate: true, Ranges: ranges("10.0.0.0/8")}, "127.0.0.1", true},
		// Cloud metadata wrapped in IPv6, which a gateway unwraps into
		// 169.254.169.254 (or 100.100.100.200): never either.
		{Policy{AllowPrivate: true}, "64:ff9b::a9fe:a9fe", false},                 // NAT64, well-known prefix
		{Policy{AllowPrivate: true}, "64:ff9b::a9fe:a9fd", true},                  // NAT64 of 169.254.169.253
		{Policy{AllowPrivate: true}, "64:ff9b:1:a9fe:a9:fe00::", false},           // local-use NAT64, a /48
		{Policy{AllowPrivate: true}, "64:ff9b:1:ffa9:fe:a9fe::", false},           // a /56
		{Policy{AllowPrivate: true}, "64:ff9b:1:ffff:a9:fea9:fe00:0", false},      // a /64
		{Policy{AllowPrivate: true}, "64:ff9b:1:ffff:ffff:ffff:a9fe:a9fe", false}, // a /96
		{Policy{AllowPrivate: true}, "::a9fe:a9fe", false},                        // IPv4-compatible
		{Policy{AllowPrivate: true}, "::ffff:0:a9fe:a9fe", false},                 // IPv4-translated
		{Policy{AllowPrivate: true}, "2002:a9fe:a9fe::1", false},                  // 6to4
		{Policy{AllowPrivate: true}, "2001:0:a9fe:a9fe::1", false},                // Teredo server
		{Policy{AllowPrivate: true}, "2001:0:102:304::5601:5601", false},          // Teredo client (inverted)
		{Policy{AllowPrivate: true}, "64:ff9b::6464:64c8", false},                 // NAT64 of Alibaba's 100.100.100.200
		{Policy{AllowPrivate: true}, "64:ff9b::a01:203", true},                    // NAT64 of 10.1.2.3
		{Policy{Ranges: ranges("64:ff9b::/96")}, "64:ff9b::a9fe:a9fe", false},
		{Policy{Ranges: ranges("64:ff9b::/96")}, "64:ff9b::a01:203", true},
		{Policy{Ranges: ranges("2002::/16")}, "2002:a9fe:a9fe::1", false},
	} {
		allow := tc.policy.Allow()
		got := allow == nil || allow(netip.MustParseAddr(tc.addr))
		if got != tc.want {
			t.Errorf("%+v: %s allowed %v, want %v", tc.policy, tc.addr, got, tc.want)
		}
	}
}

// TestClientAllowsOnlyListedRanges: with ranges listed, a server inside
// them is dialled, a loopback server outside them is not (the check is
// on the address dialled, so a host name that resolves there is refused
// too).
func TestClientAllowsOnlyListedRanges(t *testing.T) {
	listen := func(addr string) (*httptest.Server, *atomic.Int64) {
		ln, err := net.Listen("tcp", addr+":0")
		if err != nil {
			t.Skipf("%s is not available: %v", addr, err)
		}
		var hits atomic.Int64
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
		srv.Listener.Close()
		srv.Listener = ln
		srv.Start()
		t.Cleanup(srv.Close)
		return srv, &hits
	}
	allowed, allowedHits := listen("127.0.0.2")
	other, otherHits := listen("127.0.0.1")
	_, otherPort, _ := net.SplitHostPort(other.Listener.Addr().String())
	p2, _ := ParseRange("127.0.0.2/32")
	p10, _ := ParseRange("10.0.0.0/8")
	for _, tc := range []struct {
		name   string
		ranges []netip.Prefix
		url    string
		ok     bool
	}{
		{"inside the range", []netip.Prefix{p2}, allowed.URL, true},
		{"loopback outside the range", []netip.Prefix{p2}, other.URL, false},
		{"localhost outside the range", []netip.Prefix{p2}, "http://localhost:" + otherPort + "/", false},
		{"loopback with only 10/8", []netip.Prefix{p10}, allowed.URL, false},
		{"loopback with only 10/8, the other", []netip.Prefix{p10}, other.URL, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client, tr := NewClient(2*time.Second, Policy{Ranges: tc.ranges})
			defer tr.Retire()
			res, err := client.Get(tc.url)
			if err == nil {
				res.Body.Close()
			}
			if tc.ok && err != nil {
				t.Errorf("%s: %v, want it reached", tc.url, err)
			}
			if !tc.ok && !errors.Is(err, ErrAddressRefused) {
				t.Errorf("%s: err %v, want ErrAddressRefused", tc.url, err)
			}
		})
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("127.0.0.1 was reached %d times", n)
	}
	if n := allowedHits.Load(); n != 1 {
		t.Errorf("127.0.0.2 was reached %d times, want 1", n)
	}
}
