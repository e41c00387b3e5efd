package content

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
)

func init() {
	config += `
:{$PORT_BOUND} {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		fetch {
			allow_private all
			timeout 10s
			total_timeout 20s
			max_concurrent 2
			max_images 6
		}
		browser off
	}
}

:{$PORT_BOUNDONE} {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		fetch {
			allow_private all
			timeout 10s
			total_timeout 2s
			max_concurrent 1
		}
		browser off
	}
}
`
}

// slowImageHost answers every path with a 1,000-byte image after hold,
// except …/hang/…, which answers only when its client leaves. It records
// the most requests it held at once, and signals the first hang.
func slowImageHost(t *testing.T, hold time.Duration) (srv *httptest.Server, most func() int64, hung <-chan struct{}) {
	t.Helper()
	var inFlight, peak atomic.Int64
	hangSeen := make(chan struct{})
	var once sync.Once
	done := make(chan struct{})
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		// Counted down before the answer is written: the client sees
		// the answer, and may start its next fetch, only after.
		defer inFlight.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		wait := time.After(hold)
		if strings.Contains(r.URL.Path, "/hang/") {
			once.Do(func() { close(hangSeen) })
			wait = nil
		}
		select {
		case <-wait:
		case <-r.Context().Done():
			return
		case <-done:
			return
		}
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Content-Length", "1000")
		if r.Method == http.MethodGet {
			_, _ = w.Write(make([]byte, 1000))
		}
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv, peak.Load, hangSeen
}

// checkResult is one check request's outcome, for requests sent from
// goroutines (which must not call t.Fatal).
type checkResult struct {
	status  int
	answer  checkAnswer
	err     error
	elapsed time.Duration
}

// checkImages posts an overageImageWeight check of design to site from a
// goroutine.
func checkImages(tester *testcaddy.Tester, site string, design json.RawMessage) <-chan checkResult {
	return checkImagesWith(tester.Client, site, design)
}

// checkImagesWith is checkImages through client.
func checkImagesWith(client *http.Client, site string, design json.RawMessage) <-chan checkResult {
	out := make(chan checkResult, 1)
	go func() {
		var res checkResult
		defer func() { out <- res }()
		body, _ := json.Marshal(map[string]any{
			"checks":   []map[string]any{{"category": "overageImageWeight"}},
			"template": design,
		})
		req, err := http.NewRequest(http.MethodPost, site+"/v1/page/check", bytes.NewReader(body))
		if err != nil {
			res.err = err
			return
		}
		req.Header.Set("Authorization", "Bearer "+apiToken)
		req.Header.Set("Content-Type", "application/json")
		began := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			res.err = err
			return
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		res.status, res.err, res.elapsed = resp.StatusCode, err, time.Since(began)
		if err == nil && resp.StatusCode == http.StatusOK {
			res.err = json.Unmarshal(data, &res.answer)
		} else if err == nil {
			res.err = fmt.Errorf("status %d: %s", resp.StatusCode, data)
		}
	}()
	return out
}

// imageCheck is the overageImageWeight result of a check answer.
func imageCheck(res checkResult) (evaluated, errored float64, reasons []string, err error) {
	if res.err != nil {
		return 0, 0, nil, res.err
	}
	if len(res.answer) != 1 || len(res.answer[0].Checks) != 1 {
		return 0, 0, nil, fmt.Errorf("answer %v", res.answer)
	}
	c := res.answer[0].Checks[0]
	evaluated, _ = c["evaluated"].(float64)
	errored, _ = c["errored"].(float64)
	targets, _ := c["erroredTargets"].([]any)
	for _, e := range targets {
		reason, _ := e.(map[string]any)["reason"].(string)
		reasons = append(reasons, reason)
	}
	return evaluated, errored, reasons, nil
}

