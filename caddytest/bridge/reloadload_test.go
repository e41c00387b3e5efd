package bridge

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestReloadUnderLoad measures what config reloads do to exports when
// content_service runs in the same Caddy as design_bridge: workers post a
// small design through the bridge while the config is reloaded every
// 100 ms, and the answers are counted by status. It is a measurement (the
// deterministic check is TestRetryOnClosedKeptAliveConnection), so it runs
// only with DESIGNBRIDGE_RELOAD_LOAD=<requests>, e.g. 20000; loopback
// only, bounded by that count and by two minutes.
//
// A reload swaps content_service's listening socket (Caddy listens with
// SO_REUSEPORT), and the connections waiting in the old socket's queue are
// reset. One that is reset while it is being made carried nothing and is
// tried again (a dial error); one reset after the export was written is
// answered 502, since Caddy does not send a POST twice once it may have
// reached the upstream. So a 502 is allowed only for that last cause (an
// EOF or a reset read before any answer), and every 502 is reported.
func TestReloadUnderLoad(t *testing.T) {
	total, _ := strconv.Atoi(os.Getenv("DESIGNBRIDGE_RELOAD_LOAD"))
	if total <= 0 {
		t.Skip("set DESIGNBRIDGE_RELOAD_LOAD=<requests> to measure reloads under load")
	}
	const workers = 8
	csSite, cs := contentServiceSite(9102)
	cfg := site(fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken {env.DB_TEST_TOKEN}", cs)) + csSite
	raw := adapt(t, cfg)
	tc := newTester(t)
	tc.InitServer(string(raw), "json")
	offset := len(readFile(t, logFile))

	design := []byte(`{"page":{"rows":[{"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-text","descriptor":{"text":{"html":"<p>hi</p>"}}}]}]}]}}`)
	var sent atomic.Int64
	var mu sync.Mutex
	statuses := map[string]int{}
	deadline := time.Now().Add(2 * time.Minute)
	done := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			client := &http.Client{Timeout: 10 * time.Second}
			for sent.Add(1) <= int64(total) && time.Now().Before(deadline) {
				req, _ := http.NewRequest(http.MethodPost, siteURL+"/v1/message/html", bytes.NewReader(design))
				req.Header.Set("Content-Type", "application/json")
				key := ""
				res, err := client.Do(req)
				switch {
				case err != nil && isReset(err):
					key = "client connection reset by the reload" // never reached the bridge
				case err != nil:
					key = "client error: " + err.Error()
				default:
					io.Copy(io.Discard, res.Body)
					res.Body.Close()
					key = strconv.Itoa(res.StatusCode)
				}
				mu.Lock()
				statuses[key]++
				mu.Unlock()
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	reloads := 0
	for running := true; running; {
		select {
		case <-done:
			running = false
		case <-time.After(100 * time.Millisecond):
			if status, body, err := loadRaw(raw, "application/json", true); err != nil || status != 200 {
				t.Fatalf("reload: %d %s %v", status, body, err)
			}
			reloads++
		}
	}
	t.Logf("%d requests, %d workers, %d reloads: %v", min(sent.Load()-workers, int64(total)), workers, reloads, statuses)
	causes := map[string]int{}
	for _, e := range logEntries(t, offset) {
		if e["level"] == "error" {
			causes[fmt.Sprint(e["cause"])]++
		}
	}
	if statuses["502"] > 0 {
		t.Logf("502 causes: %v", causes)
	}
	for cause, n := range causes {
		if cause != "EOF" && !strings.HasSuffix(cause, "read: connection reset by peer") {
			t.Errorf("%d exports failed with %q, not a connection reset after the export was sent", n, cause)
		}
	}
}

// isReset reports whether err is a connection closed under the request,
// as happens when a reload on the same ports replaces the server.
func isReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}
