package adminapi

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestLoadRetrying: a POST to /load whose connection is closed unanswered
// is sent again with its whole body; any other request is not.
func TestLoadRetrying(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if calls.Add(1) == 1 {
			// close the connection without an answer, as an admin
			// server being replaced does
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	client := &http.Client{Transport: loadRetrying{&http.Transport{DisableKeepAlives: true}}}

	res, err := client.Post(srv.URL+"/load", "text/caddyfile", strings.NewReader("config"))
	if err != nil {
		t.Fatalf("load was not retried: %v", err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(got) != "config" || calls.Load() != 2 {
		t.Errorf("answer %q after %d calls, want the body back after 2", got, calls.Load())
	}

	calls.Store(0)
	if _, err := client.Post(srv.URL+"/other", "text/plain", strings.NewReader("x")); err == nil || calls.Load() != 1 {
		t.Errorf("a request other than a load was retried (err %v, %d calls)", err, calls.Load())
	}
}
