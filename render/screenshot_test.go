package render

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

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
	// Start the browser on the long-lived context: the first Run binds it.
	if err := chromedp.Run(ctx); err != nil {
		t.Fatal(err)
	}

	pages := map[string]string{}
	goldens, _ := filepath.Glob("testdata/golden/*.html")
	for _, g := range goldens {
		abs, _ := filepath.Abs(g)
		pages["golden-"+strings.TrimSuffix(filepath.Base(g), ".html")] = "file://" + abs
	}
	tmp := t.TempDir()
	for name, data := range emCorpus(t) {
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
