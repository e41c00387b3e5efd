package bridge

// The export cache, shared upstream calls for identical exports, and the
// metrics, against a real Caddy and an upstream that counts its calls.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var jsonHeader = map[string]string{"Content-Type": "application/json"}

func withHeaders(extra map[string]string) map[string]string {
	h := map[string]string{"Content-Type": "application/json"}
	for k, v := range extra {
		h[k] = v
	}
	return h
}

// cacheUpstream answers a design with a page that names its body's size,
// 500 for a body holding "fail", and echoes the bearer token for a body
// holding "echo" (which the bridge must mask).
func cacheUpstream(t *testing.T) *upstream {
	return newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		switch {
		case bytes.Contains(body, []byte("fail")):
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(500)
			io.WriteString(w, `{"code":5000,"message":"boom","details":""}`)
		case bytes.Contains(body, []byte("echo")):
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, "<p>"+r.Header.Get("Authorization")+"</p>")
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Header().Set("X-Design-Warnings", "none")
			fmt.Fprintf(w, "<p>%s %d %s</p>", r.URL.Path, len(body), r.Header.Get("Accept"))
		}
	})
}

func TestExportCache(t *testing.T) {
	up := cacheUpstream(t)
	cfg := site(bridgeBlock(up, "cache 1MiB 10m"))
	tc := load(t, cfg)
	design := testDesign(t)
	calls := func() int { return len(up.requests()) }

	type step struct {
		name      string
		path      string
		body      []byte
		header    map[string]string
		status    int
		cache     string // Cache-Status
		calls     int    // upstream calls so far
		noSecrets bool
	}
	steps := []step{
		{"first export forwarded", "/v1/message/html", design, nil, 200, "design_bridge; fwd=miss", 1, false},
		{"same export from the cache", "/v1/message/html", design, nil, 200, "design_bridge; hit", 1, false},
		{"other Accept is another export", "/v1/message/html", design, map[string]string{"Accept": "application/json"}, 200, "design_bridge; fwd=miss", 2, false},
		{"other path is another export", "/v1/message/plain-text", design, nil, 200, "design_bridge; fwd=miss", 3, false},
		{"other body is another export", "/v1/message/html", append(bytes.Clone(design), ' '), nil, 200, "design_bridge; fwd=miss", 4, false},
		{"no-cache goes upstream", "/v1/message/html", design, map[string]string{"Cache-Control": "no-cache"}, 200, "design_bridge; fwd=bypass", 5, false},
		{"and its fresh answer is kept", "/v1/message/html", design, nil, 200, "design_bridge; hit", 5, false},
		{"an error answer is forwarded", "/v1/message/html", []byte(`{"page":{},"x":"fail"}`), nil, 500, "design_bridge; fwd=miss", 6, false},
		{"and not kept", "/v1/message/html", []byte(`{"page":{},"x":"fail"}`), nil, 500, "design_bridge; fwd=miss", 7, false},
		{"a secret echoed is masked", "/v1/message/html", []byte(`{"page":{},"x":"echo"}`), nil, 200, "design_bridge; fwd=miss", 8, true},
		{"and masked in what is kept", "/v1/message/html", []byte(`{"page":{},"x":"echo"}`), nil, 200, "design_bridge; hit", 8, true},
	}
	var first response
	for i, s := range steps {
		res := post(t, tc, s.path, s.body, withHeaders(s.header))
		if res.Status != s.status || res.Header.Get("Cache-Status") != s.cache || calls() != s.calls {
			t.Fatalf("%s: status %d, Cache-Status %q, %d upstream calls; want %d, %q, %d (%.200s)",
				s.name, res.Status, res.Header.Get("Cache-Status"), calls(), s.status, s.cache, s.calls, res.Body)
		}
		if s.noSecrets {
			assertNoSecret(t, s.name, res.Body)
			assertNoSecret(t, s.name+" headers", headerText(res.Header))
		}
		switch i {
		case 0:
			first = res
		case 1:
			// A hit is the answer the miss gave, headers included.
			if !bytes.Equal(res.Body, first.Body) {
				t.Errorf("hit body %q, miss body %q", res.Body, first.Body)
			}
			for _, h := range []string{"Content-Type", "X-Design-Warnings", "Content-Security-Policy", "X-Content-Type-Options"} {
				if got, want := res.Header.Values(h), first.Header.Values(h); strings.Join(got, "|") != strings.Join(want, "|") {
					t.Errorf("hit %s %q, miss %q", h, got, want)
				}
			}
		}
	}

	// A reload starts an empty cache.
	if status, body, err := loadRaw([]byte(cfg), "text/caddyfile", true); err != nil || status != 200 {
		t.Fatalf("reload: %d %s %v", status, body, err)
	}
	if res := post(t, tc, "/v1/message/html", design, jsonHeader); res.Header.Get("Cache-Status") != "design_bridge; fwd=miss" {
		t.Errorf("after a reload: Cache-Status %q, want a miss", res.Header.Get("Cache-Status"))
	}

	// The metrics, in Caddy's own registry.
	m := scrape(t)
	// The reload started the counters afresh: one miss since.
	for _, re := range []string{
		`caddy_design_bridge_cache_requests_total\{result="miss"\} 1\b`,
		`caddy_design_bridge_exports_total\{path="/v1/message/html",status="200"\} 1\b`,
		`caddy_design_bridge_cache_bytes [1-9]`,
		`caddy_design_bridge_upstream_duration_seconds_count\{path="/v1/message/html"\} 1\b`,
	} {
		if !regexp.MustCompile(re).MatchString(m) {
			t.Errorf("/metrics lacks %s", re)
		}
	}
}

