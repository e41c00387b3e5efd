package corpus

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/offline"
)

// Viewports of the checks: a common phone width and a desktop width above
// every breakpoint of the corpus (message widths are 500-720 px; pages at
// 1440 px are checked for side-by-side columns only where they fit).
const (
	narrowWidth  = 320 // overflow only
	mobileWidth  = 375
	desktopWidth = 800
	viewHeight   = 900
)

// The package's browser and its tab, started by the first test that
// needs them and closed by TestMain (tests of a package run one at a
// time). Requests to anything but the test's own Caddy are answered in
// the tab: images get the placeholder, everything else (web fonts,
// trackers) is refused, so no check depends on the network.
var (
	pkgBrowser *offline.Browser
	pkgTab     *tab
)

// sharedTab returns the package's tab, starting Chromium on first use.
func sharedTab(t *testing.T) *tab {
	t.Helper()
	if pkgTab == nil {
		b, err := offline.Start(chromiumBinary, siteHost)
		if err != nil {
			t.Fatal(err)
		}
		pkgBrowser = b
		pkgTab = &tab{ctx: b.Tab}
	}
	return pkgTab
}

// closeSharedBrowser ends the package's tab and browser, if started.
func closeSharedBrowser() {
	if pkgBrowser != nil {
		pkgBrowser.Close()
	}
}

// tab is the page of the package's browser.
type tab struct {
	ctx context.Context
}

// setWidth resizes the viewport (desktop mode, so the width is the CSS
// viewport width whether or not the page has a viewport meta tag).
func (tb *tab) setWidth(width int) error {
	return chromedp.Run(tb.ctx, emulation.SetDeviceMetricsOverride(int64(width), viewHeight, 1, false))
}

func (tb *tab) open(pageURL string) error {
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Navigate(pageURL))
}

// measure runs the layout probe at the current width.
func (tb *tab) measure() (*measurement, error) {
	var raw string
	ctx, cancel := context.WithTimeout(tb.ctx, 10*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, chromedp.Evaluate(layoutProbe, &raw)); err != nil {
		return nil, err
	}
	var m measurement
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, fmt.Errorf("probe result: %v", err)
	}
	return &m, nil
}

// screenshot saves a full-page PNG under artifacts/corpus/. The viewport
// is stretched to the document's height for the capture (Chromium's
// capture-beyond-viewport mode shifts right-to-left documents sideways),
// then restored.
func (tb *tab) screenshot(name string) error {
	var buf []byte
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	var size struct{ W, H int64 }
	err := chromedp.Run(ctx,
		chromedp.Evaluate(`({w: window.innerWidth, h: Math.min(16384, Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0))})`, &size),
		chromedp.ActionFunc(func(ctx context.Context) error {
			if err := emulation.SetDeviceMetricsOverride(size.W, max(size.H, viewHeight), 1, false).Do(ctx); err != nil {
				return err
			}
			var err error
			buf, err = page.CaptureScreenshot().WithFormat(page.CaptureScreenshotFormatPng).Do(ctx)
			if err != nil {
				return err
			}
			return emulation.SetDeviceMetricsOverride(size.W, viewHeight, 1, false).Do(ctx)
		}))
	if err != nil {
		return err
	}
	path := filepath.Join(artifactsDir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, buf, 0o644)
}

// artifactName makes a file name out of a page's name and width.
func artifactName(set, page string, width int) string {
	page = strings.Map(func(r rune) rune {
		if r == '/' || r == ' ' || r == '\\' {
			return '_'
		}
		return r
	}, strings.TrimSuffix(page, ".html"))
	return filepath.Join(set, fmt.Sprintf("%s-%d.png", page, width))
}
