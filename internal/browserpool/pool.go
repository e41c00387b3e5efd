// Package browserpool renders HTML to PDF and images with headless
// Chromium through chromedp: one browser process, a bounded number of
// tabs, a timeout per job, JavaScript off, and no network but the images
// the HTML shows, which the pool fetches itself with an HTTP client the
// caller gives (one that refuses private addresses). A browser that
// crashes or hangs is replaced; Close stops it, once the jobs that had
// started have ended, and waits for everything the pool started.
package browserpool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"go.uber.org/zap"
)

// Config configures a Pool.
type Config struct {
	ExecPath   string        // the Chromium binary
	Tabs       int           // jobs rendering at once (others wait)
	JobTimeout time.Duration // one render; waiting for a tab, the same again
	Fetch      Fetcher       // fetches the HTML's images
	MaxImages  int           // images fetched per job; the others fail
	// Queue bounds the jobs waiting for a tab; past it, a job fails at
	// once with ErrBusy. Default: DefaultQueuePerTab × Tabs.
	Queue int
	// Fetches bounds the images of one job fetched (and handed to the
	// browser) at once. Default: DefaultFetches.
	Fetches int
	// MaxImageBytes bounds the bytes of all the images one job fetches;
	// past it, images fail. Default: DefaultMaxImageBytes.
	MaxImageBytes int64
	// MaxImagePixels bounds the pixels of all the images of one job, as
	// their headers state them (what Chromium decodes, 4 bytes each);
	// past it, and for images whose size cannot be read, images fail.
	// Default: DefaultMaxImagePixels.
	MaxImagePixels int64
	// MaxPageMemory bounds, on Linux, the data memory (RLIMIT_DATA) of
	// each process that lays out and paints pages (Chromium's renderers,
	// about 600 MiB for an empty page): a page that needs more crashes
	// its renderer, and its job fails with a *PageCrash whose
	// OutOfMemory is true. Default:
	// DefaultMaxPageMemory.
	MaxPageMemory int64
	// MaxPDFBytes bounds a PDF; a larger one fails with ErrTooLarge.
	// Default: DefaultMaxPDFBytes.
	MaxPDFBytes int64
	Logger      *zap.Logger
}

// Bounds of Config: a tab is a Chromium renderer, far more than any
// machine runs at once; a waiting job holds its HTML.
const (
	MaxTabs  = 1024
	MaxQueue = DefaultQueuePerTab * MaxTabs
)

// Defaults of Config. An image is held three times while the browser is
// handed it (the body, base64, the DevTools message), so a job's peak is
// about Fetches × the fetcher's size limit × 3.
const (
	// DefaultQueuePerTab jobs per tab may wait: each holds its HTML (and
	// its caller the request body) while it waits, for up to JobTimeout.
	DefaultQueuePerTab    = 4
	DefaultFetches        = 4
	DefaultMaxImageBytes  = 64 << 20
	DefaultMaxImagePixels = 64 << 20 // 256 MiB decoded
	// DefaultMaxPageMemory is 2 GiB: the heaviest pages measured took
	// 1.5 GiB (4 MiB of text shot 600 px wide); printing repeats a
	// position: fixed element on every page, and one of 20,000 words on
	// 200 pages took 2.4 GB, more on more pages or with more words.
	DefaultMaxPageMemory = 2 << 30
	// DefaultMaxPDFBytes is 128 MiB. A PDF holds its images whole, and a
	// PNG may be stored as its raw pixels (a few MB of PNG of the 64 Mi
	// pixels a job may fetch can take 192 MB), so the images' budgets
	// leave a PDF's size open.
	DefaultMaxPDFBytes = 128 << 20
)

// ErrTimeout is a job that did not finish within its time.
var ErrTimeout = errors.New("rendering took too long")

// ErrClosed is a job given to a closed pool.
var ErrClosed = errors.New("the browser pool is closed")

