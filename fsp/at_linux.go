//go:build linux

package fsp

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"
)

// On Linux the folder is walked one name at a time with openat and
// O_NOFOLLOW, from a descriptor of the folder opened once: no symbolic
// link is followed, in the middle of a key or at its end. os.Root would
// follow a link that stays inside the folder, and one user's tree may
// hold a link (put there by another program) into another user's tree
// or a shared folder. Every name is looked up relative to a descriptor
// already opened, so a link swapped in between a look and a use is
// refused too.

// atErr wraps errno err of op on name in folder dirfd (key in all),
// turning the refusal of a link (ELOOP with O_NOFOLLOW, ENOTDIR with
// O_DIRECTORY too) into errLink.
func atErr(op string, dirfd int, name, key string, err error) error {
	if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
		var st unix.Stat_t
		if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK {
			err = errLink
		}
	}
	return &os.PathError{Op: op, Path: key, Err: err}
}

// openat retries openat(2) after an interrupted call.
func openat(dirfd int, name string, flags int, mode uint32) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags|unix.O_CLOEXEC|unix.O_NOFOLLOW, mode)
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// openDirFd opens the folder at key ("" for the base) without following
// a link anywhere; the caller closes the descriptor.
func (s *localStorage) openDirFd(key string) (int, error) {
	fd, err := openat(int(s.base.Fd()), ".", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return -1, &os.PathError{Op: "openat", Path: ".", Err: err}
	}
	if key == "" {
		return fd, nil
	}
	for _, name := range strings.Split(key, "/") {
		if name == "" || name == "." || name == ".." {
			unix.Close(fd)
			return -1, &os.PathError{Op: "openat", Path: key, Err: fs.ErrInvalid}
		}
		next, err := openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			err = atErr("openat", fd, name, key, err)
		}
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// parentFd opens the folder holding key and returns it with key's last
// name.
func (s *localStorage) parentFd(key string) (int, string, error) {
	dir := path.Dir(key)
	if dir == "." {
		dir = ""
	}
	fd, err := s.openDirFd(dir)
	return fd, path.Base(key), err
}

// lstat describes the name at key itself: a link is described as a link.
func (s *localStorage) lstat(key string) (fs.FileInfo, error) {
	if key == "" {
		return s.base.Stat()
	}
	dirfd, name, err := s.parentFd(key)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dirfd)
	return statAt(dirfd, name, key)
}

// statAt describes name in folder dirfd, a link as a link.
func statAt(dirfd int, name, key string) (fs.FileInfo, error) {
	fd, err := openat(dirfd, name, unix.O_PATH, 0)
	if err != nil {
		return nil, &os.PathError{Op: "openat", Path: key, Err: err}
	}
	f := os.NewFile(uintptr(fd), key)
	defer f.Close()
	return f.Stat()
}

// open opens the file or folder at key for reading; a link is errLink.
func (s *localStorage) open(key string) (*os.File, error) {
	if key == "" {
		fd, err := s.openDirFd("")
		if err != nil {
			return nil, err
		}
		return os.NewFile(uintptr(fd), "."), nil
	}
	dirfd, name, err := s.parentFd(key)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dirfd)
	// O_NONBLOCK: a named pipe put where a file was opens at once (and
	// is then found not to be a file) instead of waiting for a writer.
	fd, err := openat(dirfd, name, unix.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, atErr("openat", dirfd, name, key, err)
	}
	return os.NewFile(uintptr(fd), key), nil
}

// entryInfo describes entry de of the folder dir, opened by open; a link
// as a link.
func (s *localStorage) entryInfo(dir *os.File, de fs.DirEntry) (fs.FileInfo, error) {
	return statAt(int(dir.Fd()), de.Name(), de.Name())
}

