package fidelity

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/offline"
)

const (
	chromiumBinary = "/usr/bin/chromium"
	viewHeight     = 900
	maxShotHeight  = 16384
)

// pkgBrowser is one headless Chromium with one tab, shared by the
// package's tests (starting it is the slow part) and closed by TestMain.
var pkgBrowser *offline.Browser

// sharedTab returns the package's tab, starting Chromium on first use.
// Requests to anything but the test's own Caddy are answered in the tab:
// images get the placeholder, the rest (web fonts, trackers) is refused.
func sharedTab(t *testing.T) context.Context {
	t.Helper()
	if pkgBrowser == nil {
		// Same text rendering on every machine as far as Chromium allows.
		b, err := offline.Start(chromiumBinary, siteHost, chromedp.Flag("font-render-hinting", "none"))
		if err != nil {
			t.Fatal(err)
		}
		pkgBrowser = b
	}
	return pkgBrowser.Tab
}

func closeSharedBrowser() {
	if pkgBrowser != nil {
		pkgBrowser.Close()
	}
}

// load opens pageURL at the given viewport width (desktop mode, so the
// width is the CSS viewport width with or without a viewport meta tag)
// and waits for its images.
func load(tab context.Context, pageURL string, width int) error {
	ctx, cancel := context.WithTimeout(tab, 20*time.Second)
	defer cancel()
	return chromedp.Run(ctx,
		emulation.SetDeviceMetricsOverride(int64(width), viewHeight, 1, false),
		chromedp.Navigate(pageURL),
		chromedp.Evaluate(`Promise.all(Array.from(document.images).map(i => i.complete ? 0 : new Promise(r => { i.onload = i.onerror = r; })))`, nil,
			func(p *cdpruntime.EvaluateParams) *cdpruntime.EvaluateParams { return p.WithAwaitPromise(true) }),
	)
}

// eval runs a probe in the page and decodes its JSON result into out.
func eval(tab context.Context, probe string, out any) error {
	ctx, cancel := context.WithTimeout(tab, 10*time.Second)
	defer cancel()
	var raw string
	if err := chromedp.Run(ctx, chromedp.Evaluate(probe, &raw)); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(raw), out); err != nil {
		return fmt.Errorf("probe result: %v", err)
	}
	return nil
}

// screenshot captures the whole document as a PNG. The viewport is
// stretched to the document's height for the capture, then restored, so
// the block boxes measured before match the picture.
func screenshot(tab context.Context, width int) ([]byte, error) {
	ctx, cancel := context.WithTimeout(tab, 20*time.Second)
	defer cancel()
	var h int64
	var buf []byte
	err := chromedp.Run(ctx,
		chromedp.Evaluate(`Math.max(document.documentElement.scrollHeight, document.body ? document.body.scrollHeight : 0)`, &h),
		chromedp.ActionFunc(func(ctx context.Context) error {
			if err := emulation.SetDeviceMetricsOverride(int64(width), min(max(h, viewHeight), maxShotHeight), 1, false).Do(ctx); err != nil {
				return err
			}
			var err error
			buf, err = page.CaptureScreenshot().WithFormat(page.CaptureScreenshotFormatPng).Do(ctx)
			if err != nil {
				return err
			}
			return emulation.SetDeviceMetricsOverride(int64(width), viewHeight, 1, false).Do(ctx)
		}))
	return buf, err
}
