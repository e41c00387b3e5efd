package browser

import (
	"bytes"
	"image/png"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
)

// TestChecksAndRenderDownloads: after "Get design HTML" the page lists the
// Check API's findings for the design, and offers the design as a PDF and
// as an image next to Download, all through Caddyfile.example.
func TestChecksAndRenderDownloads(t *testing.T) {
	loadExample(t, nil)

	s := newSession(t)
	downloads := t.TempDir()
	s.run(t,
		browser.SetDownloadBehavior(browser.SetDownloadBehaviorBehaviorAllow).
			WithDownloadPath(downloads).WithEventsEnabled(true),
		chromedp.Navigate(siteURL+"/"),
		chromedp.WaitVisible(headingInput),
		waitFor(`!document.querySelector("#get-html").disabled`),
	)
	getDesignHTML(t, s, "Welcome aboard")

	step(t, "the checks' findings are listed next to the result", func(t *testing.T) {
		var got struct {
			Summary string
			Items   []struct{ Class, Text string }
		}
		s.run(t,
			waitFor(`document.querySelector("#checks-summary").textContent !== "Checking…" && document.querySelector("#checks-summary").textContent !== ""`),
			eval(`({
				Summary: document.querySelector("#checks-summary").textContent,
				Items: [...document.querySelectorAll("#check-list li")].map((li) => ({Class: li.className, Text: li.textContent})),
			})`, &got),
		)
		// The welcome design's banner links nowhere; its images are on
		// this (loopback) host, which the service does not fetch.
		if got.Summary != "1 finding." || len(got.Items) != 2 ||
			got.Items[0].Class != "suggestion" || got.Items[0].Text != "Image without a link: image banner.png" ||
			got.Items[1].Class != "note" || !strings.HasSuffix(got.Items[1].Text, "could not be weighed.") {
			t.Errorf("checks: %+v", got)
		}
	})

	step(t, "Download PDF saves the design as a PDF", func(t *testing.T) {
		s.run(t,
			chromedp.Click(`#download-pdf`),
			waitFor(`document.querySelector("#status").textContent.startsWith("Downloading ")`),
		)
		var status string
		s.run(t, eval(`document.querySelector("#status").textContent`, &status))
		name := strings.TrimSuffix(strings.TrimPrefix(status, "Downloading "), ".")
		if !strings.HasSuffix(name, ".pdf") || strings.ContainsAny(name, `/\`) {
			t.Fatalf("status %q names no PDF", status)
		}
		data := waitForFile(t, filepath.Join(downloads, name))
		if !bytes.HasPrefix(data, []byte("%PDF-")) || !bytes.Contains(data, []byte("/Type /Page")) && !bytes.Contains(data, []byte("/Type/Page")) {
			t.Errorf("%s is not a PDF with a page: %.40q", name, data)
		}
	})

	step(t, "Download image saves a 640 px PNG of the design", func(t *testing.T) {
		path := filepath.Join(downloads, "design.png")
		s.run(t, chromedp.Click(`#download-image`))
		data := waitForFile(t, path)
		img, err := png.Decode(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("design.png: %v", err)
		}
		if b := img.Bounds(); b.Dx() != 640 || b.Dy() < 200 {
			t.Errorf("design.png is %v, want 640 px wide and the design's height", b)
		}
	})
}
