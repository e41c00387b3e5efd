package contentservice

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync"
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/render"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// TestConcurrentRealRenders sends different corpus designs through the
// handler from several goroutines at once and compares every answer with
// a render of the same design made beforehand, in the raw and the JSON
// form by turns: request-body, output and JSON-wrapper buffers, design
// trees and style buffers are recycled between requests, so an answer
// that held on to a recycled buffer, or a design that still pointed into
// one or was read after its release, would show another design's bytes
// (and -race would see the overlap).
func TestConcurrentRealRenders(t *testing.T) {
	designs := designtest.OwnAndCorpus(t, false)
	paths := designtest.Names(designs)
	if len(paths) < 8 {
		t.Fatalf("only %d test designs", len(paths))
	}
	// Every eighth, for designs of different sizes and kinds.
	for i := range 8 {
		paths[i] = paths[i*len(paths)/8]
	}
	paths = paths[:8]
	bodies := make([][]byte, len(paths))
	want := make([][]byte, len(paths))
	for i, p := range paths {
		bodies[i] = designs[p]
		d, err := design.Decode(bodies[i])
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out, err := render.HTML(d)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		want[i] = bytes.Clone(out.Body)
	}

	h, _ := newTestService(t, func(h *Handler) { h.MaxBody = 4 << 20 })
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 20 {
				i := (g + n) % len(paths)
				r := jsonRequest(PathHTML, bodies[i])
				wantBody := want[i]
				if n%2 == 1 {
					r.Header.Set("Accept", "application/json")
					wantBody = encodingJSONWrap("html", want[i])
				}
				w := httptest.NewRecorder()
				if err := h.ServeHTTP(w, r, nil); err != nil || w.Code != http.StatusOK {
					t.Errorf("%s: %v %d", filepath.Base(paths[i]), err, w.Code)
					return
				}
				if !bytes.Equal(w.Body.Bytes(), wantBody) {
					t.Errorf("%s: the answer differs from its serial render", filepath.Base(paths[i]))
					return
				}
			}
		}()
	}
	wg.Wait()
}

// reentrantWriter serves another request from inside the first answer's
// Write, before keeping the first answer: on the same goroutine, so that
// a buffer given back to a pool before its answer was written would be
// the one the nested request takes and overwrites.
type reentrantWriter struct {
	*httptest.ResponseRecorder
	nested func()
}

func (w *reentrantWriter) Write(p []byte) (int, error) {
	if f := w.nested; f != nil {
		w.nested = nil
		f()
	}
	return w.ResponseRecorder.Write(p)
}

// TestBuffersHeldUntilWritten checks that no recycled buffer (request
// body, rendered output, JSON wrapper) goes back before its answer is
// written, in both forms.
func TestBuffersHeldUntilWritten(t *testing.T) {
	h, _ := newTestService(t, nil)
	first := designtest.OwnFile(t, "starter-newsletter")
	second := designtest.OwnFile(t, "starter-product-launch")
	export := func(w http.ResponseWriter, body []byte, accept string) {
		r := httptest.NewRequest(http.MethodPost, PathHTML, bytes.NewReader(body))
		r.Header.Set("Authorization", "Bearer "+testAPIToken)
		r.Header.Set("Accept", accept)
		if err := h.ServeHTTP(w, r, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, accept := range []string{"text/html", "application/json"} {
		want := httptest.NewRecorder()
		export(want, first, accept)
		if want.Code != http.StatusOK {
			t.Fatalf("%s: status %d", accept, want.Code)
		}
		// Several times: under -race a pool drops some of what it is given.
		for range 8 {
			w := &reentrantWriter{ResponseRecorder: httptest.NewRecorder()}
			w.nested = func() { export(httptest.NewRecorder(), second, accept) }
			export(w, first, accept)
			if !bytes.Equal(w.Body.Bytes(), want.Body.Bytes()) {
				t.Fatalf("%s: the answer was overwritten by a later request's", accept)
			}
		}
	}
}
