package fsp

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"syscall"
)

// localStorage keeps files in a folder. Every access goes through an
// os.Root or, on Linux, a descriptor of the folder walked without
// following links (at_linux.go), so no key, symlink or ".." can reach
// outside the folder; on Linux no symlink is followed at all.
type localStorage struct {
	root *os.Root
	base *os.File // the folder itself
}

func newLocalStorage(dir string) (*localStorage, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	base, err := root.Open(".")
	if err != nil {
		root.Close()
		return nil, err
	}
	return &localStorage{root: root, base: base}, nil
}

func (s *localStorage) Close() error {
	err := s.base.Close()
	if rootErr := s.root.Close(); err == nil {
		err = rootErr
	}
	return err
}

// kind is nil when info is of the kind asked for, a folder (dir) or a
// regular file, and fs.ErrNotExist otherwise: links (errLink), pipes and
// sockets are neither.
func kind(info fs.FileInfo, dir bool) error {
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		return errLink
	case dir && !info.IsDir(), !dir && !info.Mode().IsRegular():
		return fs.ErrNotExist
	}
	return nil
}

func (s *localStorage) Stat(_ context.Context, key string, dir bool) (Entry, error) {
	info, err := s.lstat(key)
	if err != nil {
		return Entry{}, mapLocalErr(err)
	}
	if err := kind(info, dir); err != nil {
		return Entry{}, err
	}
	e := Entry{Name: path.Base(key), Dir: dir, Size: info.Size(), ModTime: info.ModTime()}
	if dir {
		e.Size = 0
		e.ItemCount = s.count(key)
	}
	return e, nil
}

func (s *localStorage) Exists(_ context.Context, key string, dir bool) error {
	info, err := s.lstat(key)
	if err != nil {
		return mapLocalErr(err)
	}
	if err := kind(info, dir); err != nil {
		return err
	}
	return nil
}

// Names knows nothing beforehand: a local Exists costs a system call.
func (s *localStorage) Names(_ context.Context, keys []string) ([]nameState, error) {
	return make([]nameState, len(keys)), nil
}

// count is the number of listed children of dir; 0 (unknown) if it
// cannot be read or there are more than maxDirCount. As List, it counts
// only files and folders, not symbolic links or special files; their
// type comes with the names (an lstat only where the file system does
// not say).
func (s *localStorage) count(dir string) int {
	f, err := s.open(dir)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	for {
		entries, err := f.ReadDir(256)
		for _, de := range entries {
			if t := de.Type(); (t.IsDir() || t.IsRegular()) && listable(de.Name()) {
				n++
			}
		}
		if n > maxDirCount {
			return 0
		}
		if err != nil {
			return n
		}
	}
}

func (s *localStorage) List(_ context.Context, dir string) ([]Entry, error) {
	f, err := s.open(dir)
	if err != nil {
		return nil, mapLocalErr(err)
	}
	defer f.Close()
	// Read in batches, so that a folder past maxListEntries is found
	// without reading it whole.
	var dirents []fs.DirEntry
	for {
		batch, err := f.ReadDir(1024)
		if dirents = append(dirents, batch...); len(dirents) > maxListEntries {
			return nil, errTooManyEntries
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, mapLocalErr(err)
		}
	}
	entries := make([]Entry, 0, len(dirents))
	for _, de := range dirents {
		info, err := s.entryInfo(f, de)
		if err != nil {
			continue // removed meanwhile
		}
		e := Entry{Name: de.Name(), Dir: info.IsDir(), ModTime: info.ModTime()}
		if e.Dir && listable(e.Name) {
			e.ItemCount = s.count(joinKey(dir, de.Name()))
		} else if info.Mode().IsRegular() {
			e.Size = info.Size()
		} else {
			continue // neither file nor folder: not the FSP's
		}
		entries = append(entries, e)
	}
	return entries, nil
}

func (s *localStorage) Mkdir(_ context.Context, dir string, parents bool) error {
	if parents {
		return mapLocalErr(s.mkdirAll(dir))
	}
	return mapLocalErr(s.mkdir(dir))
}

func (s *localStorage) Rmdir(_ context.Context, dir string) error {
	err := s.remove(dir, true)
	if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
		return errNotEmpty
	}
	return mapLocalErr(err)
}

// remove removes the file (dir false) or the empty folder (dir true) at
// key, and nothing of the other kind: the handler looked at the name
// before, and another request may have put a file where the folder was,
// or the reverse. A name of the other kind is fs.ErrNotExist.
func (s *localStorage) remove(key string, dir bool) error {
	done, err := s.removeKind(key, dir)
	if !done {
		// Without unlinkat: look, then remove (a narrow window stays).
		var info fs.FileInfo
		if info, err = s.root.Lstat(key); err == nil {
			if info.IsDir() != dir {
				return fs.ErrNotExist
			}
			err = s.root.Remove(key)
		}
	}
	if !dir && errors.Is(err, syscall.EISDIR) {
		return fmt.Errorf("%w: %v", fs.ErrNotExist, err)
	}
	return err
}

