package fsp

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"go.uber.org/zap"
)

// probeCase sets h.foldCase to whether the local folder ignores letter
// case, and says so in the log when it does.
func (h *Handler) probeCase(s *localStorage, folder string) error {
	var err error
	if h.foldCase, err = s.caseInsensitive(); err != nil {
		return fmt.Errorf("fsp: local.folder: %v", err)
	}
	if h.foldCase {
		h.logger.Info("the local folder ignores letter case (a case-insensitive file system): upper-case letters "+
			"of the values that make user folders (root) are written as ~XX, so that users whose ids differ only "+
			"in case keep separate folders", zap.String("folder", folder))
	}
	return nil
}

// caseInsensitive reports whether the folder ignores letter case, as
// macOS's APFS and HFS+ and Windows' NTFS do by default, and ext4 or
// tmpfs folders with casefold: there "Bob" and "bob" name one file. It
// creates a probe file of a mixed-case name that is new, looks for it
// under the name with every letter's case swapped, and removes it.
//
// The storage folder itself is probed; the folders made inside it take
// its behaviour (ext4 and tmpfs pass casefold on to new folders). Its
// error tells why the folder could not be probed; none means the answer
// is sure.
func (s *localStorage) caseInsensitive() (bool, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return false, err
	}
	// A temporary file's prefix: file_server's "hide .tmp-*" hides it,
	// no request can name it, and one left behind (a crash) is known.
	name := tempPrefix + "Case-Probe-" + hex.EncodeToString(b[:]) + "-x"
	f, err := s.root.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false, fmt.Errorf("a test file cannot be created in the folder to learn whether it ignores letter case (%v); let the user Caddy runs as read and write it", err)
	}
	f.Close()
	_, statErr := s.root.Lstat(swapCase(name))
	if err := s.root.Remove(name); err != nil {
		return false, fmt.Errorf("the test file %s, made to learn whether the folder ignores letter case, cannot be removed (%v)", name, err)
	}
	switch {
	case statErr == nil:
		return true, nil
	case errors.Is(statErr, fs.ErrNotExist):
		return false, nil
	}
	return false, fmt.Errorf("cannot learn whether the folder ignores letter case: looking up a test file under another case failed (%v)", statErr)
}

// swapCase is s with each ASCII letter in the other case.
func swapCase(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		case c >= 'A' && c <= 'Z':
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}
