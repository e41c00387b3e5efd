package bridge

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestLargeBodiesSpooled: export bodies past 1 MiB that do not say their
// length (chunked) wait for the upstream in a temporary file; those that
// do, in memory (within its budget, see TestLargeBodyMemoryBudget). Each
// still reaches the content service byte for byte (identical ones in one
// shared call), is sent again whole when a kept-alive connection was
// closed, and leaves no file and no open descriptor behind.
func TestLargeBodiesSpooled(t *testing.T) {
	var mu sync.Mutex
	got := map[[32]byte]int{} // SHA-256 of each body the upstream read, and how often
	spooled := 0              // spooled bodies open while the upstream reads one, at most
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := openSpoolFiles(t)
		h := sha256.New()
		io.Copy(h, r.Body)
		var sum [32]byte
		h.Sum(sum[:0])
		mu.Lock()
		got[sum]++
		spooled = max(spooled, n)
		mu.Unlock()
		// Long enough for the identical export to join this call.
		time.Sleep(200 * time.Millisecond)
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<p>ok</p>")
	}))
	defer up.Close()
	tc := load(t, site(fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken %s", up.URL, tokenPlain)))

	// An *os.File left open is closed by its finalizer once collected,
	// which would hide a body never closed: no collection in this test.
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	body := func(i int) []byte { // 3 MiB of JSON, different per i
		return []byte(`{"page":{},"pad":"` + strings.Repeat(string(rune('a'+i)), 3<<20) + `"}`)
	}
	var wg sync.WaitGroup
	for i := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// 0 and 1 send the same body: one call, which one of them joins.
			var rd io.Reader = bytes.NewReader(body(max(i, 1)))
			if i >= 3 {
				rd = struct{ io.Reader }{rd} // length unknown: sent chunked
			}
			res, err := tc.Client.Post(siteURL+"/v1/message/html", "application/json", rd)
			if err != nil {
				t.Errorf("export %d: %v", i, err)
				return
			}
			got, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 200 || string(got) != "<p>ok</p>" {
				t.Errorf("export %d: %d %.200s", i, res.StatusCode, got)
			}
		}()
	}
	wg.Wait()
	mu.Lock()
	if spooled == 0 {
		t.Error("no body was in a temporary file while the upstream read it")
	}
	for i := 1; i < 6; i++ {
		if n := got[sha256.Sum256(body(i))]; n != 1 {
			t.Errorf("body %d reached the upstream intact %d times, want once", i, n)
		}
	}
	mu.Unlock()
	if n := openSpoolFiles(t); n != 0 {
		t.Errorf("%d spooled bodies still open after the exports", n)
	}
	entries, _ := os.ReadDir(os.TempDir())
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "design-bridge-body-") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

// TestLargeBodySentAgain: a large body, in memory (it states its length)
// or in a temporary file (chunked), is sent again whole when the upstream
// closed the kept-alive connection it was first sent on.
func TestLargeBodySentAgain(t *testing.T) {
	url, served := closingUpstream(t)
	tc := load(t, site(fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken %s", url, tokenPlain)))
	body := append([]byte(`{"page":{}}`), bytes.Repeat([]byte(" "), 2<<20)...)
	for i := range 3 {
		var rd io.Reader = bytes.NewReader(body)
		if i == 1 {
			rd = struct{ io.Reader }{rd} // length unknown: sent chunked
		}
		res, err := tc.Client.Post(siteURL+"/v1/message/html", "application/json", rd)
		if err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("request %d: %d %s", i+1, res.StatusCode, got)
		}
	}
	if n := served(); n != 3 {
		t.Errorf("upstream answered %d requests, want 3", n)
	}
}

// openSpoolFiles counts this process's (Caddy runs in it) open
// descriptors of spooled bodies.
func openSpoolFiles(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err) // not Linux
	}
	n := 0
	for _, e := range entries {
		if target, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.Contains(target, "design-bridge-body-") {
			n++
		}
	}
	return n
}

// TestLargeBodyMemorySetting: large_body_memory decides where a large
// body that states its length waits for the upstream: in memory within
// the setting, in a temporary file with it off or once it is used up.
func TestLargeBodyMemorySetting(t *testing.T) {
	var mu sync.Mutex
	var inFile []bool // per export, in the order the upstream read them
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := openSpoolFiles(t)
		io.Copy(io.Discard, r.Body)
		mu.Lock()
		inFile = append(inFile, n > 0)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<p>ok</p>")
	}))
	defer up.Close()
	defer debug.SetGCPercent(debug.SetGCPercent(-1)) // see TestLargeBodiesSpooled
	for _, tt := range []struct {
		setting string
		want    bool // in a file
	}{
		{"", false}, // the 64 MiB default holds a 3 MiB body
		{"large_body_memory 8MiB", false},
		{"large_body_memory 2MiB", true}, // too small for the body
		{"large_body_memory off", true},
	} {
		tc := load(t, site(fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken %s\n\t\t%s", up.URL, tokenPlain, tt.setting)))
		mu.Lock()
		inFile = nil
		mu.Unlock()
		body := []byte(`{"page":{},"pad":"` + strings.Repeat("m", 3<<20) + `"}`)
		res, err := tc.Client.Post(siteURL+"/v1/message/html", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatalf("%q: %v", tt.setting, err)
		}
		got, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("%q: %d %.200s", tt.setting, res.StatusCode, got)
		}
		mu.Lock()
		if len(inFile) != 1 || inFile[0] != tt.want {
			t.Errorf("%q: body in a temporary file while sent: %v, want %v", tt.setting, inFile, tt.want)
		}
		mu.Unlock()
	}
}
