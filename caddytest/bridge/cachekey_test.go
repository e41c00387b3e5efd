package bridge

// The export cache's key is the whole request that shapes the answer, and
// answers that say they depend on more, or are private, are neither kept
// nor shared: against a real Caddy and an upstream that reflects the
// request's headers into its answer.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// reflectingUpstream answers with the Accept lines, X-Tenant and
// X-Forwarded-For it was sent, and with the Vary or Cache-Control that the
// body's last word names (answerControls), holding each call until
// release is closed (nil: no hold). The word is in the body because the
// bridge passes on none of a request's own headers.
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
		for k, v := range answerControls[string(body[bytes.LastIndexByte(body, ' ')+1:])] {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"accept": r.Header.Values("Accept"), "tenant": r.Header.Get("X-Tenant"), "client": r.Header.Get("X-Forwarded-For")})
	})
}

// answerControls are the headers reflectingUpstream answers with, by the
// last word of the body.
var answerControls = map[string]http.Header{
	"vary":        {"Vary": {"Accept, X-User"}},
	"star":        {"Vary": {"*"}},
	"accept":      {"Vary": {"accept"}},
	"tenant":      {"Vary": {"Accept, x-tenant"}},
	"vary-client": {"Vary": {"X-Forwarded-For"}},
	"private":     {"Cache-Control": {"max-age=60, private"}},
	"no-store":    {"Cache-Control": {"No-Store"}},
}

// postHeader posts body to path with the given header lines.
func postHeader(t *testing.T, path string, body []byte, h http.Header) response {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, siteURL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if h != nil {
		req.Header = h.Clone()
	}
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
	load(t, site(bridgeBlock(up, "cache 1MiB 10m", "forward_headers X-Tenant")))
	design := testDesign(t)
	other := func(s string) []byte { return append(bytes.Clone(design), []byte(" "+s)...) }
	answer := func(accept, tenant string) string {
		return `{"accept":` + accept + `,"client":"127.0.0.1","tenant":"` + tenant + `"}` + "\n"
	}
	browser := answer(`["*/*"]`, "")
	twoLines := answer(`["*/*","text/html;q=0, application/json"]`, "")
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
		// X-User does not reach the content service, but an answer that
		// says it depends on it is for its own request only.
		{"Vary outside the key: not kept", other("vary"), http.Header{"X-User": {"alice"}}, "design_bridge; fwd=bypass; stored=false; detail=vary", answer("null", ""), 3},
		{"Vary outside the key: again upstream", other("vary"), http.Header{"X-User": {"bob"}}, "design_bridge; fwd=bypass; stored=false; detail=vary", answer("null", ""), 4},
		{"Vary *: not kept", other("star"), nil, "design_bridge; fwd=bypass; stored=false; detail=vary", "", 5},
		{"Vary *: again upstream", other("star"), nil, "design_bridge; fwd=bypass; stored=false; detail=vary", "", 6},
		{"Vary on the key: kept", other("accept"), nil, "design_bridge; fwd=miss", "", 7},
		{"Vary on the key: from the cache", other("accept"), nil, "design_bridge; hit", "", 7},
		// A header forward_headers names is part of the key.
		{"a forwarded header: kept", other("tenant"), http.Header{"X-Tenant": {"a"}}, "design_bridge; fwd=miss", answer("null", "a"), 8},
		{"another value is another key", other("tenant"), http.Header{"X-Tenant": {"b"}}, "design_bridge; fwd=miss", answer("null", "b"), 9},
		{"each value from the cache", other("tenant"), http.Header{"X-Tenant": {"a"}}, "design_bridge; hit", answer("null", "a"), 9},
		{"without the header another key too", other("tenant"), nil, "design_bridge; fwd=miss", answer("null", ""), 10},
		{"private: not kept", other("private"), nil, "design_bridge; fwd=bypass; stored=false; detail=cache-control", "", 11},
		{"private: again upstream", other("private"), nil, "design_bridge; fwd=bypass; stored=false; detail=cache-control", "", 12},
		{"no-store: not kept", other("no-store"), nil, "design_bridge; fwd=bypass; stored=false; detail=cache-control", "", 13},
		{"no-store: again upstream", other("no-store"), nil, "design_bridge; fwd=bypass; stored=false; detail=cache-control", "", 14},
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
		`caddy_design_bridge_cache_requests_total\{result="miss"\} 6\b`,
		`caddy_design_bridge_cache_requests_total\{result="hit"\} 5\b`,
	} {
		if !regexp.MustCompile(re).MatchString(m) {
			t.Errorf("/metrics lacks %s:\n%s", re, grepLines(m, "cache_requests_total"))
		}
	}
}

