//go:build !linux

package fsp

import "os"

// renameNoReplace is not offered here: Move links and removes instead.
func renameNoReplace(*os.Root, string, string) (bool, error) { return false, nil }
