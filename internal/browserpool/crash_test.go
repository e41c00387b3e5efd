package browserpool

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
)

// TestPageCrashKinds: a job whose page's renderer process ends fails
// with a *PageCrash (ErrPageCrashed) saying how Chromium reported the
// end, and only a crash by SIGTRAP (how Chromium ends a process that
// fails to allocate) counts as out of memory. The job is a page loaded
// as every job's is, then sent to one of Chromium's debug URLs (the test
// runs the job's action itself); Page.crash ends the renderer with a
// trap instruction, as the out-of-memory handler does.
func TestPageCrashKinds(t *testing.T) {
	p := newPool(t, false, 20*time.Second)
	for _, tc := range []struct {
		name        string
		act         func(context.Context) error
		status      string
		code        int64
		outOfMemory bool
	}{
		{"segmentation fault", navigate("chrome://crash"), "crashed", 11, false},
		{"killed", navigate("chrome://kill"), "killed", 15, false},
		{"trap", func(ctx context.Context) error { return page.Crash().Do(ctx) }, "crashed", 5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			began := time.Now()
			err := p.run(context.Background(), "<p>x</p>", 800, tc.act)
			var crash *PageCrash
			if !errors.As(err, &crash) || !errors.Is(err, ErrPageCrashed) {
				t.Fatalf("%v after %v, want a *PageCrash", err, time.Since(began))
			}
			if crash.Status != tc.status || crash.Code != tc.code || crash.OutOfMemory() != tc.outOfMemory {
				t.Errorf("%q, code %d, out of memory %v; want %q, %d, %v", crash.Status, crash.Code, crash.OutOfMemory(), tc.status, tc.code, tc.outOfMemory)
			}
			if elapsed := time.Since(began); elapsed > 10*time.Second {
				t.Errorf("failed after %v", elapsed)
			}
		})
	}
}

// TestPageCrashOutOfMemory: which reported ends count as out of memory,
// including those no test can cause here (Chromium reports "oom" only
// where the system tells it so).
func TestPageCrashOutOfMemory(t *testing.T) {
	for _, tc := range []struct {
		crash PageCrash
		want  bool
	}{
		{PageCrash{"crashed", 5}, true},
		{PageCrash{"oom", 9}, true},
		{PageCrash{"oom", 0}, true},
		{PageCrash{"crashed", 11}, false},
		{PageCrash{"killed", 9}, false},
		{PageCrash{"abnormal", 5}, false},
		{PageCrash{"", 0}, false},
	} {
		if got := tc.crash.OutOfMemory(); got != tc.want {
			t.Errorf("%+v: OutOfMemory %v, want %v", tc.crash, got, tc.want)
		}
	}
}

// navigate is a job's action that sends its page to url.
func navigate(url string) func(context.Context) error {
	return func(ctx context.Context) error {
		if _, _, _, _, err := page.Navigate(url).Do(ctx); err != nil {
			return err
		}
		// The crash ends the job (its context).
		<-ctx.Done()
		return ctx.Err()
	}
}

// TestNoCrashDumps: however many pages crash, no crash dump is written
// (a renderer's memory: the documents it rendered), neither into the
// service user's home, where Chromium keeps its crash database and
// nothing empties it, nor into the profile, where the dumps would pile up
// as long as the browser lives: Chromium's crash handler wrote one of
// 125–145 KB per crash, and a client whose designs crash their renderers
// (past the memory bound) could fill the disk. The crash handler does
// not even stay running, and each crash is still reported as it was, in
// the same browser, which goes on rendering; nothing of the browser's is
// left once the pool is closed.
func TestNoCrashDumps(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	p := newPool(t, false, 20*time.Second)
	if err := p.run(context.Background(), "<p>x</p>", 800, func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
	b := p.current
	profile := b.dataDir
	if pids := crashHandlers(profile); len(pids) > 0 {
		t.Errorf("a crash handler runs for the profile: %v", pids)
	}
	kinds := []struct {
		act    func(context.Context) error
		status string
		code   int64
	}{
		{func(ctx context.Context) error { return page.Crash().Do(ctx) }, "crashed", 5},
		{navigate("chrome://crash"), "crashed", 11},
	}
	for i := range 20 {
		k := kinds[i%len(kinds)]
		err := p.run(context.Background(), "<p>x</p>", 800, k.act)
		var crash *PageCrash
		if !errors.As(err, &crash) || crash.Status != k.status || crash.Code != k.code {
			t.Fatalf("crash %d: %v, want a *PageCrash (%s, code %d)", i, err, k.status, k.code)
		}
	}
	if err := p.run(context.Background(), "<p>after</p>", 800, func(context.Context) error { return nil }); err != nil || p.current != b {
		t.Fatalf("after the crashes: %v (same browser: %v)", err, p.current == b)
	}
	// A crash handler writes its dump as the renderer dies, and the
	// answer may come first.
	time.Sleep(2 * time.Second)
	for _, dir := range []string{home, profile} {
		_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".dmp") || strings.HasSuffix(path, ".meta") || strings.Contains(path, filepath.Join(home, ".config"))) {
				t.Errorf("left: %s", path)
			}
			return nil
		})
	}
	p.Close()
	if _, err := os.Stat(profile); !os.IsNotExist(err) {
		t.Errorf("the profile %s is left after Close: %v", profile, err)
	}
}

// crashHandlers lists Chromium's crash handler processes whose crash
// database is in profile (Linux: /proc).
func crashHandlers(profile string) []int {
	entries, _ := os.ReadDir("/proc")
	var found []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if strings.Contains(string(cmd), "crashpad_handler") && strings.Contains(string(cmd), "--database="+profile) {
			found = append(found, pid)
		}
	}
	return found
}
