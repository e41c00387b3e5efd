package fsp

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestLocalMoveKeepsConcurrentReplace: a move that must not replace its
// destination, racing an upload that replaces its source, never loses the
// upload: its bytes end at the source or at the destination. Done as a
// link and then a remove of the source, the remove could delete the bytes
// the upload had just renamed there.
func TestLocalMoveKeepsConcurrentReplace(t *testing.T) {
	s, err := newLocalStorage(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	read := func(key string) string {
		f, err := s.root.Open(key)
		if err != nil {
			return ""
		}
		defer f.Close()
		b := make([]byte, 16)
		n, _ := f.Read(b)
		return string(b[:n])
	}
	lost := 0
	outcomes := map[string]int{} // "a's bytes/b's bytes": times
	for i := range 3000 {
		if _, err := s.Write(ctx, "a", []byte("old"), "", false); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Go(func() {
			<-start
			if err := s.Move(ctx, "a", "b", true); err != nil && !isNotExist(err) {
				t.Errorf("move %d: %v", i, err)
			}
		})
		// The last step of a replacing Write, the one that races: the
		// new bytes renamed onto the source.
		if _, err := s.Write(ctx, ".tmp-new", []byte("new"), "", false); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			<-start
			if err := s.root.Rename(".tmp-new", "a"); err != nil {
				t.Errorf("replace %d: %v", i, err)
			}
		})
		close(start)
		wg.Wait()
		ra, rb := read("a"), read("b")
		outcomes[ra+"/"+rb]++
		if ra != "new" && rb != "new" {
			lost++
		}
		_ = s.Remove(ctx, "a")
		_ = s.Remove(ctx, "b")
	}
	if lost > 0 {
		t.Errorf("the replacing upload was lost %d times in 3000 (outcomes %v)", lost, outcomes)
	}
}

// TestLocalRemoveKind: Rmdir removes only a folder and Remove only a file.
// The handler looks at a name before it deletes it; when another request
// puts a file where the folder was (or a folder where the file was) in
// between, the delete must fail (not found), not remove what is there now.
func TestLocalRemoveKind(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name   string
		remove func(s *localStorage, key string) error
		dir    bool // what is at the key
	}{
		{"rmdir of a file", func(s *localStorage, key string) error { return s.Rmdir(ctx, key) }, false},
		{"remove of a folder", func(s *localStorage, key string) error { return s.Remove(ctx, key) }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := t.TempDir()
			s, err := newLocalStorage(base)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			for _, key := range []string{"top", "sub/inner"} {
				p := filepath.Join(base, filepath.FromSlash(key))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if c.dir {
					err = os.Mkdir(p, 0o755)
				} else {
					err = os.WriteFile(p, []byte("x"), 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
				if err := c.remove(s, key); !isNotExist(err) {
					t.Errorf("%s: %v, want not found", key, err)
				}
				if _, err := os.Lstat(p); err != nil {
					t.Errorf("%s was removed: %v", key, err)
				}
			}
		})
	}
}

// TestLocalVersionSameTimeAndSize: files of the same size written one
// after the other at one key, with one modification time (a file system
// whose clock ticks every few milliseconds gives them that; the file
// system reuses the inode a replace frees), each have another version
// unless their bytes are the same; a thumbnail is kept only while its
// file has the version it was made for.
func TestLocalVersionSameTimeAndSize(t *testing.T) {
	dir := t.TempDir()
	s, err := newLocalStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	tick := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		contents []string
	}{
		{"replaced by other bytes", []string{"aaaa", "bbbb", "cccc", "dddd", "eeee", "ffff"}},
		{"replaced by the same bytes", []string{"aaaa", "aaaa"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seen := map[string]string{} // version → content
			for _, c := range tc.contents {
				if _, err := s.Write(ctx, "k", []byte(c), "", false); err != nil {
					t.Fatal(err)
				}
				if err := os.Chtimes(filepath.Join(dir, "k"), tick, tick); err != nil {
					t.Fatal(err)
				}
				v, err := s.Version(ctx, "k")
				if err != nil {
					t.Fatal(err)
				}
				if prev, ok := seen[v]; ok && prev != c {
					t.Fatalf("%q has the version of %q (%s)", c, prev, v)
				}
				seen[v] = c
			}
		})
	}
}

// TestLocalLinkSwappedInNeverFollowed: another program turns a folder of
// one user's tree into a symbolic link to another user's tree and back,
// again and again, while files are written into, listed in, read from and
// deleted from that folder. Nothing ever reaches the other tree: each
// name is looked up relative to a folder already opened, without
// following links, so a link swapped in between a check and a use is
// refused too (Linux).
func TestLocalLinkSwappedInNeverFollowed(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("links are never followed on Linux only")
	}
	base := t.TempDir()
	s, err := newLocalStorage(base)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, dir := range []string{"c/u1/d", "c/u2"} {
		if err := os.MkdirAll(filepath.Join(base, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(base, "c/u2/x"), []byte("other's"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		d, aside, link := filepath.Join(base, "c/u1/d"), filepath.Join(base, "c/u1/aside"), filepath.Join(base, "c/u1/link")
		_ = os.Symlink("../u2", link)
		for {
			select {
			case <-stop:
				return
			default:
			}
			// d is the folder, then the link, then the folder again.
			_ = os.Rename(d, aside)
			_ = os.Rename(link, d)
			_ = os.Rename(d, link)
			_ = os.Rename(aside, d)
		}
	}()
	deadline := time.Now().Add(time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		_, _ = s.Write(ctx, "c/u1/d/x", []byte("mine"), "", n%2 == 0)
		_, _ = s.List(ctx, "c/u1/d")
		if data, _, err := s.Read(ctx, "c/u1/d/x", 100); err == nil && string(data) != "mine" {
			t.Errorf("read %q through the link", data)
		}
		_ = s.Remove(ctx, "c/u1/d/x")
		_ = s.Mkdir(ctx, "c/u1/d/sub", false)
		_ = s.Rmdir(ctx, "c/u1/d/sub")
	}
	close(stop)
	wg.Wait()
	entries, err := os.ReadDir(filepath.Join(base, "c/u2"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "x" {
		t.Errorf("the other tree holds %v, want x alone", entries)
	}
	if data, err := os.ReadFile(filepath.Join(base, "c/u2/x")); err != nil || string(data) != "other's" {
		t.Errorf("the other tree's file holds %q (%v)", data, err)
	}
}

// TestLocalPipeIsNoFile: a named pipe that another program put where a
// file was is not a file: reading it or its version answers at once
// (not found) instead of waiting for a writer that never comes, which
// would hold the request (and an upload's slot) for ever.
func TestLocalPipeIsNoFile(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("opened without waiting on Linux")
	}
	base := t.TempDir()
	s, err := newLocalStorage(base)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := syscall.Mkfifo(filepath.Join(base, "p.png"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for name, op := range map[string]func() error{
		"Read":    func() error { _, _, err := s.Read(ctx, "p.png", 100); return err },
		"Version": func() error { _, err := s.Version(ctx, "p.png"); return err },
		"Exists":  func() error { return s.Exists(ctx, "p.png", false) },
	} {
		done := make(chan error, 1)
		go func() { done <- op() }()
		select {
		case err := <-done:
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s of a pipe: %v, want not found", name, err)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("%s of a pipe waits for a writer", name)
		}
	}
}
