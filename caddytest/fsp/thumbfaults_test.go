package fsp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	_ "image/jpeg"
	"image/png"
	"net"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// thumbFaultRows are the fault table's rows for the thumbnail steps of
// uploads, moves and deletes: on S3 every request of a thumbnail step
// (its write, the look at the file's version after it, its removal's
// look, folder marker and delete, a move's copy) under each fault; locally
// a folder where a thumbnail would go. img and img2 get thumbnails (of
// distinct sizes), big is over the site's max_image_memory and gets none.
func thumbFaultRows(img, img2, big string) []faultRow {
	root := "c1/u1/"
	var rows []faultRow
	for _, kind := range []faultKind{fault500, faultHang, faultReset, faultReload} {
		rows = append(rows,
			faultRow{
				name:     fmt.Sprintf("upload replace, thumbnail write %s", kind),
				backends: "s3",
				setup:    []call{{method: "POST", target: "/a/"}, direct("/a/pic.png", img)},
				op:       withStrategy(direct("/a/pic.png", img2), "replace"),
				fault:    kind, method: "PUT", suffix: "/a/.thumb.pic.png.png",
				keep:   [][]string{{root + "a/pic.png"}},
				thumbs: []string{"/a/pic.png"},
			},
			faultRow{
				name:     fmt.Sprintf("upload replace, the file's version after its thumbnail %s", kind),
				backends: "s3",
				setup:    []call{{method: "POST", target: "/a/"}, direct("/a/pic.png", img)},
				op:       withStrategy(direct("/a/pic.png", img2), "replace"),
				fault:    kind, method: "HEAD", suffix: "/a/pic.png",
				wantCode: -1, // the answer's own look at the file fails too
				keep:     [][]string{{root + "a/pic.png"}},
				thumbs:   []string{"/a/pic.png"},
			},
			faultRow{
				name:     fmt.Sprintf("upload ask, thumbnail write %s", kind),
				backends: "s3",
				setup:    []call{{method: "POST", target: "/a/"}},
				op:       withStrategy(direct("/a/n.png", img2), "ask"),
				fault:    kind, method: "PUT", suffix: "/a/.thumb.n.png.png",
				thumbs: []string{"/a/n.png"},
			},
			faultRow{
				name:     fmt.Sprintf("upload keep, thumbnail write %s", kind),
				backends: "s3",
				setup:    []call{{method: "POST", target: "/a/"}, direct("/a/k.png", img)},
				op:       withStrategy(direct("/a/k.png", img2), "keep"),
				fault:    kind, method: "PUT", suffix: "/a/.thumb.k_1.png.png",
				keep:   [][]string{{root + "a/k.png"}},
				thumbs: []string{"/a/k.png", "/a/k_1.png"},
			},
		)
		// A replace or an ask upload that brings no thumbnail removes the
		// one at its name: the replaced file's, or one a failed delete left.
		for _, step := range []struct{ name, method, suffix string }{
			{"look", "HEAD", "/a/.thumb.pic.png.png"},
			{"folder marker", "PUT", "/a/"},
			{"delete", "DELETE", "/a/.thumb.pic.png.png"},
		} {
			rows = append(rows, faultRow{
				name:     fmt.Sprintf("upload replace without a thumbnail, thumbnail removal's %s %s", step.name, kind),
				backends: "s3",
				setup:    []call{{method: "POST", target: "/a/"}, direct("/a/pic.png", img)},
				op:       withStrategy(direct("/a/pic.png", big), "replace"),
				fault:    kind, method: step.method, suffix: step.suffix,
				wantCode: -1,
				keep:     [][]string{{root + "a/pic.png"}},
				thumbs:   []string{"/a/pic.png"},
			})
		}
		rows = append(rows,
			faultRow{
				name:     fmt.Sprintf("upload ask without a thumbnail onto a left thumbnail, its removal's look %s", kind),
				backends: "s3",
				setup:    []call{{method: "POST", target: "/a/"}},
				orphans:  []string{"a/.thumb.n.png.png"},
				op:       withStrategy(direct("/a/n.png", big), "ask"),
				fault:    kind, method: "HEAD", suffix: "/a/.thumb.n.png.png",
				wantCode: -1,
				thumbs:   []string{"/a/n.png"},
			},
			faultRow{
				name:     fmt.Sprintf("upload keep without a thumbnail onto a left thumbnail, its removal's look %s", kind),
				backends: "s3",
				setup:    []call{{method: "POST", target: "/a/"}, direct("/a/k.png", img)},
				orphans:  []string{"a/.thumb.k_1.png.png"},
				op:       withStrategy(direct("/a/k.png", big), "keep"),
				fault:    kind, method: "HEAD", suffix: "/a/.thumb.k_1.png.png",
				wantCode: -1,
				keep:     [][]string{{root + "a/k.png"}},
				thumbs:   []string{"/a/k.png", "/a/k_1.png"},
			},
			faultRow{
				name:     fmt.Sprintf("move keep without a thumbnail onto a left thumbnail, its removal's look %s", kind),
				backends: "s3",
				setup:    []call{{method: "POST", target: "/a/"}, {method: "POST", target: "/b/"}, direct("/a/src.png", big), direct("/b/src.png", img2)},
				orphans:  []string{"b/.thumb.src_1.png.png"},
				op:       call{method: "PATCH", target: "/a/src.png", body: moveBody("/b/", "keep")},
				fault:    kind, method: "HEAD", suffix: "/b/.thumb.src_1.png.png",
				wantCode: -1,
				keep:     [][]string{{root + "a/src.png", root + "b/src_1.png"}, {root + "b/src.png"}},
				thumbs:   []string{"/a/src.png", "/b/src.png", "/b/src_1.png"},
			},
			faultRow{
				name:     fmt.Sprintf("delete, thumbnail removal's look %s", kind),
				backends: "s3",
				setup:    []call{{method: "POST", target: "/a/"}, direct("/a/d.png", img)},
				op:       call{method: "DELETE", target: "/a/d.png"},
				fault:    kind, method: "HEAD", suffix: "/a/.thumb.d.png.png",
				wantCode: -1,
				thumbs:   []string{"/a/d.png"},
			},
			faultRow{
				name:     fmt.Sprintf("delete, thumbnail delete %s", kind),
				backends: "s3",
				setup:    []call{{method: "POST", target: "/a/"}, direct("/a/d.png", img)},
				op:       call{method: "DELETE", target: "/a/d.png"},
				fault:    kind, method: "DELETE", suffix: "/a/.thumb.d.png.png",
				wantCode: -1,
				thumbs:   []string{"/a/d.png"},
			},
		)
		for _, strat := range []string{"", "keep", "replace"} {
			setup := []call{{method: "POST", target: "/a/"}, {method: "POST", target: "/b/"}, direct("/a/src.png", img)}
			moved := "/b/src.png"
			if strat != "" {
				setup = append(setup, direct("/b/src.png", img2))
			}
			if strat == "keep" {
				moved = "/b/src_1.png"
			}
			thumbKey := strings.Replace(moved, "/b/", "/b/.thumb.", 1) + ".png"
			for _, step := range []struct{ name, method, suffix string }{
				{"the source thumbnail's look", "HEAD", "/a/.thumb.src.png.png"},
				{"thumbnail copy", "PUT", thumbKey},
				{"thumbnail source delete", "DELETE", "/a/.thumb.src.png.png"},
			} {
				// A thumbnail that could not be looked at: the file
				// stays where it was, with it, or moves with it.
				var thumbed []string
				if step.method == "HEAD" {
					thumbed = []string{"/a/src.png", moved}
				}
				rows = append(rows, faultRow{
					thumbed:  thumbed,
					name:     fmt.Sprintf("move %q, %s %s", strat, step.name, kind),
					backends: "s3",
					setup:    setup,
					op:       call{method: "PATCH", target: "/a/src.png", body: moveBody("/b/", strat)},
					fault:    kind, method: step.method, suffix: step.suffix,
					wantCode: -1,
					keep:     [][]string{{root + "a/src.png", root + strings.TrimPrefix(moved, "/")}},
					thumbs:   []string{"/a/src.png", "/b/src.png", "/b/src_1.png"},
				})
			}
		}
		// A move of a file without a thumbnail onto one with a thumbnail
		// removes the replaced file's.
		for _, step := range []struct{ name, method, suffix string }{
			{"look", "HEAD", "/b/.thumb.src.png.png"},
			{"folder marker", "PUT", "/b/"},
			{"delete", "DELETE", "/b/.thumb.src.png.png"},
		} {
			rows = append(rows, faultRow{
				name:     fmt.Sprintf("move replace without a thumbnail, the replaced thumbnail's removal's %s %s", step.name, kind),
				backends: "s3",
				setup:    []call{{method: "POST", target: "/a/"}, {method: "POST", target: "/b/"}, direct("/a/src.png", big), direct("/b/src.png", img2)},
				op:       call{method: "PATCH", target: "/a/src.png", body: moveBody("/b/", "replace")},
				fault:    kind, method: step.method, suffix: step.suffix,
				wantCode: -1,
				keep:     [][]string{{root + "a/src.png", root + "b/src.png"}},
				thumbs:   []string{"/a/src.png", "/b/src.png"},
			})
		}
	}
	// The thumbnail's name is taken by a folder (made by another tool):
	// locally the thumbnail's write or move fails; on S3 the folder and a
	// thumbnail can both be there. The folder is never a thumbnail.
	rows = append(rows,
		faultRow{
			name:     "upload ask without a thumbnail, a folder at the thumbnail's name",
			backends: "s3",
			setup:    []call{{method: "POST", target: "/a/"}},
			blocked:  []string{"a/.thumb.n.png.png"},
			op:       withStrategy(direct("/a/n.png", big), "ask"),
			thumbs:   []string{"/a/n.png"},
		},
		faultRow{
			name:     "upload replace, a folder where the thumbnail goes",
			backends: "local",
			setup:    []call{{method: "POST", target: "/a/"}, direct("/a/pic.png", img)},
			blocked:  []string{"a/.thumb.pic.png.png"},
			op:       withStrategy(direct("/a/pic.png", img2), "replace"),
			keep:     [][]string{{root + "a/pic.png"}},
			thumbs:   []string{"/a/pic.png"},
		},
		faultRow{
			name:     "move, a folder where the thumbnail goes",
			backends: "local",
			setup:    []call{{method: "POST", target: "/a/"}, {method: "POST", target: "/b/"}, direct("/a/src.png", img)},
			blocked:  []string{"b/.thumb.src.png.png"},
			op:       call{method: "PATCH", target: "/a/src.png", body: moveBody("/b/", "")},
			keep:     [][]string{{root + "b/src.png"}},
			thumbs:   []string{"/a/src.png", "/b/src.png"},
		},
	)
	return rows
}

