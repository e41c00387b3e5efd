package bridge

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestAnswerMemoryAcrossReload: answer_memory belongs to one loaded
// config. Two exports of the old config hold nearly all of it (31 MiB
// each of 64 MiB) across a reload; the new config's budget starts full
// (two exports of its own are held as well), the old exports finish
// whole, and what they give back does not land in the new budget (a
// third export of the new config still finds no room).
func TestAnswerMemoryAcrossReload(t *testing.T) {
	const declared, sent = 32 << 20, 24 << 20
	chunk := bytes.Repeat([]byte("<p>slow</p>"), 6000)
	started := make(chan string, 8)
	releaseOld, releaseNew := make(chan struct{}), make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		c := caseOf(body)
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", strconv.Itoa(declared))
		n := 0
		for n < sent {
			k, err := w.Write(chunk[:min(len(chunk), sent-n)])
			n += k
			if err != nil {
				started <- c
				return
			}
		}
		w.(http.Flusher).Flush()
		started <- c
		release := releaseNew
		if strings.HasPrefix(c, "old") {
			release = releaseOld
		}
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		for n < declared {
			k, err := w.Write(chunk[:min(len(chunk), declared-n)])
			n += k
			if err != nil {
				return
			}
		}
	})
	raw := adapt(t, site(bridgeBlock(up, "answer_memory 64MiB", "max_body 32MiB", "cache 1MiB 10m")))
	tc := newTester(t)
	tc.InitServer(string(raw), "json")
	// The reload keeps the ports; Load returns once only the new servers
	// listen there. A new connection per export: one kept alive to the
	// old server, which closes it once an old export is answered, would
	// meet a new export's request.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 30 * time.Second}
	var wg sync.WaitGroup
	answers := map[string]response{}
	var mu sync.Mutex
	export := func(c string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := client.Post(siteURL+"/v1/message/html", "application/json", bytes.NewReader(caseBody(c)))
			if err != nil {
				t.Errorf("export %s: %v", c, err)
				return
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			mu.Lock()
			answers[c] = response{res.StatusCode, res.Header, body}
			mu.Unlock()
		}()
	}
	await := func(cases ...string) {
		t.Helper()
		for range cases {
			select {
			case <-started:
			case <-time.After(20 * time.Second):
				t.Fatalf("exports %v did not all reach the upstream", cases)
			}
		}
	}
	answer := func(c string) (response, bool) {
		mu.Lock()
		defer mu.Unlock()
		res, ok := answers[c]
		return res, ok
	}
	// Held until the answer is refused or the upstream is released.
	settled := func(c string) (response, bool) {
		for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			if res, ok := answer(c); ok {
				return res, true
			}
		}
		return response{}, false
	}

	export("old 0")
	export("old 1")
	await("old 0", "old 1")
	if res, done := settled("old 1"); done {
		t.Fatalf("old 1 answered before its upstream finished: %d %.200s", res.Status, res.Body)
	}
	status, body, err := loadRaw(raw, "application/json", true)
	if err != nil || status != 200 {
		t.Fatalf("reload: %d %s %v", status, body, err)
	}
	export("new 0")
	export("new 1")
	await("new 0", "new 1")
	for _, c := range []string{"new 0", "new 1"} {
		if res, done := settled(c); done {
			t.Errorf("%s of the new config found no room while the old config's exports held theirs: %d %.200s", c, res.Status, res.Body)
		}
	}
	close(releaseOld)
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		_, ok0 := answer("old 0")
		_, ok1 := answer("old 1")
		if ok0 && ok1 {
			break
		}
	}
	for _, c := range []string{"old 0", "old 1"} {
		if res, _ := answer(c); res.Status != 200 || len(res.Body) != declared {
			t.Errorf("%s in flight during the reload: %d, %d bytes; want 200, %d", c, res.Status, len(res.Body), declared)
		}
	}
	export("new 2")
	await("new 2")
	res, done := settled("new 2")
	if !done || res.Status != http.StatusServiceUnavailable {
		t.Errorf("new 2, with the new config's budget held by new 0 and 1: answered %v %d %.200s; want 503 (the old exports' share went back to the new budget)", done, res.Status, res.Body)
	}
	close(releaseNew)
	wg.Wait()
	for _, c := range []string{"new 0", "new 1"} {
		if res, _ := answer(c); res.Status != 200 || len(res.Body) != declared {
			t.Errorf("%s: %d, %d bytes; want 200, %d %.300s", c, res.Status, len(res.Body), declared, res.Body)
		}
	}
}