// TestExportCacheExpires: an answer is served from the cache within its
// ttl and fetched again after it. The ttl is long enough for the second
// export to come within it on a loaded machine.
func TestExportCacheExpires(t *testing.T) {
	const ttl = 2 * time.Second
	up := cacheUpstream(t)
	tc := load(t, site(bridgeBlock(up, "cache {", "\tmax_size 1MiB", "\tttl "+ttl.String(), "}")))
	design := testDesign(t)
	post(t, tc, "/v1/message/html", design, jsonHeader)
	if res := post(t, tc, "/v1/message/html", design, jsonHeader); res.Header.Get("Cache-Status") != "design_bridge; hit" {
		t.Fatalf("Cache-Status %q, want a hit", res.Header.Get("Cache-Status"))
	}
	time.Sleep(ttl + 200*time.Millisecond)
	if res := post(t, tc, "/v1/message/html", design, jsonHeader); res.Header.Get("Cache-Status") != "design_bridge; fwd=miss" {
		t.Errorf("after the time to live: Cache-Status %q, want a miss", res.Header.Get("Cache-Status"))
	}
	if n := len(up.requests()); n != 2 {
		t.Errorf("%d upstream calls, want 2", n)
	}
}

func TestExportCacheOffByDefault(t *testing.T) {
	up := cacheUpstream(t)
	tc := load(t, site(bridgeBlock(up)))
	design := testDesign(t)
	for range 2 {
		if res := post(t, tc, "/v1/message/html", design, jsonHeader); res.Header.Get("Cache-Status") != "" {
			t.Errorf("Cache-Status %q without a cache", res.Header.Get("Cache-Status"))
		}
	}
	if n := len(up.requests()); n != 2 {
		t.Errorf("%d upstream calls, want 2", n)
	}
}

// heldUpstream holds every call until release is closed, counting them.
func heldUpstream(t *testing.T, release <-chan struct{}, answer func(w http.ResponseWriter)) (*upstream, *atomic.Int64) {
	var calls atomic.Int64
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		calls.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		answer(w)
	})
	return up, &calls
}

// concurrentExports sends n identical exports at once and returns, once
// every request has been written, a function that waits for the answers.
func concurrentExports(t *testing.T, n int, body []byte, ctxs []context.Context) func() []response {
	client := &http.Client{Transport: &http.Transport{MaxConnsPerHost: 0, MaxIdleConnsPerHost: n}, Timeout: 30 * time.Second}
	t.Cleanup(client.CloseIdleConnections)
	var written sync.WaitGroup
	written.Add(n)
	results := make([]response, n)
	errs := make([]error, n)
	var done sync.WaitGroup
	for i := range n {
		done.Add(1)
		go func() {
			defer done.Done()
			ctx := context.Background()
			if ctxs != nil && ctxs[i] != nil {
				ctx = ctxs[i]
			}
			var once sync.Once
			ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { once.Do(written.Done) }})
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, siteURL+"/v1/message/html", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			res, err := client.Do(req)
			if err != nil {
				once.Do(written.Done)
				errs[i] = err
				return
			}
			defer res.Body.Close()
			b, err := io.ReadAll(res.Body)
			results[i], errs[i] = response{res.StatusCode, res.Header, b}, err
		}()
	}
	written.Wait()
	// Written is not yet joined: wait until Caddy read the bodies.
	awaitFlights(t, n)
	return func() []response {
		done.Wait()
		for i, err := range errs {
			if err != nil && (ctxs == nil || ctxs[i] == nil) {
				t.Errorf("request %d: %v", i, err)
			}
		}
		return results
	}
}

func TestIdenticalExportsShareOneCall(t *testing.T) {
	release := make(chan struct{})
	up, calls := heldUpstream(t, release, func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<p>shared</p>")
	})
	load(t, site(bridgeBlock(up))) // coalescing needs no cache
	wait := concurrentExports(t, 100, testDesign(t), nil)
	close(release)
	for i, res := range wait() {
		if res.Status != 200 || string(res.Body) != "<p>shared</p>" {
			t.Fatalf("request %d: %d %q", i, res.Status, res.Body)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d upstream calls for 100 identical exports, want 1", n)
	}
	if m := scrape(t); !regexp.MustCompile(`caddy_design_bridge_cache_requests_total\{result="coalesced"\} 99\b`).MatchString(m) {
		t.Errorf("/metrics does not count 99 coalesced exports:\n%s", grepLines(m, "design_bridge"))
	}
}

