package bridge

// The export cache's key is the whole request that shapes the answer, and
// answers that say they depend on more, or are private, are neither kept
// nor shared: against a real Caddy and an upstream that reflects the
// request's headers into its answer.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// reflectingUpstream answers with the Accept lines and X-User it was sent,
// and copies X-Answer-Vary and X-Answer-Cache-Control into the answer's
// Vary and Cache-Control, holding each call until release is closed (nil:
// no hold).
func reflectingUpstream(t *testing.T, release <-chan struct{}, calls *atomic.Int64) *upstream {
	return newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if calls != nil {
			calls.Add(1)
		}
		if release != nil {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		if v := r.Header.Get("X-Answer-Vary"); v != "" {
			w.Header().Set("Vary", v)
		}
		if v := r.Header.Get("X-Answer-Cache-Control"); v != "" {
			w.Header().Set("Cache-Control", v)
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"accept": r.Header.Values("Accept"), "user": r.Header.Get("X-User")})
	})
}

// postHeader posts body to path with the given header lines.
func postHeader(t *testing.T, path string, body []byte, h http.Header) response {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, siteURL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h.Clone()
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	got, _ := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, got}
}

func TestCacheKeyIsTheWholeRequest(t *testing.T) {
	up := reflectingUpstream(t, nil, nil)
	load(t, site(bridgeBlock(up, "cache 1MiB 10m")))
	design := testDesign(t)
	other := func(s string) []byte { return append(bytes.Clone(design), []byte(" "+s)...) }
	browser := `{"accept":["*/*"],"user":""}` + "\n"
	twoLines := `{"accept":["*/*","text/html;q=0, application/json"],"user":""}` + "\n"
	steps := []struct {
		name   string
		body   []byte
		header http.Header
		cache  string // Cache-Status
		answer string // "" when not checked
		calls  int
	}{
		{"browser's Accept", design, http.Header{"Accept": {"*/*"}}, "design_bridge; fwd=miss", browser, 1},
		// The content service reads every line: a second one is another
		// request, not the browser's (cache poisoning, both ways).
		{"a second Accept line is another key", design, http.Header{"Accept": {"*/*", "text/html;q=0, application/json"}}, "design_bridge; fwd=miss", twoLines, 2},
		{"two lines again from the cache", design, http.Header{"Accept": {"*/*", "text/html;q=0, application/json"}}, "design_bridge; hit", twoLines, 2},
		{"browser's Accept still its own", design, http.Header{"Accept": {"*/*"}}, "design_bridge; hit", browser, 2},
		{"the same list on one line is the same key", design, http.Header{"Accept": {"*/*,text/html;q=0,  application/json"}}, "design_bridge; hit", twoLines, 2},
		{"Vary outside the key: not kept", other("vary"), http.Header{"X-Answer-Vary": {"Accept, X-User"}, "X-User": {"alice"}}, "design_bridge; fwd=bypass; stored=false; detail=vary", `{"accept":null,"user":"alice"}` + "\n", 3},
		{"so another user gets their own", other("vary"), http.Header{"X-Answer-Vary": {"Accept, X-User"}, "X-User": {"bob"}}, "design_bridge; fwd=bypass; stored=false; detail=vary", `{"accept":null,"user":"bob"}` + "\n", 4},
		{"Vary *: not kept", other("star"), http.Header{"X-Answer-Vary": {"*"}}, "design_bridge; fwd=bypass; stored=false; detail=vary", "", 5},
		{"Vary *: again upstream", other("star"), http.Header{"X-Answer-Vary": {"*"}}, "design_bridge; fwd=bypass; stored=false; detail=vary", "", 6},
		{"Vary on the key: kept", other("accept"), http.Header{"X-Answer-Vary": {"accept"}}, "design_bridge; fwd=miss", "", 7},
		{"Vary on the key: from the cache", other("accept"), http.Header{"X-Answer-Vary": {"accept"}}, "design_bridge; hit", "", 7},
		{"private: not kept", other("private"), http.Header{"X-Answer-Cache-Control": {"max-age=60, private"}}, "design_bridge; fwd=bypass; stored=false; detail=cache-control", "", 8},
		{"private: again upstream", other("private"), http.Header{"X-Answer-Cache-Control": {"max-age=60, private"}}, "design_bridge; fwd=bypass; stored=false; detail=cache-control", "", 9},
		{"no-store: not kept", other("no-store"), http.Header{"X-Answer-Cache-Control": {"No-Store"}}, "design_bridge; fwd=bypass; stored=false; detail=cache-control", "", 10},
		{"no-store: again upstream", other("no-store"), http.Header{"X-Answer-Cache-Control": {"No-Store"}}, "design_bridge; fwd=bypass; stored=false; detail=cache-control", "", 11},
	}
	for _, s := range steps {
		res := postHeader(t, "/v1/message/html", s.body, s.header)
		if res.Status != 200 || res.Header.Get("Cache-Status") != s.cache {
			t.Errorf("%s: %d Cache-Status %q, want 200 %q", s.name, res.Status, res.Header.Get("Cache-Status"), s.cache)
		}
		if s.answer != "" && string(res.Body) != s.answer {
			t.Errorf("%s: answer %s, want %s", s.name, res.Body, s.answer)
		}
		if n := len(up.requests()); n != s.calls {
			t.Errorf("%s: %d upstream calls, want %d", s.name, n, s.calls)
		}
	}
	m := scrape(t)
	for _, re := range []string{
		`caddy_design_bridge_cache_requests_total\{result="bypass"\} 8\b`,
		`caddy_design_bridge_cache_requests_total\{result="miss"\} 3\b`,
		`caddy_design_bridge_cache_requests_total\{result="hit"\} 4\b`,
	} {
		if !regexp.MustCompile(re).MatchString(m) {
			t.Errorf("/metrics lacks %s:\n%s", re, grepLines(m, "cache_requests_total"))
		}
	}
}

// TestUnsharedAnswerNotCoalesced: an export identical to one in flight
// waits for it, but an answer that varies by a header outside the key is
// not handed to it: it gets its own.
func TestUnsharedAnswerNotCoalesced(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int64
	up := reflectingUpstream(t, release, &calls)
	load(t, site(bridgeBlock(up))) // coalescing needs no cache
	design := testDesign(t)
	answers := make([]response, 2)
	var wg sync.WaitGroup
	for i, user := range []string{"alice", "bob"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = postHeader(t, "/v1/message/html", design, http.Header{"X-Answer-Vary": {"X-User"}, "X-User": {user}})
		}()
		// alice's call is in flight before bob's export arrives.
		for deadline := time.Now().Add(10 * time.Second); i == 0 && calls.Load() == 0; {
			if time.Now().After(deadline) {
				t.Fatal("the first export never reached the upstream")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	time.Sleep(500 * time.Millisecond) // bob's export joins alice's call
	close(release)
	wg.Wait()
	for i, user := range []string{"alice", "bob"} {
		if want := `{"accept":null,"user":"` + user + `"}` + "\n"; answers[i].Status != 200 || string(answers[i].Body) != want {
			t.Errorf("%s got %d %s, want %s", user, answers[i].Status, answers[i].Body, want)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d upstream calls, want 2", n)
	}
}
