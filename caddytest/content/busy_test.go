package content

import (
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestRenderQueueBound: renders beyond browser.tabs wait for a tab, at
// most four per tab; the requests past those are answered 503 (code 503)
// with Retry-After at once, not held with their bodies for up to twice
// browser.timeout. Before, every one of them waited.
func TestRenderQueueBound(t *testing.T) {
	start(t) // sets the sites' URLs when this test runs on its own
	srv, _ := imageHost(t)
	const tabs, waiting, excess = 2, 8, 4 // the render site: tabs 2, timeout 4s
	type answer struct {
		r       response
		elapsed time.Duration
	}
	answers := make(chan answer, tabs+waiting+excess)
	began := time.Now()
	var wg sync.WaitGroup
	for i := range tabs + waiting + excess {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := postJSON(t, renderSite+"/v1/message/image", map[string]any{
				"html": `<img src="` + srv.URL + `/hang/` + strconv.Itoa(i) + `.png">`, "width": 100, "file_type": "png"})
			answers <- answer{r, time.Since(began)}
		}()
	}
	wg.Wait()
	close(answers)
	busy := 0
	for a := range answers {
		switch a.r.status {
		case http.StatusServiceUnavailable:
			busy++
			code, _, details := exportError(t, a.r)
			if code != 503 || a.r.header.Get("Retry-After") != "4" {
				t.Errorf("503 with code %d, Retry-After %q (%s); want code 503, Retry-After 4 (browser.timeout)", code, a.r.header.Get("Retry-After"), details)
			}
			if a.elapsed > 3*time.Second {
				t.Errorf("503 after %v: not at once", a.elapsed)
			}
		case http.StatusGatewayTimeout:
		default:
			t.Errorf("status %d: %s", a.r.status, a.r.body)
		}
	}
	if busy != excess {
		t.Errorf("%d answers 503, want %d (the requests past %d rendering and %d waiting)", busy, excess, tabs, waiting)
	}
	// The service renders again once the queue has drained.
	if r := postJSON(t, renderSite+"/v1/message/image", map[string]any{"html": shortHTML, "width": 100, "file_type": "png"}); r.status != http.StatusOK {
		t.Fatalf("after the burst: %d %s", r.status, r.body)
	}
}
