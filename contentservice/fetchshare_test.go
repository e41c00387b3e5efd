package contentservice

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/internal/safefetch"
)

// TestFetchRenderShare: while PDF and image exports are on, checks hold
// at most max_concurrent less a quarter of it (at least one), and a
// render's image gets a slot with every check slot held; renders likewise
// leave that quarter to checks. With the browser off, checks may hold
// them all.
func TestFetchRenderShare(t *testing.T) {
	for _, tt := range []struct {
		n       int // max_concurrent; 0 for the default
		renders bool
		slots   int // all of them
		checks  int // check slots; 0: the config is refused
	}{
		{0, true, 32, 24},
		{32, false, 32, 32},
		{8, true, 8, 6},
		{4, true, 4, 3},
		{3, true, 3, 2},
		{2, true, 2, 1},
		{1, false, 1, 1},
		{1, true, 1, 0},
	} {
		s := &service{}
		err := s.setupFetch(&FetchConfig{MaxConcurrent: tt.n}, tt.renders)
		if tt.checks == 0 {
			if err == nil || !strings.Contains(err.Error(), "fetch.max_concurrent 1: at least 2 while PDF and image exports are on") {
				t.Errorf("max_concurrent %d: error %v", tt.n, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("max_concurrent %d: %v", tt.n, err)
		}
		s.weigher.Close()
		if got := take(s.fetch.checkSlots); got != tt.checks {
			t.Errorf("max_concurrent %d, renders %v: checks hold %d slots, want %d", tt.n, tt.renders, got, tt.checks)
		}
		if got := take(s.fetch.renderSlots); got != tt.slots-tt.checks {
			t.Errorf("max_concurrent %d, renders %v: with the checks' held, renders get %d slots, want %d", tt.n, tt.renders, got, tt.slots-tt.checks)
		}
		if !tt.renders {
			continue
		}
		// The other way round: renders first.
		s = &service{}
		if err := s.setupFetch(&FetchConfig{MaxConcurrent: tt.n}, true); err != nil {
			t.Fatal(err)
		}
		s.weigher.Close()
		if got := take(s.fetch.renderSlots); got != tt.checks {
			t.Errorf("max_concurrent %d: renders hold %d slots, want %d", tt.n, got, tt.checks)
		}
		if got := take(s.fetch.checkSlots); got != tt.slots-tt.checks {
			t.Errorf("max_concurrent %d: with the renders' held, checks get %d slots, want %d", tt.n, got, tt.slots-tt.checks)
		}
	}
}

// take holds as many of slots as it can get at once and returns their
// number.
func take(slots *safefetch.Slots) int {
	n := 0
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		_, err := slots.Acquire(ctx)
		cancel()
		if err != nil {
			return n
		}
		n++
	}
}
