package fsp

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestProviderFullDiskLosesNothing stores into a local folder on a 1 MiB
// tmpfs that is nearly full: a replace or keep upload that does not fit is
// 3100, and the file it would have replaced stays whole, with no temporary
// file left. It needs to mount a tmpfs (root); elsewhere it is skipped.
func TestProviderFullDiskLosesNothing(t *testing.T) {
	store := t.TempDir()
	if err := syscall.Mount("tmpfs", store, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("a full disk is simulated with a small tmpfs, which cannot be mounted here: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(store, syscall.MNT_DETACH) })
	src := newSources(t)
	anonymousSite(t, "local "+store, "max_size 2MiB")
	// Caddy lets go of the folder before it is unmounted.
	t.Cleanup(func() { load(t, fmt.Sprintf(":%d {\n\trespond ok\n}\n", privatePort)) })

	up := func(target, strategy string, data []byte) response {
		c := withStrategy(direct(target, string(data)), strategy)
		c.auth = "-"
		return send(t, privatePort, c)
	}
	if res := up("/keep.png", "ask", src.png2); res.Status != 200 {
		t.Fatalf("first upload: %d %s", res.Status, res.Body)
	}
	// Fill the disk but for about 100 KB.
	var st syscall.Statfs_t
	if err := syscall.Statfs(store, &st); err != nil {
		t.Fatal(err)
	}
	free := int64(st.Bavail) * int64(st.Bsize)
	if err := os.WriteFile(filepath.Join(store, "filler"), make([]byte, free-100<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	big := noisePNG(400 << 10)
	for _, strategy := range []string{"replace", "keep"} {
		res := up("/keep.png", strategy, big)
		if got := decodeFSP(res.Body).Code; res.Status != 503 || got != 3100 {
			t.Errorf("%s upload on a full disk: %d %s, want 3100", strategy, res.Status, res.Body)
		}
		kept, err := os.ReadFile(filepath.Join(store, "c1", "u1", "keep.png"))
		if err != nil || !bytes.Equal(kept, src.png2) {
			t.Errorf("after a %s upload on a full disk the file is %d bytes (%v), want the original %d", strategy, len(kept), err, len(src.png2))
		}
		entries, _ := os.ReadDir(filepath.Join(store, "c1", "u1"))
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".tmp-") || strings.HasPrefix(e.Name(), "keep_") {
				t.Errorf("after a %s upload on a full disk: %s left", strategy, e.Name())
			}
		}
	}
}
