package bridge

// The memory that export answers take while they are recorded: measured
// on the heap of the test process, which runs Caddy.

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// heapInUse is the live heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// slowUpstream answers every export with a Content-Length of declared
// bytes, sends sent bytes of it, and then holds the answer until release
// is closed (or the request ends), when it gives up without the rest.
// started receives one value per answer that has sent its bytes.
func slowUpstream(t *testing.T, declared, sent int, started chan<- struct{}, release <-chan struct{}) *upstream {
	chunk := bytes.Repeat([]byte("<p>slow</p>"), 6000) // 66 KB
	return newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", strconv.Itoa(declared))
		for n := 0; n < sent; n += len(chunk) {
			if _, err := w.Write(chunk[:min(len(chunk), sent-n)]); err != nil {
				return
			}
		}
		w.(http.Flusher).Flush()
		started <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
}

// exportsInFlight sends n exports of different designs at once and
// returns when the upstream has sent each its first bytes; wait waits
// for their answers (their statuses).
func exportsInFlight(t *testing.T, n int, started <-chan struct{}) (wait func() []int) {
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := http.Post(siteURL+"/v1/message/html", "application/json", bytes.NewReader(caseBody(fmt.Sprint("export ", i))))
			if err != nil {
				t.Errorf("export %d: %v", i, err)
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			statuses[i] = res.StatusCode
		}()
	}
	for i := range n {
		select {
		case <-started:
		case <-time.After(20 * time.Second):
			t.Fatalf("%d of %d exports reached the upstream", i, n)
		}
	}
	return func() []int { wg.Wait(); return statuses }
}

// TestAnswerMemoryGrowsWithBytes: an answer is recorded in memory as its
// bytes arrive, not reserved from the Content-Length the upstream
// declares: 8 exports whose upstream declares 64 MiB and sends 64 KB
// hold about what arrived, not 512 MiB.
func TestAnswerMemoryGrowsWithBytes(t *testing.T) {
	const n, declared, sent = 8, 64 << 20, 64 << 10
	started, release := make(chan struct{}, n), make(chan struct{})
	up := slowUpstream(t, declared, sent, started, release)
	load(t, site(bridgeBlock(up)))
	before := heapInUse()
	wait := exportsInFlight(t, n, started)
	// The bridge reads what arrived right after the upstream flushed it;
	// watch the heap for a moment for a reservation of the declared size.
	var grown int64
	for end := time.Now().Add(time.Second); time.Now().Before(end) && grown < 64<<20; time.Sleep(50 * time.Millisecond) {
		grown = max(grown, heapInUse()-before)
	}
	close(release)
	for i, s := range wait() {
		if s != http.StatusBadGateway { // the upstream gave up in the middle
			t.Errorf("export %d: status %d, want 502", i, s)
		}
	}
	if limit := int64(16 << 20); grown > limit {
		t.Errorf("the heap grew by %d MiB while %d answers of %d KB each were in flight; want under %d MiB",
			grown>>20, n, sent>>10, limit>>20)
	}
	t.Logf("heap grew by at most %.1f MiB", float64(grown)/(1<<20))
}
