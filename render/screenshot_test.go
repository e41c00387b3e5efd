package render

import (
	"bytes"
	"context"
	"encoding/base64"
	"flag"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// placeholderPNG is served for every remote image (there is no network):
// a 1200×600 grey picture with a dark frame, so widths and alignment show.
func placeholderPNG() string {
	const w, h = 1200, 600
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := color.RGBA{0xb8, 0xc4, 0xd0, 0xff}
			if x < 12 || y < 12 || x >= w-12 || y >= h-12 || (x-y*2)%200 == 0 {
				c = color.RGBA{0x40, 0x50, 0x60, 0xff}
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return base64.StdEncoding.EncodeToString(b.Bytes())
}

// -shots DIR renders every golden file and corpus design to a PNG in DIR
// with headless Chromium, for looking at (not an assertion).
var shotsDir = flag.String("shots", "", "write PNG screenshots of goldens and corpus renders to this directory")

func TestScreenshots(t *testing.T) {
	if *shotsDir == "" {
		t.Skip("set -shots DIR to take screenshots")
	}
	if err := os.MkdirAll(*shotsDir, 0o755); err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath("/usr/bin/chromium"),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-background-networking", true),
		chromedp.NoFirstRun, chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true),
		chromedp.UserDataDir(t.TempDir()),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel2 := chromedp.NewContext(actx)
	defer cancel2()
	// Start the browser on the long-lived context (the first Run binds
	// it) and answer every non-file request locally: images get the
	// placeholder, anything else (fonts) fails fast.
	placeholder := placeholderPNG()
	chromedp.ListenTarget(ctx, func(ev any) {
		e, ok := ev.(*fetch.EventRequestPaused)
		if !ok {
			return
		}
		go func() {
			exec := cdp.WithExecutor(ctx, chromedp.FromContext(ctx).Target)
			if strings.HasPrefix(e.Request.URL, "file:") {
				_ = fetch.ContinueRequest(e.RequestID).Do(exec)
				return
			}
			if e.ResourceType == network.ResourceTypeImage {
				_ = fetch.FulfillRequest(e.RequestID, 200).
					WithResponseHeaders([]*fetch.HeaderEntry{{Name: "Content-Type", Value: "image/png"}}).
					WithBody(placeholder).Do(exec)
				return
			}
			_ = fetch.FailRequest(e.RequestID, network.ErrorReasonBlockedByClient).Do(exec)
		}()
	})
	if err := chromedp.Run(ctx, fetch.Enable()); err != nil {
		t.Fatal(err)
	}

	pages := map[string]string{}
	goldens, _ := filepath.Glob("testdata/golden/*.html")
	layouts, _ := filepath.Glob("testdata/golden/layouts/*.html") // pages and popups
	goldens = append(goldens, layouts...)
	for _, g := range goldens {
		abs, _ := filepath.Abs(g)
		pages["golden-"+strings.TrimSuffix(filepath.Base(g), ".html")] = "file://" + abs
	}
	tmp := t.TempDir()
	for name, data := range designtest.OwnAndCorpus(t, true) {
		out := renderForTest(t, data)
		p := filepath.Join(tmp, name+".html")
		if err := os.WriteFile(p, out, 0o644); err != nil {
			t.Fatal(err)
		}
		pages["corpus-"+name] = "file://" + p
	}
	only := os.Getenv("SHOTS_ONLY")
	for _, width := range []int64{800, 390} {
		for name, url := range pages {
			if only != "" && !strings.Contains(name, only) {
				continue
			}
			var png []byte
			tctx, c := context.WithTimeout(ctx, 20*time.Second)
			err := chromedp.Run(tctx,
				chromedp.EmulateViewport(width, 900),
				chromedp.Navigate(url),
				chromedp.Sleep(150*time.Millisecond),
				chromedp.FullScreenshot(&png, 100),
			)
			c()
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			suffix := ".desktop.png"
			if width < 600 {
				suffix = ".mobile.png"
			}
			if err := os.WriteFile(filepath.Join(*shotsDir, name+suffix), png, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