func TestSharedCallFailureReachesEveryWaiter(t *testing.T) {
	release := make(chan struct{})
	var failing atomic.Bool
	failing.Store(true)
	up, calls := heldUpstream(t, release, func(w http.ResponseWriter) {
		if !failing.Load() {
			io.WriteString(w, "<p>ok</p>")
			return
		}
		// A reset instead of an answer.
		conn, _, _ := http.NewResponseController(w).Hijack()
		conn.Close()
	})
	tc := load(t, site(bridgeBlock(up, "cache")))
	design := testDesign(t)
	wait := concurrentExports(t, 20, design, nil)
	close(release)
	results := wait()
	for i, res := range results {
		if res.Status != 502 || !bytes.Equal(res.Body, results[0].Body) {
			t.Fatalf("request %d: %d %q, want the same 502 as the first (%q)", i, res.Status, res.Body, results[0].Body)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d upstream calls, want 1", n)
	}
	// Nothing was kept: the next export goes upstream again.
	failing.Store(false)
	if res := post(t, tc, "/v1/message/html", design, jsonHeader); res.Status != 200 || calls.Load() != 2 {
		t.Errorf("after the failure: %d, %d upstream calls; want 200 and 2", res.Status, calls.Load())
	}
}

// TestSharedCallFailureAnswersEveryWaiter: every request waiting for a
// failed shared call gets the error's JSON body, not only the one that
// made the call, and a site's handle_errors replaces none of them.
func TestSharedCallFailureAnswersEveryWaiter(t *testing.T) {
	release := make(chan struct{})
	up, calls := heldUpstream(t, release, func(w http.ResponseWriter) {
		conn, _, _ := http.NewResponseController(w).Hijack()
		conn.Close()
	})
	load(t, site(bridgeBlock(up), `	handle_errors {
		respond "Oops" {err.status_code}
	}`))
	wait := concurrentExports(t, 10, testDesign(t), nil)
	close(release)
	for i, res := range wait() {
		if res.Status != 502 {
			t.Fatalf("request %d: %d %q, want 502", i, res.Status, res.Body)
		}
		assertErrorBody(t, res, 5020)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d upstream calls, want 1", n)
	}
}

func TestWaiterGoingAwayKeepsTheSharedCall(t *testing.T) {
	release := make(chan struct{})
	up, calls := heldUpstream(t, release, func(w http.ResponseWriter) {
		io.WriteString(w, "<p>still here</p>")
	})
	load(t, site(bridgeBlock(up)))
	// The first request starts the call, then goes away.
	ctx, cancel := context.WithCancel(context.Background())
	wait := concurrentExports(t, 5, testDesign(t), []context.Context{ctx, nil, nil, nil, nil})
	cancel()
	time.Sleep(200 * time.Millisecond)
	close(release)
	results := wait()
	for i, res := range results[1:] {
		if res.Status != 200 || string(res.Body) != "<p>still here</p>" {
			t.Errorf("request %d: %d %q", i+1, res.Status, res.Body)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("%d upstream calls, want 1", n)
	}
}

// scrape reads the admin endpoint's /metrics.
func scrape(t *testing.T) string {
	t.Helper()
	res, err := http.Get("http://localhost:" + strconv.Itoa(adminPort) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

func grepLines(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestExportCacheMemoryWithinMaxSize: what the cache keeps stays within
// max_size in memory, not only in what it counts: answers with thousands
// of small headers (each costs far more memory than its bytes) for many
// distinct designs leave the live heap within max_size and a margin.
func TestExportCacheMemoryWithinMaxSize(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		for i := range 4000 { // some 48 KB of header, within the bound
			h["X"+strconv.Itoa(i)] = []string{"b"}
		}
		io.WriteString(w, "<p>ok</p>")
	})
	const maxSize = 8 << 20
	tc := load(t, site(bridgeBlock(up, "cache 8MiB 10m")))
	post(t, tc, "/v1/message/html", caseBody("warm-up"), nil)
	before := heapInUse()
	for i := range 300 {
		if res := post(t, tc, "/v1/message/html", caseBody(strconv.Itoa(i)), nil); res.Status != 200 {
			t.Fatalf("export %d: status %d %s", i, res.Status, res.Body)
		}
	}
	grown := heapInUse() - before
	t.Logf("300 answers kept in a cache of %d MiB: live heap grew %d MiB", maxSize>>20, grown>>20)
	if grown > 2*maxSize {
		t.Errorf("the live heap grew %d MiB, want at most twice max_size (%d MiB)", grown>>20, 2*maxSize>>20)
	}
}
