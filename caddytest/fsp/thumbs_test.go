package fsp

import (
	"bytes"
	"encoding/json"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fileAndThumb returns the meta of the file at target, as its own GET and
// in its folder's listing answer it (they must agree on the thumbnail).
func fileAndThumb(t *testing.T, port int, target string) metaJSON {
	t.Helper()
	var one struct {
		Data dataJSON `json:"data"`
	}
	res := send(t, port, call{method: "GET", target: target, auth: "-"})
	if res.Status != 200 || json.Unmarshal(res.Body, &one) != nil {
		t.Fatalf("GET %s: %d %s", target, res.Status, res.Body)
	}
	dir := target[:strings.LastIndexByte(target, '/')+1]
	var list struct {
		Data dataJSON `json:"data"`
	}
	res = send(t, port, call{method: "GET", target: dir, auth: "-"})
	if res.Status != 200 || json.Unmarshal(res.Body, &list) != nil {
		t.Fatalf("GET %s: %d %s", dir, res.Status, res.Body)
	}
	for _, m := range list.Data.Items {
		if m.Path == target && m.Thumbnail != one.Data.Meta.Thumbnail {
			t.Errorf("%s: listed with thumbnail %q, its own meta has %q", target, m.Thumbnail, one.Data.Meta.Thumbnail)
		}
	}
	return one.Data.Meta
}

// TestProviderThumbnailOfAnotherFile: a thumbnail left by an earlier file
// of the same name (a delete whose thumbnail delete failed) is never shown
// for a new file that gets none: an image over max_image_memory, a PDF,
// stored by each strategy or moved there.
func TestProviderThumbnailOfAnotherFile(t *testing.T) {
	src := newSources(t)
	onEachBackend(t, func(t *testing.T, b backend) {
		anonymousSite(t, b.storage, "max_image_memory 1KiB")
		for _, dir := range []string{"/t/", "/m/"} {
			if res := send(t, privatePort, call{method: "POST", target: dir, auth: "-"}); res.Status != 200 {
				t.Fatalf("mkdir %s: %d %s", dir, res.Status, res.Body)
			}
		}
		orphan := func(key string) { b.write(t, "c1/u1/"+key, testPNG(20, 20, color.NRGBA{0, 200, 0, 255})) }
		anon := func(c call) call { c.auth = "-"; return c }
		for _, row := range []struct {
			name   string
			orphan string // the thumbnail left there
			setup  []call
			op     call
			target string // the new file
		}{
			{"an image over the budget, ask", "t/.thumb.a.png.png", nil, direct("/t/a.png", string(src.png)), "/t/a.png"},
			{"a PDF", "t/.thumb.doc.pdf.png", nil, direct("/t/doc.pdf", string(src.pdf)), "/t/doc.pdf"},
			{"an image over the budget, keep's free name", "t/.thumb.k_1.png.png", []call{direct("/t/k.png", string(src.png))}, withStrategy(direct("/t/k.png", string(src.png)), "keep"), "/t/k_1.png"},
			{"an image over the budget, replace", "t/.thumb.r.png.png", []call{direct("/t/r.png", string(src.png))}, withStrategy(direct("/t/r.png", string(src.png)), "replace"), "/t/r.png"},
			{"a move of a file without thumbnail", "m/.thumb.mv.png.png", []call{direct("/mv.png", string(src.png))}, call{method: "PATCH", target: "/mv.png", body: moveBody("/m/", "")}, "/m/mv.png"},
		} {
			for _, c := range row.setup {
				if res := send(t, privatePort, anon(c)); res.Status != 200 {
					t.Fatalf("%s: setup %s: %d %s", row.name, c.target, res.Status, res.Body)
				}
			}
			orphan(row.orphan)
			if res := send(t, privatePort, anon(row.op)); res.Status != 200 {
				t.Errorf("%s: %d %s", row.name, res.Status, res.Body)
				continue
			}
			if m := fileAndThumb(t, privatePort, row.target); m.Thumbnail != "" {
				t.Errorf("%s: %s is shown with the thumbnail %s, another file's", row.name, row.target, m.Thumbnail)
			}
		}
	})
}

// TestProviderConcurrentReplaceThumbnail: two replace uploads of one name
// at once leave the file with its own thumbnail: never the other upload's,
// and not none. On S3 the first upload's thumbnail write is held back
// until the second upload is done, so it lands last.
func TestProviderConcurrentReplaceThumbnail(t *testing.T) {
	src := newSources(t)
	b, proxy := s3Site(t)
	for _, c := range []call{{method: "POST", target: "/a/", auth: "-"}} {
		if res := send(t, privatePort, c); res.Status != 200 {
			t.Fatalf("%s: %d %s", c.target, res.Status, res.Body)
		}
	}
	replace := func(img []byte) call {
		c := withStrategy(direct("/a/pic.png", string(img)), "replace")
		c.auth = "-"
		return c
	}
	_, _ = proxy.inject("PUT", "/a/.thumb.pic.png.png", faultHold, true)
	first := make(chan response)
	go func() { first <- send(t, privatePort, replace(src.png)) }()
	<-proxy.held // the first upload's file is stored, its thumbnail waits
	if res := send(t, privatePort, replace(src.png2)); res.Status != 200 {
		t.Fatalf("second upload: %d %s", res.Status, res.Body)
	}
	close(proxy.release)
	if res := <-first; res.Status != 200 {
		t.Fatalf("first upload: %d %s", res.Status, res.Body)
	}
	m := fileAndThumb(t, privatePort, "/a/pic.png")
	if got := b.read(t, "c1/u1/a/pic.png"); !bytes.Equal(got, src.png2) {
		t.Fatalf("the file is not the second upload's (%d bytes)", len(got))
	}
	if m.Thumbnail == "" {
		t.Fatal("the second upload's file has no thumbnail")
	}
	key, err := url.PathUnescape(strings.TrimPrefix(m.Thumbnail, "http://localhost/files/"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(b.read(t, key)))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Width != 50 || cfg.Height != 60 {
		t.Errorf("the second upload's file has a %dx%d thumbnail, the first upload's; want 50x60, its own", cfg.Width, cfg.Height)
	}
}

// TestProviderAskConflictKeepsThumbnail: an ask upload whose name a file
// takes while its source is still arriving answers 3400 and leaves that
// file's thumbnail.
func TestProviderAskConflictKeepsThumbnail(t *testing.T) {
	src := newSources(t)
	onEachBackend(t, func(t *testing.T, b backend) {
		started, release := make(chan struct{}), make(chan struct{})
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write(src.png[:100])
			w.(http.Flusher).Flush()
			close(started)
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
			_, _ = w.Write(src.png[100:])
		}))
		defer slow.Close()
		anonymousSite(t, b.storage, "allow_private all")
		done := make(chan response, 1)
		go func() {
			done <- send(t, privatePort, call{method: "POST", target: "/pic.png", body: upload(slow.URL+"/pic.png", "ask"), auth: "-"})
		}()
		<-started
		c := direct("/pic.png", string(src.png2))
		c.auth = "-"
		if res := send(t, privatePort, c); res.Status != 200 {
			t.Fatalf("the other upload: %d %s", res.Status, res.Body)
		}
		close(release)
		if res := <-done; decodeFSP(res.Body).Code != 3400 {
			t.Errorf("the ask upload: %d %s, want 3400", res.Status, res.Body)
		}
		if m := fileAndThumb(t, privatePort, "/pic.png"); m.Thumbnail == "" {
			t.Error("the file that took the name lost its thumbnail")
		}
	})
}

