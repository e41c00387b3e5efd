package contentservice

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
