package fsp

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestLocalLinkSwappedInNeverFollowed: another program turns a folder of
// one user's tree into a symbolic link to another user's tree and back,
// again and again, while files are written into, listed in, read from and
// deleted from that folder. Nothing ever reaches the other tree: each
// name is looked up relative to a folder already opened, without
// following links, so a link swapped in between a check and a use is
// refused too (Linux).
func TestLocalLinkSwappedInNeverFollowed(t *testing.T) {
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
