// Package retire holds the outgoing transport that a module's Cleanup
// retires, shared by design_bridge (its upstream proxies) and fsp (its
// fetcher and S3 client).
package retire

import (
	"net/http"
	"sync/atomic"
)

// Transport wraps a transport that Cleanup retires. Caddy's reload
// returns before the old server has stopped, so that server can still
// serve a request with the unloaded config; through a plain transport,
// such a request leaves a kept-alive connection that nothing closes again
// until its idle timeout (net/http keeps idle connections again after
// CloseIdleConnections). Once retired, every request closes its
// connection.
type Transport struct {
	inner   http.RoundTripper
	retired atomic.Bool
}

// New wraps inner.
func New(inner http.RoundTripper) *Transport { return &Transport{inner: inner} }

func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.retired.Load() && !req.Close {
		// A RoundTripper must not change the request it is given.
		req = req.Clone(req.Context())
		req.Close = true
	}
	return t.inner.RoundTrip(req)
}

// Unwrap returns the transport t wraps.
func (t *Transport) Unwrap() http.RoundTripper { return t.inner }

// CloseIdleConnections closes the inner transport's idle connections (and
// lets http.Client.CloseIdleConnections reach them).
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.inner.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// Retire closes the idle connections, and makes every later request close
// its own.
func (t *Transport) Retire() {
	t.retired.Store(true)
	t.CloseIdleConnections()
}
