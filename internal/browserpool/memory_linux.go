//go:build linux

package browserpool

import (
	"errors"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// PageMemoryBounded says whether Config.MaxPageMemory bounds anything
// here (a *PageCrash that is OutOfMemory is then most likely a page past
// it).
const PageMemoryBounded = true

// limitPageMemory caps the data memory (RLIMIT_DATA) of the browser's
// zygotes and of every process they forked: the renderers, which lay out
// and paint the pages, fork from a zygote, so the ones started later
// inherit the cap. The browser process itself and its GPU process are
// left alone. A renderer past the cap fails to allocate and crashes,
// which ends its job, not the browser.
func limitPageMemory(browserPID int, max int64) error {
	lim := &unix.Rlimit{Cur: uint64(max), Max: uint64(max)}
	limit := func(pid int) error {
		if err := unix.Prlimit(pid, unix.RLIMIT_DATA, lim, nil); err != nil && !errors.Is(err, unix.ESRCH) {
			return err
		}
		return nil
	}
	// The zygotes first, so that what they fork from now on inherits the
	// cap; then, from a fresh look, what they forked before.
	children, err := processChildren()
	if err != nil {
		return err
	}
	var zygotes []int
	for _, pid := range children[browserPID] {
		// Chromium rewrites its processes' titles: the arguments are
		// separated by spaces or by NULs.
		cmd, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err == nil && strings.Contains(string(cmd), "--type=zygote") {
			if err := limit(pid); err != nil {
				return err
			}
			zygotes = append(zygotes, pid)
		}
	}
	if len(zygotes) == 0 {
		return errors.New("no zygote process found")
	}
	if children, err = processChildren(); err != nil {
		return err
	}
	for queue := zygotes; len(queue) > 0; queue = queue[1:] {
		for _, child := range children[queue[0]] {
			if err := limit(child); err != nil {
				return err
			}
			queue = append(queue, child)
		}
	}
	return nil
}

// processChildren maps each process to its children.
func processChildren() (map[int][]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if parent, ok := parentPID(pid); ok {
			children[parent] = append(children[parent], pid)
		}
	}
	return children, nil
}

// parentPID reads a process's parent from /proc/<pid>/stat.
func parentPID(pid int) (int, bool) {
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// pid (comm) state ppid …: comm may hold spaces and parentheses; it
	// ends at the last ")".
	fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
	if len(fields) < 2 {
		return 0, false
	}
	parent, err := strconv.Atoi(fields[1])
	return parent, err == nil
}
