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

// removeKind removes the file (dir false) or the empty folder (dir true)
// at key inside root in one step that never removes the other kind
// (unlinkat, with AT_REMOVEDIR for a folder, relative to the parent
// opened through root): a name looked at before and replaced since by
// the other kind is left alone (ENOTDIR, EISDIR). os.Root.Remove tries
// both kinds. done is always true here.
func removeKind(root *os.Root, key string, dir bool) (done bool, err error) {
	parent, err := root.Open(path.Dir(key))
	if err != nil {
		return true, err
	}
	defer parent.Close()
	flags := 0
	if dir {
		flags = unix.AT_REMOVEDIR
	}
	for {
		err = unix.Unlinkat(int(parent.Fd()), path.Base(key), flags)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return true, &os.PathError{Op: "unlinkat", Path: key, Err: err}
	}
	return true, nil
}
