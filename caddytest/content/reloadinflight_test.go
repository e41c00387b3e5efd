package content

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
)

// TestReloadKeepsRendersInFlight: PDFs rendering when the config is
// reloaded (through the bridge and directly) finish with their old
// config: each answers 200 with a link the new config serves, and no
// temporary file is left in files_dir.
func TestReloadKeepsRendersInFlight(t *testing.T) {
	var started atomic.Int64
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		started.Add(1)
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
		http.NotFound(w, r)
	}))
	defer slow.Close()
	filesDir, store := t.TempDir(), t.TempDir()
	cfg := strings.Replace(reloadConfig(filesDir, store), "\t\tbrowser {", "\t\tfetch {\n\t\t\tallow_private all\n\t\t}\n\t\tbrowser {", 1)
	tester := newTester(t)
	tester.InitServer(cfg, "caddyfile")
	html := `<img src=\"` + slow.URL + `/a.png\">` + strings.ReplaceAll(shortHTML, `"`, `\"`)
	body := []byte(`{"html":"` + html + `","page_size":"A4","page_orientation":"portrait"}`)
	sites := []string{testcaddy.URL("RLBRIDGE"), testcaddy.URL("RLBRIDGE"), testcaddy.URL("RLCS")}
	results := make([]response, len(sites))
	client := &http.Client{Timeout: 60 * time.Second}
	var wg sync.WaitGroup
	for i, site := range sites {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, site+"/v1/message/pdf", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			if strings.Contains(site, strconv.Itoa(testcaddy.Port("RLCS"))) {
				req.Header.Set("Authorization", "Bearer "+apiToken)
			}
			res, err := client.Do(req)
			if err != nil {
				t.Errorf("pdf %d: %v", i, err)
				return
			}
			defer res.Body.Close()
			data, _ := io.ReadAll(res.Body)
			results[i] = response{status: res.StatusCode, header: res.Header, body: data}
		}()
	}
	for deadline := time.Now().Add(15 * time.Second); started.Load() < int64(len(sites)) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if started.Load() < int64(len(sites)) {
		t.Fatalf("only %d of %d renders fetched their image", started.Load(), len(sites))
	}
	if tmps, _ := filepath.Glob(filepath.Join(filesDir, ".tmp-*")); len(tmps) == 0 {
		t.Log("no temporary file while rendering")
	}
	profiles := browserProfiles(t)
	if len(profiles) == 0 {
		t.Fatal("no browser runs while rendering")
	}
	if status, b, err := load(cfg, true); err != nil || status != 200 {
		t.Fatalf("reload: %d %s %v", status, b, err)
	}
	wg.Wait()
	// The old config's browser goes once its last render has ended.
	left := func() int { n, _ := ourBrowserProcesses(profiles); return n }
	for deadline := time.Now().Add(10 * time.Second); left() > 0 && time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
	}
	if n, procs := ourBrowserProcesses(profiles); n > 0 {
		t.Errorf("%d browser processes outlived the old config's renders:\n%s", n, strings.Join(procs, "\n"))
	}
	for dir := range profiles {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("profile %s outlived the old config's renders", dir)
		}
	}
	for i, r := range results {
		if r.status != 200 {
			t.Errorf("pdf %d in flight during the reload: %d %s", i, r.status, r.body)
			continue
		}
		var ans struct {
			Body struct {
				URL string `json:"url"`
			} `json:"body"`
		}
		if err := json.Unmarshal(r.body, &ans); err != nil || ans.Body.URL == "" {
			t.Errorf("pdf %d: %s", i, r.body)
			continue
		}
		// The ports changed with the reload: ask the new config.
		_, file, _ := strings.Cut(ans.Body.URL, "/v1/files/")
		res, err := tester.Client.Get(testcaddy.URL("RLCS") + "/v1/files/" + file)
		if err != nil {
			t.Errorf("pdf %d: %v", i, err)
			continue
		}
		data, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !bytes.HasPrefix(data, []byte("%PDF")) {
			t.Errorf("pdf %d from the new config: %d %.50q", i, res.StatusCode, data)
		}
	}
	if tmps, _ := filepath.Glob(filepath.Join(filesDir, ".tmp-*")); len(tmps) > 0 {
		t.Errorf("temporary PDF files left: %v", tmps)
	}
}
