package designbridge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func answerOf(n int) *exportAnswer {
	return &exportAnswer{status: 200, header: http.Header{"Content-Type": {"text/html"}}, body: bytes.Repeat([]byte("x"), n)}
}

// testCache returns a cache on a clock the test moves.
func testCache(max int64) (*exportCache, prometheus.Gauge, *time.Time) {
	held := prometheus.NewGauge(prometheus.GaugeOpts{Name: "held"})
	now := time.Unix(1_800_000_000, 0)
	c := newExportCache(max, time.Minute, held, func() time.Time { return now })
	return c, held, &now
}

// keyOf is exportKey of a body held in memory.
func keyOf(path, accept string, body []byte) [32]byte {
	key, err := exportKey(path, accept, memoryBody(body))
	if err != nil {
		panic(err)
	}
	return key
}

func TestExportKey(t *testing.T) {
	base := keyOf("/v1/message/html", "", []byte(`{"page":{}}`))
	for _, tt := range []struct {
		name         string
		path, accept string
		body         string
	}{
		{"other path", "/v1/message/plain-text", "", `{"page":{}}`},
		{"other Accept", "/v1/message/html", "application/json", `{"page":{}}`},
		{"other body", "/v1/message/html", "", `{"page":{} }`},
		{"parts shifted between fields", "/v1/message/htm", "l", `{"page":{}}`},
	} {
		if keyOf(tt.path, tt.accept, []byte(tt.body)) == base {
			t.Errorf("%s: same key", tt.name)
		}
	}
	if keyOf("/v1/message/html", "", []byte(`{"page":{}}`)) != base {
		t.Error("the same export gave another key")
	}
	// A body spooled to a file has the key of the same bytes in memory.
	big := bytes.Repeat([]byte("x"), spoolAbove+1)
	spooled := new(requestBody)
	if _, err := spooled.Write(big); err != nil {
		t.Fatal(err)
	}
	defer spooled.Close()
	if spooled.Bytes() != nil {
		t.Fatal("a body past spoolAbove stayed in memory")
	}
	if k, err := exportKey("/p", "", spooled); err != nil || k != keyOf("/p", "", big) {
		t.Errorf("spooled body: key differs from the same bytes in memory (err %v)", err)
	}
}

func TestExportCache(t *testing.T) {
	k := func(i int) [32]byte { return keyOf("/p", "", []byte{byte(i)}) }
	size := answerOf(1000).size()
	tests := []struct {
		name string
		run  func(t *testing.T, c *exportCache, now *time.Time)
	}{
		{"hit after put", func(t *testing.T, c *exportCache, _ *time.Time) {
			c.put(k(1), answerOf(1000))
			if a, ok := c.get(k(1)); !ok || len(a.body) != 1000 {
				t.Fatal("miss after put")
			}
		}},
		{"only 200 kept", func(t *testing.T, c *exportCache, _ *time.Time) {
			for _, status := range []int{201, 204, 400, 401, 429, 500, 502} {
				a := answerOf(10)
				a.status = status
				if c.put(k(status), a) {
					t.Errorf("status %d kept", status)
				}
			}
		}},
		{"expires after the time to live", func(t *testing.T, c *exportCache, now *time.Time) {
			c.put(k(1), answerOf(1000))
			*now = now.Add(time.Minute - time.Nanosecond)
			if _, ok := c.get(k(1)); !ok {
				t.Fatal("expired early")
			}
			*now = now.Add(time.Nanosecond)
			if _, ok := c.get(k(1)); ok {
				t.Fatal("served after its time to live")
			}
			if c.heldBytes() != 0 {
				t.Errorf("expired entry still counted: %d", c.heldBytes())
			}
		}},
		{"least recently used goes first", func(t *testing.T, c *exportCache, _ *time.Time) {
			// The bound holds 8 entries of this size.
			for i := range 8 {
				c.put(k(i), answerOf(1000))
			}
			c.get(k(0)) // 1 is now the least recently used
			c.put(k(8), answerOf(1000))
			if _, ok := c.get(k(1)); ok {
				t.Error("the least recently used entry was kept")
			}
			for _, i := range []int{0, 2, 8} {
				if _, ok := c.get(k(i)); !ok {
					t.Errorf("entry %d dropped", i)
				}
			}
		}},
		{"an entry over an eighth of the bound is not kept", func(t *testing.T, c *exportCache, _ *time.Time) {
			if c.put(k(1), answerOf(int(c.max/8))) {
				t.Error("kept")
			}
			if c.heldBytes() != 0 {
				t.Error("counted")
			}
		}},
		{"replacing an entry counts it once", func(t *testing.T, c *exportCache, _ *time.Time) {
			c.put(k(1), answerOf(1000))
			c.put(k(1), answerOf(1000))
			if c.heldBytes() != size {
				t.Errorf("held %d, want %d", c.heldBytes(), size)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, held, now := testCache(8*size + 7)
			tt.run(t, c, now)
			if got := testutil.ToFloat64(held); got != float64(c.heldBytes()) {
				t.Errorf("gauge %v, cache %d", got, c.heldBytes())
			}
			c.clear()
			if got := testutil.ToFloat64(held); got != 0 {
				t.Errorf("gauge %v after clear", got)
			}
		})
	}
}

// TestExportCacheBoundUnderLoad fills the cache from many goroutines with
// answers of many sizes while another goroutine watches the bytes held:
// the bound must hold at every moment, and the gauge must end equal.
func TestExportCacheBoundUnderLoad(t *testing.T) {
	const max = 64 << 10
	held := prometheus.NewGauge(prometheus.GaugeOpts{Name: "held"})
	c := newExportCache(max, time.Minute, held, time.Now)
	var stop atomic.Bool
	var over atomic.Int64
	watcher := make(chan struct{})
	go func() {
		defer close(watcher)
		for !stop.Load() {
			if n := c.heldBytes(); n > max {
				over.Store(n)
			}
		}
	}()
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				n := (g*7919 + i*104729) % (max / 6)
				key := keyOf("/p", fmt.Sprint(g), []byte(fmt.Sprint(i%300)))
				c.put(key, answerOf(n))
				c.get(keyOf("/p", fmt.Sprint((g+1)%16), []byte(fmt.Sprint(i%300))))
			}
		}()
	}
	wg.Wait()
	stop.Store(true)
	<-watcher
	if n := over.Load(); n != 0 {
		t.Fatalf("held %d bytes, over the bound of %d", n, max)
	}
	if c.heldBytes() == 0 {
		t.Fatal("nothing kept")
	}
	if got := testutil.ToFloat64(held); got != float64(c.heldBytes()) {
		t.Errorf("gauge %v, cache %d", got, c.heldBytes())
	}
}

