package testcaddy

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A config loaded again on the same ports (a JSON config, see Load)
// replaces servers that are still stopping when caddy.Load returns: Caddy
// starts their Shutdown in goroutines, and each listens with SO_REUSEPORT,
// so until its listener closes the kernel may hand it a new connection,
// which it then closes unanswered (net/http drops a request it reads while
// shutting down; a connection still queued is reset). Load therefore waits
// for the replaced listeners to close, seen in /proc.

// listening returns the inodes of this process's listening TCP sockets on
// ports, with their port. It is empty where /proc is missing, and then
// Load cannot wait.
func listening(ports map[string]int) map[string]int {
	want := map[int]bool{}
	for _, p := range ports {
		want[p] = true
	}
	found := map[string]int{}
	if len(want) == 0 {
		return found
	}
	mine := map[string]bool{}
	fds, _ := filepath.Glob("/proc/self/fd/*")
	for _, fd := range fds {
		if link, err := os.Readlink(fd); err == nil {
			if inode, ok := strings.CutPrefix(link, "socket:["); ok {
				mine[strings.TrimSuffix(inode, "]")] = true
			}
		}
	}
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			// sl local_address rem_address st ... inode: st 0A is LISTEN.
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" || !mine[f[9]] {
				continue
			}
			_, hexPort, _ := strings.Cut(f[1], ":")
			if p, err := strconv.ParseUint(hexPort, 16, 16); err == nil && want[int(p)] {
				found[f[9]] = int(p)
			}
		}
	}
	return found
}

// awaitClosed waits until none of the listeners old (from listening) is
// open any more.
func awaitClosed(old map[string]int) error {
	const limit = 10 * time.Second
	for start := time.Now(); len(old) > 0; time.Sleep(time.Millisecond) {
		ports := map[string]int{}
		for _, p := range old {
			ports[strconv.Itoa(p)] = p
		}
		open := listening(ports)
		var left []int
		for inode, p := range old {
			if _, ok := open[inode]; ok {
				left = append(left, p)
			} else {
				delete(old, inode)
			}
		}
		if len(left) > 0 && time.Since(start) > limit {
			slices.Sort(left)
			return fmt.Errorf("the replaced config still listens on ports %v %v after the load", left, limit)
		}
	}
	return nil
}
