package contentservice

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// checkBodies returns Check requests (the widget and details checks, in
// Italian too) of the project's own designs and of designcheck's test
// design, which has translations.
func checkBodies(t *testing.T) [][]byte {
	t.Helper()
	designs := designtest.Own(t)
	withTranslations, err := os.ReadFile("../designcheck/testdata/checks.json")
	if err != nil {
		t.Fatal(err)
	}
	templates := []json.RawMessage{withTranslations}
	for _, name := range designtest.Names(designs) {
		templates = append(templates, designs[name])
	}
	var bodies [][]byte
	for _, tpl := range templates {
		b, err := json.Marshal(map[string]any{
			"checks":    []map[string]string{{"category": "missingAltText"}, {"category": "missingImageLink"}, {"category": "missingCopyLink"}, {"category": "missingDetailsEmail"}},
			"languages": []string{"it-IT"},
			"template":  tpl,
		})
		if err != nil {
			t.Fatal(err)
		}
		bodies = append(bodies, b)
	}
	return bodies
}

func postCheck(t testing.TB, h *service, body []byte) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, PathMessageCheck, bytes.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+testAPIToken)
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	if err := h.ServeHTTP(w, r, nil); err != nil || w.Code != http.StatusOK {
		t.Fatalf("check: %v %d %s", err, w.Code, w.Body.Bytes())
	}
	return w
}

// TestConcurrentChecks: Checks give their design's blocks back to the
// decoder's pool, which exports share. Checks and exports of different
// designs run at once and each answer must equal its serial one: an
// answer read from a released tree would show another design's text, or
// under -race the "released" poison and the overlapping writes.
func TestConcurrentChecks(t *testing.T) {
	h, _ := newTestService(t, func(h *Handler) { h.MaxBody = 4 << 20 })
	bodies := checkBodies(t)
	want := make([][]byte, len(bodies))
	for i, b := range bodies {
		want[i] = bytes.Clone(postCheck(t, h, b).Body.Bytes())
	}
	if !bytes.Contains(want[0], []byte(`"it-IT"`)) {
		t.Fatalf("no Italian result: %s", want[0])
	}
	exports := designtest.Own(t)
	names := designtest.Names(exports)

	var wg sync.WaitGroup
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 20 {
				if (g+n)%2 == 0 { // an export between checks, from the same pool
					r := httptest.NewRequest(http.MethodPost, PathHTML, bytes.NewReader(exports[names[(g+n)%len(names)]]))
					r.Header.Set("Authorization", "Bearer "+testAPIToken)
					r.Header.Set("Content-Type", "application/json")
					w := httptest.NewRecorder()
					if err := h.ServeHTTP(w, r, nil); err != nil || w.Code != http.StatusOK {
						t.Errorf("export: %v %d", err, w.Code)
						return
					}
					continue
				}
				i := (g + n) % len(bodies)
				if got := postCheck(t, h, bodies[i]).Body.Bytes(); !bytes.Equal(got, want[i]) {
					t.Errorf("check %d differs from its serial answer:\n got %s\nwant %s", i, got, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
}

// TestCheckReleasesDesign: a Check's design goes back to the pool, so
// Checks in a row do not take a fresh 64 KiB block each.
func TestCheckReleasesDesign(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops what it holds at random under -race")
	}
	h, _ := newTestService(t, nil)
	body := checkBodies(t)[0]
	postCheck(t, h, body) // the pool's first blocks
	const n = 50
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		postCheck(t, h, body)
	}
	runtime.ReadMemStats(&after)
	// About 42 KB of the request's own work (decoding it, the answer);
	// a fresh block is 64 KiB more.
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 80<<10 {
		t.Errorf("a Check allocates %d bytes", per)
	}
}
