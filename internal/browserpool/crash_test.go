package browserpool

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
)

// TestPageCrashKinds: a job whose page's renderer process ends fails
// with a *PageCrash (ErrPageCrashed) saying how Chromium reported the
// end, and only a crash by SIGTRAP (how Chromium ends a process that
// fails to allocate) counts as out of memory. The job is a page loaded
// as every job's is, then sent to one of Chromium's debug URLs (the test
// runs the job's action itself); Page.crash ends the renderer with a
// trap instruction, as the out-of-memory handler does.
func TestPageCrashKinds(t *testing.T) {
	p := newPool(t, false, 20*time.Second)
	for _, tc := range []struct {
		name        string
		act         func(context.Context) error
		status      string
		code        int64
		outOfMemory bool
	}{
		{"segmentation fault", navigate("chrome://crash"), "crashed", 11, false},
		{"killed", navigate("chrome://kill"), "killed", 15, false},
		{"trap", func(ctx context.Context) error { return page.Crash().Do(ctx) }, "crashed", 5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			began := time.Now()
			err := p.run(context.Background(), "<p>x</p>", 800, tc.act)
			var crash *PageCrash
			if !errors.As(err, &crash) || !errors.Is(err, ErrPageCrashed) {
				t.Fatalf("%v after %v, want a *PageCrash", err, time.Since(began))
			}
			if crash.Status != tc.status || crash.Code != tc.code || crash.OutOfMemory() != tc.outOfMemory {
				t.Errorf("%q, code %d, out of memory %v; want %q, %d, %v", crash.Status, crash.Code, crash.OutOfMemory(), tc.status, tc.code, tc.outOfMemory)
			}
			if elapsed := time.Since(began); elapsed > 10*time.Second {
				t.Errorf("failed after %v", elapsed)
			}
		})
	}
}

// navigate is a job's action that sends its page to url.
func navigate(url string) func(context.Context) error {
	return func(ctx context.Context) error {
		if _, _, _, _, err := page.Navigate(url).Do(ctx); err != nil {
			return err
		}
		// The crash ends the job (its context).
		<-ctx.Done()
		return ctx.Err()
	}
}
