package browserpool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/testutil/testimage"

	"github.com/chromedp/chromedp"

	"github.com/designbridge/caddy-designbridge/internal/safefetch"
)

const chromium = "/usr/bin/chromium"

func newPool(t *testing.T, allowPrivate bool, timeout time.Duration) *Pool {
	t.Helper()
	return newPoolWith(t, allowPrivate, timeout, func(*Config) {})
}

// newPoolWith is newPool with the config changed by set.
func newPoolWith(t *testing.T, allowPrivate bool, timeout time.Duration, set func(*Config)) *Pool {
	t.Helper()
	if err := Check(chromium); err != nil {
		t.Skip(err)
	}
	client, tr := safefetch.NewClient(10*time.Second, safefetch.Policy{AllowPrivate: allowPrivate})
	t.Cleanup(tr.Retire)
	cfg := Config{ExecPath: chromium, Tabs: 2, JobTimeout: timeout, Fetch: &HTTPFetcher{Client: client, MaxSize: 1 << 20}, MaxImages: 10}
	set(&cfg)
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// redPNG is a 40×40 red square.
func redPNG() []byte {
	img := image.NewRGBA(image.Rect(0, 0, 40, 40))
	for y := range 40 {
		for x := range 40 {
			img.Set(x, y, color.RGBA{255, 0, 0, 255})
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

func imageHost(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var hits atomic.Int64
	done := make(chan struct{})
	red := redPNG()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/hang.png" {
			select {
			case <-done:
			case <-r.Context().Done():
			}
			return
		}
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(red)
	}))
	t.Cleanup(func() { close(done); srv.Close() })
	return srv, &hits
}

// redPixels counts the pure red pixels of a PNG.
func redPixels(t *testing.T, data []byte) (int, image.Rectangle) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 > 240 && g>>8 < 16 && bl>>8 < 16 {
				n++
			}
		}
	}
	return n, b
}

func TestImageAndPDF(t *testing.T) {
	srv, hits := imageHost(t)
	p := newPool(t, true, 20*time.Second)
	html := `<!DOCTYPE html><html><body style="margin:0"><img src="` + srv.URL + `/red.png" width="40" height="40"><p>hello</p></body></html>`
	shot, err := p.Image(context.Background(), html, ImageOptions{Width: 300, MaxHeight: 2000})
	if err != nil {
		t.Fatal(err)
	}
	red, bounds := redPixels(t, shot)
	if bounds.Dx() != 300 || red < 1500 {
		t.Errorf("image %v with %d red pixels; want 300 wide, the 40×40 image shown", bounds, red)
	}
	if hits.Load() != 1 {
		t.Errorf("%d image requests, want 1", hits.Load())
	}
	var pdf bytes.Buffer
	if err := p.PDF(context.Background(), html, PDFOptions{WidthIn: 8.27, HeightIn: 11.69, Width: 800}, &pdf); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(pdf.Bytes(), []byte("%PDF-")) || !bytes.Contains(pdf.Bytes()[pdf.Len()-32:], []byte("%%EOF")) {
		t.Fatalf("not a whole PDF: %.20q … %q", pdf.Bytes(), pdf.Bytes()[pdf.Len()-32:])
	}
}

// TestScriptsAndOtherRequestsRefused: JavaScript does not run, and only
// images reach the network.
func TestScriptsAndOtherRequestsRefused(t *testing.T) {
	srv, hits := imageHost(t)
	p := newPool(t, true, 20*time.Second)
	html := `<html><head><link rel="stylesheet" href="` + srv.URL + `/style.css"><script src="` + srv.URL + `/x.js"></script></head>
<body style="margin:0;background:#fff"><div id="d" style="width:100px;height:100px;background:#fff"></div>
<script>document.getElementById('d').style.background='#ff0000'</script>
<iframe src="file:///etc/passwd"></iframe></body></html>`
	shot, err := p.Image(context.Background(), html, ImageOptions{Width: 200, Height: 200, MaxHeight: 2000})
	if err != nil {
		t.Fatal(err)
	}
	if red, _ := redPixels(t, shot); red != 0 {
		t.Errorf("%d red pixels: the script ran", red)
	}
	if hits.Load() != 0 {
		t.Errorf("%d requests for a stylesheet and a script, want none", hits.Load())
	}
}