// ErrPageCrashed is a job whose page crashed the process rendering it.
// The job's error is then a *PageCrash, which says how the process ended.
var ErrPageCrashed = errors.New("the page crashed the browser process rendering it")

// PageCrash is the error of a job whose page's renderer process ended
// (it is ErrPageCrashed), with how Chromium reported that end
// (Target.targetCrashed): Status "crashed" (by a signal such as SIGSEGV
// or SIGTRAP), "killed" (SIGKILL, SIGTERM, SIGINT) or "abnormal" (an
// exit with a failure code), and Code the signal or exit code. Status is
// "" when no report came.
type PageCrash struct {
	Status string
	Code   int64
}

// sigTrap is SIGTRAP's number (the same on every platform Chromium runs
// on): Chromium ends a process that fails to allocate with a trap
// instruction.
const sigTrap = 5

// OutOfMemory reports whether the process ended the way Chromium ends one
// that fails to allocate: crashed by SIGTRAP, or reported as "oom" (how
// Chromium reports a renderer the system killed for memory, where it can
// tell). Under Config.MaxPageMemory (PageMemoryBounded) a trap is most
// likely a page that needed more memory than the bound; a failed internal
// check of Chromium ends the same way, so it is not certain. Any other
// end (SIGSEGV, a kill, an exit) is not what the bound causes.
func (e *PageCrash) OutOfMemory() bool {
	return e.Status == "oom" || e.Status == "crashed" && e.Code == sigTrap
}

func (e *PageCrash) Error() string {
	if e.Status == "" {
		return ErrPageCrashed.Error() + " (no report of how it ended)"
	}
	return fmt.Sprintf("%s (%s, code %d)", ErrPageCrashed, e.Status, e.Code)
}

func (e *PageCrash) Unwrap() error { return ErrPageCrashed }

// ErrBusy is a job refused because every tab is rendering and Config.Queue
// jobs already wait for one.
var ErrBusy = errors.New("every tab is rendering and the queue is full")

// Pool is a headless Chromium and its tabs.
type Pool struct {
	cfg  Config
	tabs chan struct{}
	// admitted holds a token for each job rendering or waiting for a tab
	// (Tabs + Queue).
	admitted chan struct{}

	mu      sync.Mutex
	current *instance
	// starting is the browser being started, if one is: jobs that need a
	// browser wait for it, each only while its own context lasts. mu is
	// not held meanwhile, so jobs are still counted in, refused (ErrBusy)
	// and closed at once.
	starting *startup
	// startTimeout bounds a start: the constant startTimeout, shorter in
	// tests.
	startTimeout time.Duration
	closed       bool
	// jobs counts the jobs between run's start and end (waiting for a
	// tab or rendering): a closed pool keeps its browser until they end.
	jobs int
	wg   sync.WaitGroup // instances being stopped
}

// startup is a browser being started, in the background (tracked by
// Pool.wg): done is closed once it runs (b) or failed (err).
type startup struct {
	done  chan struct{}
	b     *instance
	err   error
	abort context.CancelFunc // ends the start and its process
}

// instance is one browser process.
type instance struct {
	ctx         context.Context // the browser's chromedp context
	cancel      context.CancelFunc
	allocCancel context.CancelFunc
	dataDir     string
	jobs        sync.WaitGroup // request handlers of its tabs, its calls in the background (goTracked)
	mu          sync.Mutex
	stopped     bool // jobs is being waited for
}

// goTracked runs f in a goroutine that stopping b waits for (f's calls
// on b end as b is stopped); false, f not run, once b is stopped.
func (b *instance) goTracked(f func()) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return false
	}
	b.jobs.Add(1)
	go func() {
		defer b.jobs.Done()
		f()
	}()
	return true
}

// Check reports whether execPath is a file that can be run, for a load
// error that names the problem before any job.
func Check(execPath string) error {
	path, err := exec.LookPath(execPath)
	if err != nil {
		return fmt.Errorf("chromium not found at %q: %v (install chromium, set its path, or turn the PDF and image endpoints off)", execPath, err)
	}
	info, err := os.Stat(path)
	if err != nil || info.IsDir() {
		return fmt.Errorf("chromium at %q is not a file", execPath)
	}
	return nil
}

