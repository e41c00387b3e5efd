// Package browser tests the editor page (www/) in headless Chromium against
// a real Caddy running Caddyfile.example.
//
// How the example is adapted for the test (see exampleConfig):
//   - the settings come from .env.example, read and put in the process
//     environment, as `caddy run --envfile .env.example` does; only the
//     ports and upstream URLs are overridden (PORT, DEV_PORT,
//     CONTENT_SERVICE_PORT, CONTENT_SERVICE_URL, AUTH_URL) so the sites
//     listen on free ports chosen when the run starts;
//   - a global options block (admin endpoint and http_port/https_port on
//     ports testcaddy chooses at each load, skip_install_trust,
//     persist_config off) is put in front of the file;
//   - the working directory is the repository root, so `root * www`
//     resolves as it does for `go run ./cmd/caddy run` there.
//
// Artifacts (screenshots) go to artifacts/screenshots/ at the repository
// root; that directory is git-ignored.
package browser

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
)

// repoRoot is the repository root, found from this file's location.
var repoRoot = func() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}()

func TestMain(m *testing.M) {
	if err := choosePorts(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(testcaddy.Finish(run(m)))
}

func run(m *testing.M) int {
	_, removeHome, err := testcaddy.PrivateHome("browser-test-home-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer removeHome()
	if err := os.Chdir(repoRoot); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}
