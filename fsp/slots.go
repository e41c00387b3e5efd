package fsp

import (
	"context"
	"io"
	"sync"
	"sync/atomic"
	"time"
)

// uploadSlots bounds the uploads handled at once, and what one user may
// hold of them: a user never takes more than half the slots (at least
// one), so one user's slow uploads cannot make everyone else wait.
type uploadSlots struct {
	all     chan struct{}
	perUser int

	mu    sync.Mutex
	users map[string]*userSlots
}

type userSlots struct {
	slots chan struct{}
	refs  int // requests holding or waiting for one of them
}

func newUploadSlots(n int) *uploadSlots {
	return &uploadSlots{all: make(chan struct{}, n), perUser: max(1, n/2), users: map[string]*userSlots{}}
}

// acquire waits for one of user's slots and then for a shared one; the
// returned func gives both back.
func (s *uploadSlots) acquire(ctx context.Context, user string) (release func(), ok bool) {
	s.mu.Lock()
	u := s.users[user]
	if u == nil {
		u = &userSlots{slots: make(chan struct{}, s.perUser)}
		s.users[user] = u
	}
	u.refs++
	s.mu.Unlock()
	drop := func() {
		s.mu.Lock()
		if u.refs--; u.refs == 0 {
			delete(s.users, user)
		}
		s.mu.Unlock()
	}
	select {
	case u.slots <- struct{}{}:
	case <-ctx.Done():
		drop()
		return nil, false
	}
	select {
	case s.all <- struct{}{}:
	case <-ctx.Done():
		<-u.slots
		drop()
		return nil, false
	}
	return func() {
		<-s.all
		<-u.slots
		drop()
	}, true
}

// minRateGrace is how long an upload's bytes may take before the minimum
// rate applies: the first bytes of a slow link, a source's first answer.
const minRateGrace = 5 * time.Second

// rateReader cuts a body whose bytes arrive more slowly than rate bytes
// per second on average (after minRateGrace): interrupt is called at the
// moment the bytes read so far fall behind, and reads then fail, so a
// source that drips (or stops) gives its upload slot back early.
type rateReader struct {
	r         io.Reader
	rate      float64
	start     time.Time
	n         atomic.Int64
	grace     time.Duration
	timer     *time.Timer
	cut       atomic.Bool
	interrupt func()

	// mu makes a cut and stop exclusive: Timer.Stop does not wait for a
	// function already running, nor keep a later Read from re-arming it.
	mu      sync.Mutex
	stopped bool
}

// newRateReader watches r; the rate applies after grace (minRateGrace).
func newRateReader(r io.Reader, rate int64, grace time.Duration, interrupt func()) *rateReader {
	rr := &rateReader{r: r, rate: float64(rate), start: time.Now(), grace: grace, interrupt: interrupt}
	rr.timer = time.AfterFunc(rr.wait(), rr.fire)
	return rr
}

// fire cuts the body, unless stop came first.
func (rr *rateReader) fire() {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	if rr.stopped {
		return
	}
	rr.cut.Store(true)
	rr.interrupt()
}

// wait is the time left before the bytes read so far fall behind.
func (rr *rateReader) wait() time.Duration {
	behind := rr.start.Add(rr.grace + time.Duration(float64(rr.n.Load())/rr.rate*float64(time.Second)))
	return time.Until(behind)
}

func (rr *rateReader) Read(p []byte) (int, error) {
	if rr.cut.Load() {
		return 0, uploadErr("the upload arrived too slowly")
	}
	n, err := rr.r.Read(p)
	rr.n.Add(int64(n))
	if rr.cut.Load() {
		return n, uploadErr("the upload arrived too slowly")
	}
	if n > 0 {
		rr.timer.Reset(rr.wait())
	}
	return n, err
}

// stop ends the watch. When it returns, a cut is either complete (cut is
// set, interrupt has returned) or will never happen: a cut still running
// afterwards would end the request (its read deadline moved to now)
// after its body was accepted.
func (rr *rateReader) stop() {
	rr.mu.Lock()
	rr.stopped = true
	rr.mu.Unlock()
	rr.timer.Stop()
}