// TestNoFileAccess: an image, frame or background on file: shows
// nothing (the pool refuses file: requests, and Chromium refuses them to
// a page of an http origin, which the document has).
func TestNoFileAccess(t *testing.T) {
	p := newPool(t, true, 20*time.Second)
	path := t.TempDir() + "/red.png"
	if err := os.WriteFile(path, redPNG(), 0o644); err != nil {
		t.Fatal(err)
	}
	html := `<body style="margin:0"><img src="file://` + path + `" width="40" height="40">` +
		`<iframe src="file://` + path + `" width="60" height="60"></iframe><div style="background:url('file://` + path + `');width:40px;height:40px"></div></body>`
	shot, err := p.Image(context.Background(), html, ImageOptions{Width: 200, Height: 200, MaxHeight: 500})
	if err != nil {
		t.Fatal(err)
	}
	if red, _ := redPixels(t, shot); red != 0 {
		t.Errorf("%d red pixels: a file: URL was read", red)
	}
	// The same picture over HTTP is shown: the test can fail.
	srv, _ := imageHost(t)
	shot, err = p.Image(context.Background(), `<body style="margin:0"><img src="`+srv.URL+`/red.png" width="40" height="40"></body>`, ImageOptions{Width: 200, Height: 200, MaxHeight: 500})
	if err != nil {
		t.Fatal(err)
	}
	if red, _ := redPixels(t, shot); red < 1500 {
		t.Errorf("%d red pixels over HTTP", red)
	}
}

func TestPrivateImageNotFetched(t *testing.T) {
	srv, hits := imageHost(t)
	p := newPool(t, false, 20*time.Second)
	html := `<img src="` + srv.URL + `/red.png">`
	if _, err := p.Image(context.Background(), html, ImageOptions{Width: 100, MaxHeight: 500}); err != nil {
		t.Fatal(err)
	}
	if hits.Load() != 0 {
		t.Fatalf("the loopback image was fetched %d times", hits.Load())
	}
}

// TestHungPageTimesOut: a page whose image never arrives times out, and
// the pool still renders afterwards.
func TestHungPageTimesOut(t *testing.T) {
	srv, _ := imageHost(t)
	p := newPool(t, true, 2*time.Second)
	_, err := p.Image(context.Background(), `<img src="`+srv.URL+`/hang.png">`, ImageOptions{Width: 100, MaxHeight: 500})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err %v, want ErrTimeout", err)
	}
	if _, err := p.Image(context.Background(), `<p>after</p>`, ImageOptions{Width: 100, MaxHeight: 500}); err != nil {
		t.Fatalf("after a timeout: %v", err)
	}
}

// TestCrashedBrowserReplaced: a killed browser is replaced by the next
// job; Close leaves no process behind.
func TestCrashedBrowserReplaced(t *testing.T) {
	p := newPool(t, false, 20*time.Second)
	if _, err := p.Image(context.Background(), `<p>one</p>`, ImageOptions{Width: 100, MaxHeight: 500}); err != nil {
		t.Fatal(err)
	}
	proc := chromedp.FromContext(p.current.ctx).Browser.Process()
	if err := proc.Kill(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		if _, err = p.Image(context.Background(), `<p>two</p>`, ImageOptions{Width: 100, MaxHeight: 500}); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatalf("no render after the crash: %v", err)
	}
	second := chromedp.FromContext(p.current.ctx).Browser.Process()
	if second.Pid == proc.Pid {
		t.Fatal("the dead browser is still the current one")
	}
	dir := p.current.dataDir
	p.Close()
	if err := second.Signal(os.Signal(nil)); err == nil && processAlive(second.Pid) {
		t.Errorf("browser %d still runs after Close", second.Pid)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("profile %s left behind", dir)
	}
}

