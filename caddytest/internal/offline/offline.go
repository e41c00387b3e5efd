// Package offline keeps a headless Chromium tab of a caddytest package off
// the network: every image gets one placeholder, requests to the test's
// own Caddy go through, and everything else (web fonts, trackers) is
// refused, so no layout check depends on what the machine can reach.
package offline

import (
	"context"
	"encoding/base64"
	"net/url"

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
