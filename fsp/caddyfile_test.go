package fsp

import (
	"slices"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// TestUnmarshalCaddyfileErrors: the Caddyfile refuses what it cannot
// mean, naming the token and, through d.Errf, the line.
func TestUnmarshalCaddyfileErrors(t *testing.T) {
	const base = "fsp {\n local /srv/fsp\n public_url http://x\n"
	for _, c := range []struct{ name, input, want string }{
		{"local twice", "fsp {\n local /a\n local /b\n}", "fsp: local given twice"},
		{"local and s3", "fsp {\n local /a\n s3 {\n }\n}", "fsp: s3: storage already specified"},
		{"s3 twice", "fsp {\n s3 {\n }\n s3 {\n }\n}", "fsp: s3 given twice"},
		{"root twice", base + " root {http.request.header.X-BEE-Uid}\n root a/{http.request.header.X-BEE-Uid}\n}", "fsp: root given twice"},
		{"public_url twice", base + " public_url http://y\n}", "fsp: public_url given twice"},
		{"max_size twice", base + " max_size 1MB\n max_size 2MB\n}", "fsp: max_size given twice"},
		{"min_upload_rate twice", base + " min_upload_rate 1KiB/s\n min_upload_rate 2KiB/s\n}", "fsp: min_upload_rate given twice"},
		{"max_image_memory twice", base + " max_image_memory 1MiB\n max_image_memory 2MiB\n}", "fsp: max_image_memory given twice"},
		{"fetch_timeout twice", base + " fetch_timeout 1s\n fetch_timeout 2s\n}", "fsp: fetch_timeout given twice"},
		{"max_uploads twice", base + " max_uploads 1\n max_uploads 2\n}", "fsp: max_uploads given twice"},
		{"allow_private twice", base + " allow_private all\n allow_private all\n}", "fsp: allow_private given twice"},
		{"allow_anonymous twice", base + " allow_anonymous\n allow_anonymous\n}", "fsp: allow_anonymous given twice"},
		{"s3 bucket twice", "fsp {\n s3 {\n bucket aaa\n bucket bbb\n }\n}", "fsp: s3: bucket given twice"},
		{"s3 bucket twice, the first empty", "fsp {\n s3 {\n bucket \"\"\n bucket bbb\n }\n}", "fsp: s3: bucket given twice"},
		{"s3 insecure twice", "fsp {\n s3 {\n insecure\n insecure\n }\n}", "fsp: s3: insecure given twice"},
		{"s3 timeout twice", "fsp {\n s3 {\n timeout 1s\n timeout 2s\n }\n}", "fsp: s3: timeout given twice"},
		{"block after a flag", base + " allow_private all {\n  max_size 1MB\n }\n}", "fsp: allow_private takes no block, at Testfile:4"},
		{"empty block after a flag", base + " allow_anonymous {\n }\n}", "fsp: allow_anonymous takes no block, at Testfile:4"},
		{"empty block on one line", base + " allow_anonymous { }\n}", "fsp: allow_anonymous takes no block"},
		{"block after a value", base + " max_size 1MB {\n  x\n }\n}", "fsp: max_size takes no block"},
		{"block after shared", base + " shared A a {\n  x\n }\n}", "fsp: shared takes no block"},
		{"block after an s3 flag", "fsp {\n s3 {\n insecure {\n  x\n }\n }\n}", "fsp: s3: insecure takes no block"},
		{"local without a folder", "fsp {\n local\n public_url http://x\n}", "fsp: local: no value (is a {$VAR} in it unset or empty?)"},
		{"local with two folders", "fsp {\n local /a /b\n}", `fsp: local: one value, got extra "/b"`},
		{"public_url without a value", "fsp {\n local /a\n public_url\n}", "fsp: public_url: no value"},
		{"max_size without a value", base + " max_size\n}", "fsp: max_size: no value (is a {$VAR} in it unset or empty?)"},
		{"max_size with two values", base + " max_size 20 MB\n}", `fsp: max_size: one value, got extra "MB"`},
		{"fetch_timeout without a value", base + " fetch_timeout\n}", "fsp: fetch_timeout: no value"},
		{"max_uploads with two values", base + " max_uploads 1 2\n}", `fsp: max_uploads: one value, got extra "2"`},
		{"shared with one value", base + " shared logos\n}", `fsp: shared: want <name> <storage path>, got 1 value`},
		{"allow_types without a value", base + " allow_types\n}", "fsp: allow_types: no value"},
		{"allow_private with a word", base + " allow_private yes\n}", `fsp: allow_private: "yes" is not an IP address: write one such as 192.168.1.7 or fd00::7, or a CIDR range such as 10.0.0.0/8, at Testfile:4`},
		{"allow_private with a bad range", base + " allow_private 10.0.0.0/8 fd00::/129\n}", `fsp: allow_private: "fd00::/129" is not a CIDR range: write one such as 10.0.0.0/8 or fd00::/8`},
		{"allow_private with a host name", base + " allow_private intranet.example\n}", `fsp: allow_private: "intranet.example" is not an IP address`},
		{"allow_private with a mapped range", base + " allow_private ::ffff:127.0.0.0/104\n}", `fsp: allow_private: "::ffff:127.0.0.0/104" is an IPv4-mapped IPv6 range: write it in IPv4`},
		{"allow_private with a zone", base + " allow_private fe80::1%eth0\n}", `fsp: allow_private: "fe80::1%eth0" is not an IP address`},
		{"allow_private ranges twice", base + " allow_private 10.0.0.0/8\n allow_private 192.168.0.0/16\n}", "fsp: allow_private given twice"},
		{"allow_private bare", base + " allow_private\n}", `fsp: allow_private: name the ranges to allow, such as 10.0.0.0/8 fd00::/8, or write "all" for every private, loopback and link-local address, at Testfile:4`},
		{"allow_private all and ranges", base + " allow_private 10.0.0.0/8 all\n}", `fsp: allow_private: "all" already allows every address: give either "all" or ranges`},
		{"allow_private ranges then all", base + " allow_private 10.0.0.0/8\n allow_private all\n}", "fsp: allow_private given twice"},
		{"block after ranges", base + " allow_private 10.0.0.0/8 {\n  max_size 1MB\n }\n}", "fsp: allow_private takes no block, at Testfile:4"},
		{"s3 with an argument", "fsp {\n s3 mybucket\n}", `fsp: s3 takes no value, got "mybucket"`},
		{"s3 bucket without a value", "fsp {\n s3 {\n bucket\n }\n}", "fsp: s3: bucket: no value (is a {$VAR} in it unset or empty?)"},
		{"s3 timeout with two values", "fsp {\n s3 {\n timeout 1 s\n }\n}", `fsp: s3: timeout: one value, got extra "s"`},
		{"s3 insecure with a value", "fsp {\n s3 {\n insecure yes\n }\n}", `fsp: s3: insecure takes no value, got "yes"`},
		{"block after an s3 value", "fsp {\n s3 {\n bucket aaa {\n  x\n }\n }\n}", "fsp: s3: bucket takes no block"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var h Handler
			err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(c.input))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
}

// TestUnmarshalCaddyfileRepeatable: shared and allow_types add up.
func TestUnmarshalCaddyfileRepeatable(t *testing.T) {
	var h Handler
	in := "fsp {\n local /a\n public_url http://x\n shared A a\n shared B b\n allow_types image/png\n allow_types image/gif text/plain\n}"
	if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(in)); err != nil {
		t.Fatal(err)
	}
	if len(h.Shared) != 2 || strings.Join(h.AllowTypes, " ") != "image/png image/gif text/plain" {
		t.Errorf("shared %v, allow_types %v", h.Shared, h.AllowTypes)
	}
}

// TestUnmarshalAllowPrivate: "allow_private all" allows every address;
// with ranges, only those (private_ranges), as written.
func TestUnmarshalAllowPrivate(t *testing.T) {
	for _, c := range []struct {
		name, line string
		all        bool
		ranges     []string
	}{
		{"none", "", false, nil},
		{"all", "allow_private all", true, nil},
		{"ranges", "allow_private 10.0.0.0/8 fd00::/8 192.168.1.7", false, []string{"10.0.0.0/8", "fd00::/8", "192.168.1.7"}},
		{"one address", "allow_private 127.0.0.2", false, []string{"127.0.0.2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var h Handler
			in := "fsp {\n local /a\n public_url http://x\n " + c.line + "\n}"
			if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(in)); err != nil {
				t.Fatal(err)
			}
			if h.AllowPrivate != c.all || !slices.Equal(h.PrivateRanges, c.ranges) {
				t.Errorf("allow_private %v, private_ranges %q; want %v, %q", h.AllowPrivate, h.PrivateRanges, c.all, c.ranges)
			}
		})
	}
}