// processAlive reports whether pid names a live (not zombie) process.
func processAlive(pid int) bool {
	data, err := os.ReadFile("/proc/" + itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	fields := strings.Fields(string(data))
	return len(fields) > 2 && fields[2] != "Z"
}

func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for n > 0 || i == len(b) {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// TestTabsBound: six jobs at once on a pool of two tabs never render more
// than two pages at a time (each page's image is held 300 ms, so the
// image host sees how many pages load together), and all six finish.
func TestTabsBound(t *testing.T) {
	var now, peak atomic.Int64
	red := redPNG()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := now.Add(1)
		defer now.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(300 * time.Millisecond)
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(red)
	}))
	defer srv.Close()
	p := newPool(t, true, 30*time.Second)
	errs := make(chan error, 6)
	for i := range 6 {
		go func() {
			_, err := p.Image(context.Background(), `<img src="`+srv.URL+`/`+itoa(i)+`.png">`, ImageOptions{Width: 100, MaxHeight: 500})
			errs <- err
		}()
	}
	for range 6 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if peak.Load() > 2 || peak.Load() < 1 {
		t.Errorf("%d pages loaded at once, bound 2", peak.Load())
	}
	if p.InUse() != 0 {
		t.Errorf("%d tabs still held", p.InUse())
	}
}

// TestHungBrowserReplaced: a browser that stops answering (SIGSTOP) makes
// the job time out, and is killed and replaced; the next job renders.
func TestHungBrowserReplaced(t *testing.T) {
	p := newPool(t, false, 2*time.Second)
	if _, err := p.Image(context.Background(), `<p>one</p>`, ImageOptions{Width: 100, MaxHeight: 500}); err != nil {
		t.Fatal(err)
	}
	proc := chromedp.FromContext(p.current.ctx).Browser.Process()
	if err := proc.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Image(context.Background(), `<p>two</p>`, ImageOptions{Width: 100, MaxHeight: 500}); !errors.Is(err, ErrTimeout) {
		t.Fatalf("job on a stopped browser: %v, want ErrTimeout", err)
	}
	if _, err := p.Image(context.Background(), `<p>three</p>`, ImageOptions{Width: 100, MaxHeight: 500}); err != nil {
		t.Fatalf("after the hang: %v", err)
	}
	if pid := chromedp.FromContext(p.current.ctx).Browser.Process().Pid; pid == proc.Pid {
		t.Fatal("the stopped browser is still in use")
	}
	if processAlive(proc.Pid) {
		t.Errorf("the stopped browser %d was not killed", proc.Pid)
	}
}

// TestQueueBound: on a pool of one tab with a queue of two, of five jobs
// at once (their pages hang) one renders, two wait and two fail at once
// with ErrBusy; a job that gave up waiting leaves the queue, so a second
// burst is admitted the same way, and the pool renders afterwards.
// Unbounded, all five waited, each holding its HTML.
func TestQueueBound(t *testing.T) {
	srv, _ := imageHost(t)
	p := newPoolWith(t, true, 3*time.Second, func(c *Config) { c.Tabs = 1; c.Queue = 2 })
	for burst := range 2 {
		for _, err := range burstRefusedAtOnce(t, p, `<img src="`+srv.URL+`/hang.png">`) {
			if !errors.Is(err, ErrTimeout) {
				t.Errorf("burst %d: %v, want ErrTimeout or ErrBusy", burst, err)
			}
		}
	}
	if _, err := p.Image(context.Background(), `<p>after</p>`, ImageOptions{Width: 100, MaxHeight: 500}); err != nil {
		t.Fatalf("after the bursts: %v", err)
	}
	if p.InUse() != 0 || len(p.admitted) != 0 {
		t.Errorf("%d tabs and %d admissions still held", p.InUse(), len(p.admitted))
	}
}

// chunkWriter counts the writes it is given and their largest size.
type chunkWriter struct {
	bytes.Buffer
	writes, largest int
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	w.writes++
	w.largest = max(w.largest, len(p))
	return w.Buffer.Write(p)
}

