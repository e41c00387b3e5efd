// Package safefetch makes HTTP clients for fetching URLs that come from
// untrusted input (a design's image sources): they never connect to a
// private, loopback or link-local address unless told to (all of them, or
// the ranges an operator lists), checked on the address actually dialled
// (after DNS, on every redirect), and they bound time and redirects. fsp fetches upload sources and content_service design
// images through it.
package safefetch

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/designbridge/caddy-designbridge/internal/retire"
)

// ErrAddressRefused is returned (wrapped) when a dial is refused for its
// address.
var ErrAddressRefused = errors.New("address not allowed")

// MaxRedirects is the most redirects a client follows.
const MaxRedirects = 5

// MaxHeaderBytes bounds a response's header. An image's header takes a
// few hundred bytes; net/http's default of 10 MiB let a hostile server
// make each fetch hold about 8 MiB, whatever bounds its body.
const MaxHeaderBytes = 64 << 10

// NewClient returns a client whose every connection and whole request
// (redirects included) take at most timeout, and that dials public
// unicast addresses (see Public) and those p allows. The transport is
// returned too, so that its owner's Cleanup can retire it.
func NewClient(timeout time.Duration, p Policy) (*http.Client, *retire.Transport) {
	return NewClientAllowing(timeout, p.Allow())
}

// NewClientAllowing is NewClient dialling only the addresses allow accepts
// (every address when allow is nil), checked on the address actually
// dialled: after DNS, on every redirect.
func NewClientAllowing(timeout time.Duration, allow func(netip.Addr) bool) (*http.Client, *retire.Transport) {
	dialer := &net.Dialer{Timeout: timeout}
	if allow != nil {
		dialer.Control = func(_, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			ip, err := netip.ParseAddr(host)
			if err != nil || !allow(ip) {
				return fmt.Errorf("%w: %s", ErrAddressRefused, host)
			}
			return nil
		}
	}
	transport := retire.New(&http.Transport{
		Proxy:                  nil, // a proxy would hide the real destination from Control
		DialContext:            dialer.DialContext,
		TLSHandshakeTimeout:    timeout,
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: MaxHeaderBytes,
		MaxIdleConns:           8,
		IdleConnTimeout:        30 * time.Second,
	})
	client := &http.Client{
		Transport: budgeted{transport},
		Timeout:   timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			// via holds the requests made so far: the first and one
			// per redirect followed.
			if len(via) > MaxRedirects {
				return errors.New("too many redirects")
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirect to scheme %q", req.URL.Scheme)
			}
			return nil
		},
	}
	return client, transport
}

// Public reports whether ip is a public unicast address.
func Public(ip netip.Addr) bool {
	ip = ip.Unmap()
	if ip.Zone() != "" {
		// A zone names the interface of a link-local address; on any
		// other it hid the address's range, as a netip.Prefix never
		// contains a zoned address (64:ff9b::7f00:1%eth0 was dialled).
		return false
	}
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() || ip.IsMulticast() ||
		ip.IsUnspecified() {
		return false
	}
	if ip.Is6() && !globalUnicast.Contains(ip) {
		// IANA has set aside all of IPv6 but 2000::/3 (multicast,
		// local and special-purpose ranges, and ranges still reserved
		// that may be given a local meaning, as 5f00::/16 was for an
		// operator's own SRv6 network).
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// globalUnicast is IPv6's global unicast space.
var globalUnicast = netip.MustParsePrefix("2000::/3")

// nonPublic are ranges the standard predicates do not cover but that reach
// no public host (IANA's special-purpose registries): "this network",
// shared address space (carrier NAT), IETF protocol assignments, the
// documentation and benchmarking networks, reserved; and the IPv6 ranges
// that carry an IPv4 address a gateway may unwrap into any of the above
// (IPv4-compatible and -translated, NAT64 global and local, 6to4, Teredo
// and the rest of 2001::/23), or that are not global (discard-only,
// documentation, deprecated site-local). IPv6 outside 2000::/3 is refused
// before these. One public address is here too: Azure's platform endpoint
// (WireServer), which every Azure VM reaches and which answers as cloud
// metadata does.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("192.88.99.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("168.63.129.16/32"),
	netip.MustParsePrefix("::/96"),
	netip.MustParsePrefix("::ffff:0:0:0/96"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("2001::/23"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("2002::/16"),
	netip.MustParsePrefix("3fff::/20"),
	netip.MustParsePrefix("fec0::/10"),
}
