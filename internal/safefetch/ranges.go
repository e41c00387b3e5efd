package safefetch

import (
	"fmt"
	"net/netip"
	"strings"
)

// Policy says which addresses a client may dial besides public unicast
// ones (see Public).
type Policy struct {
	// AllowPrivate allows every address: private, loopback, link-local
	// and the rest.
	AllowPrivate bool

	// Ranges are the only non-public addresses allowed when AllowPrivate
	// is not set (ParseRange reads them).
	Ranges []netip.Prefix
}

// Allow returns the check NewClientAllowing takes: nil (every address)
// with AllowPrivate, else public addresses and those inside Ranges.
func (p Policy) Allow() func(netip.Addr) bool {
	if p.AllowPrivate {
		return nil
	}
	if len(p.Ranges) == 0 {
		return Public
	}
	ranges := p.Ranges
	return func(ip netip.Addr) bool {
		if Public(ip) {
			return true
		}
		// A zone only names the interface a link-local address is
		// reached on; netip.Prefix never contains a zoned address, so
		// fe80::/10 would not cover fe80::1%eth0. The unmapped form is
		// what the ranges are written in (ParseRange refuses mapped ones).
		ip = ip.Unmap().WithZone("")
		for _, r := range ranges {
			if r.Contains(ip) {
				return true
			}
		}
		return false
	}
}

// ParseRange reads a range of addresses to allow as Caddy's
// trusted_proxies reads its ranges: a CIDR range (10.0.0.0/8, fd00::/8)
// or one address (192.168.1.7, a /32 or /128). The range is returned
// masked (10.1.2.3/8 is 10.0.0.0/8).
func ParseRange(s string) (netip.Prefix, error) {
	var p netip.Prefix
	if strings.Contains(s, "/") {
		var err error
		if p, err = netip.ParsePrefix(s); err != nil {
			return p, fmt.Errorf("%q is not a CIDR range: write one such as 10.0.0.0/8 or fd00::/8, or one address such as 192.168.1.7", s)
		}
	} else {
		ip, err := netip.ParseAddr(s)
		if err != nil || ip.Zone() != "" {
			return p, fmt.Errorf("%q is not an IP address: write one such as 192.168.1.7 or fd00::7, or a CIDR range such as 10.0.0.0/8", s)
		}
		p = netip.PrefixFrom(ip, ip.BitLen())
	}
	if p.Addr().Is4In6() {
		// The address dialled is checked unmapped, so a mapped range
		// would never match.
		return netip.Prefix{}, fmt.Errorf("%q is an IPv4-mapped IPv6 range: write it in IPv4, such as 10.0.0.0/8", s)
	}
	return p.Masked(), nil
}
