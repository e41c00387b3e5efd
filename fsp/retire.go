package fsp

import (
	"net/http"
	"sync/atomic"
)

// retiringTransport is an outgoing transport that Cleanup retires. Caddy's
// reload returns before the old server has stopped, so that server can
// still serve a request with the unloaded config; through a plain
// transport, such a request leaves a kept-alive connection that nothing
// closes again until its idle timeout. Once retired, every request closes
// its connection.
type retiringTransport struct {
	inner   *http.Transport
	retired atomic.Bool
}

func (t *retiringTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.retired.Load() && !req.Close {
		// A RoundTripper must not change the request it is given.
		req = req.Clone(req.Context())
		req.Close = true
	}
	return t.inner.RoundTrip(req)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach the
// inner transport.
func (t *retiringTransport) CloseIdleConnections() { t.inner.CloseIdleConnections() }

// retire closes the idle connections, and makes later requests close
// theirs.
func (t *retiringTransport) retire() {
	t.retired.Store(true)
	t.inner.CloseIdleConnections()
}