// New returns a pool; the browser starts with the first job.
func New(cfg Config) (*Pool, error) {
	if err := Check(cfg.ExecPath); err != nil {
		return nil, err
	}
	if cfg.Tabs <= 0 || cfg.JobTimeout <= 0 || cfg.Fetch == nil {
		return nil, errors.New("browserpool: Tabs, JobTimeout and Fetch are required")
	}
	// The channels' capacities are Tabs and Tabs+Queue: past these bounds
	// they would overflow and make would panic.
	if cfg.Tabs > MaxTabs {
		return nil, fmt.Errorf("browserpool: Tabs %d: at most %d", cfg.Tabs, MaxTabs)
	}
	if cfg.Queue < 0 || cfg.Queue > MaxQueue {
		return nil, fmt.Errorf("browserpool: Queue %d: from 0 to %d", cfg.Queue, MaxQueue)
	}
	if cfg.Queue == 0 {
		cfg.Queue = DefaultQueuePerTab * cfg.Tabs
	}
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.Fetches <= 0 {
		cfg.Fetches = DefaultFetches
	}
	if cfg.MaxImageBytes <= 0 {
		cfg.MaxImageBytes = DefaultMaxImageBytes
	}
	if cfg.MaxImagePixels <= 0 {
		cfg.MaxImagePixels = DefaultMaxImagePixels
	}
	if cfg.MaxPageMemory <= 0 {
		cfg.MaxPageMemory = DefaultMaxPageMemory
	}
	if cfg.MaxPDFBytes <= 0 {
		cfg.MaxPDFBytes = DefaultMaxPDFBytes
	}
	return &Pool{
		cfg: cfg, tabs: make(chan struct{}, cfg.Tabs), admitted: make(chan struct{}, cfg.Tabs+cfg.Queue),
		startTimeout: startTimeout,
	}, nil
}

// startTimeout bounds a browser's start. chromedp waits 20 s for
// Chromium's DevTools address, but nothing once it has it: a browser that
// hangs after that would never start, and no job would render again.
const startTimeout = 20 * time.Second

