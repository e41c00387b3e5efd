package content

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
)

// TestRenderCrashAnswers: a render whose page's renderer process dies is
// answered 413 (code 4130) only when the process ended the way Chromium
// ends one that runs out of memory (SIGTRAP, what the memory bound
// causes); any other end (a segmentation fault, a kill) is the service's
// failure: 500, code 4200 with the request id, logged at ERROR with how
// the process ended. The render is held by an image that never comes,
// and the test sends the signal to the browser's renderers itself.
func TestRenderCrashAnswers(t *testing.T) {
	var asked atomic.Int64
	hang := make(chan struct{})
	img := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	defer img.Close()
	defer close(hang)
	logFile := filepath.Join(t.TempDir(), "caddy.log")
	cfg := strings.Replace(globalOptions, "\n}\n", fmt.Sprintf("\n\tlog {\n\t\toutput file %s\n\t\tformat json\n\t\tlevel DEBUG\n\t}\n}\n", logFile), 1) + `
:{$PORT_CRASH} {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		fetch {
			allow_private all
		}
		browser {
			tabs 1
			timeout 20s
			files_dir ` + t.TempDir() + `
		}
	}
}
`
	tester := newTester(t)
	tester.InitServer(cfg, "caddyfile")
	site := testcaddy.URL("CRASH")

	for _, tc := range []struct {
		name         string
		signal       syscall.Signal
		status, code int
		logged       string // the ERROR entry's message, "" for none at ERROR
		crashStatus  string // the crash_status the ERROR entry names
	}{
		{"trap, as out of memory", syscall.SIGTRAP, 413, 4130, "", ""},
		{"segmentation fault", syscall.SIGSEGV, 500, 4200, "rendering in the browser failed", "crashed"},
		{"killed", syscall.SIGKILL, 500, 4200, "rendering in the browser failed", "killed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := asked.Load()
			body := `{"html":"<p>x</p><img src=\"` + img.URL + `/a.png\">","page_size":"A4","page_orientation":"portrait"}`
			answer := make(chan response, 1)
			go func() {
				req, _ := http.NewRequest(http.MethodPost, site+"/v1/message/pdf", strings.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+apiToken)
				req.Header.Set("Content-Type", "application/json")
				res, err := (&http.Client{Timeout: 60 * time.Second}).Do(req)
				if err != nil {
					t.Errorf("POST: %v", err)
					answer <- response{}
					return
				}
				defer res.Body.Close()
				data, _ := io.ReadAll(res.Body)
				answer <- response{status: res.StatusCode, header: res.Header, body: data}
			}()
			// The page is loaded (its renderer runs) once it asks for the image.
			for deadline := time.Now().Add(15 * time.Second); asked.Load() == before && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
			}
			if asked.Load() == before {
				t.Fatal("the render never asked for its image")
			}
			pids := ourRenderers()
			if len(pids) == 0 {
				t.Fatal("no renderer found")
			}
			for _, pid := range pids {
				_ = syscall.Kill(pid, tc.signal)
			}
			killed := time.Now()
			defer func() { t.Logf("answered %v after the signal", time.Since(killed)) }()
			var r response
			select {
			case r = <-answer:
			case <-time.After(30 * time.Second):
				t.Fatal("no answer 30 s after the renderer died")
			}
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			id := checkRequestID(t, r)
			code, _, details := exportError(t, r)
			if code != tc.code {
				t.Errorf("code %d, want %d", code, tc.code)
			}
			if tc.status == 500 {
				if details != "request id "+id {
					t.Errorf("details %q, want the request id %s", details, id)
				}
			} else if !strings.Contains(details, "2048 MiB") {
				t.Errorf("details %q, want the memory bound named", details)
			}
			entry := errorEntry(t, logFile, id)
			if tc.logged == "" {
				if entry != nil {
					t.Errorf("logged at ERROR: %v", entry)
				}
				return
			}
			if entry == nil || entry["msg"] != tc.logged || entry["crash_status"] != tc.crashStatus || entry["crash_code"] != float64(tc.signal) {
				t.Errorf("ERROR entry %v; want %q with crash_status %q, crash_code %d", entry, tc.logged, tc.crashStatus, tc.signal)
			}
		})
	}
}

// ourRenderers lists the renderer processes of the browsers this test
// process started (below it, at any depth).
func ourRenderers() []int {
	procs := processes()
	var mine []int
	for pid, p := range procs {
		if strings.Contains(p.cmdline, "--type=renderer") && procs.below(pid, os.Getpid()) {
			mine = append(mine, pid)
		}
	}
	return mine
}

// errorEntry is the ERROR entry of the JSON log for request id, or nil;
// the entry is written before the answer.
func errorEntry(t *testing.T, logFile, id string) map[string]any {
	t.Helper()
	f, err := os.Open(logFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e map[string]any
		if json.Unmarshal(sc.Bytes(), &e) == nil && e["level"] == "error" && e["request_id"] == id {
			return e
		}
	}
	return nil
}
