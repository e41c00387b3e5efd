//go:build unix

package corpus

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockFile holds the lock for the life of the process (were it collected,
// its finaliser would close it and drop the lock).
var lockFile *os.File

// lockPackage serialises runs of this package on one machine: the admin
// and HTTP ports are fixed, so a second run would load its config into the
// first run's Caddy and lose it when the first run ends. The lock is
// released when the process exits.
func lockPackage() error {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "designbridge-caddytest-corpus.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	lockFile = f
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
}