// TestAllowPrivateUnsetVariable: an environment variable that is unset
// leaves allow_private bare, which is a load error naming the line, not
// every address opened.
func TestAllowPrivateUnsetVariable(t *testing.T) {
	site := ":8080 {\n\tfsp {\n\t\tlocal /srv/fsp\n\t\tpublic_url http://x\n\t\tallow_private {$DESIGN_BRIDGE_TEST_UNSET_RANGES}\n\t}\n}\n"
	_, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(site), nil)
	if err == nil || !strings.Contains(err.Error(), "fsp: allow_private: name the ranges to allow") || !strings.Contains(err.Error(), "Caddyfile:5") {
		t.Fatalf("got %v; want the allow_private error at Caddyfile:5", err)
	}
}

// TestAdaptMatcher: Caddy reads a path right after fsp as a request
// matcher; without a storage that is the folder meant, and the error says
// so at adapt time. A matcher beside a storage is kept.
func TestAdaptMatcher(t *testing.T) {
	for _, c := range []struct{ name, site, want string }{
		{"folder as the argument", "fsp /srv/fsp", `"/srv/fsp" right after fsp is a request matcher (a path), not the folder: fsp takes no argument; give the folder in its block as local /srv/fsp`},
		{"folder as the argument, with a block", "fsp /srv/fsp {\n\t\tpublic_url http://x\n\t}", `"/srv/fsp" right after fsp is a request matcher`},
		{"relative folder as the argument", "fsp tmp/fsp {\n\t\tpublic_url http://x\n\t}", `fsp takes no argument besides a matcher (got "tmp/fsp"); a folder goes in its block: local <folder>`},
		{"argument after a matcher", "fsp * tmp/fsp", `fsp takes no argument besides a matcher (got "tmp/fsp")`},
		{"path matcher with a storage", "fsp /files/* {\n\t\tlocal /srv/fsp\n\t\tpublic_url http://x\n\t}", `"path":["/files/*"]`},
		{"named matcher without a storage", "@m path /x\n\tfsp @m {\n\t\tpublic_url http://x\n\t}", `"handler":"fsp"`},
		{"no matcher", "fsp {\n\t\tlocal /srv/fsp\n\t\tpublic_url http://x\n\t}", `"handler":"fsp","local":{"folder":"/srv/fsp"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := caddyconfig.GetAdapter("caddyfile").Adapt([]byte(":8080 {\n\t"+c.site+"\n}\n"), nil)
			got := string(out)
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, c.want) {
				t.Errorf("got %s\nwant it to contain %s", got, c.want)
			}
			if err != nil && !strings.Contains(got, "Caddyfile:2") {
				t.Errorf("the error names no line: %s", got)
			}
		})
	}
}
