package fidelity

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"
	"github.com/designbridge/caddy-designbridge/caddytest/internal/adminapi"

	_ "github.com/designbridge/caddy-designbridge/contentservice"
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

// The content service the designs are rendered by, as an integrator's
// server would ask it: /v1/message/html, /v1/page/html, /v1/popup/html.
const (
	contentPort  = httpPort + 1
	contentToken = "fidelity-api-token-0123456789"
)

// exportHTML asks the package's content service for the HTML of design
// in collection.
func exportHTML(t *testing.T, collection string, design []byte) []byte {
	t.Helper()
	url := "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(contentPort)) + "/v1/" + collection + "/html"
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(design))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+contentToken)
	req.Header.Set("Content-Type", "application/json")
	client := &http.Client{Timeout: 30 * time.Second}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %v %.200s", url, res.StatusCode, err, body)
	}
	return body
}

// startCaddy loads a Caddyfile into the package's in-process Caddy that
// serves siteRoot on 127.0.0.1:9700 (and the content service on 9701) and
// returns the base URL.
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

http://127.0.0.1:%d {
	content_service {
		signing_key fidelity-signing-key-0123456789abcdef
		app fidelity {
			secret fidelity-secret
			token %s
		}
		browser off
	}
}
`, adminPort, httpPort, httpsPort, httpPort, siteRoot, contentPort, contentToken)
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