// start launches a browser with a fresh profile; abort ending kills it
// while it starts (the start fails with abort's cause).
func (p *Pool) start(abort context.Context) (*instance, error) {
	dir, err := os.MkdirTemp("", "content-service-chromium-")
	if err != nil {
		return nil, err
	}
	crashDB, err := unusableCrashDatabase(dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(p.cfg.ExecPath),
		chromedp.UserDataDir(dir),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("mute-audio", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		// Chromium resolves no name: the pool answers every request it
		// lets through, and what request interception never sees (a
		// <link rel=preconnect>, to an address literal too) must not
		// reach the network.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
		// A job's frames hold nothing of another site's (no cookies, no
		// storage, no script), so site isolation protects nothing here,
		// and with it each cross-site <iframe> of a page would start a
		// renderer process of its own: hundreds for a few KB of HTML.
		chromedp.Flag("disable-site-isolation-trials", true),
		// The segmentation platform records the browser's metrics in a
		// database of the profile, whose log grew by about 1 KB a render
		// even with every page in a context of its own (see openTab).
		chromedp.Flag("disable-features", "IsolateOrigins,site-per-process,SegmentationPlatform"),
		// No crash dumps (see unusableCrashDatabase).
		chromedp.Env("BREAKPAD_DUMP_LOCATION=" + crashDB),
	}
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	// Once: chromedp's cancel waits for the process, and a second call
	// after a start that never ran the process would wait forever.
	kill := sync.OnceFunc(func() { cancel(); allocCancel() })
	// No timeout on the Run: the first Run's context owns the process.
	// abort kills the process instead, which ends the Run.
	stopAbort := context.AfterFunc(abort, kill)
	err = chromedp.Run(ctx)
	if !stopAbort() {
		err = context.Cause(abort)
	}
	if err != nil {
		kill()
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("starting chromium: %v", err)
	}
	if c := chromedp.FromContext(ctx); c != nil && c.Browser != nil && c.Browser.Process() != nil {
		if err := limitPageMemory(c.Browser.Process().Pid, p.cfg.MaxPageMemory); err != nil {
			p.cfg.Logger.Warn("the browser's pages are not bounded in memory", zap.Error(err))
		}
	}
	return &instance{ctx: ctx, cancel: cancel, allocCancel: allocCancel, dataDir: dir}, nil
}

// unusableCrashDatabase makes, in the profile dir, a crash database that
// Chromium's crash handler cannot open, and returns its path for
// BREAKPAD_DUMP_LOCATION.
//
// The handler writes a dump of each crashed process (125–145 KB of a
// renderer's memory: the documents it rendered) into its database, and
// nothing removes them while the browser lives, which is as long as its
// renderers crash and it does not: pages that crash their renderers
// (past MaxPageMemory) one after the other would fill the disk.
// BREAKPAD_DUMP_LOCATION names the database, but where that folder
// cannot be made Chromium uses $XDG_CONFIG_HOME/chromium/Crash Reports,
// which nothing empties. --crash-dumps-dir, --disable-crash-reporter and
// --disable-breakpad do not move or stop the dumps, and with
// --disable-crashpad-for-testing no page loaded. So the database's
// folder exists, and the folder every dump is first written to ("new")
// is a file: the handler fails to open the database and exits as the
// browser starts, and a crashed process ends as before (the same report
// of how), without a dump.
func unusableCrashDatabase(dir string) (string, error) {
	db := filepath.Join(dir, "Crash Reports")
	if err := os.Mkdir(db, 0o700); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(db, "new"), nil, 0o600); err != nil {
		return "", err
	}
	return db, nil
}

// browser returns the running browser, starting one when there is none
// or the last one died. A job waits for the start only while ctx lasts
// (ErrTimeout): the browser may start slowly or hang, and the start goes
// on for the jobs still waiting and the next ones.
func (p *Pool) browser(ctx context.Context) (*instance, error) {
	p.mu.Lock()
	if b := p.current; b != nil {
		if b.ctx.Err() == nil {
			// Also when closed: a job that started before Close finishes
			// in the browser that runs.
			p.mu.Unlock()
			return b, nil
		}
		p.current = nil
		p.stopLocked(b)
	}
	s := p.starting
	if s == nil {
		if p.closed {
			p.mu.Unlock()
			return nil, ErrClosed
		}
		s = p.startLocked()
	}
	p.mu.Unlock()
	select {
	case <-s.done:
		return s.b, s.err
	case <-ctx.Done():
		return nil, ErrTimeout
	}
}

// startLocked starts a browser in the background; it becomes the current
// one. A Close meanwhile leaves it to the last job's leave, which stops
// the current browser, or, when no job is left, ends the start
// (stopClosed), or stops the browser once started.
func (p *Pool) startLocked() *startup {
	closing, closeStart := context.WithCancelCause(context.Background())
	abort, cancel := context.WithTimeoutCause(closing, p.startTimeout,
		fmt.Errorf("the browser did not start within %v", p.startTimeout))
	s := &startup{done: make(chan struct{}), abort: func() { closeStart(ErrClosed) }}
	p.starting = s
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		defer closeStart(nil)
		defer cancel()
		b, err := p.start(abort)
		p.mu.Lock()
		defer p.mu.Unlock()
		p.starting = nil
		switch {
		case closing.Err() != nil:
			// Ended by stopClosed: a job that came since is refused.
			if err == nil {
				p.stopLocked(b)
			}
			b, err = nil, ErrClosed
		case err == nil && p.closed && p.jobs == 0:
			p.stopLocked(b)
			b, err = nil, ErrClosed
		case err == nil:
			p.current = b
		}
		s.b, s.err = b, err
		close(s.done)
	}()
	return s
}

