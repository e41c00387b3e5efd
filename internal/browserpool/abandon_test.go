package browserpool

import (
	"bytes"
	"context"
	"errors"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto"
	"github.com/chromedp/chromedp"
)

// TestTimedOutJobLeavesNoContext: a job whose time is up while the
// browser, stopped (SIGSTOP), is making its browser context leaves no
// context once the browser goes on, in time to be found alive and kept.
// Chromium makes the context whether or not its answer is awaited, and
// one whose answer came after the job's deadline was never disposed: it
// stayed in the browser for as long as the browser lived. Stopped later,
// while the job's tab is being opened in its context, the job leaves
// none either (its context is disposed as the browser goes on).
func TestTimedOutJobLeavesNoContext(t *testing.T) {
	for _, tc := range []struct {
		name string
		// stop stops the browser proc at the moment the case is about.
		stop func(t *testing.T, b *instance, proc *os.Process)
		// resume is when the browser goes on, after the job came: past its
		// deadline (1 s) and what the job then waits for, within the 3 s
		// the pool waits for the browser's answer before replacing it.
		resume time.Duration
	}{
		{"while making the context", func(t *testing.T, _ *instance, proc *os.Process) {
			if err := proc.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
		}, 1500 * time.Millisecond},
		{"while opening the tab", func(t *testing.T, b *instance, proc *os.Process) {
			// Stopped as the context's answer arrives, before the tab is
			// asked for.
			ctx, cancel := context.WithCancel(b.ctx)
			t.Cleanup(cancel)
			var once sync.Once
			chromedp.ListenBrowser(ctx, func(ev any) {
				if m, ok := ev.(*cdproto.Message); ok && bytes.Contains(m.Result, []byte(`"browserContextId"`)) {
					once.Do(func() { _ = proc.Signal(syscall.SIGSTOP) })
				}
			})
		}, 3 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPoolWith(t, false, 20*time.Second, func(c *Config) { c.Tabs = 1 })
			if _, err := p.Image(context.Background(), `<p>one</p>`, ImageOptions{Width: 100, MaxHeight: 500}); err != nil {
				t.Fatal(err)
			}
			b := p.current
			proc := chromedp.FromContext(b.ctx).Browser.Process()
			t.Cleanup(func() { _ = proc.Signal(syscall.SIGCONT) })
			tc.stop(t, b, proc)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			errc := make(chan error, 1)
			go func() {
				_, err := p.Image(ctx, `<p>two</p>`, ImageOptions{Width: 100, MaxHeight: 500})
				errc <- err
			}()
			time.Sleep(tc.resume)
			if err := proc.Signal(syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			if err := <-errc; !errors.Is(err, ErrTimeout) {
				t.Fatalf("the job: %v, want ErrTimeout", err)
			}
			if p.current != b {
				t.Fatal("the browser was replaced")
			}
			checkNoContextsLeft(t, b, "the timed-out job")
		})
	}
}
