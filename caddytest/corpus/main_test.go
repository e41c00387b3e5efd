// Package corpus checks, in a real headless Chromium, that the HTML
// produced for every test design (the project's own, and the third-party
// corpus when DESIGN_CORPUS names it) lays out on a phone and on a desktop: nothing wider than a 375 px viewport, stacking rows stacked on
// mobile, multi-column rows side by side at 800 px. The pages are served by
// an in-process Caddy (caddytest), the way a deployment serves them.
//
// With the corpus, the same checks first run on the vendor's own exported
// HTML, which shows that the harness measures something real.
package corpus

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// corpusDir is the third-party corpus folder (designtest.EnvVar), or ""
// when it is not configured; TestMain sets it.
var corpusDir string

// Paths relative to this package directory.
var (
	artifactsDir   = filepath.Join("..", "..", "artifacts", "corpus")
	chromiumBinary = "/usr/bin/chromium"
)

func TestMain(m *testing.M) {
	dir, err := designtest.Lookup()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	corpusDir = dir
	_, removeHome, err := testcaddy.PrivateHome("corpus-caddytest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	closeSharedBrowser()
	code = testcaddy.Finish(code)
	removeHome()
	os.Exit(code)
}

// requireCorpus skips a test that only the third-party corpus can feed.
func requireCorpus(t *testing.T) {
	t.Helper()
	if corpusDir == "" {
		t.Skip(designtest.SkipMessage)
	}
}
