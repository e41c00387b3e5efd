// Package adminapi posts configurations to the admin endpoint of the Caddy
// that an integration test runs.
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
	for attempt := 0; attempt < 5; attempt++ {
		if attempt > 0 {
			time.Sleep(100 * time.Millisecond)
		}
		if status, body, err = post(port, cfg, contentType, force); err == nil || !IsReset(err) {
			return status, body, err
		}
	}
	return 0, nil, fmt.Errorf("admin endpoint kept resetting the connection: %w", err)
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
	var (
		res *http.Response
		err error
	)
	for attempt := 0; attempt < 5; attempt++ {
		if attempt > 0 {
			time.Sleep(100 * time.Millisecond)
			if req.GetBody == nil {
				return nil, err
			}
			again := req.Clone(req.Context())
			if again.Body, err = req.GetBody(); err != nil {
				return nil, err
			}
			req = again
		}
		if res, err = l.inner.RoundTrip(req); err == nil || !IsReset(err) {
			return res, err
		}
	}
	return nil, err
}

// Retrying wraps rt so that a request which a server being replaced by a
// reload closed unanswered is sent once more. Caddy returns from a load
// while the old server may still accept one connection, and net/http
// closes it without running a handler (the server is shutting down), so
// the request met no handler and sending it again is safe. A request
// whose body cannot be rewound is not retried.
func Retrying(rt http.RoundTripper) http.RoundTripper { return retrying{rt} }

type retrying struct{ inner http.RoundTripper }

func (r retrying) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := r.inner.RoundTrip(req)
	if err == nil || !IsReset(err) || (req.Body != nil && req.Body != http.NoBody && req.GetBody == nil) {
		return res, err
	}
	again := req.Clone(req.Context())
	if req.GetBody != nil {
		if again.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	return r.inner.RoundTrip(again)
}

// NewTester returns caddytest's Tester with cfg's overrides and a client
// fit for requests sent right after a load: it opens a new connection for
// every request (a load closes the kept-alive ones) and sends a request
// once more when the server that load replaced closed it unanswered
// (Retrying). Its dialer still sends every name to 127.0.0.1.
func NewTester(t testing.TB, cfg caddytest.Config) *caddytest.Tester {
	tc := caddytest.NewTester(t).WithDefaultOverrides(cfg)
	tr := caddytest.CreateTestingTransport()
	tr.DisableKeepAlives = true
	tc.Client.Transport = Retrying(tr)
	return tc
}
