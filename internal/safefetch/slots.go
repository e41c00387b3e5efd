package safefetch

import "context"

// Slots bounds the fetches in flight at once across everything that
// shares it (a content_service handler's checks and renders). A fetch
// holds one slot for its whole course: its requests, redirects included,
// go one after another, so the hosts fetched from never see more
// requests at once than there are slots. A nil *Slots bounds nothing.
type Slots struct{ ch chan struct{} }

// NewSlots returns n slots.
func NewSlots(n int) *Slots { return &Slots{ch: make(chan struct{}, n)} }

// Acquire waits for a slot until ctx ends (then it returns ctx's error);
// release gives the slot back.
func (s *Slots) Acquire(ctx context.Context) (release func(), err error) {
	if s == nil {
		return func() {}, nil
	}
	if err := ctx.Err(); err != nil {
		// A free slot and an ended context both ready: select would
		// pick at random, and a fetch with no time left would start.
		return nil, err
	}
	select {
	case s.ch <- struct{}{}:
		return func() { <-s.ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