// Write writes a temporary file beside key and then links (exclusive) or
// renames (replace) it into place, so key appears whole or not at all.
func (s *localStorage) Write(_ context.Context, key string, data []byte, _ string, exclusive bool) (version string, err error) {
	tmp, err := s.tempName(key)
	if err != nil {
		return "", err
	}
	f, err := s.create(tmp)
	if err != nil {
		return "", mapLocalErr(err)
	}
	defer func() {
		// The temporary name never stays: after a link it is a second
		// name of the file, after a failure the only one.
		if rmErr := s.removeName(tmp); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) && err == nil {
			err = rmErr
		}
	}()
	version, err = writeSynced(f, data)
	if err != nil {
		return "", err
	}
	if exclusive {
		// link(2) fails when key exists: the O_EXCL of renames.
		return version, mapLocalErr(s.link(tmp, key))
	}
	return version, mapLocalErr(s.rename(tmp, key))
}

// writeSynced writes data to the new file f, syncs and closes it, and
// returns its version.
func writeSynced(f *os.File, data []byte) (string, error) {
	_, err := f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// Version is the SHA-256 of the file's bytes, as S3's ETag is their MD5.
// Its inode, time and size would not do: a replace frees the inode for
// the next file, and files written within one tick of a coarse file
// system clock (or given one time by a copy) have the same time.
func (s *localStorage) Version(_ context.Context, key string) (string, error) {
	f, err := s.open(key)
	if err != nil {
		return "", mapLocalErr(err)
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil {
		return "", err
	} else if !info.Mode().IsRegular() {
		return "", fs.ErrNotExist
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func (s *localStorage) Read(_ context.Context, key string, max int64) ([]byte, string, error) {
	f, err := s.open(key)
	if err != nil {
		return nil, "", mapLocalErr(err)
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil {
		return nil, "", err
	} else if !info.Mode().IsRegular() {
		return nil, "", fs.ErrNotExist
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, "", err
	}
	if int64(len(data)) > max {
		return nil, "", errTooLarge
	}
	sum := sha256.Sum256(data)
	return data, hex.EncodeToString(sum[:]), nil
}

// WriteFirstFree writes one temporary file and links it under each key in
// turn until a link succeeds: the bytes are written and synced once.
func (s *localStorage) WriteFirstFree(_ context.Context, keys []string, data []byte, _ string, prepare func(int) error) (chosen int, version string, err error) {
	if len(keys) == 0 {
		return 0, "", fs.ErrExist
	}
	tmp, err := s.tempName(keys[0])
	if err != nil {
		return 0, "", err
	}
	f, err := s.create(tmp)
	if err != nil {
		return 0, "", mapLocalErr(err)
	}
	defer func() {
		if rmErr := s.removeName(tmp); rmErr != nil && !errors.Is(rmErr, fs.ErrNotExist) && err == nil {
			err = rmErr
		}
	}()
	if version, err = writeSynced(f, data); err != nil {
		return 0, "", err
	}
	for i, key := range keys {
		if _, err := s.lstat(key); err == nil {
			continue // taken: left alone, prepare included
		}
		if err := prepare(i); err != nil {
			return 0, "", err
		}
		err := mapLocalErr(s.link(tmp, key))
		if err == nil {
			return i, version, nil
		}
		if !isExist(err) {
			return 0, "", err
		}
	}
	return 0, "", fs.ErrExist
}

func (s *localStorage) tempName(key string) (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return joinKey(path.Dir(key), fmt.Sprintf(".tmp-%s", hex.EncodeToString(b[:]))), nil
}

func (s *localStorage) Remove(_ context.Context, key string) error {
	return mapLocalErr(s.remove(key, false))
}

func (s *localStorage) Move(_ context.Context, from, to string, exclusive bool) error {
	info, err := s.lstat(from)
	if err != nil {
		return mapLocalErr(err)
	}
	if !info.Mode().IsRegular() {
		return fs.ErrNotExist
	}
	if !exclusive {
		// rename(2) replaces to atomically: never both, never neither.
		return mapLocalErr(s.rename(from, to))
	}
	// One step, or an upload replacing from between a link and a remove
	// would be deleted by the remove.
	if done, err := s.renameNoReplace(from, to); done {
		return mapLocalErr(err)
	}
	// Without renameat2: link, then remove from unless it was replaced
	// in between (a narrow window stays between the check and the remove).
	if err := s.link(from, to); err != nil {
		return mapLocalErr(err)
	}
	now, err := s.lstat(from)
	if err != nil || !os.SameFile(info, now) {
		return nil // moved; from is another file now, or gone
	}
	return mapLocalErr(s.removeName(from))
}

// errLink is a symbolic link where a key names a file or folder (on
// Linux, where none is followed): not one of the FSP's, so not there. Where
// a user's root or a shared folder should be, it is a storage failure.
var errLink = fmt.Errorf("%w: a symbolic link", fs.ErrNotExist)

// mapLocalErr turns "not a directory" into not-exist (a file where a
// folder was expected), "is a directory" into exist, and keeps the fs sentinels recognisable.
func mapLocalErr(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("%w: %v", fs.ErrNotExist, err)
	}
	if errors.Is(err, syscall.EISDIR) {
		// A file renamed onto a folder's name: the name is taken.
		return fmt.Errorf("%w: %v", fs.ErrExist, err)
	}
	return err
}
