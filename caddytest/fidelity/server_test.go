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

	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
	_ "github.com/designbridge/caddy-designbridge/contentservice"
)

// siteRoot is where tests put the pages they load; the Caddy config names
// only this root, so two runs of the package (which share the fixed admin
// port) load the same config.
var siteRoot = filepath.Join(os.TempDir(), "designbridge-fidelity-site")

// pageDir makes a directory for one test's pages under siteRoot and
// returns it with its URL path; it is removed after the test.
func pageDir(t *testing.T) (dir, urlPath string) {
	dir = testcaddy.PageDir(t, siteRoot)
	return dir, "/" + filepath.Base(dir) + "/"
}

// The content service the designs are rendered by, as an integrator's
// server would ask it: /v1/message/html, /v1/page/html, /v1/popup/html.
const contentToken = "fidelity-api-token-0123456789"

// exportHTML asks the package's content service for the HTML of design
// in collection.
func exportHTML(t *testing.T, collection string, design []byte) []byte {
	t.Helper()
	url := "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(testcaddy.Port("CONTENT"))) + "/v1/" + collection + "/html"
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
// serves siteRoot on 127.0.0.1 (siteHost), and the content service, and
// returns the base URL.
func startCaddy(t *testing.T) string {
	t.Helper()
	if err := os.MkdirAll(siteRoot, 0o755); err != nil {
		t.Fatal(err)
	}
	config := testcaddy.Global("auto_https off") + fmt.Sprintf(`
http://127.0.0.1:{$PORT_HTTP} {
	root * %q
	file_server
}

http://127.0.0.1:{$PORT_CONTENT} {
	content_service {
		signing_key fidelity-signing-key-0123456789abcdef
		app fidelity {
			secret fidelity-secret
			token %s
		}
		browser off
	}
}
`, siteRoot, contentToken)
	testcaddy.MustLoad(t, config)
	return "http://" + siteHost()
}

// siteHost is the host:port of the running config's site.
func siteHost() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(testcaddy.Port("HTTP")))
}
