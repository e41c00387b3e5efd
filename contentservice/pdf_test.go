package contentservice

import (
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// content is a fileStore write of data.
func content(data []byte) func(io.Writer) error {
	return func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	}
}

// TestFileStore: a stored PDF opens until it expires; expired files go
// when another is stored; names are unguessable and unique.
func TestFileStore(t *testing.T) {
	dir := t.TempDir()
	fs := newFileStore(dir, time.Hour, time.Minute)
	a, err := fs.put(content([]byte("%PDF-a")))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := fs.put(content([]byte("%PDF-b")))
	if a == b || !storedName.MatchString(a) {
		t.Fatalf("names %q %q", a, b)
	}
	f, _, err := fs.open(a)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	// a expired an hour ago (a file's time is when it expires): refused
	// and removed.
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(filepath.Join(dir, a), old, old); err != nil {
		t.Fatal(err)
	}
	if _, _, err := fs.open(a); err == nil {
		t.Error("an expired file opened")
	}
	if _, err := os.Stat(filepath.Join(dir, a)); !os.IsNotExist(err) {
		t.Error("the expired file is still there")
	}
	// b expires too; the next store sweeps it.
	if err := os.Chtimes(filepath.Join(dir, b), old, old); err != nil {
		t.Fatal(err)
	}
	if _, err := fs.put(content([]byte("%PDF-c"))); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, b)); !os.IsNotExist(err) {
		t.Error("the sweep left an expired file")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("%d files, want the fresh one only", len(entries))
	}
	// A temporary file a crash left behind goes once an hour old; one
	// being written now stays.
	for name, age := range map[string]time.Duration{".tmp-crashed": 2 * time.Hour, ".tmp-writing": 0} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("%PDF-"), 0o600); err != nil {
			t.Fatal(err)
		}
		then := time.Now().Add(-age)
		if err := os.Chtimes(filepath.Join(dir, name), then, then); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fs.put(content([]byte("%PDF-d"))); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".tmp-crashed")); !os.IsNotExist(err) {
		t.Error("the sweep left a crashed write's temporary file")
	}
	if _, err := os.Stat(filepath.Join(dir, ".tmp-writing")); err != nil {
		t.Errorf("the sweep removed a write in progress: %v", err)
	}
}

// TestFileStoreBounded: the store keeps at most maxFiles files and
// maxBytes bytes, the newest; the file just stored always stays. One PDF
// may be tens of MB, so 1000 of them filled tens of GB.
func TestFileStoreBounded(t *testing.T) {
	pdf := func(n int) []byte { return append([]byte("%PDF-"), make([]byte, n-5)...) }
	cases := []struct {
		name     string
		maxFiles int
		maxBytes int64
		sizes    []int // stored in this order, a second apart
		kept     int   // the newest kept
	}{
		{"bytes", 100, 250, []int{100, 100, 100, 100, 100}, 2},
		{"bytes, exact", 100, 300, []int{100, 100, 100, 100, 100}, 3},
		{"files", 3, 1 << 20, []int{100, 100, 100, 100, 100}, 3},
		{"an older small file goes with the rest", 100, 250, []int{10, 200, 100}, 1},
		{"the newest alone over the bound", 100, 250, []int{100, 100, 400}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			fs := newFileStore(dir, time.Hour, time.Minute)
			fs.maxFiles, fs.maxBytes = c.maxFiles, c.maxBytes
			var names []string
			for i, size := range c.sizes {
				name, err := fs.put(content(pdf(size)))
				if err != nil {
					t.Fatal(err)
				}
				names = append(names, name)
				// Each file expiring a second before the next.
				then := time.Now().Add(time.Hour + time.Duration(i-len(c.sizes))*time.Second)
				if err := os.Chtimes(filepath.Join(dir, name), then, then); err != nil {
					t.Fatal(err)
				}
			}
			for i, name := range names {
				_, err := os.Stat(filepath.Join(dir, name))
				if want := i >= len(names)-c.kept; (err == nil) != want {
					t.Errorf("file %d of %d (%d bytes): kept %v, want %v", i+1, len(names), c.sizes[i], err == nil, want)
				}
			}
		})
	}
}

