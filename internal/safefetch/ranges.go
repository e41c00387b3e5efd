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
// it allows, nor the IPv6 addresses that wrap them (isMetadata): no image
// or upload is served there, and they hand out the machine's credentials.
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
		if isMetadata(ip) {
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

// isMetadata reports whether ip is a cloud metadata endpoint, as itself
// or wrapped in an IPv6 address that a gateway unwraps into it: through
// NAT64 (64:ff9b::a9fe:a9fe is 169.254.169.254 wherever a translator
// serves the well-known prefix), 6to4, Teredo, or the IPv4-compatible
// and -translated forms. Such an address is not public, but
// AllowPrivate, or a range such as 64:ff9b::/96, would open it.
func isMetadata(ip netip.Addr) bool {
	if slices.Contains(metadata, ip) {
		return true
	}
	for _, v4 := range wrappedIPv4(ip) {
		if slices.Contains(metadata, v4) {
			return true
		}
	}
	return false
}

// wrappedIPv4 lists the IPv4 addresses ip may carry, by the range it is
// in (unmapped IPv4-mapped addresses are plain IPv4 already): the last 32
// bits of the IPv4-compatible, IPv4-translated and well-known NAT64
// ranges; every place RFC 6052 puts the address for the prefix lengths
// the local-use NAT64 range 64:ff9b:1::/48 may be carved into (/48, /56,
// /64, /96); the 6to4 gateway; Teredo's server and client.
func wrappedIPv4(ip netip.Addr) []netip.Addr {
	if !ip.Is6() {
		return nil
	}
	b := ip.As16()
	at := func(i ...int) netip.Addr { return netip.AddrFrom4([4]byte{b[i[0]], b[i[1]], b[i[2]], b[i[3]]}) }
	last := at(12, 13, 14, 15)
	switch {
	case compatible.Contains(ip), translated.Contains(ip), nat64.Contains(ip):
		return []netip.Addr{last}
	case nat64Local.Contains(ip):
		return []netip.Addr{at(6, 7, 9, 10), at(7, 9, 10, 11), at(9, 10, 11, 12), last}
	case sixToFour.Contains(ip):
		return []netip.Addr{at(2, 3, 4, 5)}
	case teredo.Contains(ip):
		client := netip.AddrFrom4([4]byte{^b[12], ^b[13], ^b[14], ^b[15]})
		return []netip.Addr{at(4, 5, 6, 7), client}
	}
	return nil
}

// The IPv6 ranges that carry an IPv4 address (wrappedIPv4).
var (
	compatible = netip.MustParsePrefix("::/96")
	translated = netip.MustParsePrefix("::ffff:0:0:0/96")
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	nat64Local = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	teredo     = netip.MustParsePrefix("2001::/32")
)

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
