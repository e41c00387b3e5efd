package fsp

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
)

// TestProviderPrivateRanges: with "allow_private 127.0.0.2/32" an upload
// source on 127.0.0.2 is fetched and stored, while one on 127.0.0.1 (by
// address or by name), Caddy's own admin endpoint and cloud metadata are
// refused with 3450 and never reached: listing a range opens only it.
func TestProviderPrivateRanges(t *testing.T) {
	src := newSources(t)
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skip("127.0.0.2 is not available:", err)
	}
	var allowedHits atomic.Int64
	allowed := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		allowedHits.Add(1)
		_, _ = w.Write(src.png)
	}))
	allowed.Listener.Close()
	allowed.Listener = ln
	allowed.Start()
	defer allowed.Close()
	var otherHits atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		otherHits.Add(1)
		_, _ = w.Write(src.png)
	}))
	defer other.Close()
	_, otherPort, _ := net.SplitHostPort(other.Listener.Addr().String())

	store := t.TempDir()
	anonymousSite(t, "local "+store, "allow_private 127.0.0.2/32")
	admin := fmt.Sprintf("http://127.0.0.1:%d/config/", testcaddy.Port("ADMIN"))
	for _, c := range []struct {
		source, target string
		ok             bool
	}{
		{allowed.URL + "/cat.png", "/in-range.png", true},
		{other.URL + "/cat.png", "/loopback.png", false},
		{"http://localhost:" + otherPort + "/cat.png", "/localhost.png", false},
		{"http://[::1]:" + otherPort + "/cat.png", "/v6.png", false},
		{admin, "/config.txt", false},
		{"http://169.254.169.254/latest/meta-data/", "/metadata.txt", false},
		{"http://10.0.0.1/x.png", "/intranet.png", false},
	} {
		res := send(t, privatePort, call{method: "POST", target: c.target, body: upload(c.source, ""), auth: "-"})
		if c.ok {
			if res.Status != 200 {
				t.Errorf("%s: %d %s, want it stored", c.source, res.Status, res.Body)
			}
			continue
		}
		got := decodeFSP(res.Body)
		if res.Status != 422 || got.Code != 3450 || !strings.Contains(got.Details, "not allowed") {
			t.Errorf("%s: got %d %s, want 3450 address not allowed", c.source, res.Status, res.Body)
		}
	}
	if n := allowedHits.Load(); n != 1 {
		t.Errorf("the source on 127.0.0.2 was reached %d times, want 1", n)
	}
	if n := otherHits.Load(); n != 0 {
		t.Errorf("the source on 127.0.0.1 was reached %d times", n)
	}
	entries, _ := os.ReadDir(filepath.Join(store, "c1", "u1"))
	var names []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), ".") { // thumbnails
			names = append(names, e.Name())
		}
	}
	if len(names) != 1 || names[0] != "in-range.png" {
		t.Errorf("stored %v, want only in-range.png", names)
	}
}

// TestProviderPrivateRangesLoadErrors: a range Caddy cannot read is a
// load error naming it, from the Caddyfile and from JSON (by its index).
func TestProviderPrivateRangesLoadErrors(t *testing.T) {
	for _, c := range []struct{ name, line, want string }{
		{"bad prefix length", "allow_private 127.0.0.2/33", `fsp: allow_private: "127.0.0.2/33" is not a CIDR range`},
		{"host name", "allow_private 10.0.0.0/8 intranet.local", `fsp: allow_private: "intranet.local" is not an IP address`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := loadError(t, fmt.Sprintf(":%d {\n\tfsp {\n\t\tlocal /tmp/x\n\t\tpublic_url http://x\n\t\t%s\n\t}\n}\n", privatePort, c.line))
			if !strings.Contains(got, c.want) {
				t.Errorf("load error %s does not name %s", got, c.want)
			}
		})
	}
}
