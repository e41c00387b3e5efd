package fsp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
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

// TestLocalListBounded: a folder of more than maxListEntries names is
// refused (errTooManyEntries) rather than read whole into one answer, as
// an S3 listing stops there; one of exactly that many is listed.
func TestLocalListBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("makes 100,001 files")
	}
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "big"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range maxListEntries {
		f, err := os.Create(filepath.Join(dir, "big", fmt.Sprintf("f%d.txt", i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	s, err := newLocalStorage(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	entries, err := s.List(context.Background(), "big")
	if err != nil || len(entries) != maxListEntries {
		t.Fatalf("a folder of %d names: %d entries, %v", maxListEntries, len(entries), err)
	}
	if err := os.WriteFile(filepath.Join(dir, "big", "one-more.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.List(context.Background(), "big"); !errors.Is(err, errTooManyEntries) {
		t.Fatalf("a folder of %d names: %v, want errTooManyEntries", maxListEntries+1, err)
	}
}
