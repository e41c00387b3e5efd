package content

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// amplificationBudget is how far the peak resident memory of the process
// (Caddy runs in the test's process) may rise while it answers the
// amplification designs, all at once and then one by one, with the
// default limits (docs/security.md, "Rendering"). Unbounded, the run
// takes the peak up by 2.6 GiB.
const amplificationBudget = 160 << 20

// TestAmplificationMemory sends the amplification designs (long values
// copied onto every tag, deep nesting, many tiny blocks) as HTML and
// plain-text exports to a content_service with the default limits: each
// is answered (200, or 413 with code 4130 past max_output), the peak
// memory stays within amplificationBudget, and Caddy still answers an
// ordinary export afterwards.
func TestAmplificationMemory(t *testing.T) {
	if _, err := os.Stat("/proc/self/clear_refs"); err != nil {
		t.Skip("needs Linux's /proc/self/clear_refs to reset the peak memory")
	}
	tester := start(t)
	type export struct {
		name, path, accept string
		body               []byte
	}
	var exports []export
	for _, a := range designtest.Amplifiers() {
		for _, path := range []string{"/v1/message/html", "/v1/message/plain-text"} {
			for _, accept := range []string{"*/*", "application/json"} {
				exports = append(exports, export{a.Name + path + " " + accept, path, accept, a.JSON})
			}
		}
	}
	// A client of its own: the requests run in goroutines, and unbounded
	// rendering takes longer than the tester's timeout.
	client := &http.Client{Transport: &http.Transport{}, Timeout: 2 * time.Minute}
	defer client.CloseIdleConnections()
	send := func(e export) (response, error) {
		req, err := http.NewRequest(http.MethodPost, replicaSite+e.path, bytes.NewReader(e.body))
		if err != nil {
			return response{}, err
		}
		req.Header.Set("Authorization", "Bearer "+apiToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", e.accept)
		res, err := client.Do(req)
		if err != nil {
			return response{}, err
		}
		defer res.Body.Close()
		data, err := io.ReadAll(res.Body)
		return response{status: res.StatusCode, header: res.Header, body: data}, err
	}
	check := func(e export, r response, err error) {
		if err != nil {
			t.Errorf("%s: %v", e.name, err)
			return
		}
		switch r.status {
		case 200:
		case 413:
			if code, _, details := exportError(t, r); code != 4130 || !strings.Contains(details, "(max_output)") {
				t.Errorf("%s: 413 with code %d, details %q", e.name, code, details)
			}
		default:
			t.Errorf("%s: status %d: %.200s", e.name, r.status, r.body)
		}
	}
	// Warm up the server, then measure from a collected heap.
	if r := post(t, tester, http.MethodPost, replicaSite+"/v1/message/html", bearer(apiToken), []byte(`{"page":{"rows":[]}}`)); r.status != 200 {
		t.Fatalf("warm-up export: %d %s", r.status, r.body)
	}
	runtime.GC()
	debug.FreeOSMemory()
	base := resetPeakMemory(t)

	var wg sync.WaitGroup
	results := make([]response, len(exports))
	errs := make([]error, len(exports))
	for i, e := range exports {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = send(e)
		}()
	}
	wg.Wait()
	refused := 0
	for i, e := range exports {
		check(e, results[i], errs[i])
		if results[i].status == 413 {
			refused++
		}
	}
	results = nil
	for _, e := range exports {
		r, err := send(e)
		check(e, r, err)
	}
	peak := procStatusBytes(t, "VmHWM")
	t.Logf("peak resident memory %d MiB over the %d MiB before the %d exports (%d refused past max_output, twice)",
		(peak-base)>>20, base>>20, 2*len(exports), refused)
	if peak-base > amplificationBudget {
		t.Errorf("peak resident memory rose by %d MiB, over the budget of %d MiB", (peak-base)>>20, amplificationBudget>>20)
	}
	if refused == 0 {
		t.Error("no export was refused: the designs no longer reach max_output, and the test measures less than it says")
	}

	if r := post(t, tester, http.MethodPost, replicaSite+"/v1/message/html", bearer(apiToken), []byte(`{"page":{"rows":[]}}`)); r.status != 200 {
		t.Fatalf("an ordinary export after the attack: %d %s", r.status, r.body)
	}
}

// TestMaxOutput: a configured max_output refuses a document over it with
// 413, code 4130, and the limit in the details; the same design renders
// under the default limit.
func TestMaxOutput(t *testing.T) {
	tester := start(t)
	body := designtest.Amplifiers()[0].JSON // about 130 KB of HTML
	for _, site := range []string{smallOutSite, replicaSite} {
		r := post(t, tester, http.MethodPost, site+"/v1/message/html", bearer(apiToken), body)
		checkRequestID(t, r)
		if site == replicaSite {
			if r.status != 200 || len(r.body) <= 64<<10 {
				t.Errorf("default limit: %d, %d bytes", r.status, len(r.body))
			}
			continue
		}
		if r.status != 413 {
			t.Fatalf("max_output 64KiB: status %d, %d bytes", r.status, len(r.body))
		}
		if code, _, details := exportError(t, r); code != 4130 || details != "the design renders to more than 65536 bytes (max_output)" {
			t.Errorf("code %d, details %q", code, details)
		}
	}
}

// resetPeakMemory resets the process's peak resident set size (VmHWM) to
// its current size, and returns that size.
func resetPeakMemory(t *testing.T) int64 {
	t.Helper()
	// "5" resets the peak (proc(5), /proc/pid/clear_refs).
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("resetting the peak memory: %v", err)
	}
	return procStatusBytes(t, "VmHWM")
}

// procStatusBytes reads a "kB" field of /proc/self/status.
func procStatusBytes(t *testing.T, field string) int64 {
	t.Helper()
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		if err != nil {
			t.Fatalf("%s: %q", field, value)
		}
		return kb << 10
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}
