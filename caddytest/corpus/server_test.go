package corpus

import (
	"fmt"
	"net"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"
	// Registers the project's modules (content_service among them).
	_ "github.com/designbridge/caddy-designbridge"
)

// startCaddy loads a Caddyfile into the package's in-process Caddy that
// serves, on 127.0.0.1:9500, the vendor's exported HTML (/vendor/), the
// vendor's JSON+HTML pairs (/pairs/), the directory of pages rendered by
// this test (/ours/) and our content_service (/v1/…, which renders design
// JSON with the render package). It returns the base URL.
func startCaddy(t *testing.T, oursDir string) string {
	t.Helper()
	vendorDir, err := filepath.Abs(filepath.Join(corpusDir, "exported-html"))
	if err != nil {
		t.Fatal(err)
	}
	pairsDir, err := filepath.Abs(filepath.Join(corpusDir, "pairs"))
	if err != nil {
		t.Fatal(err)
	}
	if oursDir == "" {
		oursDir = t.TempDir()
	}
	oursDir, err = filepath.Abs(oursDir)
	if err != nil {
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
	handle_path /vendor/* {
		root * %q
		file_server
	}
	handle_path /pairs/* {
		root * %q
		file_server
	}
	handle_path /ours/* {
		root * %q
		file_server
	}
	handle /v1/* {
		content_service {
			signing_key %s
			app corpus-layout {
				secret corpus-layout-secret
				token %s
			}
		}
	}
	respond 404
}
`, adminPort, httpPort, httpsPort, httpPort, vendorDir, pairsDir, oursDir, testSigningKey, testToken)
	tester := caddytest.NewTester(t).WithDefaultOverrides(caddytest.Config{
		AdminPort:          adminPort,
		LoadRequestTimeout: 10 * time.Second,
	})
	tester.InitServer(config, "caddyfile")
	if t.Failed() {
		t.FailNow()
	}
	return "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(httpPort))
}