// TestCheckFetchesBounded: concurrent checks never fetch more images at
// once than fetch.max_concurrent, however many requests come in; each
// request used to weigh 4 at a time, so N requests made the server hold
// 4N fetches open against one host.
func TestCheckFetchesBounded(t *testing.T) {
	t.Parallel()
	tester := start(t)
	site := boundSite
	srv, most, _ := slowImageHost(t, 300*time.Millisecond)
	const requests = 4
	var results []<-chan checkResult
	for i := range requests {
		// Distinct URLs per request: none is weighed from the cache.
		d := strings.ReplaceAll(string(checkDesign(t, fmt.Sprintf("%s/r%d", srv.URL, i))), "/hang/", "/img/1/")
		results = append(results, checkImages(tester, site, json.RawMessage(d)))
	}
	for i, ch := range results {
		evaluated, errored, reasons, err := imageCheck(<-ch)
		if err != nil {
			t.Errorf("request %d: %v", i, err)
			continue
		}
		if evaluated != 6 || errored != 0 {
			t.Errorf("request %d: evaluated %v, errored %v (%v); want 6 weighed", i, evaluated, errored, reasons)
		}
	}
	if n := most(); n > 2 {
		t.Errorf("the image host saw %d fetches at once; max_concurrent is 2", n)
	}
}

// TestCheckFetchWaitEndsWithRequest: an image waiting for a fetch slot
// gives up when its request's total_timeout ends, and the check answers
// with it errored as timed out, as an image that took too long is.
func TestCheckFetchWaitEndsWithRequest(t *testing.T) {
	t.Parallel()
	tester := start(t)
	site := boundOneSite
	srv, _, hung := slowImageHost(t, 500*time.Millisecond)
	// The first request's images all hang: it holds the one slot until
	// its total_timeout.
	holder := checkImages(tester, site, json.RawMessage(regexp.MustCompile(`/(img/[0-9]+|hang)/`).
		ReplaceAllString(string(checkDesign(t, srv.URL+"/a")), "/hang/")))
	select {
	case <-hung:
	case <-time.After(15 * time.Second):
		t.Fatal("the first request never fetched")
	}
	waiter := checkImages(tester, site, json.RawMessage(
		strings.ReplaceAll(string(checkDesign(t, srv.URL+"/b")), "/hang/", "/img/1/")))
	for name, ch := range map[string]<-chan checkResult{"holder": holder, "waiter": waiter} {
		res := <-ch
		evaluated, errored, reasons, err := imageCheck(res)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		// The waiter may weigh one or two images in the moment between
		// the holder's end and its own; never all of them.
		if evaluated != 6 || errored < 1 || (name == "holder" && errored != 6) {
			t.Errorf("%s: evaluated %v, errored %v (%v)", name, evaluated, errored, reasons)
		}
		for _, r := range reasons {
			if r != "timed out" {
				t.Errorf("%s: reason %q, want timed out", name, r)
			}
		}
		// total_timeout 2s: well under the test's patience.
		if res.elapsed > 15*time.Second {
			t.Errorf("%s: the answer took %v", name, res.elapsed)
		}
	}
}

// TestCheckRequestsBudgeted: one check sends at most 4 requests per image
// of max_images, redirects included; images past that are errored. Each
// image could take 12 requests (HEAD and GET, 5 redirects each): a
// design's worth of redirecting images multiplied what one check sent.
func TestCheckRequestsBudgeted(t *testing.T) {
	t.Parallel()
	tester := start(t)
	var hits atomic.Int64
	// /hop/<n>/<rest> redirects n times, then answers 1,000 bytes.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		parts := strings.SplitN(r.URL.Path, "/", 4)
		if n, err := strconv.Atoi(parts[2]); err == nil && n > 0 && len(parts) == 4 {
			http.Redirect(w, r, "/hop/"+strconv.Itoa(n-1)+"/"+parts[3], http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Content-Length", "1000")
	}))
	defer srv.Close()
	// 6 images of 6 requests each; the site's max_images 6 allows 24.
	d := strings.ReplaceAll(string(checkDesign(t, srv.URL+"/hop/5")), "/hang/", "/img/1/")
	evaluated, errored, reasons, err := imageCheck(<-checkImages(tester, boundSite, json.RawMessage(d)))
	if err != nil {
		t.Fatal(err)
	}
	if evaluated != 6 || errored < 1 {
		t.Errorf("evaluated %v, errored %v (%v); want some errored", evaluated, errored, reasons)
	}
	for _, r := range reasons {
		if r != "too many requests in one check" {
			t.Errorf("reason %q", r)
		}
	}
	if n := hits.Load(); n > 24 {
		t.Errorf("the image host got %d requests; at most 24 for max_images 6", n)
	}
}