// replace retires b if it is still the current browser (it crashed or
// hung); the next job starts a fresh one.
func (p *Pool) replace(b *instance, why string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.current != b {
		return
	}
	p.cfg.Logger.Warn("replacing the browser", zap.String("reason", why))
	p.current = nil
	p.stopLocked(b)
}

// stopLocked kills b's process and, in the background (tracked by
// p.wg), waits for its tabs' handlers and removes its profile.
func (p *Pool) stopLocked(b *instance) {
	// Killing the process ends every call pending on it, so that the
	// handlers waited for below return.
	b.allocCancel()
	b.cancel()
	// No goTracked from now on: an Add once Wait may have seen zero would
	// not be waited for.
	b.mu.Lock()
	b.stopped = true
	b.mu.Unlock()
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		b.jobs.Wait()
		removeProfile(b.dataDir)
	}()
}

// removeProfile deletes a browser's profile folder. Chromium's helper
// processes can still write into it for a moment after the browser has
// exited (seconds on a loaded machine), so that one removal leaves it
// behind: try until it is gone, for at most ten seconds.
func removeProfile(dir string) {
	for i := 0; i < 100; i++ {
		if err := os.RemoveAll(dir); err == nil {
			if _, err := os.Stat(dir); os.IsNotExist(err) {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// alive reports whether b answers within a short time.
func alive(b *instance) bool {
	ctx, cancel := context.WithTimeout(b.ctx, 3*time.Second)
	defer cancel()
	_, _, _, _, _, err := browser.GetVersion().Do(cdpBrowser(ctx))
	return err == nil
}

// cdpBrowser is ctx with the browser itself as the executor.
func cdpBrowser(ctx context.Context) context.Context {
	c := chromedp.FromContext(ctx)
	if c == nil || c.Browser == nil {
		return ctx
	}
	return withExecutor(ctx, c.Browser)
}

// Close refuses new jobs and stops the browser once the jobs that
// started before it have ended; when none has, it stops the browser now
// and waits for everything the pool started. Caddy runs a reload's
// Cleanup while the old server still serves its requests in flight, and
// they must finish rather than fail with a killed browser; the last of
// them stops it (bounded by the job timeout: waiting for a tab and the
// render).
func (p *Pool) Close() {
	p.mu.Lock()
	p.closed = true
	busy := p.jobs > 0
	p.mu.Unlock()
	if !busy {
		p.stopClosed()
	}
}

// stopClosed stops the browser of a closed pool, or ends its start (no
// job is left to wait for it), and waits for everything the pool
// started.
func (p *Pool) stopClosed() {
	p.mu.Lock()
	if b := p.current; b != nil {
		p.current = nil
		p.stopLocked(b)
	}
	if s := p.starting; s != nil {
		s.abort()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// enter counts a job in.
func (p *Pool) enter() {
	p.mu.Lock()
	p.jobs++
	p.mu.Unlock()
}

// leave counts a job out; the last job of a closed pool stops its browser.
func (p *Pool) leave() {
	p.mu.Lock()
	p.jobs--
	last := p.closed && p.jobs == 0
	p.mu.Unlock()
	if last {
		p.stopClosed()
	}
}

// acquire waits for a free tab, unless Config.Queue jobs already wait
// (ErrBusy, at once); release gives the tab back.
func (p *Pool) acquire(ctx context.Context) error {
	select {
	case p.admitted <- struct{}{}:
	default:
		return ErrBusy
	}
	select {
	case p.tabs <- struct{}{}:
		return nil
	case <-ctx.Done():
		<-p.admitted
		return ErrTimeout
	}
}

func (p *Pool) release() {
	<-p.tabs
	<-p.admitted
}

// InUse is the number of tabs rendering now (for tests of the bound).
func (p *Pool) InUse() int { return len(p.tabs) }