// TestProviderListingRemovesLeftThumbnails: a thumbnail whose file is gone
// (a delete or move whose removal of it failed) is removed when its folder
// is listed, on each back end; a file's own thumbnail, a folder with a
// thumbnail's name and the listing itself stay as they were, and so do
// the thumbnails in a shared (read-only) folder.
func TestProviderListingRemovesLeftThumbnails(t *testing.T) {
	src := newSources(t)
	onEachBackend(t, func(t *testing.T, b backend) {
		anonymousSite(t, b.storage, "shared logos lib/logos")
		for _, c := range []call{{method: "POST", target: "/t/"}, direct("/t/kept.png", string(src.png))} {
			c.auth = "-"
			if res := send(t, privatePort, c); res.Status != 200 {
				t.Fatalf("%s %s: %d %s", c.method, c.target, res.Status, res.Body)
			}
		}
		thumb := testPNG(20, 20, color.NRGBA{0, 200, 0, 255})
		if b.name == "local" {
			if err := os.MkdirAll(filepath.Join(b.files, "lib", "logos"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(b.files, "c1", "u1", "t", ".thumb.dir.png.png"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		b.write(t, "c1/u1/t/.thumb.dir.png.png/x", []byte("x"))
		b.write(t, "lib/logos/.thumb.gone.png.png", thumb)
		left := []string{"c1/u1/.thumb.gone.png.png", "c1/u1/t/.thumb.gone.png.png", "c1/u1/t/.thumb.also gone.jpg.png"}
		for _, k := range left {
			b.write(t, k, thumb)
		}
		before := fileAndThumb(t, privatePort, "/t/kept.png")
		if before.Thumbnail == "" {
			t.Fatal("/t/kept.png has no thumbnail")
		}
		for _, dir := range []string{"/", "/t/", "/logos/"} {
			if res := send(t, privatePort, call{method: "GET", target: dir, auth: "-"}); res.Status != 200 {
				t.Fatalf("GET %s: %d %s", dir, res.Status, res.Body)
			}
		}
		stored := map[string]bool{}
		for _, k := range b.keys(t) {
			stored[strings.TrimSuffix(k, "/")] = true
		}
		for _, k := range left {
			if stored[k] {
				t.Errorf("%s stays after its folder was listed", k)
			}
		}
		for _, k := range []string{"c1/u1/t/.thumb.kept.png.png", "c1/u1/t/.thumb.dir.png.png/x", "lib/logos/.thumb.gone.png.png"} {
			if !stored[k] {
				t.Errorf("%s was removed", k)
			}
		}
		if after := fileAndThumb(t, privatePort, "/t/kept.png"); after.Thumbnail != before.Thumbnail {
			t.Errorf("/t/kept.png: thumbnail %q after the listing, %q before", after.Thumbnail, before.Thumbnail)
		}
	})
}
