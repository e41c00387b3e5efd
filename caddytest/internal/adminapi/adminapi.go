// Package adminapi is how integration tests live with Caddy's reloads: it
// posts configurations to the admin endpoint of the Caddy a test runs, and
// sends again a request that a server being replaced closed unanswered.
package adminapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"
)

// client opens a new connection for every request: each load replaces
// Caddy's admin server, which closes the connections the old one had
// accepted, so a kept-alive connection would meet a reset.
var client = &http.Client{
	Transport: &http.Transport{DisableKeepAlives: true},
	Timeout:   10 * time.Second,
}

// Load posts cfg (of the given Content-Type) to /load on the admin port
// and returns the status and body of the answer. With force, Caddy reloads
// even an unchanged config. A connection reset while the admin server is
// being replaced by the previous load is retried: a load is idempotent.
func Load(port int, cfg []byte, contentType string, force bool) (status int, body []byte, err error) {
	err = Resend(func() (err error) {
		status, body, err = post(port, cfg, contentType, force)
		return err
	})
	return status, body, err
}

// post is one attempt of Load.
func post(port int, cfg []byte, contentType string, force bool) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, fmt.Sprintf("http://localhost:%d/load", port), bytes.NewReader(cfg))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", contentType)
	if force {
		req.Header.Set("Cache-Control", "must-revalidate")
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	return res.StatusCode, body, err
}

// IsReset reports whether err is a connection closed under the request,
// as happens while a server is being replaced.
func IsReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// Resend calls send, and calls it again (up to five times in all, 100 ms
// apart) while it fails with a connection closed unanswered (IsReset). A
// server that a load replaces can still accept a connection as it stops
// and close it before any handler has run, so sending again is safe.
func Resend(send func() error) error {
	err := send()
	for attempt := 1; attempt < 5 && err != nil && IsReset(err); attempt++ {
		time.Sleep(100 * time.Millisecond)
		err = send()
	}
	return err
}

// SteadyLoads prepares the process's default HTTP transport, through
// which caddytest's InitServer posts configs to /load. Each load, even a
// refused one, replaces Caddy's admin server: the old server closes the
// kept-alive connection the next load would reuse (EOF), and while it
// shuts down it can still catch a new connection and reset it. So every
// request opens a new connection, and a POST to /load that meets such a
// reset is sent again, as Load does. Call it from TestMain.
func SteadyLoads() {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return
	}
	t.DisableKeepAlives = true
	http.DefaultTransport = loadRetrying{t}
}

// loadRetrying retries only loads, which are idempotent: a test's own
// requests through the default transport keep failing the way they fail.
type loadRetrying struct{ inner http.RoundTripper }

func (l loadRetrying) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.URL.Path != "/load" {
		return l.inner.RoundTrip(req)
	}
	return retrying(l).RoundTrip(req)
}

// Retrying wraps rt so that a request which a server being replaced by a
// load closed unanswered is sent again (Resend). A request whose body
// cannot be rewound is sent once.
func Retrying(rt http.RoundTripper) http.RoundTripper { return retrying{rt} }

type retrying struct{ inner http.RoundTripper }

func (r retrying) RoundTrip(req *http.Request) (res *http.Response, err error) {
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		return r.inner.RoundTrip(req)
	}
	first := true
	err = Resend(func() error {
		send := req
		if !first {
			send = req.Clone(req.Context())
			if req.GetBody != nil {
				if send.Body, err = req.GetBody(); err != nil {
					return err
				}
			}
		}
		first = false
		res, err = r.inner.RoundTrip(send)
		return err
	})
	return res, err
}

// NewTester returns caddytest's Tester with cfg's overrides and a client
// fit for requests sent right after a load: it opens a new connection for
// every request (a load closes the kept-alive ones) and sends a request
// again when the server that load replaced closed it unanswered
// (Retrying). Its dialer still sends every name to 127.0.0.1.
func NewTester(t testing.TB, cfg caddytest.Config) *caddytest.Tester {
	tc := caddytest.NewTester(t).WithDefaultOverrides(cfg)
	tr := caddytest.CreateTestingTransport()
	tr.DisableKeepAlives = true
	tc.Client.Transport = Retrying(tr)
	return tc
}