// mkdir makes the folder at key; its parent must exist.
func (s *localStorage) mkdir(key string) error {
	dirfd, name, err := s.parentFd(key)
	if err != nil {
		return err
	}
	defer unix.Close(dirfd)
	if err := unix.Mkdirat(dirfd, name, 0o755); err != nil {
		return &os.PathError{Op: "mkdirat", Path: key, Err: err}
	}
	return nil
}

// mkdirAll makes the folder at key and the missing ones above it. A
// link, or a file, where a folder should be is not one: the error wraps
// fs.ErrNotExist.
func (s *localStorage) mkdirAll(key string) error {
	if key != "" {
		segs := strings.Split(key, "/")
		for i := range segs {
			if err := s.mkdir(strings.Join(segs[:i+1], "/")); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
		}
	}
	fd, err := s.openDirFd(key)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}

// create makes a new file at key, which must not exist, for writing.
func (s *localStorage) create(key string) (*os.File, error) {
	dirfd, name, err := s.parentFd(key)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dirfd)
	fd, err := openat(dirfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o644)
	if err != nil {
		return nil, atErr("openat", dirfd, name, key, err)
	}
	return os.NewFile(uintptr(fd), key), nil
}

// twoParents opens the folders holding from and to.
func (s *localStorage) twoParents(from, to string) (fromDir int, fromName string, toDir int, toName string, err error) {
	if fromDir, fromName, err = s.parentFd(from); err != nil {
		return -1, "", -1, "", err
	}
	if toDir, toName, err = s.parentFd(to); err != nil {
		unix.Close(fromDir)
		return -1, "", -1, "", err
	}
	return fromDir, fromName, toDir, toName, nil
}

// link gives the file at from the second name to, which must be free; a
// link at from is linked as the link, never followed.
func (s *localStorage) link(from, to string) error {
	fd, fn, td, tn, err := s.twoParents(from, to)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	defer unix.Close(td)
	if err := unix.Linkat(fd, fn, td, tn, 0); err != nil {
		return &os.LinkError{Op: "linkat", Old: from, New: to, Err: err}
	}
	return nil
}

// rename renames from to to, replacing a file at to.
func (s *localStorage) rename(from, to string) error {
	fd, fn, td, tn, err := s.twoParents(from, to)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	defer unix.Close(td)
	if err := unix.Renameat(fd, fn, td, tn); err != nil {
		return &os.LinkError{Op: "renameat", Old: from, New: to, Err: err}
	}
	return nil
}

// renameNoReplace renames from to to in one step that fails when to
// exists (renameat2 with RENAME_NOREPLACE). done is false, and nothing
// was changed, where the file system does not offer it.
func (s *localStorage) renameNoReplace(from, to string) (done bool, err error) {
	fd, fn, td, tn, err := s.twoParents(from, to)
	if err != nil {
		return true, err
	}
	defer unix.Close(fd)
	defer unix.Close(td)
	err = unix.Renameat2(fd, fn, td, tn, unix.RENAME_NOREPLACE)
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return false, nil
	}
	if err != nil {
		return true, &os.LinkError{Op: "renameat2", Old: from, New: to, Err: err}
	}
	return true, nil
}

// removeKind removes the file (dir false) or the empty folder (dir true)
// at key in one step that never removes the other kind (unlinkat, with
// AT_REMOVEDIR for a folder): a name looked at before and replaced since
// by the other kind is left alone (ENOTDIR, EISDIR). A link is removed as
// a file, never followed. done is always true here.
func (s *localStorage) removeKind(key string, dir bool) (done bool, err error) {
	dirfd, name, err := s.parentFd(key)
	if err != nil {
		return true, err
	}
	defer unix.Close(dirfd)
	flags := 0
	if dir {
		flags = unix.AT_REMOVEDIR
	}
	for {
		err = unix.Unlinkat(dirfd, name, flags)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return true, &os.PathError{Op: "unlinkat", Path: key, Err: err}
	}
	return true, nil
}

// removeName removes the file at key (a temporary name).
func (s *localStorage) removeName(key string) error {
	_, err := s.removeKind(key, false)
	return err
}
