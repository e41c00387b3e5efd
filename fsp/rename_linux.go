//go:build linux

package fsp

import (
	"errors"
	"os"
	"path"

	"golang.org/x/sys/unix"
)

// renameNoReplace renames from to to inside root in one step that fails
// when to exists (renameat2 with RENAME_NOREPLACE, relative to the two
// folders opened through root, so nothing outside it is reached). done is
// false, and nothing was changed, where the file system does not offer it.
func renameNoReplace(root *os.Root, from, to string) (done bool, err error) {
	fromDir, err := root.Open(path.Dir(from))
	if err != nil {
		return true, err
	}
	defer fromDir.Close()
	toDir, err := root.Open(path.Dir(to))
	if err != nil {
		return true, err
	}
	defer toDir.Close()
	err = unix.Renameat2(int(fromDir.Fd()), path.Base(from), int(toDir.Fd()), path.Base(to), unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return false, nil
	}
	return true, err
}
