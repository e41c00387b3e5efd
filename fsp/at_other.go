//go:build !linux

package fsp

import (
	"io/fs"
	"os"
)

// renameNoReplace is not offered here: Move links and removes instead.
func renameNoReplace(*os.Root, string, string) (bool, error) { return false, nil }

// removeKind is not offered here: the caller looks at the name first and
// removes it with os.Root.Remove.
func removeKind(*os.Root, string, bool) (bool, error) { return false, nil }

// fileID is not known here: a file's version is its time and size.
func fileID(fs.FileInfo) uint64 { return 0 }
