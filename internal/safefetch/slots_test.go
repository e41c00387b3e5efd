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
