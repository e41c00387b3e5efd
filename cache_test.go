package designbridge

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash/maphash"
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

// testSeed is the seed of the keys in these tests.
var testSeed = maphash.MakeSeed()

// testKey is keyOf a body held in memory, to be kept.
func testKey(path, accept string, body []byte) exportKey {
	k, err := keyOf(testSeed, path, accept, memoryBody(body), true)
	if err != nil {
		panic(err)
	}
	return k
}

func TestExportKey(t *testing.T) {
	key := func(path, accept, body string) exportKey { return testKey(path, accept, []byte(body)) }
	base := key("/v1/message/html", "", `{"page":{}}`)
	for _, tt := range []struct {
		name         string
		path, accept string
		body         string
	}{
		{"other path", "/v1/message/plain-text", "", `{"page":{}}`},
		// The same design is a page or a popup by its collection, laid
		// out differently.
		{"other collection", "/v1/page/html", "", `{"page":{}}`},
		{"popup collection", "/v1/popup/html", "", `{"page":{}}`},
		{"other Accept", "/v1/message/html", "application/json", `{"page":{}}`},
		{"other body", "/v1/message/html", "", `{"page":{} }`},
		{"parts shifted between fields", "/v1/message/htm", "l", `{"page":{}}`},
	} {
		if key(tt.path, tt.accept, tt.body) == base {
			t.Errorf("%s: same key", tt.name)
		}
	}
	if key("/v1/message/html", "", `{"page":{}}`) != base {
		t.Error("the same export gave another key")
	}
	// A large body has one key whether it is held in memory chunks or in
	// a file, and a key of its length and both ends: a body that differs
	// there has another key.
	big := bytes.Repeat([]byte("x"), 3*spoolAbove+12345)
	large := func(b []byte, inMemory bool) exportKey {
		t.Helper()
		rb := new(requestBody)
		if inMemory && !rb.holdLarge(newMemoryBudget(int64(len(b))), int64(len(b))) {
			t.Fatal("no room in the budget")
		}
		defer rb.Close()
		if _, err := rb.ReadFrom(bytes.NewReader(b)); err != nil {
			t.Fatal(err)
		}
		if rb.Bytes() != nil || (rb.chunks != nil) != inMemory {
			t.Fatalf("held in chunks %v, want %v", rb.chunks != nil, inMemory)
		}
		k, err := keyOf(testSeed, "/p", "", rb, false)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	baseLarge := large(big, true)
	if large(big, false) != baseLarge {
		t.Error("a large body in a file has another key than in memory")
	}
	for _, change := range []struct {
		name string
		b    []byte
	}{
		{"first byte", append([]byte("y"), big[1:]...)},
		{"last byte", append(bytes.Clone(big[:len(big)-1]), 'y')},
		{"one byte longer", append(bytes.Clone(big), 'x')},
	} {
		if large(change.b, true) == baseLarge {
			t.Errorf("large body, %s changed: same key", change.name)
		}
	}
	// A design that may be kept is hashed whole: one that differs only in
	// the middle has another key (the cache holds one answer per key).
	design := bytes.Repeat([]byte("d"), 40<<10)
	edited := bytes.Clone(design)
	edited[len(edited)/2] = 'e'
	if testKey("/p", "", design) == testKey("/p", "", edited) {
		t.Error("designs to be kept that differ in the middle: same key")
	}
}

// TestSameBody: bodies are the same only byte for byte, in memory or
// spooled, and a body that can no longer be read back is never the same.
func TestSameBody(t *testing.T) {
	spool := func(b []byte) *requestBody {
		rb := new(requestBody)
		if _, err := rb.Write(b); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { rb.Close() })
		return rb
	}
	big := bytes.Repeat([]byte("x"), spoolAbove+100<<10)
	other := bytes.Clone(big)
	other[len(other)-1] = 'y'
	for _, tc := range []struct {
		name string
		a, b *requestBody
		want bool
	}{
		{"memory, same", memoryBody([]byte("abc")), memoryBody([]byte("abc")), true},
		{"memory, other", memoryBody([]byte("abc")), memoryBody([]byte("abd")), false},
		{"memory, other length", memoryBody([]byte("abc")), memoryBody([]byte("ab")), false},
		{"spooled, same", spool(big), spool(big), true},
		{"spooled, last byte differs", spool(big), spool(other), false},
	} {
		if got := sameBody(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	closed := spool(big)
	closed.Close()
	if sameBody(spool(big), closed) {
		t.Error("a closed spooled body compared the same")
	}
}

// TestCacheComparesDesign: the key holds only a hash of the design, so an
// entry is given only for the very design it was kept for; a design of the
// same hash (forced here by reusing the key) misses, and replaces it.
func TestCacheComparesDesign(t *testing.T) {
	c, _, _ := testCache(1 << 20)
	k := testKey("/p", "", []byte("design one"))
	c.put(k, []byte("design one"), answerOf(10))
	if _, ok := c.get(k, []byte("design two")); ok {
		t.Fatal("an answer kept for one design was given for another of the same key")
	}
	if _, ok := c.get(k, []byte("design one")); !ok {
		t.Fatal("the design it was kept for missed")
	}
	c.put(k, []byte("design two"), answerOf(20))
	if a, ok := c.get(k, []byte("design two")); !ok || len(a.body) != 20 {
		t.Fatal("the second design's answer was not kept in place of the first")
	}
	if _, ok := c.get(k, []byte("design one")); ok {
		t.Fatal("the replaced design still hits")
	}
}

// TestFlightComparesDesign: an export whose design has the key of a call
// in flight but other bytes does not join it; it gets its own call.
func TestFlightComparesDesign(t *testing.T) {
	g := &flightGroup{calls: map[exportKey]*flightCall{}}
	k := testKey("/p", "", []byte("design one"))
	release := make(chan struct{})
	first := make(chan *exportAnswer)
	go func() {
		a, _, _ := g.do(context.Background(), k, memoryBody([]byte("design one")), func(context.Context) (*exportAnswer, error) {
			<-release
			return answerOf(1), nil
		})
		first <- a
	}()
	for waiting := false; !waiting; time.Sleep(time.Millisecond) {
		g.mu.Lock()
		waiting = g.calls[k] != nil
		g.mu.Unlock()
	}
	// Joining would wait for the first call, which waits for release.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	a, err, joined := g.do(ctx, k, memoryBody([]byte("design two")), func(context.Context) (*exportAnswer, error) {
		return answerOf(2), nil
	})
	close(release)
	if err != nil || a == nil {
		t.Fatalf("other design: joined %v, err %v; want its own call's answer", joined, err)
	}
	if err != nil || joined || len(a.body) != 2 {
		t.Fatalf("other design: joined %v, answer %d bytes, err %v; want its own call's answer", joined, len(a.body), err)
	}
	if a := <-first; len(a.body) != 1 {
		t.Fatalf("first design got %d bytes", len(a.body))
	}
}

