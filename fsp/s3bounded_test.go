package fsp

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestBoundedAnswers: every S3 answer is cut at maxS3Answer but the bytes
// of an object; an object GET answered with an error (whose body minio-go
// decodes whole) is cut too.
func TestBoundedAnswers(t *testing.T) {
	const huge = maxS3Answer + 4<<20
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := http.StatusOK
		if strings.Contains(r.URL.Path, "denied") {
			status = http.StatusForbidden
		}
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(status)
		fmt.Fprint(w, "<Error><Code>AccessDenied</Code><Message>")
		chunk := []byte(strings.Repeat("A", 64<<10))
		for n := 0; n < huge; n += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		fmt.Fprint(w, "</Message></Error>")
	}))
	defer srv.Close()
	client := &http.Client{Transport: boundedAnswers{http.DefaultTransport}}
	for _, c := range []struct {
		name, method, path string
		cut                bool
	}{
		{"object bytes", "GET", "/bucket/x.png", false},
		{"object GET answered with an error", "GET", "/bucket/denied.png", true},
		{"listing", "GET", "/bucket/?list-type=2", true},
		{"write's answer", "PUT", "/bucket/x.png", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, _ := http.NewRequest(c.method, srv.URL+c.path, nil)
			res, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			n, err := io.Copy(io.Discard, res.Body)
			if got := errors.Is(err, errS3AnswerTooLarge); got != c.cut {
				t.Fatalf("read %d bytes, error %v; want it cut: %v", n, err, c.cut)
			}
			if c.cut && n > maxS3Answer+1 {
				t.Errorf("read %d bytes before the cut, want at most %d", n, maxS3Answer+1)
			}
		})
	}
}
