package fsp

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRateReaderStop: once stop returns, the cut has either not begun and
// never will, or is complete (cut set, interrupt returned). An upload
// checks cut right after stop; an interrupt still running then (the
// request's read deadline moved to now) would cancel the request after
// its body was accepted, and one started later would too.
func TestRateReaderStop(t *testing.T) {
	for _, c := range []struct {
		name string
		// during: stop is called while the interrupt runs; else after a
		// read that follows an early stop (which re-arms the timer).
		during bool
		want   bool // the interrupt ran
	}{
		{"stop while the cut runs waits for it", true, true},
		{"a read after stop cuts nothing", false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			entered, release := make(chan struct{}), make(chan struct{})
			var started, finished atomic.Bool
			grace := time.Duration(0)
			if !c.during {
				grace = time.Hour
			}
			rr := newRateReader(strings.NewReader("some bytes"), 1<<30, grace, func() {
				started.Store(true)
				close(entered)
				<-release
				finished.Store(true)
			})
			if c.during {
				<-entered // the timer fired: the cut has begun
			} else {
				rr.stop()
				rr.grace = 0 // the next read's deadline is already past
				_, _ = rr.Read(make([]byte, 1))
			}
			var late <-chan struct{} // a cut beginning after stop
			if !c.during {
				late = entered
			}
			stopped := make(chan struct{})
			go func() { rr.stop(); close(stopped) }()
			select {
			case <-stopped:
				if started.Load() && !finished.Load() {
					t.Error("stop returned while the interrupt ran")
				}
			case <-late:
			case <-time.After(100 * time.Millisecond):
			}
			close(release)
			<-stopped
			if started.Load() != c.want || rr.cut.Load() != c.want {
				t.Errorf("interrupt ran %v, cut %v; want %v", started.Load(), rr.cut.Load(), c.want)
			}
		})
	}
}
