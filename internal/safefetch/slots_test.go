package safefetch

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestSlots: a slot is taken while one is free, and a wait ends with its
// context; an ended context takes no slot, even a free one.
func TestSlots(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name  string
		slots *Slots
		held  int
		ctx   func() (context.Context, context.CancelFunc)
		want  error
	}{
		{"free", NewSlots(2), 1, func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }, nil},
		{"nil bounds nothing", nil, 0, func() (context.Context, context.CancelFunc) { return ended, func() {} }, nil},
		{"all held, the wait times out", NewSlots(2), 2, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 50*time.Millisecond)
		}, context.DeadlineExceeded},
		{"ended context, free slot", NewSlots(1), 0, func() (context.Context, context.CancelFunc) { return ended, func() {} }, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range tc.held {
				if _, err := tc.slots.Acquire(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := tc.ctx()
			defer cancel()
			release, err := tc.slots.Acquire(ctx)
			if !errors.Is(err, tc.want) || (err == nil) != (tc.want == nil) {
				t.Fatalf("err %v, want %v", err, tc.want)
			}
			if err != nil {
				return
			}
			release()
			if tc.slots != nil && len(tc.slots.ch) != tc.held {
				t.Fatalf("%d slots held after release, want %d", len(tc.slots.ch), tc.held)
			}
		})
	}
}

// TestSlotsWithin: slots made by Within hold at most their number of the
// outer ones, so the rest stay for those who take the outer ones
// directly; a holder waiting for an outer slot gives its own back when
// its context ends.
func TestSlotsWithin(t *testing.T) {
	short := func() (context.Context, context.CancelFunc) {
		return context.WithTimeout(context.Background(), 30*time.Millisecond)
	}
	for _, tc := range []struct {
		name string
		// inner and direct are the slots taken from Within(3) of
		// NewSlots(4) and from the outer ones directly, in that order.
		inner, direct int
		// innerWaits: one more inner slot is not given; directWaits:
		// one more direct slot is not given.
		innerWaits, directWaits bool
	}{
		{name: "inner ones take their share", inner: 3, innerWaits: true},
		{name: "the rest stays for the direct ones", inner: 3, direct: 1, innerWaits: true, directWaits: true},
		{name: "direct ones may take every slot", direct: 4, innerWaits: true, directWaits: true},
		{name: "free", inner: 1, direct: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			outer := NewSlots(4)
			inner := outer.Within(3)
			for range tc.inner {
				if _, err := inner.Acquire(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			for range tc.direct {
				ctx, cancel := short()
				_, err := outer.Acquire(ctx)
				cancel()
				if err != nil {
					t.Fatalf("a direct slot with %d inner ones held: %v", tc.inner, err)
				}
			}
			ctx, cancel := short()
			release, err := inner.Acquire(ctx)
			cancel()
			if waits := err != nil; waits != tc.innerWaits {
				t.Errorf("another inner slot: %v, want waiting %v", err, tc.innerWaits)
			}
			if err == nil {
				release()
			}
			if len(inner.ch) != tc.inner || len(outer.ch) != tc.inner+tc.direct {
				t.Errorf("held after: %d inner, %d outer; want %d, %d", len(inner.ch), len(outer.ch), tc.inner, tc.inner+tc.direct)
			}
			ctx, cancel = short()
			release, err = outer.Acquire(ctx)
			cancel()
			if waits := err != nil; waits != tc.directWaits {
				t.Errorf("another direct slot: %v, want waiting %v", err, tc.directWaits)
			}
			if err == nil {
				release()
			}
		})
	}
}