// TestPDFStreamedAndBounded: a PDF comes from the browser in pieces of at
// most 1 MiB, written as they come (it came in one DevTools message,
// which Go held three to four times over: a 32 MB PDF raised the heap by
// 300 MB); one larger than Config.MaxPDFBytes fails with ErrTooLarge,
// having written no more than that.
func TestPDFStreamedAndBounded(t *testing.T) {
	imgs := make([][]byte, 12)
	for i := range imgs {
		imgs[i] = testimage.NoiseJPEG(1024, 1024, uint32(i+1))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var i int
		if _, err := fmt.Sscanf(r.URL.Path, "/%d.jpg", &i); err != nil || i < 0 || i >= len(imgs) {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "image/jpeg")
		_, _ = w.Write(imgs[i])
	}))
	defer srv.Close()
	var html strings.Builder
	for i := range imgs {
		fmt.Fprintf(&html, `<img src="%s/%d.jpg" width="300" height="300">`, srv.URL, i)
	}
	for _, tc := range []struct {
		name string
		max  int64
		err  error
	}{
		{"whole", 0, nil},
		{"over the bound", 1 << 20, ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPoolWith(t, true, 20*time.Second, func(c *Config) {
				c.MaxPDFBytes = tc.max
				c.Fetch.(*HTTPFetcher).MaxSize = 4 << 20
			})
			var w chunkWriter
			err := p.PDF(context.Background(), html.String(), PDFOptions{WidthIn: 8.27, HeightIn: 11.69, Width: 800}, &w)
			if !errors.Is(err, tc.err) {
				t.Fatalf("%v, want %v", err, tc.err)
			}
			if tc.err != nil {
				if int64(w.Len()) > tc.max {
					t.Errorf("%d bytes written, over the bound %d", w.Len(), tc.max)
				}
				return
			}
			pdf := w.Bytes()
			if len(pdf) < 3<<20 || !bytes.HasPrefix(pdf, []byte("%PDF-")) || !bytes.Contains(pdf[len(pdf)-32:], []byte("%%EOF")) {
				t.Fatalf("%d bytes, not the whole PDF of 12 images", len(pdf))
			}
			if w.writes < 3 || w.largest > pdfChunk {
				t.Errorf("%d writes, the largest %d bytes; want pieces of at most %d", w.writes, w.largest, pdfChunk)
			}
		})
	}
}

// TestCloseLetsJobsFinish: jobs rendering when the pool is closed (Caddy
// runs a reload's Cleanup while the old server still serves them) finish
// in the running browser; the last of them stops it and removes its
// profile, and a job after that is refused.
func TestCloseLetsJobsFinish(t *testing.T) {
	var hits atomic.Int64
	red := redPNG()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		time.Sleep(time.Second)
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(red)
	}))
	defer srv.Close()
	p := newPool(t, true, 20*time.Second)
	html := `<img src="` + srv.URL + `/a.png"><p>x</p>`
	jobs := []struct {
		name string
		run  func() error
	}{
		{"image", func() error {
			_, err := p.Image(context.Background(), html, ImageOptions{Width: 100, MaxHeight: 500})
			return err
		}},
		{"pdf", func() error {
			var b bytes.Buffer
			err := p.PDF(context.Background(), html, PDFOptions{WidthIn: 8.27, HeightIn: 11.7, Width: 600}, &b)
			if err == nil && !bytes.HasPrefix(b.Bytes(), []byte("%PDF")) {
				err = errors.New("not a PDF")
			}
			return err
		}},
	}
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = j.run() }()
	}
	for deadline := time.Now().Add(20 * time.Second); hits.Load() < int64(len(jobs)) && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	p.mu.Lock()
	b := p.current
	p.mu.Unlock()
	if b == nil {
		t.Fatal("no browser while the jobs render")
	}
	proc := chromedp.FromContext(b.ctx).Browser.Process()
	p.Close()
	wg.Wait()
	for i, j := range jobs {
		if errs[i] != nil {
			t.Errorf("%s rendering when the pool was closed: %v", j.name, errs[i])
		}
	}
	if processAlive(proc.Pid) {
		t.Errorf("browser %d still runs after the last job", proc.Pid)
	}
	if _, err := os.Stat(b.dataDir); !os.IsNotExist(err) {
		t.Errorf("profile %s left behind", b.dataDir)
	}
	if _, err := p.Image(context.Background(), `<p>late</p>`, ImageOptions{Width: 100, MaxHeight: 500}); !errors.Is(err, ErrClosed) {
		t.Errorf("a job after the last one: %v, want ErrClosed", err)
	}
}

