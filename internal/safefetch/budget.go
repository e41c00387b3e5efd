package safefetch

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
)

// ErrBudgetSpent is returned (wrapped) for a request made once its
// context's budget (WithBudget) is spent.
var ErrBudgetSpent = errors.New("request budget spent")

type budgetKey struct{}

// WithBudget returns a context under which this package's clients make
// at most n requests together, every redirect counted: what one client
// request (a check of a design) may make the service send, however its
// URLs redirect.
func WithBudget(ctx context.Context, n int64) context.Context {
	b := new(atomic.Int64)
	b.Store(n)
	return context.WithValue(ctx, budgetKey{}, b)
}

// budgeted takes one request of the budget its request's context
// carries, if any.
type budgeted struct{ next http.RoundTripper }

func (t budgeted) RoundTrip(req *http.Request) (*http.Response, error) {
	if b, ok := req.Context().Value(budgetKey{}).(*atomic.Int64); ok && b.Add(-1) < 0 {
		if req.Body != nil {
			_ = req.Body.Close() // a RoundTripper closes it, even on error
		}
		return nil, ErrBudgetSpent
	}
	return t.next.RoundTrip(req)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// transport.
func (t budgeted) CloseIdleConnections() {
	if c, ok := t.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