// prepareThumbs puts a row's left thumbnails (another file's, 20×20) and
// folders at thumbnails' names into the uid's tree.
func prepareThumbs(t *testing.T, b backend, uid string, row faultRow) {
	t.Helper()
	for _, k := range row.orphans {
		b.write(t, "c1/"+uid+"/"+k, testPNG(20, 20, image.White.C))
	}
	for _, k := range row.blocked {
		if b.bucket != "" {
			// On S3 a folder is a prefix: a key inside it makes it.
			b.write(t, "c1/"+uid+"/"+k+"/x", []byte("x"))
			continue
		}
		dir := filepath.Join(b.files, "c1", uid, filepath.FromSlash(k))
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, "x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
}

// checkServedThumbs checks, for each file path, that the thumbnail served
// with it (its own meta and its folder's listing agree) is the thumbnail
// of the file served: a thumbnail of the size its bytes give, or none.
func checkServedThumbs(t *testing.T, b backend, port int, uid string, paths []string) {
	t.Helper()
	for _, target := range paths {
		res := send(t, port, call{method: "GET", target: target, uid: uid, auth: "-"})
		if res.Status == 404 {
			continue // no file, no thumbnail
		}
		var one struct {
			Data dataJSON `json:"data"`
		}
		if res.Status != 200 || json.Unmarshal(res.Body, &one) != nil {
			t.Errorf("GET %s: %d %s", target, res.Status, res.Body)
			continue
		}
		dir := target[:strings.LastIndexByte(target, '/')+1]
		res = send(t, port, call{method: "GET", target: dir, uid: uid, auth: "-"})
		var list struct {
			Data dataJSON `json:"data"`
		}
		if res.Status != 200 || json.Unmarshal(res.Body, &list) != nil {
			t.Errorf("GET %s: %d %s", dir, res.Status, res.Body)
			continue
		}
		thumb := one.Data.Meta.Thumbnail
		for _, m := range list.Data.Items {
			if m.Path == target && m.Thumbnail != thumb {
				t.Errorf("%s: listed with thumbnail %q, its own meta has %q", target, m.Thumbnail, thumb)
			}
		}
		if thumb == "" {
			continue
		}
		fileCfg, _, err := image.DecodeConfig(bytes.NewReader(readStored(t, b, "c1/"+uid+target)))
		if err != nil {
			t.Errorf("%s: %v", target, err)
			continue
		}
		key, err := url.PathUnescape(strings.TrimPrefix(thumb, "http://localhost/files/"))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(readStored(t, b, key)))
		w, h := fitThumb(fileCfg.Width, fileCfg.Height)
		if err != nil || cfg.Width != w || cfg.Height != h {
			t.Errorf("%s (%dx%d) is served with the thumbnail %s of %dx%d (%v), another file's; want %dx%d or none",
				target, fileCfg.Width, fileCfg.Height, key, cfg.Width, cfg.Height, err, w, h)
		}
	}
}

