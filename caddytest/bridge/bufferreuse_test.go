package bridge

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBuffersNeverCrossExports: design_bridge reuses the buffers of
// request bodies and recorded answers, so many different exports at once
// (each design sent twice together, so that some share a call) must each
// reach the content service byte for byte and get back the answer to
// their own design. The upstream answers some before it has read the
// body (net/http's transport is then still sending it after the answer is
// in) and checks every body it reads against what its id says it must be.
// A buffer given back while a joined export, the transport or a
// comparison still reads it shows here as a wrong body or answer (and
// under -race as a race).
func TestBuffersNeverCrossExports(t *testing.T) {
	const ids = 96
	design := func(id int) []byte {
		size := 40 << 10
		if id%24 == 0 {
			// Past the one buffer of an ordinary body, and more than the
			// kernel's socket buffers hold.
			size = 8 << 20
		}
		sum := sha256.Sum256([]byte(strconv.Itoa(id)))
		pad := strings.Repeat(hex.EncodeToString(sum[:]), size/64+1)[:size]
		return []byte(fmt.Sprintf(`{"id":"%06d","pad":"%s"}`, id, pad))
	}
	answer := func(id int) string {
		return "<p>" + strings.Repeat(fmt.Sprintf("%06d ", id), 26000/7) + "</p>"
	}
	idOf := func(prefix []byte) (int, bool) {
		s, ok := bytes.CutPrefix(prefix, []byte(`{"id":"`))
		if !ok || len(s) < 6 {
			return 0, false
		}
		id, err := strconv.Atoi(string(s[:6]))
		return id, err == nil
	}

	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		prefix := make([]byte, 13)
		if _, err := io.ReadFull(r.Body, prefix); err != nil {
			t.Errorf("upstream: reading the body: %v", err)
			return
		}
		id, ok := idOf(prefix)
		if !ok {
			t.Errorf("upstream: a body that starts %q", prefix)
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		check := func(early bool) {
			var rest []byte
			var err error
			if id%24 == 0 {
				// A large body read slowly: the bridge's transport is
				// still sending it when the answer is in.
				rest, err = io.ReadAll(slowReader{r.Body})
			} else {
				rest, err = io.ReadAll(r.Body)
			}
			got, want := append(prefix, rest...), design(id)
			switch {
			case early && err == io.ErrUnexpectedEOF:
				// net/http's transport gives up sending a body 50 ms
				// after its answer is in (and closes the connection):
				// what came until then must still be this design's.
				want = want[:min(len(got), len(want))]
			case err != nil:
				t.Errorf("upstream: design %d: reading the body: %v", id, err)
				return
			}
			if !bytes.Equal(got, want) {
				t.Errorf("upstream: design %d arrived as other bytes (%d, want %d): %.60q…", id, len(got), len(want), got)
			}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if id%2 == 0 {
			w.Header().Set("Content-Length", strconv.Itoa(len(answer(id))))
		}
		if id%3 == 0 || id%24 == 0 {
			// The answer first, the body after: the bridge has its answer
			// while its transport still sends the design.
			_ = http.NewResponseController(w).EnableFullDuplex()
			io.WriteString(w, answer(id))
			_ = http.NewResponseController(w).Flush()
			check(true)
			return
		}
		check(false)
		io.WriteString(w, answer(id))
	}))
	defer up.Close()
	load(t, site(fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken %s", up.URL, tokenPlain)))

	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 32}}
	defer client.CloseIdleConnections()
	send := func(id int) error {
		res, err := client.Post(siteURL+"/v1/message/html", "application/json", bytes.NewReader(design(id)))
		if err != nil {
			return err
		}
		defer res.Body.Close()
		got, err := io.ReadAll(res.Body)
		if err != nil {
			return err
		}
		if res.StatusCode != 200 || string(got) != answer(id) {
			return fmt.Errorf("%d %.60q…, want design %d's answer", res.StatusCode, got, id)
		}
		return nil
	}
	work := make(chan int)
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for id := range work {
				// The same design twice at once: one of them may join the
				// other's call and write the answer it recorded.
				var pair sync.WaitGroup
				for range 2 {
					pair.Add(1)
					go func() {
						defer pair.Done()
						if err := send(id); err != nil {
							t.Errorf("export of design %d: %v", id, err)
						}
					}()
				}
				pair.Wait()
			}
		}()
	}
	for id := range ids {
		work <- id
	}
	close(work)
	wg.Wait()
}

// slowReader reads at most 64 KiB at a time, a millisecond apart.
type slowReader struct{ r io.Reader }

func (s slowReader) Read(p []byte) (int, error) {
	time.Sleep(time.Millisecond)
	return s.r.Read(p[:min(len(p), 64<<10)])
}

// TestKeptAnswersOutliveTheirBuffers: what the cache keeps (the design it
// compares and the answer it gives) stays whole while many other exports
// reuse the buffers their requests and answers came in: every kept
// design is answered from the cache again, with its own answer.
func TestKeptAnswersOutliveTheirBuffers(t *testing.T) {
	design := func(id int) []byte {
		sum := sha256.Sum256([]byte(strconv.Itoa(id)))
		return []byte(fmt.Sprintf(`{"id":"%06d","pad":"%s"}`, id, strings.Repeat(hex.EncodeToString(sum[:]), 600)))
	}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sum := sha256.Sum256(body)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<p>"+strings.Repeat(hex.EncodeToString(sum[:]), 125)+"</p>")
	}))
	defer up.Close()
	load(t, site(fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken %s\n\t\tcache 16MiB 10m", up.URL, tokenPlain)))
	export := func(path string, id int) (string, string) {
		res, err := http.Post(siteURL+path, "application/json", bytes.NewReader(design(id)))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		got, _ := io.ReadAll(res.Body)
		sum := sha256.Sum256(design(id))
		if want := "<p>" + strings.Repeat(hex.EncodeToString(sum[:]), 125) + "</p>"; res.StatusCode != 200 || string(got) != want {
			t.Errorf("%s design %d: %d %.60q…, not its own answer", path, id, res.StatusCode, got)
		}
		return res.Header.Get("Cache-Status"), string(got)
	}
	for id := range 10 {
		export("/v1/message/html", id)
	}
	// PDF answers are never kept: their buffers go back to the pool, and
	// so do the bodies of every export.
	for id := 10; id < 60; id++ {
		export("/v1/page/pdf", id)
	}
	for id := range 10 {
		if status, _ := export("/v1/message/html", id); status != "design_bridge; hit" {
			t.Errorf("design %d again: Cache-Status %q, want a hit", id, status)
		}
	}
}
