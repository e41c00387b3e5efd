// Package fidelity measures, in a real headless Chromium, how closely the
// HTML our renderer makes of a design lays out like the HTML the vendor's
// own renderer made of the same design (the corpus's pairs/): block by
// block, at the design's width, on a phone and on a desktop. Each pair is
// rendered in the layout of the vendor export's collection: an email, a
// page or a popup. It also checks
// that our HTML still lays out when an email client strips every <style>
// element. The pages are served by an in-process Caddy (caddytest).
//
// Run it with the corpus:
//
//	DESIGN_CORPUS=/path/to/corpus go test ./caddytest/fidelity -v
//
// Side-by-side screenshots go to $FIDELITY_ARTIFACTS (default: a
// "designbridge-fidelity" folder under the system's temporary folder).
package fidelity

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
)

// artifactsEnv names the folder the side-by-side PNGs are written to.
const artifactsEnv = "FIDELITY_ARTIFACTS"

func artifactsDir() string {
	if d := os.Getenv(artifactsEnv); d != "" {
		return d
	}
	return filepath.Join(os.TempDir(), "designbridge-fidelity")
}

func TestMain(m *testing.M) {
	_, removeHome, err := testcaddy.PrivateHome("fidelity-caddytest-")
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
