package fsp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestProviderLocalCountsWhatItLists: a local folder's item-count, in its
// parent's listing and its own, counts what its listing shows. Symbolic
// links, named pipes and sockets that another program put there are not
// listed (they are neither a file nor a folder of the FSP), so they are
// not counted either. (S3 holds only objects.)
func TestProviderLocalCountsWhatItLists(t *testing.T) {
	b := localBackend(t)
	anonymousSite(t, b.storage)
	if res := send(t, privatePort, call{method: "POST", target: "/d/", auth: "-"}); res.Status != 200 {
		t.Fatalf("mkdir: %d %s", res.Status, res.Body)
	}
	dir := filepath.Join(b.files, "c1", "u1", "d")
	if err := os.WriteFile(filepath.Join(dir, "f.txt"), []byte("text"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, err := range []error{
		os.Symlink("f.txt", filepath.Join(dir, "link.txt")),
		os.Symlink("sub", filepath.Join(dir, "dirlink")),
		os.Symlink("/nowhere", filepath.Join(dir, "dangling")),
		syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	list := func(target string) dataJSON {
		res := send(t, privatePort, call{method: "GET", target: target, auth: "-"})
		var ok struct {
			Data dataJSON `json:"data"`
		}
		if res.Status != 200 || json.Unmarshal(res.Body, &ok) != nil {
			t.Fatalf("GET %s: %d %s", target, res.Status, res.Body)
		}
		return ok.Data
	}
	own := list("/d/")
	if got := names(own.Items); got != "sub,f.txt" {
		t.Errorf("/d/ lists %s, want sub,f.txt", got)
	}
	var inParent *int
	for _, m := range list("/").Items {
		if m.Name == "d" {
			inParent = m.ItemCount
		}
	}
	for what, n := range map[string]*int{"its own listing": own.Meta.ItemCount, "its parent's listing": inParent} {
		if n == nil {
			t.Errorf("item-count of /d/ in %s missing", what)
		} else if *n != len(own.Items) {
			t.Errorf("item-count of /d/ in %s: %d, want %d", what, *n, len(own.Items))
		}
	}
}
