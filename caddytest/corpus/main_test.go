// Package corpus checks, in a real headless Chromium, that the HTML
// produced for every design of the shared corpus lays out on a phone and on
// a desktop: nothing wider than a 375 px viewport, stacking rows stacked on
// mobile, multi-column rows side by side at 800 px. The pages are served by
// an in-process Caddy (caddytest), the way a deployment serves them.
//
// The same checks first run on the vendor's own exported HTML, which shows
// that the harness measures something real.
package corpus

import (
	"fmt"
	"github.com/designbridge/caddy-designbridge/caddytest/internal/pkglock"
	"os"
	"path/filepath"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/certmagic"
)

// Ports of this package (TEAM.md): admin 2905, HTTP 9500-9599.
const (
	adminPort = 2905
	httpPort  = 9500
	httpsPort = 9543
)

// Paths relative to this package directory.
var (
	corpusDir      = filepath.Join("..", "..", "..", "shared", "corpus")
	artifactsDir   = filepath.Join("..", "..", "artifacts", "corpus")
	chromiumBinary = "/usr/bin/chromium"
)

func TestMain(m *testing.M) {
	if err := pkglock.Acquire("corpus"); err != nil {
		fmt.Fprintln(os.Stderr, "locking:", err)
		os.Exit(1)
	}
	// Caddy writes its config and data (autosave, certificates) under the
	// XDG directories: keep them out of the real home.
	tmp, err := os.MkdirTemp("", "corpus-caddytest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, env := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "HOME"} {
		dir := filepath.Join(tmp, env)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Setenv(env, dir)
	}
	// Caddy computes these two paths when its package is initialised,
	// before TestMain can set the environment.
	caddy.ConfigAutosavePath = filepath.Join(tmp, "XDG_CONFIG_HOME", "caddy", "autosave.json")
	caddy.DefaultStorage = &certmagic.FileStorage{Path: filepath.Join(tmp, "XDG_DATA_HOME", "caddy")}
	code := m.Run()
	closeSharedBrowser()
	os.RemoveAll(tmp)
	os.Exit(code)
}
