package fsp

import (
	"strings"
	"testing"
)

// TestFetchPolicy: private_ranges is read when the handler loads; a bad
// element is named by its path and index, and a range beside
// allow_private (which allows every address) is refused.
func TestFetchPolicy(t *testing.T) {
	for _, c := range []struct {
		name   string
		all    bool
		ranges []string
		want   string // the error's text; "" loads
		n      int    // ranges read
	}{
		{name: "public only"},
		{name: "all", all: true},
		{name: "ranges", ranges: []string{"10.0.0.0/8", "fd00::/8", "192.168.1.7"}, n: 3},
		{name: "bad second element", ranges: []string{"10.0.0.0/8", "10.0.0.0/40"},
			want: `fsp: private_ranges[1]: "10.0.0.0/40" is not a CIDR range: write one such as 10.0.0.0/8 or fd00::/8, or one address such as 192.168.1.7`},
		{name: "empty element", ranges: []string{""}, want: `fsp: private_ranges[0]: "" is not an IP address`},
		{name: "host name", ranges: []string{"127.0.0.2", "localhost"}, want: `fsp: private_ranges[1]: "localhost" is not an IP address`},
		{name: "with allow_private", all: true, ranges: []string{"10.0.0.0/8"},
			want: "fsp: private_ranges: allow_private already allows every address; set one of them"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := fetchPolicy(c.all, c.ranges)
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("error %v, want it to contain %q", err, c.want)
				}
				return
			}
			if err != nil || p.AllowPrivate != c.all || len(p.Ranges) != c.n {
				t.Errorf("policy %+v, %v; want all %v and %d ranges", p, err, c.all, c.n)
			}
		})
	}
}