// TestUnsharedAnswerNotCoalesced: an export identical to one in flight
// waits for it, but an answer that varies by a header outside the key is
// not handed to it: it gets its own. X-Forwarded-For, which Caddy's
// reverse proxy sets from the client's address, is such a header: alice
// and bob connect from two loopback addresses.
func TestUnsharedAnswerNotCoalesced(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int64
	up := reflectingUpstream(t, release, &calls)
	load(t, site(bridgeBlock(up))) // coalescing needs no cache
	body := append(testDesign(t), " vary-client"...)
	clients := []string{"127.0.0.1", "127.0.0.2"}
	answers := make([]response, 2)
	var wg sync.WaitGroup
	for i, ip := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = postFrom(t, ip, "/v1/message/html", body, nil)
		}()
		// alice's call is in flight before bob's export arrives.
		for deadline := time.Now().Add(10 * time.Second); i == 0 && calls.Load() == 0; {
			if time.Now().After(deadline) {
				t.Fatal("the first export never reached the upstream")
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	awaitFlights(t, 2) // bob's export meets alice's call
	close(release)
	wg.Wait()
	for i, ip := range clients {
		if want := `{"accept":null,"client":"` + ip + `","tenant":""}` + "\n"; answers[i].Status != 200 || string(answers[i].Body) != want {
			t.Errorf("%s got %d %s, want %s", ip, answers[i].Status, answers[i].Body, want)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d upstream calls, want 2", n)
	}
}

// TestForwardedHeaderSeparatesCalls: a header forward_headers names is
// part of the key of calls in flight too: identical exports with other
// values make calls of their own, those with the same value share one.
func TestForwardedHeaderSeparatesCalls(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int64
	up := reflectingUpstream(t, release, &calls)
	load(t, site(bridgeBlock(up, "forward_headers X-Tenant")))
	design := testDesign(t)
	tenants := []string{"a", "b", "a"}
	answers := make([]response, len(tenants))
	var wg sync.WaitGroup
	for i, tenant := range tenants {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = postHeader(t, "/v1/message/html", design, http.Header{"X-Tenant": {tenant}})
		}()
		// a's and b's calls are in flight before the second a arrives.
		for deadline := time.Now().Add(10 * time.Second); i < 2 && calls.Load() < int64(i+1); {
			if time.Now().After(deadline) {
				t.Fatalf("export %d never reached the upstream", i)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	awaitFlights(t, 3) // the second a meets the first
	close(release)
	wg.Wait()
	for i, tenant := range tenants {
		if want := `{"accept":null,"client":"127.0.0.1","tenant":"` + tenant + `"}` + "\n"; answers[i].Status != 200 || string(answers[i].Body) != want {
			t.Errorf("export %d (tenant %s) got %d %s, want %s", i, tenant, answers[i].Status, answers[i].Body, want)
		}
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d upstream calls, want 2 (one per tenant)", n)
	}
}

// postFrom posts body to path from the local address ip (a loopback
// address: Caddy's reverse proxy tells the upstream in X-Forwarded-For).
func postFrom(t *testing.T, ip, path string, body []byte, h http.Header) response {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, fmt.Sprintf("127.0.0.1:%d", httpPort))
		},
	}}
	defer client.CloseIdleConnections()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, siteURL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if h != nil {
		req.Header = h.Clone()
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	got, _ := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, got}
}

// awaitFlights waits until n exports have reached the bridge's calls in
// flight (flightGroup.do): the one that made a call, and those that joined
// one or compare their body with it. The group shows that only in the
// goroutines' stacks (Caddy runs in this process). A fixed sleep instead
// lets an export that a loaded machine delays arrive after the call ended
// and make a call of its own.
func awaitFlights(t *testing.T, n int) {
	t.Helper()
	const frame = "designbridge.(*flightGroup).do("
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var stacks bytes.Buffer
		if err := pprof.Lookup("goroutine").WriteTo(&stacks, 2); err != nil {
			t.Fatal(err)
		}
		got := strings.Count(stacks.String(), frame)
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d exports reached the calls in flight (%s), want %d", got, frame, n)
		}
	}
}

// TestCacheKeyHasTheSite: an export's answer is kept for the site it came
// to, as a shared HTTP cache keys by the URL's host: Caddy's proxy tells
// the content service the host (X-Forwarded-Host) and scheme, and an
// upstream that writes them into its links must not have the answer of
// one host (a client can send any Host to a site that answers every
// name) served to exports that came to another.
func TestCacheKeyHasTheSite(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<a href="%s://%s/unsubscribe">`, r.Header.Get("X-Forwarded-Proto"), r.Header.Get("X-Forwarded-Host"))
	})
	tc := load(t, site(bridgeBlock(up, "cache 1MiB 10m")))
	design := testDesign(t)
	export := func(host string) response {
		t.Helper()
		return post(t, tc, "/v1/message/html", design, map[string]string{"Host": host})
	}
	for _, s := range []struct{ host, cache string }{
		{"attacker.example", "design_bridge; fwd=miss"},
		{"shop.example", "design_bridge; fwd=miss"},
		{"shop.example", "design_bridge; hit"},
		{"attacker.example", "design_bridge; hit"},
	} {
		res := export(s.host)
		want := `<a href="http://` + s.host + `/unsubscribe">`
		if res.Status != 200 || string(res.Body) != want || res.Header.Get("Cache-Status") != s.cache {
			t.Errorf("an export to %s: %d %q (Cache-Status %q), want %q (%q)", s.host, res.Status, res.Body, res.Header.Get("Cache-Status"), want, s.cache)
		}
	}
}
