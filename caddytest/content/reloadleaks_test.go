package content

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
)

// reloadConfig uses every module at once: content_service with its
// browser; design_bridge in front of it with answer_memory,
// forward_headers and its cache; and fsp on a local folder.
func reloadConfig(filesDir, store string) string {
	return globalOptions + `
:{$PORT_RLCS} {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		browser {
			tabs 2
			timeout 20s
			files_dir ` + filesDir + `
			files_ttl 1h
		}
	}
}

:{$PORT_RLBRIDGE} {
	handle /v1/* {
		design_bridge {
			content_service http://127.0.0.1:{$PORT_RLCS}
			token ` + apiToken + `
			answer_memory 64MiB
			forward_headers X-Request-Id
			cache 1MiB 10m
		}
	}
	handle_path /fsp/* {
		fsp {
			local ` + store + `
			public_url http://localhost/files
			allow_anonymous
		}
	}
}
`
}

// openFDs is the number of this process's open file descriptors.
func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd")
	}
	return len(entries)
}

// ourBrowserProcesses counts the processes below this test process (at
// any depth) and the processes, wherever they now hang, whose command
// line names one of the profiles seen: a Chromium helper that outlived
// its browser is reparented away from us.
func ourBrowserProcesses(profiles map[string]bool) (int, []string) {
	procs := processes()
	var found []string
	for pid, p := range procs {
		mine := procs.below(pid, os.Getpid())
		for dir := range profiles {
			if strings.Contains(p.cmdline, dir) {
				mine = true
			}
		}
		if mine {
			found = append(found, fmt.Sprintf("%d %.120s", pid, p.cmdline))
		}
	}
	return len(found), found
}

// process is a live process as /proc shows it.
type process struct {
	parent  int
	cmdline string // arguments separated by spaces
}

// processTable is every live (not zombie) process, by pid.
type processTable map[int]process

// processes reads the process table from /proc (empty off Linux).
func processes() processTable {
	procs := processTable{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range stats {
		stat, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(stat)
		// The command name in parentheses may hold spaces: the fields
		// that follow it are state, then parent.
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(fields) < 2 || fields[0] == "Z" {
			continue
		}
		pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
		parent, _ := strconv.Atoi(fields[1])
		cmd, _ := os.ReadFile(filepath.Join(filepath.Dir(p), "cmdline"))
		procs[pid] = process{parent, strings.ReplaceAll(string(cmd), "\x00", " ")}
	}
	return procs
}

// below reports whether pid descends from ancestor (at any depth).
func (t processTable) below(pid, ancestor int) bool {
	for q, depth := t[pid].parent, 0; q > 1 && depth < 64; q, depth = t[q].parent, depth+1 {
		if q == ancestor {
			return true
		}
	}
	return false
}

// TestReloadLeaksAllModules reloads a config that uses every module many
// times, using each after every reload (an export through the bridge, a
// PDF through the bridge, which starts the browser, and an fsp listing),
// then checks that goroutines, open file descriptors and browser
// processes are back to what they were, and that Cleanup of the last
// config leaves no browser process.
func TestReloadLeaksAllModules(t *testing.T) {
	filesDir, store := t.TempDir(), t.TempDir()
	cfg := reloadConfig(filesDir, store)
	tester := newTester(t)
	tester.InitServer(cfg, "caddyfile")
	profiles := map[string]bool{}
	use := func() {
		t.Helper()
		for dir := range browserProfiles(t) {
			profiles[dir] = true
		}
		bridge := testcaddy.URL("RLBRIDGE")
		r := post(t, tester, http.MethodPost, bridge+"/v1/message/pdf", map[string]string{"Content-Type": "application/json", "X-Request-Id": "r1"},
			[]byte(`{"html":"`+strings.ReplaceAll(shortHTML, `"`, `\"`)+`","page_size":"A4","page_orientation":"portrait"}`))
		if r.status != 200 {
			t.Fatalf("pdf through the bridge: %d %s", r.status, r.body)
		}
		r = post(t, tester, http.MethodPost, bridge+"/v1/message/image", map[string]string{"Content-Type": "application/json"},
			[]byte(`{"html":"`+strings.ReplaceAll(shortHTML, `"`, `\"`)+`","width":50,"file_type":"png"}`))
		if r.status != 200 {
			t.Fatalf("image through the bridge: %d %.300s", r.status, r.body)
		}
		r = post(t, tester, http.MethodGet, bridge+"/fsp/files?path=/", nil, nil)
		if r.status >= 500 {
			t.Fatalf("fsp: %d %s", r.status, r.body)
		}
		for dir := range browserProfiles(t) {
			profiles[dir] = true
		}
	}
	reload := func() {
		t.Helper()
		status, body, err := load(cfg, true)
		if err != nil || status != 200 {
			t.Fatalf("reload: %d %s %v", status, body, err)
		}
	}
	browsers := func() int { n, _ := ourBrowserProcesses(profiles); return n }
	settle := func(ok func() bool) {
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline) && !ok(); {
			time.Sleep(100 * time.Millisecond)
		}
	}
	use()
	reload()
	settle(func() bool { return browsers() == 0 })
	time.Sleep(500 * time.Millisecond)
	baseG, baseFD, baseB := runtime.NumGoroutine(), openFDs(t), browsers()
	const reloads = 8
	peak := 0
	for i := 0; i < reloads; i++ {
		use()
		peak = max(peak, browsers())
		reload()
	}
	const slack = 20
	settle(func() bool {
		return runtime.NumGoroutine() <= baseG+slack && openFDs(t) <= baseFD+5 && browsers() <= baseB
	})
	g, fd := runtime.NumGoroutine(), openFDs(t)
	n, procs := ourBrowserProcesses(profiles)
	t.Logf("after %d reloads: goroutines %d (baseline %d), fds %d (baseline %d), browser processes %d (baseline %d, peak while rendering %d), profiles seen %d",
		reloads, g, baseG, fd, baseFD, n, baseB, peak, len(profiles))
	if n > baseB {
		t.Errorf("%d browser processes outlived their config:\n%s", n, strings.Join(procs, "\n"))
	}
	if fd > baseFD+5 {
		out := []string{}
		entries, _ := os.ReadDir("/proc/self/fd")
		for _, e := range entries {
			l, _ := os.Readlink("/proc/self/fd/" + e.Name())
			out = append(out, l)
		}
		t.Errorf("open file descriptors grew from %d to %d: %v", baseFD, fd, out)
	}
	if g > baseG+slack {
		buf := make([]byte, 1<<20)
		k := runtime.Stack(buf, true)
		t.Errorf("goroutines grew from %d to %d\n%s", baseG, g, buf[:min(k, 20000)])
	}
	for dir := range profiles {
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("profile %s outlived its config", dir)
		}
	}
	tmps, _ := filepath.Glob(filepath.Join(filesDir, ".tmp-*"))
	if len(tmps) > 0 {
		t.Errorf("temporary PDF files left: %v", tmps)
	}
}
