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

// A config loaded on ports the replaced one listened on (a JSON config
// loaded again, or a Caddyfile whose ports are not {$PORT_<NAME>} names)
// replaces servers that are still stopping when caddy.Load returns: Caddy
// starts their Shutdown in goroutines, and every server listens with
// SO_REUSEPORT, so until its listener closes the kernel may hand it a new
// connection, which it then closes unanswered (net/http drops a request it
// reads while shutting down; a connection still queued is reset). Load
// therefore waits for those listeners to close, seen in /proc.

// listeners returns this process's listening TCP sockets: port by socket
// inode. It is empty where /proc is missing, and then Load cannot wait.
func listeners() map[string]int {
	mine := map[string]bool{}
	fds, _ := filepath.Glob("/proc/self/fd/*")
	for _, fd := range fds {
		if link, err := os.Readlink(fd); err == nil {
			if inode, ok := strings.CutPrefix(link, "socket:["); ok {
				mine[strings.TrimSuffix(inode, "]")] = true
			}
		}
	}
	found := map[string]int{}
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
			if p, err := strconv.ParseUint(hexPort, 16, 16); err == nil {
				found[f[9]] = int(p)
			}
		}
	}
	return found
}

// replacedOn returns the listeners of before (taken before a load) on a
// port where after (taken after it) has a new one: the replaced servers'
// listeners on the ports the new config kept.
func replacedOn(before, after map[string]int) map[string]int {
	kept := map[int]bool{}
	for inode, p := range after {
		if _, old := before[inode]; !old {
			kept[p] = true
		}
	}
	replaced := map[string]int{}
	for inode, p := range before {
		if _, open := after[inode]; open && kept[p] {
			replaced[inode] = p
		}
	}
	return replaced
}

// awaitClosed waits until none of the listeners replaced is open.
func awaitClosed(replaced map[string]int) error {
	const limit = 10 * time.Second
	for start := time.Now(); len(replaced) > 0; time.Sleep(time.Millisecond) {
		open := listeners()
		var left []int
		for inode, p := range replaced {
			if _, ok := open[inode]; ok {
				left = append(left, p)
			} else {
				delete(replaced, inode)
			}
		}
		if len(left) > 0 && time.Since(start) > limit {
			slices.Sort(left)
			return fmt.Errorf("the replaced config still listens on ports %v %v after the load", left, limit)
		}
	}
	return nil
}