// TestNewBounds: New refuses tab and queue counts whose channels could
// not be made (an overflowing Tabs+Queue made make panic), before any
// browser starts.
func TestNewBounds(t *testing.T) {
	if err := Check(chromium); err != nil {
		t.Skip(err)
	}
	for _, c := range []struct {
		name        string
		tabs, queue int
		want        string // "" means accepted
	}{
		{"the bounds", MaxTabs, MaxQueue, ""},
		{"tabs past the bound", MaxTabs + 1, 0, "browserpool: Tabs 1025: at most 1024"},
		{"tabs that overflow the default queue", 3_000_000_000_000_000_000, 0, "browserpool: Tabs 3000000000000000000: at most 1024"},
		{"queue past the bound", 1, MaxQueue + 1, "browserpool: Queue 4097: from 0 to 4096"},
		{"negative queue", 1, -1, "browserpool: Queue -1: from 0 to 4096"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := New(Config{ExecPath: chromium, Tabs: c.tabs, Queue: c.queue, JobTimeout: time.Second, Fetch: noFetch{}})
			if c.want == "" {
				if err != nil {
					t.Fatalf("error %v", err)
				}
				p.Close()
				return
			}
			if err == nil || err.Error() != c.want {
				t.Fatalf("error %v, want %q", err, c.want)
			}
		})
	}
}

// TestQueueBoundWhileStarting: while the browser starts (here slowed by
// 3 s), jobs past the queue are still refused at once. Jobs used to be
// counted in under the lock the start held, so a refusal came only once
// the browser ran.
func TestQueueBoundWhileStarting(t *testing.T) {
	if err := Check(chromium); err != nil {
		t.Skip(err)
	}
	real, err := exec.LookPath(chromium)
	if err != nil {
		t.Skip(err)
	}
	slow := filepath.Join(t.TempDir(), "slow-chromium")
	script := "#!/bin/sh\nsleep 3\nexec " + real + ` "$@"` + "\n"
	if err := os.WriteFile(slow, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	p := newPoolWith(t, true, 20*time.Second, func(c *Config) { c.ExecPath = slow; c.Tabs = 1; c.Queue = 2 })
	for _, err := range burstRefusedAtOnce(t, p, `<p>hi</p>`) {
		if err != nil {
			t.Errorf("job: %v", err)
		}
	}
}

// burstRefusedAtOnce sends 5 image jobs of html at once to p (1 tab, a
// queue of 2), checks that 2 are refused with ErrBusy within a second,
// and returns the other jobs' errors.
func burstRefusedAtOnce(t *testing.T, p *Pool, html string) []error {
	t.Helper()
	type result struct {
		err     error
		elapsed time.Duration
	}
	results := make(chan result, 5)
	began := time.Now()
	for range 5 {
		go func() {
			_, err := p.Image(context.Background(), html, ImageOptions{Width: 100, MaxHeight: 500})
			results <- result{err, time.Since(began)}
		}()
	}
	var others []error
	busy := 0
	for range 5 {
		r := <-results
		if !errors.Is(r.err, ErrBusy) {
			others = append(others, r.err)
			continue
		}
		busy++
		if r.elapsed > time.Second {
			t.Errorf("ErrBusy after %v, want at once", r.elapsed)
		}
	}
	if busy != 2 {
		t.Errorf("%d jobs refused, want 2 (1 tab, 2 waiting)", busy)
	}
	return others
}