// readStored reads key from the storage itself.
func readStored(t *testing.T, b backend, key string) []byte {
	t.Helper()
	if b.bucket != "" {
		return b.read(t, key)
	}
	data, err := os.ReadFile(filepath.Join(b.files, filepath.FromSlash(key)))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// fitThumb is the size of the thumbnail of a w×h image: fitting 200×200,
// never enlarged.
func fitThumb(w, h int) (int, int) {
	switch {
	case w <= 200 && h <= 200:
		return w, h
	case w >= h:
		return 200, max(1, h*200/w)
	}
	return max(1, w*200/h), 200
}

// checkNoLeftThumbs lists each folder of the uid's tree that holds a
// thumbnail whose file is gone (left by a delete or move whose removal
// of it failed, or put there by the row), then checks that none is left:
// a file nobody sees or can remove must not stay once its folder is
// listed.
func checkNoLeftThumbs(t *testing.T, b backend, port int, uid string) {
	t.Helper()
	root := "c1/" + uid + "/"
	left := leftThumbs(t, b, root)
	for _, k := range left {
		dir := "/" + strings.TrimPrefix(path.Dir(k)+"/", root)
		if dir == "/./" {
			dir = "/"
		}
		if res := send(t, port, call{method: "GET", target: dir, uid: uid, auth: "-"}); res.Status != 200 {
			t.Errorf("GET %s: %d %s", dir, res.Status, res.Body)
		}
	}
	if left := leftThumbs(t, b, root); len(left) > 0 {
		t.Errorf("thumbnails of no file stay after their folders were listed: %v", left)
	}
}

// leftThumbs are the thumbnails under root (files named .thumb.<name>.png)
// whose file <name> is not stored beside them.
func leftThumbs(t *testing.T, b backend, root string) []string {
	t.Helper()
	stored := map[string]bool{}
	keys := b.keys(t)
	for _, k := range keys {
		stored[k] = true
	}
	var left []string
	for _, k := range keys {
		dir, name := path.Split(k)
		file, isThumb := strings.CutPrefix(name, ".thumb.")
		file, isPNG := strings.CutSuffix(file, ".png")
		if strings.HasPrefix(k, root) && isThumb && isPNG && !stored[dir+file] {
			left = append(left, k)
		}
	}
	return left
}

// TestProviderDeleteCutOffRemovesThumbnail: a client that goes away
// while a delete is under way, once the file is gone, does not stop the
// removal of its thumbnail, which would stay behind, of no file. The
// look at the thumbnail is held back at the proxy until the client has
// gone.
func TestProviderDeleteCutOffRemovesThumbnail(t *testing.T) {
	src := newSources(t)
	b, proxy := s3Site(t)
	for _, c := range []call{{method: "POST", target: "/a/"}, direct("/a/d.png", string(src.png))} {
		c.auth = "-"
		if res := send(t, privatePort, c); res.Status != 200 {
			t.Fatalf("%s %s: %d %s", c.method, c.target, res.Status, res.Body)
		}
	}
	proxy.inject("HEAD", "/a/.thumb.d.png.png", faultHold, true)
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", livePort(privatePort)))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(conn, "DELETE /fsp/a/d.png HTTP/1.1\r\nHost: localhost\r\nX-BEE-ClientId: c1\r\nX-BEE-Uid: u1\r\n\r\n")
	select {
	case <-proxy.held:
	case <-time.After(10 * time.Second):
		t.Fatal("the delete never looked at the thumbnail")
	}
	conn.Close()
	time.Sleep(200 * time.Millisecond) // Caddy sees the connection end
	proxy.mu.Lock()
	close(proxy.release)
	proxy.mu.Unlock()
	var left []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		stored := map[string]bool{}
		for _, k := range b.keys(t) {
			stored[k] = true
		}
		left = nil
		for _, k := range []string{"c1/u1/a/d.png", "c1/u1/a/.thumb.d.png.png"} {
			if stored[k] {
				left = append(left, k)
			}
		}
		if len(left) == 0 {
			return
		}
	}
	t.Errorf("after a delete whose client went away, still stored: %v", left)
}