// TestFlightHoldsTheDesign: a call in flight keeps its design for the
// exports that join it and compare, even once the call itself is done
// with it (its body closed, the transport's readers gone) and other
// exports take buffers from the pool: the same design still joins.
func TestFlightHoldsTheDesign(t *testing.T) {
	g := &flightGroup{calls: map[exportKey]*flightCall{}}
	design := bytes.Repeat([]byte("design "), 40<<10/7)
	pooled := func() *requestBody {
		rb := new(requestBody)
		rb.sizeFor(len(design))
		_, _ = rb.Write(design)
		return rb
	}
	k := testKey("/p", "", design)
	release := make(chan struct{})
	var calls atomic.Int32
	go g.do(context.Background(), k, pooled(), func(context.Context) (*exportAnswer, error) {
		calls.Add(1)
		<-release
		return answerOf(1), nil
	})
	for waiting := false; !waiting; time.Sleep(time.Millisecond) {
		g.mu.Lock()
		c := g.calls[k]
		if waiting = c != nil; waiting {
			c.body.Close() // the call is done sending it
		}
		g.mu.Unlock()
	}
	for range 4 {
		b := getBuf(len(design) + 512)
		b = append(b, bytes.Repeat([]byte{'x'}, cap(b))...)
		defer putBuf(b)
	}
	done := make(chan bool)
	go func() {
		_, _, joined := g.do(context.Background(), k, pooled(), func(context.Context) (*exportAnswer, error) {
			calls.Add(1)
			return answerOf(2), nil
		})
		done <- joined
	}()
	for waiting := 0; waiting < 2; time.Sleep(time.Millisecond) {
		g.mu.Lock()
		if c := g.calls[k]; c != nil {
			waiting = c.waiters
		}
		g.mu.Unlock()
		select {
		case joined := <-done:
			t.Fatalf("the same design did not wait for the call in flight (joined %v, %d calls)", joined, calls.Load())
		default:
		}
	}
	close(release)
	if joined := <-done; !joined || calls.Load() != 1 {
		t.Errorf("joined %v with %d calls, want the one call shared", joined, calls.Load())
	}
}

// TestAnswerSizeCountsItsMemory: an answer counts against the cache's
// bound the memory it holds, not its length: an answer of unknown length
// is recorded in a 32 KiB buffer, and a kept 10-byte answer counted as 10
// let a 64 MiB cache hold about 5 GiB.
func TestAnswerSizeCountsItsMemory(t *testing.T) {
	rec := &answerRecorder{header: http.Header{}}
	rec.WriteHeader(http.StatusOK)
	_, _ = rec.Write([]byte("ten bytes!"))
	a := rec.answer(keyHeaders)
	defer a.release()
	if n := a.size(); n < 32<<10 {
		t.Errorf("a 10-byte answer in a %d-byte buffer counts %d bytes", cap(a.buf), n)
	}
	plain := a.size()
	a.body = []byte("masked copy") // beside the buffer, as masking leaves it
	if n := a.size(); n < plain+int64(len(a.body)) {
		t.Errorf("with a masked copy: %d bytes, want at least %d", n, plain+int64(len(a.body)))
	}
}

