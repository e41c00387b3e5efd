//go:build !linux

package fsp

import "os"

// renameNoReplace is not offered here: Move links and removes instead.
func renameNoReplace(*os.Root, string, string) (bool, error) { return false, nil }

// removeKind is not offered here: the caller looks at the name first and
// removes it with os.Root.Remove.
func removeKind(*os.Root, string, bool) (bool, error) { return false, nil }
