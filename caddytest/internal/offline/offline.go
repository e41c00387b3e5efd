// Package offline keeps a headless Chromium tab of a caddytest package off
// the network: every image gets one placeholder, requests to the test's
// own Caddy go through, and everything else (web fonts, trackers) is
// refused, so no layout check depends on what the machine can reach.
package offline

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"os"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// PlaceholderImage stands in for every image. Its natural size is large,
// like a 2x photo, so an image the markup does not constrain overflows a
// phone screen and is caught; and two documents compared side by side see
// the same pixels.
const PlaceholderImage = `<svg xmlns="http://www.w3.org/2000/svg" width="1200" height="600" viewBox="0 0 1200 600">` +
	`<rect width="1200" height="600" fill="#c9d1d9"/><path d="M0 0L1200 600M1200 0L0 600" stroke="#8b949e" stroke-width="6"/></svg>`

// Intercept routes tab's requests as the package doc says, allowing the
// host:port allowHost returns (asked at each request: the test's Caddy
// moves to new ports with each config), and enables the interception.
func Intercept(tab context.Context, allowHost func() string) error {
	body := base64.StdEncoding.EncodeToString([]byte(PlaceholderImage))
	chromedp.ListenTarget(tab, func(ev any) {
		e, ok := ev.(*fetch.EventRequestPaused)
		if !ok {
			return
		}
		// Answering from inside the listener would deadlock chromedp.
		go func() {
			_ = chromedp.Run(tab, chromedp.ActionFunc(func(ctx context.Context) error {
				u, err := url.Parse(e.Request.URL)
				switch {
				// Every image, relative placeholder paths of designs
				// ("img/logo_1.png") included, gets the placeholder.
				case e.ResourceType == network.ResourceTypeImage:
					return fetch.FulfillRequest(e.RequestID, 200).
						WithResponseHeaders([]*fetch.HeaderEntry{{Name: "Content-Type", Value: "image/svg+xml"}}).
						WithBody(body).Do(ctx)
				case err == nil && u.Host == allowHost():
					return fetch.ContinueRequest(e.RequestID).Do(ctx)
				default:
					return fetch.FailRequest(e.RequestID, network.ErrorReasonBlockedByClient).Do(ctx)
				}
			}))
		}()
	})
	return chromedp.Run(tab, fetch.Enable())
}

// Browser is a headless Chromium with a profile folder of its own and one
// tab kept off the network (Intercept).
type Browser struct {
	// Tab is the browser's one tab.
	Tab context.Context

	profileDir                            string
	allocCancel, browserCancel, tabCancel context.CancelFunc
}

// Start starts the headless Chromium at binary, with extra options, and
// opens its tab, which lets through requests to allowHost (Intercept).
func Start(binary string, allowHost func() string, extra ...chromedp.ExecAllocatorOption) (*Browser, error) {
	if _, err := os.Stat(binary); err != nil {
		return nil, fmt.Errorf("headless Chromium is required at %s (apt-get install -y chromium): %v", binary, err)
	}
	// Not a test's TempDir: Chromium may still be flushing its profile
	// when the test's cleanup runs, and a failed removal would fail the
	// test.
	profileDir, err := os.MkdirTemp("", "caddytest-chromium-")
	if err != nil {
		return nil, err
	}
	opts := append([]chromedp.ExecAllocatorOption{
		chromedp.ExecPath(binary),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		// Overlay scrollbars would otherwise take width from the viewport
		// and show up in screenshots.
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(profileDir),
	}, extra...)
	b := &Browser{profileDir: profileDir}
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(), opts...)
	browserCtx, browserCancel := chromedp.NewContext(allocCtx)
	b.allocCancel, b.browserCancel = allocCancel, browserCancel
	if err := chromedp.Run(browserCtx); err != nil {
		b.Close()
		return nil, fmt.Errorf("starting Chromium: %v", err)
	}
	b.Tab, b.tabCancel = chromedp.NewContext(browserCtx)
	if err := Intercept(b.Tab, allowHost); err != nil {
		b.Close()
		return nil, fmt.Errorf("opening a tab: %v", err)
	}
	return b, nil
}

// Close ends the tab and the browser and removes the profile folder.
func (b *Browser) Close() {
	if b.tabCancel != nil {
		b.tabCancel()
	}
	b.browserCancel()
	b.allocCancel()
	_ = os.RemoveAll(b.profileDir)
}