// TestFileStoreFailedWrite: a write that fails (a render that failed
// while its PDF streamed in) leaves no file, temporary or stored.
func TestFileStoreFailedWrite(t *testing.T) {
	dir := t.TempDir()
	fs := newFileStore(dir, time.Hour, time.Minute)
	failed := errors.New("render failed")
	name, err := fs.put(func(w io.Writer) error {
		_, _ = w.Write([]byte("%PDF-half"))
		return failed
	})
	if !errors.Is(err, failed) || name != "" {
		t.Fatalf("put: %q, %v; want the write's error", name, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("%d files left", len(entries))
	}
}

// TestFileStoreKeepsLongRenders: a PDF is written to its temporary file as
// it renders, and with a long browser timeout a render may wait for a tab
// and render for hours: another PDF's sweep leaves that file alone until
// no render could still be writing it.
func TestFileStoreKeepsLongRenders(t *testing.T) {
	dir := t.TempDir()
	fs := newFileStore(dir, time.Hour, 2*time.Hour)
	for name, age := range map[string]time.Duration{".tmp-long-render": 3 * time.Hour, ".tmp-crashed": 7 * time.Hour} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		then := time.Now().Add(-age)
		if err := os.Chtimes(filepath.Join(dir, name), then, then); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := fs.put(content([]byte("%PDF-a"))); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".tmp-long-render")); err != nil {
		t.Errorf("the sweep removed the file of a render still within its timeouts: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, ".tmp-crashed")); !os.IsNotExist(err) {
		t.Error("the sweep left a temporary file older than any render")
	}
}

func TestIsFileLink(t *testing.T) {
	const name = "0123456789abcdef0123456789abcdef.pdf"
	for _, tt := range []struct {
		path string
		want bool
	}{
		{"/v1/files/" + name, true},
		{"/pdf/v1/files/" + name, true},
		{"/v1/files/", false},
		{"/v1/files/notes.txt", false},
		{"/admin/v1/files/x", false},
		{"/v1/files/" + name + "/x", false},
		{"/v1/files/" + name + ".x", false},
		{"/v1/files/0123456789ABCDEF0123456789ABCDEF.pdf", false},
		{"/v1/message/html", false},
	} {
		if got := IsFileLink(tt.path); got != tt.want {
			t.Errorf("IsFileLink(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestIsFileAnswer(t *testing.T) {
	const name = "0123456789abcdef0123456789abcdef.pdf"
	for _, tt := range []struct {
		path, disposition string
		want              bool
	}{
		{"/v1/files/" + name, `attachment; filename="` + name + `"`, true},
		{"/pdf/v1/files/" + name, `attachment; filename="` + name + `"`, true},
		{"/v1/files/" + name, "", false},
		{"/v1/files/" + name, `attachment; filename="x.pdf"`, false},
		{"/v1/files/x.pdf", `attachment; filename="x.pdf"`, false},
	} {
		h := http.Header{}
		if tt.disposition != "" {
			h.Set("Content-Disposition", tt.disposition)
		}
		if got := IsFileAnswer(tt.path, h); got != tt.want {
			t.Errorf("IsFileAnswer(%q, %q) = %v, want %v", tt.path, tt.disposition, got, tt.want)
		}
	}
}

// TestFileStoreSharedKeepsWaitingRenders: a render may wait for a tab and
// print for a browser timeout each before its first byte; a store with a
// shorter timeout sharing the folder must not take that render's file for
// an abandoned one meanwhile.
func TestFileStoreSharedKeepsWaitingRenders(t *testing.T) {
	dir := t.TempDir()
	long := newFileStore(dir, time.Hour, 2*time.Hour)
	short := newFileStore(dir, time.Hour, time.Minute)
	short.abandoned = 50 * time.Millisecond
	name, err := long.put(func(w io.Writer) error {
		// Waiting for a tab, then printing; the other store stores a
		// PDF meanwhile.
		time.Sleep(100 * time.Millisecond)
		if _, err := short.put(content([]byte("%PDF-other"))); err != nil {
			return err
		}
		_, err := w.Write([]byte("%PDF-long"))
		return err
	})
	if err != nil {
		t.Fatalf("the waiting render's PDF was not stored: %v", err)
	}
	if f, _, err := long.open(name); err != nil {
		t.Errorf("open: %v", err)
	} else {
		f.Close()
	}
}
