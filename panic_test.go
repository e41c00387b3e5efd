package designbridge

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// provisionContext is a context to provision a Bridge in: that of a
// running Caddy without apps or admin endpoint (the reverse proxy reads
// the config's apps).
func provisionContext(t *testing.T) caddy.Context {
	persist := false
	cfg := &caddy.Config{Admin: &caddy.AdminConfig{Disabled: true, Config: &caddy.ConfigSettings{Persist: &persist}}}
	if err := caddy.Run(cfg); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = caddy.Stop() })
	ctx, cancel := caddy.NewContext(caddy.ActiveContext())
	t.Cleanup(cancel)
	return ctx
}

// panicTransport is a transport with a bug: it panics when it is asked to
// send (before), or hands back an answer whose body panics once after
// bytes of it have been read.
type panicTransport struct {
	inner http.RoundTripper
	after int // -1: panic in RoundTrip itself
}

func (p panicTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if p.after < 0 {
		panic("a bug in the transport")
	}
	res, err := p.inner.RoundTrip(r)
	if err == nil {
		res.Body = &panicBody{ReadCloser: res.Body, left: p.after}
	}
	return res, err
}

type panicBody struct {
	io.ReadCloser
	left int
}

func (b *panicBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		panic("a bug in the answer's reader")
	}
	n, err := b.ReadCloser.Read(p[:min(len(p), b.left)])
	b.left -= n
	return n, err
}

// TestExportPanicGivesBack: a panic in an export's forwarding (here in the
// upstream transport, before it sends or in the middle of a large answer)
// fails that export with a 500 and gives back everything the export held:
// its large body's room in large_body_memory, its recorded (or, with
// unwrap_html, held back) answer's room in answer_memory, and its call in
// flight. Kept, each such panic took room for the config's life, until
// every export answered 503 (5030).
func TestExportPanicGivesBack(t *testing.T) {
	const answerSize = 3 << 20
	answer := bytes.Repeat([]byte("<p>answer</p>"), answerSize/13)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(answer)))
		w.Write(answer)
	}))
	defer up.Close()
	design := append([]byte(`{"page":"`), bytes.Repeat([]byte("x"), 2<<20)...) // past spoolAbove: held in large_body_memory
	design = append(design, `"}`...)

	for _, tt := range []struct {
		name   string
		unwrap bool
		after  int // where the transport panics (panicTransport); 0: it does not
		inBody bool
	}{
		{name: "reading the request body", inBody: true},
		{name: "before sending", after: -1},
		{name: "in the answer", after: 2 << 20},
		{name: "in a held-back answer", unwrap: true, after: 2 << 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := provisionContext(t)
			b := &Bridge{ContentService: up.URL, Token: "a-token-for-tests", UnwrapHTML: tt.unwrap}
			if err := b.Provision(ctx); err != nil {
				t.Fatal(err)
			}
			defer b.Cleanup()
			if tt.after != 0 {
				ut := b.exportProxy.Transport.(*upstreamTransport)
				ut.inner = panicTransport{inner: ut.inner, after: tt.after}
			}

			// Identical exports at once: they may join one call.
			var wg sync.WaitGroup
			for i := range 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					req := httptest.NewRequest(http.MethodPost, "/v1/message/html", bytes.NewReader(design))
					req.Header.Set("Content-Type", "application/json")
					if tt.inBody {
						req.Body = &panicBody{ReadCloser: req.Body, left: 1<<20 + 100}
					}
					req = caddyhttp.PrepareRequest(req, caddy.NewReplacer(), nil, &caddyhttp.Server{})
					defer func() {
						// Not in a call: the panic goes to Caddy's server.
						if v := recover(); tt.inBody && v == nil || !tt.inBody && v != nil {
							t.Errorf("export %d: panic %v", i, v)
						}
					}()
					err := b.ServeHTTP(httptest.NewRecorder(), req, caddyhttp.HandlerFunc(noNext))
					var he caddyhttp.HandlerError
					if !errors.As(err, &he) || he.StatusCode != http.StatusInternalServerError || !strings.Contains(err.Error(), "a bug") {
						t.Errorf("export %d: %v, want a 500 naming the panic", i, err)
					}
				}()
			}
			wg.Wait()
			// net/http closes the body it sent from its own goroutine.
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				bodies, answers := b.largeBodies.left.Load(), b.answerMemory.left.Load()
				if bodies == b.LargeBodyMemory && answers == b.AnswerMemory {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after the panics large_body_memory has %d of %d bytes, answer_memory %d of %d",
						bodies, b.LargeBodyMemory, answers, b.AnswerMemory)
				}
			}
			b.flight.mu.Lock()
			defer b.flight.mu.Unlock()
			if n := len(b.flight.calls); n != 0 {
				t.Errorf("%d calls left in flight", n)
			}
		})
	}
}
