package corpus

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	// Registers the project's modules (content_service among them).
	_ "github.com/designbridge/caddy-designbridge"
	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
)

// siteRoot is where tests put the pages they render, each test process in
// a directory of its own; the Caddy config names only this root. Two runs
// of this package at once (a developer and CI, say) share one Caddy, since
// the admin port is fixed: with the same config in both, a config loaded
// by one run does not take the other run's pages away.
var siteRoot = filepath.Join(os.TempDir(), "designbridge-corpus-site")

// pageDir makes a directory for one test's pages under siteRoot and
// returns it with its URL path ("/ours/<dir>/"); it is removed after the
// test.
func pageDir(t *testing.T) (dir, urlPath string) {
	dir = testcaddy.PageDir(t, siteRoot)
	return dir, "/ours/" + filepath.Base(dir) + "/"
}

// startCaddy loads a Caddyfile into the package's in-process Caddy that
// serves, on 127.0.0.1 (siteHost), the vendor's exported HTML (/vendor/), the
// vendor's JSON+HTML pairs (/pairs/), the pages rendered by the tests
// (/ours/, from siteRoot) and our content_service (/v1/…, which renders
// design JSON with the render package). It returns the base URL.
func startCaddy(t *testing.T) string {
	t.Helper()
	// Without the corpus, /vendor/ and /pairs/ serve an empty folder.
	vendorDir, pairsDir := t.TempDir(), t.TempDir()
	if corpusDir != "" {
		vendorDir = filepath.Join(corpusDir, "exported-html")
		pairsDir = filepath.Join(corpusDir, "pairs")
	}
	config := testcaddy.Global("auto_https off") + fmt.Sprintf(`
http://127.0.0.1:{$PORT_HTTP} {
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
`, vendorDir, pairsDir, siteRoot, testSigningKey, testToken)
	testcaddy.MustLoad(t, config)
	return "http://" + siteHost()
}

// siteHost is the host:port of the running config's site.
func siteHost() string {
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(testcaddy.Port("HTTP")))
}
