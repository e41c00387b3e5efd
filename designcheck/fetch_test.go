package designcheck

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/internal/safefetch"
)

// imageServer serves /len/<n> (Content-Length n), /chunked/<n> (no length
// on HEAD or GET), /slow (never answers within the test's timeout),
// /missing (404) and /redirect (to /len/10), counting requests.
func imageServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		switch {
		case strings.HasPrefix(r.URL.Path, "/len/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/len/"))
			w.Header().Set("Content-Length", strconv.Itoa(n))
			if r.Method == http.MethodGet {
				_, _ = w.Write(make([]byte, n))
			}
		case strings.HasPrefix(r.URL.Path, "/chunked/"):
			n, _ := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/chunked/"))
			if r.Method == http.MethodHead {
				w.WriteHeader(http.StatusMethodNotAllowed)
				return
			}
			w.(http.Flusher).Flush() // no Content-Length
			_, _ = w.Write(make([]byte, n))
		case r.URL.Path == "/slow":
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case r.URL.Path == "/redirect":
			http.Redirect(w, r, "/len/10", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	return srv, &hits
}

func TestHTTPWeigher(t *testing.T) {
	srv, _ := imageServer(t)
	w := NewHTTPWeigher(WeigherConfig{Timeout: 300 * time.Millisecond, MaxSize: 1000, Policy: safefetch.Policy{AllowPrivate: true}, CacheTTL: time.Minute, MaxCached: 100})
	defer w.Close()
	for _, tc := range []struct {
		path string
		size int64
		err  string
	}{
		{"/len/1234", 1234, ""}, // HEAD's length, even over MaxSize (nothing is downloaded)
		{"/chunked/700", 700, ""},
		{"/chunked/5000", 0, "larger than 1000 bytes"},
		{"/redirect", 10, ""},
		{"/missing", 0, "the image answered 404"},
		{"/slow", 0, "timed out"},
	} {
		start := time.Now()
		n, err := w.Weigh(context.Background(), srv.URL+tc.path)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if n != tc.size || got != tc.err {
			t.Errorf("%s: %d, %q; want %d, %q", tc.path, n, got, tc.size, tc.err)
		}
		if time.Since(start) > 5*time.Second {
			t.Errorf("%s: not bounded by the timeout", tc.path)
		}
	}
}

// TestHTTPWeigherPrivate: without allow_private, a loopback image is
// never requested, directly or through a public-looking name.
func TestHTTPWeigherPrivate(t *testing.T) {
	srv, hits := imageServer(t)
	w := NewHTTPWeigher(WeigherConfig{Timeout: time.Second, MaxSize: 1000, CacheTTL: time.Minute, MaxCached: 100})
	defer w.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	for _, u := range []string{srv.URL + "/len/10", "http://localhost" + port + "/len/10", "http://[::1]" + port + "/len/10"} {
		if _, err := w.Weigh(context.Background(), u); err == nil || err.Error() != "address not allowed" && err.Error() != "could not be fetched" {
			t.Errorf("%s: err %v, want address not allowed", u, err)
		}
	}
	if hits.Load() != 0 {
		t.Fatalf("the loopback server got %d requests", hits.Load())
	}
}

func TestHTTPWeigherCache(t *testing.T) {
	srv, hits := imageServer(t)
	w := NewHTTPWeigher(WeigherConfig{Timeout: time.Second, MaxSize: 1000, Policy: safefetch.Policy{AllowPrivate: true}, CacheTTL: time.Minute, MaxCached: 2})
	defer w.Close()
	for range 3 {
		if n, err := w.Weigh(context.Background(), srv.URL+"/len/5"); n != 5 || err != nil {
			t.Fatal(n, err)
		}
	}
	if hits.Load() != 1 {
		t.Errorf("%d requests for one image weighed three times, want 1", hits.Load())
	}
	for i := range 10 {
		_, _ = w.Weigh(context.Background(), srv.URL+"/len/"+strconv.Itoa(i))
	}
	if len(w.cache) > 2 {
		t.Errorf("cache holds %d entries, bound 2", len(w.cache))
	}
}

// TestHTTPWeigherCacheHoldsNoURL: the weight cache holds neither the URLs
// (a request chooses them, a megabyte each if it likes: 4,096 of them were
// 4 GiB) nor the design they were cut from, and stays within MaxCached.
func TestHTTPWeigherCacheHoldsNoURL(t *testing.T) {
	w := NewHTTPWeigher(WeigherConfig{Timeout: time.Second, MaxSize: 1000, CacheTTL: time.Minute, MaxCached: 8})
	defer w.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for i := range 16 {
		// Refused (a private address), and remembered as such.
		src := fmt.Sprintf("http://127.0.0.1/%d/", i) + strings.Repeat("a", 1<<20)
		if _, err := w.Weigh(context.Background(), src); err == nil || err.Error() != "address not allowed" {
			t.Fatalf("weighing %d: %v", i, err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if len(w.cache) != 8 {
		t.Errorf("%d entries, want MaxCached (8)", len(w.cache))
	}
	if grown := int64(after.HeapInuse) - int64(before.HeapInuse); grown > 1<<20 {
		t.Errorf("the cache holds %d bytes after weighing 16 URLs of 1 MiB", grown)
	}
}

// TestHTTPWeigherBudgetNotRemembered: an image not weighed because its
// check's requests ran out is reported so, and not remembered as a
// failure of the image: the next check weighs it.
func TestHTTPWeigherBudgetNotRemembered(t *testing.T) {
	srv, hits := imageServer(t)
	w := NewHTTPWeigher(WeigherConfig{Timeout: time.Second, MaxSize: 1000, Policy: safefetch.Policy{AllowPrivate: true}, CacheTTL: time.Minute, MaxCached: 8})
	defer w.Close()
	spent := safefetch.WithBudget(context.Background(), 0)
	if _, err := w.Weigh(spent, srv.URL+"/len/5"); err == nil || err.Error() != "too many requests in one check" {
		t.Fatalf("under a spent budget: %v", err)
	}
	if hits.Load() != 0 {
		t.Fatalf("the server got %d requests under a spent budget", hits.Load())
	}
	if n, err := w.Weigh(context.Background(), srv.URL+"/len/5"); n != 5 || err != nil {
		t.Fatalf("the next check: %d, %v", n, err)
	}
}
