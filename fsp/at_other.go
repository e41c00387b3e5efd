//go:build !linux

package fsp

import (
	"io/fs"
	"os"
)

// Off Linux every access goes through the os.Root: nothing reaches
// outside the folder, but a symbolic link that stays inside it is
// followed.

// localName is the os.Root form of key: "." for the base.
func localName(key string) string {
	if key == "" {
		return "."
	}
	return key
}

func (s *localStorage) lstat(key string) (fs.FileInfo, error) { return s.root.Lstat(localName(key)) }

func (s *localStorage) open(key string) (*os.File, error) { return s.root.Open(localName(key)) }

func (s *localStorage) entryInfo(_ *os.File, de fs.DirEntry) (fs.FileInfo, error) { return de.Info() }

func (s *localStorage) mkdir(key string) error { return s.root.Mkdir(key, 0o755) }

func (s *localStorage) mkdirAll(key string) error { return s.root.MkdirAll(localName(key), 0o755) }

func (s *localStorage) create(key string) (*os.File, error) {
	return s.root.OpenFile(key, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
}

func (s *localStorage) link(from, to string) error   { return s.root.Link(from, to) }
func (s *localStorage) rename(from, to string) error { return s.root.Rename(from, to) }
func (s *localStorage) removeName(key string) error  { return s.root.Remove(key) }

// renameNoReplace is not offered here: Move links and removes instead.
func (s *localStorage) renameNoReplace(string, string) (bool, error) { return false, nil }

// removeKind is not offered here: the caller looks at the name first and
// removes it with os.Root.Remove.
func (s *localStorage) removeKind(string, bool) (bool, error) { return false, nil }
