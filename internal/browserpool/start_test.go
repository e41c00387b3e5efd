package browserpool

import (
	"context"
	"crypto/sha1"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// slowChromium writes a script that starts Chromium after sleeping delay,
// and returns its path and a file where each start appends a line: the
// browser's pid (the script execs Chromium) and its profile folder. The
// sleep holds none of the script's output, so that a start killed while
// it sleeps ends at once.
func slowChromium(t *testing.T, delay time.Duration) (script, starts string) {
	t.Helper()
	if err := Check(chromium); err != nil {
		t.Skip(err)
	}
	real, err := exec.LookPath(chromium)
	if err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	script, starts = filepath.Join(dir, "slow-chromium"), filepath.Join(dir, "starts")
	body := "#!/bin/sh\nprofile=\nfor a; do case \"$a\" in --user-data-dir=*) profile=${a#--user-data-dir=};; esac; done\n" +
		"echo $$ \"$profile\" >> " + starts + "\n" +
		"sleep " + strconv.FormatFloat(delay.Seconds(), 'f', -1, 64) + " </dev/null >/dev/null 2>&1\n" +
		"exec " + real + ` "$@"` + "\n"
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	return script, starts
}

// started is one start slowChromium's script recorded.
type started struct {
	pid     int
	profile string
}

// startsOf reads the starts slowChromium's script recorded.
func startsOf(t *testing.T, file string) []started {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var starts []started
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		pid, profile, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(pid)
		if err != nil {
			t.Fatal(err)
		}
		starts = append(starts, started{n, profile})
	}
	return starts
}

// TestWaitForStartEndsWithJob: a job waiting for the browser to start
// (here slowed by 4 s), whether it started it or another job did, gives
// up when its context ends, with ErrTimeout: at its deadline, or at once
// when its caller cancels. The start goes on for the jobs still waiting,
// which render in the one browser started. Jobs used to wait for the
// start whatever their context, past their deadline and after their
// client left.
func TestWaitForStartEndsWithJob(t *testing.T) {
	const startDelay = 4 * time.Second
	for _, tc := range []struct {
		name string
		// first starts the browser; second comes 300 ms later and waits for
		// the start. impatient is the one whose context ends, 1 s after it
		// came: by its deadline, or by its caller cancelling.
		impatientFirst bool
		cancel         bool
	}{
		{"deadline of the job starting the browser", true, false},
		{"deadline of a job waiting for the start", false, false},
		{"cancelled job starting the browser", true, true},
		{"cancelled job waiting for the start", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			script, starts := slowChromium(t, startDelay)
			p := newPoolWith(t, false, 20*time.Second, func(c *Config) { c.ExecPath = script; c.Tabs = 2 })
			type result struct {
				err     error
				elapsed time.Duration
			}
			impatient, patient := make(chan result, 1), make(chan result, 1)
			runImpatient := func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				if tc.cancel {
					ctx, cancel = context.WithCancel(context.Background())
					time.AfterFunc(time.Second, cancel)
				}
				defer cancel()
				began := time.Now()
				_, err := p.Image(ctx, `<p>impatient</p>`, ImageOptions{Width: 100, MaxHeight: 500})
				impatient <- result{err, time.Since(began)}
			}
			runPatient := func() {
				began := time.Now()
				_, err := p.Image(context.Background(), `<p>patient</p>`, ImageOptions{Width: 100, MaxHeight: 500})
				patient <- result{err, time.Since(began)}
			}
			first, second := runPatient, runImpatient
			if tc.impatientFirst {
				first, second = second, first
			}
			go first()
			time.Sleep(300 * time.Millisecond)
			go second()
			r := <-impatient
			if !errors.Is(r.err, ErrTimeout) {
				t.Errorf("the job whose context ended: %v, want ErrTimeout", r.err)
			}
			// Its context ended after 1 s, the start takes 4 s and more.
			if r.elapsed < 900*time.Millisecond || r.elapsed > 2500*time.Millisecond {
				t.Errorf("the job whose context ended after 1 s returned after %v, the start taking %v", r.elapsed, startDelay)
			}
			if r := <-patient; r.err != nil {
				t.Errorf("the job waiting for the start: %v", r.err)
			}
			if _, err := p.Image(context.Background(), `<p>after</p>`, ImageOptions{Width: 100, MaxHeight: 500}); err != nil {
				t.Errorf("after the start: %v", err)
			}
			if n := len(startsOf(t, starts)); n != 1 {
				t.Errorf("%d browsers started, want 1", n)
			}
		})
	}
}