func TestExportAnswerWriteTo(t *testing.T) {
	a := &exportAnswer{status: 200, header: http.Header{"Content-Type": {"text/html; charset=utf-8"}}, body: []byte("<p>x</p>")}
	w := httptest.NewRecorder()
	a.writeTo(w, "design_bridge; hit")
	if w.Code != 200 || w.Body.String() != "<p>x</p>" || w.Header().Get("Cache-Status") != "design_bridge; hit" ||
		w.Header().Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("%d %q %v", w.Code, w.Body, w.Header())
	}
	// The kept header is not shared with the response's.
	w.Header().Set("Content-Type", "changed")
	if a.header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Error("writing an answer let the response change the kept header")
	}
}

func TestBridgeMetricsShared(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m1, err := newBridgeMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m2, err := newBridgeMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	if m1.held != m2.held || m1.exports != m2.exports || m1.cache != m2.cache || m1.upstreams != m2.upstreams {
		t.Fatal("a second bridge of the same config registered collectors of its own")
	}
	m1.cache.WithLabelValues("hit").Inc()
	m2.cache.WithLabelValues("hit").Inc()
	if got := testutil.ToFloat64(m1.cache.WithLabelValues("hit")); got != 2 {
		t.Errorf("hits %v", got)
	}
}

// TestSharedCallPanic: a panic in a shared call fails that call with a 500
// for every request waiting for it, instead of ending the process (the
// call's goroutine has no net/http recover above it), and leaves no call
// behind.
func TestSharedCallPanic(t *testing.T) {
	g := &flightGroup{calls: map[[32]byte]*flightCall{}}
	key := keyOf("/v1/message/html", "", []byte(`{}`))
	release := make(chan struct{})
	fn := func(context.Context) (*exportAnswer, error) {
		<-release
		panic("a bug")
	}
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i], _ = g.do(context.Background(), key, fn)
		}()
	}
	// all three wait for the one call before it panics
	for waiting := 0; waiting < len(errs); time.Sleep(time.Millisecond) {
		g.mu.Lock()
		if c := g.calls[key]; c != nil {
			waiting = c.waiters
		}
		g.mu.Unlock()
	}
	close(release)
	wg.Wait()
	for i, err := range errs {
		var he caddyhttp.HandlerError
		if !errors.As(err, &he) || he.StatusCode != http.StatusInternalServerError || !strings.Contains(err.Error(), "a bug") {
			t.Errorf("waiter %d: %v, want a 500 naming the panic", i, err)
		}
	}
	if len(g.calls) != 0 {
		t.Errorf("%d calls left", len(g.calls))
	}
}

func TestAcceptKey(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  string
	}{
		{nil, ""},
		{[]string{"*/*"}, "*/*"},
		{[]string{"*/*", "text/html;q=0, application/json"}, "*/*,text/html;q=0,application/json"},
		{[]string{"*/*, text/html;q=0,application/json"}, "*/*,text/html;q=0,application/json"},
		{[]string{" , ", "a"}, "a"},
	} {
		if got := acceptKey(tc.lines); got != tc.want {
			t.Errorf("acceptKey(%q) = %q, want %q", tc.lines, got, tc.want)
		}
	}
}

func TestUnsharedReason(t *testing.T) {
	for _, tc := range []struct {
		header http.Header
		want   string
	}{
		{http.Header{}, ""},
		{http.Header{"Vary": {"Accept"}}, ""},
		{http.Header{"Vary": {"accept, Accept-Encoding", "content-type"}}, ""},
		{http.Header{"Cache-Control": {"public, max-age=600"}}, ""},
		{http.Header{"Vary": {"Accept", "Origin"}}, "vary"},
		{http.Header{"Vary": {"*"}}, "vary"},
		{http.Header{"Vary": {"Accept, Cookie"}}, "vary"},
		{http.Header{"Cache-Control": {"max-age=60", "Private"}}, "cache-control"},
		{http.Header{"Cache-Control": {`private="Set-Cookie"`}}, "cache-control"},
		{http.Header{"Cache-Control": {"no-store"}}, "cache-control"},
		{http.Header{"Cache-Control": {"no-cache"}}, "cache-control"},
	} {
		if got := unsharedReason(tc.header); got != tc.want {
			t.Errorf("unsharedReason(%v) = %q, want %q", tc.header, got, tc.want)
		}
	}
}
