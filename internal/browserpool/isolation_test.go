package browserpool

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// TestJobsShareNothing: what one job's page leaves in the browser does
// not reach the next job's page. With JavaScript off, a page still
// navigates: a <meta> refresh to a fragment of the document's URL made
// that URL visited, and the next page's link to it showed its :visited
// style (red here).
func TestJobsShareNothing(t *testing.T) {
	p := newPoolWith(t, false, 20*time.Second, func(c *Config) { c.Tabs = 1 })
	const style = `<style>a{display:block;width:100px;height:100px;background-color:#fff}a:visited{background-color:#f00}</style>`
	for _, tc := range []struct {
		name  string
		first string // the first job's page
		frag  string // the first job's page goes to docURL+frag
	}{
		{"meta refresh to a fragment", `<meta http-equiv="refresh" content="0;url=#tenant-a">`, "#tenant-a"},
		{"meta refresh to the document's URL", `<meta http-equiv="refresh" content="0;url=` + docURL + `#tenant-b">`, "#tenant-b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := p.run(context.Background(), tc.first, 400, waitForURL(docURL+tc.frag)); err != nil {
				t.Fatalf("the first job: %v", err)
			}
			shot, err := p.Image(context.Background(), style+`<a href="`+docURL+tc.frag+`"></a>`, ImageOptions{Width: 200, Height: 200, MaxHeight: 500})
			if err != nil {
				t.Fatal(err)
			}
			if red, _ := redPixels(t, shot); red != 0 {
				t.Errorf("%d red pixels: the next job sees the first job's page as visited", red)
			}
		})
	}
}

// waitForURL is a job's action that waits until its page is at url.
func waitForURL(url string) func(context.Context) error {
	return func(ctx context.Context) error {
		for {
			cur, entries, err := page.GetNavigationHistory().Do(ctx)
			if err != nil {
				return err
			}
			if cur >= 0 && int(cur) < len(entries) && entries[cur].URL == url {
				return nil
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
}

// TestProfileKeepsNoRender: renders leave no tab or browser context
// behind, and nothing in the browser's profile on disk, which would otherwise grow for as long as the browser
// lives (its history by about 175 bytes a render: 90 MB a day at six
// renders a second). Chromium writes its sessions and history some
// seconds after a page loads: the profile is read until then.
func TestProfileKeepsNoRender(t *testing.T) {
	p := newPoolWith(t, false, 20*time.Second, func(c *Config) { c.Tabs = 1 })
	for i := range 20 {
		var err error
		if i%2 == 0 {
			err = p.PDF(context.Background(), `<p>pdf</p>`, PDFOptions{WidthIn: 8.27, HeightIn: 11.69, Width: 800}, io.Discard)
		} else {
			_, err = p.Image(context.Background(), `<p>png</p>`, ImageOptions{Width: 300, MaxHeight: 500})
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// Each job's context is gone with it, and its tab.
	bctx := cdpBrowser(p.current.ctx)
	if ids, err := target.GetBrowserContexts().Do(bctx); err != nil || len(ids) != 0 {
		t.Errorf("browser contexts left after the jobs: %v (%v)", ids, err)
	}
	if infos, err := target.GetTargets().Do(bctx); err != nil {
		t.Error(err)
	} else {
		for _, info := range infos {
			if info.Type == "page" && info.BrowserContextID != "" && info.TargetID != chromedp.FromContext(p.current.ctx).Target.TargetID {
				t.Errorf("a tab is left after the jobs: %s %s", info.TargetID, info.URL)
			}
		}
	}
	profile := p.current.dataDir
	host := []byte(strings.TrimSuffix(strings.TrimPrefix(docURL, "http://"), "/document"))
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(time.Second) {
		if found := filesHolding(profile, host); len(found) > 0 {
			t.Fatalf("the profile keeps the rendered documents' address in %v", found)
		}
	}
}

// filesHolding lists the files under dir that hold b.
func filesHolding(dir string, b []byte) []string {
	var found []string
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if data, err := os.ReadFile(path); err == nil && bytes.Contains(data, b) {
			rel, _ := filepath.Rel(dir, path)
			found = append(found, rel)
		}
		return nil
	})
	return found
}

// TestAbandonedJobLeavesNoContext: a job whose caller gives up (its
// request ends) while the browser is making the job's browser context
// leaves no context behind once the browser answers. Chromium makes the
// context whether or not its answer is awaited, and one whose answer
// was not awaited was never disposed: every such job left one in the
// browser for as long as it lived.
func TestAbandonedJobLeavesNoContext(t *testing.T) {
	p := newPoolWith(t, false, 20*time.Second, func(c *Config) { c.Tabs = 1 })
	if _, err := p.Image(context.Background(), `<p>one</p>`, ImageOptions{Width: 100, MaxHeight: 500}); err != nil {
		t.Fatal(err)
	}
	b := p.current
	proc := chromedp.FromContext(b.ctx).Browser.Process()
	// A stopped browser holds the job in openTab, its call sent.
	if err := proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := p.Image(ctx, `<p>two</p>`, ImageOptions{Width: 100, MaxHeight: 500})
		errc <- err
	}()
	time.Sleep(300 * time.Millisecond)
	cancel()
	time.Sleep(200 * time.Millisecond)
	if err := proc.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err == nil {
		t.Fatal("an abandoned job succeeded")
	}
	if p.current != b {
		t.Fatal("the browser was replaced")
	}
	checkNoContextsLeft(t, b, "the abandoned job")
}

// checkNoContextsLeft fails t unless b's browser has no browser context
// of a job within 3 s (disposing one is asynchronous).
func checkNoContextsLeft(t *testing.T, b *instance, job string) {
	t.Helper()
	var ids []cdp.BrowserContextID
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		var err error
		if ids, err = target.GetBrowserContexts().Do(cdpBrowser(b.ctx)); err != nil {
			t.Fatal(err)
		}
		if len(ids) == 0 {
			return
		}
	}
	t.Errorf("browser contexts left by %s: %v", job, ids)
}
