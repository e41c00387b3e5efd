package safefetch

import "context"

// Slots bounds the fetches in flight at once across everything that
// shares it (a content_service handler's checks and renders). A fetch
// holds one slot for its whole course: its requests, redirects included,
// go one after another, so the hosts fetched from never see more
// requests at once than there are slots. A nil *Slots bounds nothing.
type Slots struct {
	ch chan struct{}
	// outer, for slots made by Within, is the pool each slot also takes
	// one of.
	outer *Slots
}

// NewSlots returns n slots.
func NewSlots(n int) *Slots { return &Slots{ch: make(chan struct{}, n)} }

// Within returns n slots that each also take one of s's: their holders
// never hold more than n of s's slots, and the rest stay for the others
// who take s's directly. A nil s bounds only the n.
func (s *Slots) Within(n int) *Slots { return &Slots{ch: make(chan struct{}, n), outer: s} }

// Acquire waits for a slot until ctx ends (then it returns ctx's error);
// release gives the slot back. A slot made by Within is taken before the
// outer one, so waiting holders of it hold none of s's.
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
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	own := func() { <-s.ch }
	if s.outer == nil {
		return own, nil
	}
	releaseOuter, err := s.outer.Acquire(ctx)
	if err != nil {
		own()
		return nil, err
	}
	return func() { releaseOuter(); own() }, nil
}
