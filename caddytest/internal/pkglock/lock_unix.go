//go:build unix

// Package pkglock serialises runs of one caddytest package on a machine.
package pkglock

import (
	"os"
	"path/filepath"
	"syscall"
)

// held keeps the lock's file open for the life of the process: were it
// collected, its finaliser would close it and drop the lock.
var held []*os.File

// Acquire blocks until no other process on this machine holds the lock
// called name. Each caddytest package uses fixed admin and HTTP ports, so
// a second run of the same package (another checkout, another go test)
// would load its config into the first run's Caddy. The lock is released
// when the process exits.
func Acquire(name string) error {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "designbridge-caddytest-"+name+".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	held = append(held, f)
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
}