func TestExportCache(t *testing.T) {
	d := func(i int) []byte { return []byte{byte(i)} }
	k := func(i int) exportKey { return testKey("/p", "", []byte{byte(i)}) }
	size := answerOf(1000).size() + 1 + int64(len("/p")) // with its one-byte design and its key
	tests := []struct {
		name string
		run  func(t *testing.T, c *exportCache, now *time.Time)
	}{
		{"hit after put", func(t *testing.T, c *exportCache, _ *time.Time) {
			c.put(k(1), d(1), answerOf(1000))
			if a, ok := c.get(k(1), d(1)); !ok || len(a.body) != 1000 {
				t.Fatal("miss after put")
			}
		}},
		{"only 200 kept", func(t *testing.T, c *exportCache, _ *time.Time) {
			for _, status := range []int{201, 204, 400, 401, 429, 500, 502} {
				a := answerOf(10)
				a.status = status
				if c.put(k(status), d(status), a) {
					t.Errorf("status %d kept", status)
				}
			}
		}},
		{"expires after the time to live", func(t *testing.T, c *exportCache, now *time.Time) {
			c.put(k(1), d(1), answerOf(1000))
			*now = now.Add(time.Minute - time.Nanosecond)
			if _, ok := c.get(k(1), d(1)); !ok {
				t.Fatal("expired early")
			}
			*now = now.Add(time.Nanosecond)
			if _, ok := c.get(k(1), d(1)); ok {
				t.Fatal("served after its time to live")
			}
			if c.heldBytes() != 0 {
				t.Errorf("expired entry still counted: %d", c.heldBytes())
			}
		}},
		{"least recently used goes first", func(t *testing.T, c *exportCache, _ *time.Time) {
			// The bound holds 8 entries of this size.
			for i := range 8 {
				c.put(k(i), d(i), answerOf(1000))
			}
			c.get(k(0), d(0)) // 1 is now the least recently used
			c.put(k(8), d(8), answerOf(1000))
			if _, ok := c.get(k(1), d(1)); ok {
				t.Error("the least recently used entry was kept")
			}
			for _, i := range []int{0, 2, 8} {
				if _, ok := c.get(k(i), d(i)); !ok {
					t.Errorf("entry %d dropped", i)
				}
			}
		}},
		{"an entry over an eighth of the bound is not kept", func(t *testing.T, c *exportCache, _ *time.Time) {
			if c.put(k(1), d(1), answerOf(int(c.max/8))) {
				t.Error("kept")
			}
			if c.heldBytes() != 0 {
				t.Error("counted")
			}
		}},
		{"replacing an entry counts it once", func(t *testing.T, c *exportCache, _ *time.Time) {
			c.put(k(1), d(1), answerOf(1000))
			c.put(k(1), d(1), answerOf(1000))
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
				design := []byte(fmt.Sprint(i % 300))
				c.put(testKey("/p", fmt.Sprint(g), design), design, answerOf(n))
				c.get(testKey("/p", fmt.Sprint((g+1)%16), design), design)
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
	g := &flightGroup{calls: map[exportKey]*flightCall{}}
	key := testKey("/v1/message/html", "", []byte(`{}`))
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
			_, errs[i], _ = g.do(context.Background(), key, memoryBody([]byte(`{}`)), fn)
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
		if got := unsharedReason(tc.header, keyHeaders); got != tc.want {
			t.Errorf("unsharedReason(%v) = %q, want %q", tc.header, got, tc.want)
		}
	}
}

// BenchmarkExportKey: what an export's key costs for a 40 KB design
// (every export pays it, cache on or off), beside SHA-256 of the same
// bytes for reference, and the whole comparison paid when a key matches.
func BenchmarkExportKey(b *testing.B) {
	design := bytes.Repeat([]byte(`{"type":"text","value":"<p>x</p>"},`), 40<<10/36)
	body := memoryBody(design)
	for _, whole := range []bool{true, false} {
		b.Run(fmt.Sprintf("maphash/whole=%v", whole), func(b *testing.B) {
			b.SetBytes(int64(len(design)))
			for b.Loop() {
				if _, err := keyOf(testSeed, "/v1/message/html", "", body, whole); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("compare", func(b *testing.B) {
		other := memoryBody(bytes.Clone(design))
		b.SetBytes(int64(len(design)))
		for b.Loop() {
			if !sameBody(body, other) {
				b.Fatal("not the same")
			}
		}
	})
	b.Run("sha256-reference", func(b *testing.B) {
		b.SetBytes(int64(len(design)))
		for b.Loop() {
			sha256.Sum256(design)
		}
	})
}
