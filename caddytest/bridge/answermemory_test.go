package bridge

// The memory that export answers take while they are recorded: measured
// on the heap of the test process, which runs Caddy.

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"regexp"
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
// started receives one value per answer that has sent its bytes, or was
// cut off by the bridge before. A body of the case "whole" gets the
// whole answer at once.
func slowUpstream(t *testing.T, declared, sent int, started chan<- struct{}, release <-chan struct{}) *upstream {
	chunk := bytes.Repeat([]byte("<p>slow</p>"), 6000) // 66 KB
	return newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", strconv.Itoa(declared))
		if caseOf(body) == "whole" { // the whole answer, at once
			for n := 0; n < declared; n += len(chunk) {
				w.Write(chunk[:min(len(chunk), declared-n)])
			}
			return
		}
		for n := 0; n < sent; n += len(chunk) {
			if _, err := w.Write(chunk[:min(len(chunk), sent-n)]); err != nil {
				started <- struct{}{}
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
// returns when the upstream has sent each its bytes; wait waits for their
// answers.
func exportsInFlight(t *testing.T, n int, started <-chan struct{}) (wait func() []response) {
	answers := make([]response, n)
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
			body, _ := io.ReadAll(io.LimitReader(res.Body, 1<<10))
			res.Body.Close()
			answers[i] = response{res.StatusCode, res.Header, body}
		}()
	}
	for i := range n {
		select {
		case <-started:
		case <-time.After(20 * time.Second):
			t.Fatalf("%d of %d exports reached the upstream", i, n)
		}
	}
	return func() []response { wg.Wait(); return answers }
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
	for i, res := range wait() {
		if res.Status != http.StatusBadGateway { // the upstream gave up in the middle
			t.Errorf("export %d: status %d, want 502", i, res.Status)
		}
	}
	if limit := int64(16 << 20); grown > limit {
		t.Errorf("the heap grew by %d MiB while %d answers of %d KB each were in flight; want under %d MiB",
			grown>>20, n, sent>>10, limit>>20)
	}
	t.Logf("heap grew by at most %.1f MiB", float64(grown)/(1<<20))
}

// TestAnswerMemoryBudget: the answers of exports in flight hold at most
// answer_memory together past their first 1 MiB each. 8 exports whose
// upstream sends 24 MiB each would hold 256 MiB; with answer_memory 64MiB
// those that find no room are answered 503 (code 5030, Retry-After), the
// rest go on, and the heap stays near the bound. With unwrap_html an
// answer held back to be unwrapped counts too.
func TestAnswerMemoryBudget(t *testing.T) {
	const n, declared, sent = 8, 32 << 20, 24 << 20
	for _, option := range []string{"", "unwrap_html"} {
		t.Run("option "+option, func(t *testing.T) {
			started, release := make(chan struct{}, n), make(chan struct{})
			up := slowUpstream(t, declared, sent, started, release)
			load(t, site(bridgeBlock(up, "answer_memory 64MiB", option, "max_body 32MiB")))
			before := heapInUse()
			wait := exportsInFlight(t, n, started)
			grown := heapInUse() - before
			close(release)
			busy := 0
			for i, res := range wait() {
				switch res.Status {
				case http.StatusBadGateway: // held, until the upstream gave up
				case http.StatusServiceUnavailable:
					busy++
					assertErrorBody(t, res, 5030)
					if res.Header.Get("Retry-After") != "1" {
						t.Errorf("export %d: 503 with Retry-After %q, want 1", i, res.Header.Get("Retry-After"))
					}
				default:
					t.Errorf("export %d: status %d %s, want 502 or 503", i, res.Status, res.Body)
				}
			}
			if busy == 0 || busy == n {
				t.Errorf("%d of %d exports refused; want some held and some refused", busy, n)
			}
			if limit := int64(64+n+16) << 20; grown > limit {
				t.Errorf("the heap grew by %d MiB with %d answers of %d MiB in flight; want under %d MiB", grown>>20, n, sent>>20, limit>>20)
			}
			t.Logf("%d of %d refused; heap grew by %.1f MiB", busy, n, float64(grown)/(1<<20))
			// The refusals are the bridge's, not answers of the content service.
			if m := regexp.MustCompile(`caddy_design_bridge_exports_total\{[^}]*status="503"\} \d+`).FindString(scrape(t)); m != "" {
				t.Errorf("the bridge's own 503 counted as the content service's answer: %s", m)
			}
			// The room is given back: an export alone has it all.
			res := post(t, newTester(t), "/v1/message/html", caseBody("whole"), nil)
			if res.Status != 200 || len(res.Body) != declared {
				t.Errorf("an export alone afterwards: %d, %d bytes (want 200, %d) %.200s", res.Status, len(res.Body), declared, res.Body)
			}
		})
	}
}
