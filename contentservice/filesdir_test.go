package contentservice

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
)

// TestFilesDirListableWarns: the names in files_dir are the PDF links'
// permission, so a folder other users may list is warned about at load.
func TestFilesDirListableWarns(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode os.FileMode
		warn bool
	}{
		{"private", 0o700, false},
		{"others may list", 0o755, true},
		{"the group may list", 0o750, true},
		{"others may open known names only", 0o711, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "files")
			if err := os.Mkdir(dir, tc.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(dir, tc.mode); err != nil { // past the umask
				t.Fatal(err)
			}
			s, logs := newTestService(t, func(h *Handler) {
				h.Browser = &BrowserConfig{FilesDir: dir}
			})
			defer s.browser.Close()
			warned := logs.FilterLevelExact(zap.WarnLevel).FilterMessageSnippet("files_dir").Len() > 0
			if warned != tc.warn {
				t.Errorf("mode %v: warned %v, want %v", tc.mode, warned, tc.warn)
			}
			for _, e := range logs.All() {
				if strings.Contains(e.Message, dir) {
					t.Errorf("the warning names the folder in its message: %q", e.Message)
				}
			}
		})
	}
}

// TestFileConditionalRequests: a stored PDF never changes under its name,
// so a download can be resumed (Range with If-Range) and revalidated
// (If-None-Match) by the validator its answer carries.
func TestFileConditionalRequests(t *testing.T) {
	s, _ := newTestService(t, func(h *Handler) {
		h.Browser = &BrowserConfig{FilesDir: t.TempDir()}
	})
	defer s.browser.Close()
	name, err := s.files.put(content([]byte("%PDF-0123456789")))
	if err != nil {
		t.Fatal(err)
	}
	first := do(t, s, request{method: http.MethodGet, path: PathFiles + name})
	etag := first.Header().Get("ETag")
	if first.Code != 200 || etag == "" || strings.Contains(etag, strings.TrimSuffix(name, ".pdf")) {
		t.Fatalf("GET: %d, ETag %q; want 200 with an ETag that does not hold the name", first.Code, etag)
	}
	for _, tc := range []struct {
		name    string
		headers map[string]string
		status  int
		body    string
	}{
		{"resumed", map[string]string{"Range": "bytes=5-", "If-Range": etag}, 206, "0123456789"},
		{"resumed with another validator", map[string]string{"Range": "bytes=5-", "If-Range": `"other"`}, 200, "%PDF-0123456789"},
		{"revalidated", map[string]string{"If-None-Match": etag}, 304, ""},
	} {
		w := do(t, s, request{method: http.MethodGet, path: PathFiles + name, headers: tc.headers})
		if w.Code != tc.status || w.Body.String() != tc.body {
			t.Errorf("%s: %d %q, want %d %q", tc.name, w.Code, w.Body, tc.status, tc.body)
		}
	}
}

// TestFileRefusalsAreErrorObjects: a file request refused for its
// headers (a Range outside the file, a failed If-Match) is answered, as
// every error of the service, with the error object.
func TestFileRefusalsAreErrorObjects(t *testing.T) {
	s, _ := newTestService(t, func(h *Handler) {
		h.Browser = &BrowserConfig{FilesDir: t.TempDir()}
	})
	defer s.browser.Close()
	name, err := s.files.put(content([]byte("%PDF-0123456789")))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		headers map[string]string
		status  int
	}{
		{"range past the end", map[string]string{"Range": "bytes=999-"}, 416},
		{"malformed range", map[string]string{"Range": "bytes=x"}, 416},
		{"failed If-Match", map[string]string{"If-Match": `"other"`}, 412},
	} {
		w := do(t, s, request{method: http.MethodGet, path: PathFiles + name, headers: tc.headers})
		var body struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		}
		if w.Code != tc.status || w.Header().Get("Content-Type") != "application/json" ||
			json.Unmarshal(w.Body.Bytes(), &body) != nil || body.Code != tc.status || body.Message == "" {
			t.Errorf("%s: %d %s %q, want %d with the error object", tc.name, w.Code, w.Header().Get("Content-Type"), w.Body, tc.status)
		}
	}
}

// TestLoadSweepsExpiredFiles: expired PDFs are removed when a
// configuration loads too (a reload, a restart), not only when the next
// PDF is stored, which may never come.
func TestLoadSweepsExpiredFiles(t *testing.T) {
	dir := t.TempDir()
	files := map[string]time.Duration{ // name: expires in
		"00000000000000000000000000000001.pdf": -time.Minute,
		"00000000000000000000000000000002.pdf": time.Hour,
	}
	for name, in := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("%PDF-"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, time.Time{}, time.Now().Add(in)); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := newTestService(t, func(h *Handler) {
		h.Browser = &BrowserConfig{FilesDir: dir}
	})
	defer s.browser.Close()
	for name, in := range files {
		_, err := os.Stat(filepath.Join(dir, name))
		if kept := err == nil; kept != (in > 0) {
			t.Errorf("%s, expiring in %v: kept %v", name, in, kept)
		}
	}
}