// TestCloseWhileStartingNobodyWaits: when every job that waited for the
// browser to start has given up and the pool is closed, Close ends the
// start: no browser process is left, nor its profile.
func TestCloseWhileStartingNobodyWaits(t *testing.T) {
	script, starts := slowChromium(t, 3*time.Second)
	p := newPoolWith(t, false, 20*time.Second, func(c *Config) { c.ExecPath = script })
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	began := time.Now()
	if _, err := p.Image(ctx, `<p>hi</p>`, ImageOptions{Width: 100, MaxHeight: 500}); !errors.Is(err, ErrTimeout) {
		t.Fatalf("job: %v, want ErrTimeout", err)
	}
	if elapsed := time.Since(began); elapsed > 2500*time.Millisecond {
		t.Fatalf("the job with 1 s returned after %v", elapsed)
	}
	p.Close()
	s := startsOf(t, starts)
	if len(s) != 1 {
		t.Fatalf("%d browsers started, want 1", len(s))
	}
	// Wait out a start that Close did not end, then see whether its
	// browser runs.
	time.Sleep(4 * time.Second)
	if processAlive(s[0].pid) {
		_ = syscall.Kill(s[0].pid, syscall.SIGKILL)
		t.Errorf("browser %d still runs after Close", s[0].pid)
	}
	if _, err := os.Stat(s[0].profile); !os.IsNotExist(err) {
		t.Errorf("profile %s left behind", s[0].profile)
	}
}

// TestHungStartEnds: a browser that hangs once it has started (its
// DevTools endpoint takes the connection and answers nothing) is killed
// when it has not started within the pool's start time (here 2 s); its
// job fails then rather than at its own deadline, and the next job
// starts a browser again. A hung start used to last for as long as the
// pool: every job after it waited for it until its own deadline.
func TestHungStartEnds(t *testing.T) {
	devtools := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A WebSocket handshake, then silence.
		sum := sha1.Sum([]byte(r.Header.Get("Sec-WebSocket-Key") + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
		conn, rw, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
			base64.StdEncoding.EncodeToString(sum[:]) + "\r\n\r\n")
		_ = rw.Flush()
		_, _ = io.Copy(io.Discard, conn)
	}))
	defer devtools.Close()
	if err := Check(chromium); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	script, starts := filepath.Join(dir, "hung-chromium"), filepath.Join(dir, "starts")
	body := "#!/bin/sh\necho $$ - >> " + starts + "\necho 'DevTools listening on ws://" + devtools.Listener.Addr().String() + "/devtools/browser/hung' >&2\n" +
		"exec sleep 60 </dev/null >/dev/null 2>&1\n"
	if err := os.WriteFile(script, []byte(body), 0o700); err != nil {
		t.Fatal(err)
	}
	p := newPoolWith(t, false, 20*time.Second, func(c *Config) { c.ExecPath = script })
	p.startTimeout = 2 * time.Second
	for i := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		began := time.Now()
		_, err := p.Image(ctx, `<p>hi</p>`, ImageOptions{Width: 100, MaxHeight: 500})
		cancel()
		if err == nil || errors.Is(err, ErrTimeout) {
			t.Fatalf("job %d: %v, want the start's failure", i, err)
		}
		if elapsed := time.Since(began); elapsed > 6*time.Second {
			t.Errorf("job %d failed after %v, the start bounded to 2 s", i, elapsed)
		}
		s := startsOf(t, starts)
		if len(s) != i+1 {
			t.Fatalf("after job %d: %d starts, want %d", i, len(s), i+1)
		}
		if processAlive(s[i].pid) {
			t.Errorf("the hung browser %d still runs", s[i].pid)
		}
	}
}

// TestCloseWhileStartingJobWaits: a pool closed while a job waits for its
// browser to start (Close returns at once) lets the start finish and the
// job render; the job's end stops the browser and removes its profile,
// and a job after that is refused.
func TestCloseWhileStartingJobWaits(t *testing.T) {
	script, starts := slowChromium(t, 3*time.Second)
	p := newPoolWith(t, false, 20*time.Second, func(c *Config) { c.ExecPath = script })
	errc := make(chan error, 1)
	go func() {
		_, err := p.Image(context.Background(), `<p>hi</p>`, ImageOptions{Width: 100, MaxHeight: 500})
		errc <- err
	}()
	time.Sleep(500 * time.Millisecond)
	began := time.Now()
	p.Close()
	if elapsed := time.Since(began); elapsed > time.Second {
		t.Errorf("Close took %v with a job waiting, want at once", elapsed)
	}
	if err := <-errc; err != nil {
		t.Fatalf("the job waiting for the start: %v", err)
	}
	s := startsOf(t, starts)
	if len(s) != 1 {
		t.Fatalf("%d browsers started, want 1", len(s))
	}
	if processAlive(s[0].pid) {
		t.Errorf("browser %d still runs after the last job", s[0].pid)
	}
	if _, err := os.Stat(s[0].profile); !os.IsNotExist(err) {
		t.Errorf("profile %s left behind", s[0].profile)
	}
	if _, err := p.Image(context.Background(), `<p>late</p>`, ImageOptions{Width: 100, MaxHeight: 500}); !errors.Is(err, ErrClosed) {
		t.Errorf("a job after the last one: %v, want ErrClosed", err)
	}
}
