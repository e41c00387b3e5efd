// Package proccpu reads the CPU time this process has used (test and
// benchmark use only): on a shared machine, CPU time per operation holds
// up where wall time measures waiting for a core.
package proccpu

import (
	"syscall"
	"time"
)

// Used is the user and system CPU time this process has used so far, all
// threads (the collector's included); 0 where the system does not say.
func Used() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
