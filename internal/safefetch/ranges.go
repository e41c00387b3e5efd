package safefetch

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
)

// Policy says which addresses a client may dial besides public unicast
// ones (see Public). Cloud metadata endpoints are never dialled, whatever
// it allows: no image or upload is served there, and they hand out the
// machine's credentials.
type Policy struct {
	// AllowPrivate allows every address but cloud metadata: private,
	// loopback, link-local and the rest.
	AllowPrivate bool

	// Ranges are the only non-public addresses allowed when AllowPrivate
	// is not set (ParseRange reads them).
	Ranges []netip.Prefix
}

// Allow returns the check NewClientAllowing takes: with AllowPrivate
// every address but cloud metadata, else public addresses and those
// inside Ranges but cloud metadata.
func (p Policy) Allow() func(netip.Addr) bool {
	if !p.AllowPrivate && len(p.Ranges) == 0 {
		return Public // which metadata addresses are not
	}
	all, ranges := p.AllowPrivate, p.Ranges
	return func(ip netip.Addr) bool {
		if Public(ip) {
			return true
		}
		// A zone only names the interface a link-local address is
		// reached on; netip.Prefix never contains a zoned address, so
		// fe80::/10 would not cover fe80::1%eth0. The unmapped form is
		// what the ranges are written in (ParseRange refuses mapped ones).
		ip = ip.Unmap().WithZone("")
		if slices.Contains(metadata, ip) {
			return false
		}
		if all {
			return true
		}
		for _, r := range ranges {
			if r.Contains(ip) {
				return true
			}
		}
		return false
	}
}

// metadata are the cloud metadata endpoints that sit inside ranges an
// operator may open (link-local, private, carrier NAT): AWS, Google,
// Azure, Oracle, OpenStack and DigitalOcean's instance metadata and its
// IPv6 form on AWS; AWS's container and pod credential endpoints; Azure's
// platform endpoint; Alibaba's and Tencent's metadata.
var metadata = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"),
	netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("169.254.170.2"),
	netip.MustParseAddr("169.254.170.23"),
	netip.MustParseAddr("fd00:ec2::23"),
	netip.MustParseAddr("168.63.129.16"),
	netip.MustParseAddr("100.100.100.200"),
	netip.MustParseAddr("169.254.0.23"),
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

// ParseAllowPrivate reads the arguments of a Caddyfile's allow_private:
// "all" for every non-public address (all is true), or the ranges to
// allow, each checked by ParseRange. No argument at all is an error
// rather than either: an environment placeholder such as {$RANGES} that
// is unset leaves the setting bare, and that must not open every address.
func ParseAllowPrivate(args []string) (all bool, ranges []string, err error) {
	if len(args) == 0 {
		return false, nil, errors.New(`name the ranges to allow, such as 10.0.0.0/8 fd00::/8, or write "all" for every private, loopback and link-local address`)
	}
	if slices.Contains(args, "all") {
		if len(args) > 1 {
			return false, nil, errors.New(`"all" already allows every address: give either "all" or ranges`)
		}
		return true, nil, nil
	}
	for _, arg := range args {
		if _, err := ParseRange(arg); err != nil {
			return false, nil, err
		}
	}
	return false, args, nil
}
