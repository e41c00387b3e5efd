package fidelity

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"
	"github.com/designbridge/caddy-designbridge/caddytest/internal/adminapi"
)

// siteRoot is where tests put the pages they load; the Caddy config names
// only this root, so two runs of the package (which share the fixed admin
// port) load the same config.
var siteRoot = filepath.Join(os.TempDir(), "designbridge-fidelity-site")

// pageDir makes a directory for one test's pages under siteRoot and
// returns it with its URL path; it is removed after the test.
func pageDir(t *testing.T) (dir, urlPath string) {
	t.Helper()
	if err := os.MkdirAll(siteRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp(siteRoot, fmt.Sprintf("%d-", os.Getpid()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir, "/" + filepath.Base(dir) + "/"
}

// startCaddy loads a Caddyfile into the package's in-process Caddy that
// serves siteRoot on 127.0.0.1:9700 and returns the base URL.
func startCaddy(t *testing.T) string {
	t.Helper()
	if err := os.MkdirAll(siteRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	config := fmt.Sprintf(`{
	admin localhost:%d
	http_port %d
	https_port %d
	skip_install_trust
	persist_config off
	auto_https off
}

http://127.0.0.1:%d {
	root * %q
	file_server
}
`, adminPort, httpPort, httpsPort, httpPort, siteRoot)
	tester := adminapi.NewTester(t, caddytest.Config{
		AdminPort:          adminPort,
		LoadRequestTimeout: 10 * time.Second,
	})
	tester.InitServer(config, "caddyfile")
	if t.Failed() {
		t.FailNow()
	}
	return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(httpPort))
}
