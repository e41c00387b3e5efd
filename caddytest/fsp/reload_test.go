package fsp

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestProviderReloadKeepsUploadInFlight: a config reload in the middle of
// an upload (its source still arriving) must not close the storage under
// it: the upload finishes on the old handler and the file is stored.
func TestProviderReloadKeepsUploadInFlight(t *testing.T) {
	src := newSources(t)
	started := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write(src.png[:100])
		w.(http.Flusher).Flush()
		once.Do(func() { close(started) })
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, _ = w.Write(src.png[100:])
	}))
	defer slow.Close()
	store := t.TempDir()
	config := func(maxUploads int) string {
		return fspSite(privatePort, "local "+store, "allow_private all", "allow_anonymous", "fetch_timeout 20s", fmt.Sprintf("max_uploads %d", maxUploads))
	}
	load(t, config(4))
	done := make(chan response, 1)
	go func() {
		done <- send(t, privatePort, call{method: "POST", target: "/cat.png", body: upload(slow.URL+"/cat.png", ""), auth: "-"})
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the upload never reached its source")
	}
	reloaded := make(chan struct{})
	go func() {
		defer close(reloaded)
		load(t, config(3)) // another config: Caddy reloads
	}()
	// Release the source once the reload had time to clean the old
	// handler up (or, if Caddy waits for the upload, while it waits).
	time.Sleep(1500 * time.Millisecond)
	close(release)
	res := <-done
	<-reloaded
	if res.Status != 200 {
		t.Errorf("upload across a reload: %d %s", res.Status, res.Body)
	}
	if data, err := os.ReadFile(filepath.Join(store, "c1", "u1", "cat.png")); err != nil || len(data) != len(src.png) {
		t.Errorf("stored file: %d bytes, %v; want %d", len(data), err, len(src.png))
	}
}
