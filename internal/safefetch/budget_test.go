package safefetch

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
)

// TestBudget: under WithBudget a client's requests, every redirect
// counted, stop at the budget; without one nothing is counted.
func TestBudget(t *testing.T) {
	var hits atomic.Int64
	// /hop/<n> redirects n times, then answers; /hop/5 is the longest
	// chain a client follows (6 requests).
	srv, client := hopServer(t, &hits)
	for _, tc := range []struct {
		name     string
		budget   int64 // 0: none
		requests int   // client requests, each of 6 HTTP requests
		hits     int64
		spent    bool
	}{
		{"no budget", 0, 2, 12, false},
		{"enough", 12, 2, 12, false},
		{"spent within the redirects", 3, 1, 3, true},
		{"spent by an earlier request", 7, 2, 7, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits.Store(0)
			ctx := context.Background()
			if tc.budget > 0 {
				ctx = WithBudget(ctx, tc.budget)
			}
			var err error
			for range tc.requests {
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/hop/5", nil)
				res, doErr := client.Do(req)
				if doErr != nil {
					err = doErr
					continue
				}
				_ = res.Body.Close()
			}
			if errors.Is(err, ErrBudgetSpent) != tc.spent {
				t.Errorf("err %v, want spent %v", err, tc.spent)
			}
			if n := hits.Load(); n != tc.hits {
				t.Errorf("the server got %d requests, want %d", n, tc.hits)
			}
		})
	}
}
