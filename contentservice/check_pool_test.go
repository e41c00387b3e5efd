package contentservice

import (
	"bytes"
	"encoding/json"
	"fmt"
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

// jsonRequest is a POST of body to path with the test app's token.
func jsonRequest(path string, body []byte) *http.Request {
	r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
	r.Header.Set("Authorization", "Bearer "+testAPIToken)
	r.Header.Set("Content-Type", "application/json")
	return r
}

// serveOK runs r through h and returns the answer, or an error unless it
// is a 200 (for goroutines, which must not call t.Fatal).
func serveOK(h *service, r *http.Request) ([]byte, error) {
	w := httptest.NewRecorder()
	if err := h.ServeHTTP(w, r, nil); err != nil || w.Code != http.StatusOK {
		return nil, fmt.Errorf("%s: %v %d %.200s", r.URL.Path, err, w.Code, w.Body.Bytes())
	}
	return w.Body.Bytes(), nil
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
		got, err := serveOK(h, jsonRequest(PathMessageCheck, b))
		if err != nil {
			t.Fatal(err)
		}
		want[i] = bytes.Clone(got)
	}
	if !bytes.Contains(want[0], []byte(`"it-IT"`)) {
		t.Fatalf("no Italian result: %s", want[0])
	}
	exports := designtest.Own(t)
	names := designtest.Names(exports)

	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for n := range 20 {
				if (g+n)%2 == 0 { // an export between checks, from the same pool
					if _, err := serveOK(h, jsonRequest(PathHTML, exports[names[(g+n)%len(names)]])); err != nil {
						t.Error(err)
						return
					}
					continue
				}
				i := (g + n) % len(bodies)
				got, err := serveOK(h, jsonRequest(PathMessageCheck, bodies[i]))
				if err != nil {
					t.Error(err)
					return
				}
				if !bytes.Equal(got, want[i]) {
					t.Errorf("check %d differs from its serial answer:\n got %s\nwant %s", i, got, want[i])
					return
				}
			}
		})
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
	check := func() {
		if _, err := serveOK(h, jsonRequest(PathMessageCheck, body)); err != nil {
			t.Fatal(err)
		}
	}
	check() // the pool's first blocks
	const n = 50
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range n {
		check()
	}
	runtime.ReadMemStats(&after)
	// About 42 KB of the request's own work (decoding it, the answer);
	// a fresh block is 64 KiB more.
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 80<<10 {
		t.Errorf("a Check allocates %d bytes", per)
	}
}

// TestCheckHTMLWeightBoundedByMaxOutput: overageHtmlWeight renders the
// design within the service's max_output, as an export would; past it the
// check is answered as not processed, not rendered to render's default.
func TestCheckHTMLWeightBoundedByMaxOutput(t *testing.T) {
	tpl, err := os.ReadFile("../designcheck/testdata/checks.json")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"checks": []map[string]any{{"category": "overageHtmlWeight", "limit": 100}}, "template": json.RawMessage(tpl)})
	for _, c := range []struct {
		maxOutput int64
		processed bool
	}{{1000, false}, {1 << 20, true}} {
		h, _ := newTestService(t, func(h *Handler) { h.MaxOutput = c.maxOutput })
		got, err := serveOK(h, jsonRequest(PathMessageCheck, body))
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf(`"processed":%v`, c.processed)
		if !bytes.Contains(got, []byte(want)) {
			t.Errorf("max_output %d: %s, want %s", c.maxOutput, got, want)
		}
	}
}
