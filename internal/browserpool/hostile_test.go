package browserpool

import (
	"bytes"
	"compress/lzw"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Pages written to make the service spend: each test fails without the
// defence it names.

// TestImageFetchesBounded: a page of many images is fetched a few at a
// time (Config.Fetches), and no more bytes than Config.MaxImageBytes in
// all. Unbounded, 60 images of 20 MiB took a 5.4 GiB heap.
func TestImageFetchesBounded(t *testing.T) {
	var now, peak, served atomic.Int64
	red := redPNG()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := now.Add(1)
		defer now.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(150 * time.Millisecond)
		served.Add(1)
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(red)
	}))
	defer srv.Close()
	page := func(n int) string {
		var b strings.Builder
		b.WriteString(`<body style="margin:0;line-height:0">`)
		for i := range n {
			fmt.Fprintf(&b, `<img src="%s/%d.png" width="40" height="40" style="margin:0 4px 4px 0">`, srv.URL, i)
		}
		return b.String()
	}

	p := newPoolWith(t, true, 20*time.Second, func(c *Config) { c.Fetches = 2 })
	shot, err := p.Image(context.Background(), page(8), ImageOptions{Width: 440, Height: 100, MaxHeight: 500})
	if err != nil {
		t.Fatal(err)
	}
	if red, _ := redPixels(t, shot); red < 8*1500 {
		t.Errorf("%d red pixels, want the 8 images shown", red)
	}
	if peak.Load() != 2 {
		t.Errorf("%d images fetched at once, want 2 (Fetches)", peak.Load())
	}

	// A budget of two and a half images: two are shown.
	peak.Store(0)
	served.Store(0)
	p = newPoolWith(t, true, 20*time.Second, func(c *Config) { c.Fetches = 1; c.MaxImageBytes = int64(len(red)) * 5 / 2 })
	shot, err = p.Image(context.Background(), page(8), ImageOptions{Width: 440, Height: 100, MaxHeight: 500})
	if err != nil {
		t.Fatal(err)
	}
	if red, _ := redPixels(t, shot); red < 2*1500 || red > 2*1600 {
		t.Errorf("%d red pixels, want two images (the budget's)", red)
	}
	if n := served.Load(); n != 3 {
		t.Errorf("%d images fetched, want 3 (the third passes the budget)", n)
	}
}

// TestDocumentServedOnce: frames pointing at the document's own URL get
// nothing; each was sent the whole HTML again (a 3 MiB page of 1,500 such
// frames timed out with a 1.3 GiB heap).
func TestDocumentServedOnce(t *testing.T) {
	p := newPool(t, false, 20*time.Second)
	html := `<body style="margin:0"><div style="width:40px;height:40px;background:#ff0000"></div>` +
		`<iframe src="` + docURL + `#again" style="border:0;width:200px;height:100px"></iframe></body>`
	shot, err := p.Image(context.Background(), html, ImageOptions{Width: 200, Height: 160, MaxHeight: 500})
	if err != nil {
		t.Fatal(err)
	}
	if red, _ := redPixels(t, shot); red < 1500 || red > 1700 {
		t.Errorf("%d red pixels, want the one square: the frame was given the document", red)
	}
}

// TestNoPreconnect: Chromium connects nowhere by itself. Request
// interception never sees <link rel=preconnect>, which opened a TCP
// connection to a private address that image fetching refuses.
func TestNoPreconnect(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var accepted atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	addr := ln.Addr().String()
	p := newPool(t, false, 20*time.Second)
	html := `<head><link rel="preconnect" href="http://` + addr + `"><link rel="preconnect" href="https://` + addr + `" crossorigin>` +
		`<link rel="dns-prefetch" href="http://` + addr + `"></head><body><p>hello</p></body>`
	for range 2 {
		if _, err := p.Image(context.Background(), html, ImageOptions{Width: 200, Height: 100, MaxHeight: 500}); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(time.Second) // a preconnect may land after the job
	if n := accepted.Load(); n != 0 {
		t.Errorf("%d connections to %s from the page", n, addr)
	}
}

// TestFramesShareRenderers: a page of frames on many sites does not start
// a renderer process for each (site isolation), which a few KB of HTML
// turned into hundreds of processes.
func TestFramesShareRenderers(t *testing.T) {
	p := newPool(t, false, 30*time.Second)
	if _, err := p.Image(context.Background(), `<p>start</p>`, ImageOptions{Width: 100, MaxHeight: 100}); err != nil {
		t.Fatal(err)
	}
	browser := chromedp.FromContext(p.current.ctx).Browser.Process().Pid
	seen := map[int]bool{}
	stop, done := make(chan struct{}), make(chan struct{})
	go func() { // every renderer that lives 20 ms or more
		defer close(done)
		for {
			for _, pid := range renderers(browser) {
				seen[pid] = true
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	var b strings.Builder
	for i := range 200 {
		fmt.Fprintf(&b, `<iframe src="http://h%d.invalid/" width="10" height="10"></iframe>`, i)
	}
	_, err := p.Image(context.Background(), b.String(), ImageOptions{Width: 400, MaxHeight: 500})
	close(stop)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	// The page's, a spare one Chromium keeps ready, the last job's on its
	// way out: a few, where isolating each site made one per frame.
	if len(seen) == 0 || len(seen) > 8 {
		t.Errorf("%d renderer processes for one page of 200 frames, want 1 to 8", len(seen))
	}
}

// renderers lists the renderer processes descending from pid (they are
// the zygote's children, not the browser's).
func renderers(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces; it ends at the last ")".
		fields := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(fields) < 2 {
			continue
		}
		parent, _ := strconv.Atoi(fields[1])
		children[parent] = append(children[parent], child)
	}
	var found []int
	for queue := children[pid]; len(queue) > 0; queue = queue[1:] {
		cmd, _ := os.ReadFile("/proc/" + strconv.Itoa(queue[0]) + "/cmdline")
		if strings.Contains(string(cmd), "--type=renderer") {
			found = append(found, queue[0])
		}
		queue = append(queue, children[queue[0]]...)
	}
	return found
}

// TestImagePixelsBounded: images are handed to Chromium only when their
// header's size fits the job's pixel budget (a 428 KB PNG of 20000×20000
// cost Chromium 1.6 GB to decode), and only in a format whose size Go can
// read (an SVG may hold any raster as a data: URL).
func TestImagePixelsBounded(t *testing.T) {
	red := redPNG() // 40×40
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, ".svg") {
			w.Header().Set("Content-Type", "image/svg+xml")
			_, _ = w.Write([]byte(`<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><rect width="40" height="40" fill="#ff0000"/></svg>`))
			return
		}
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(red)
	}))
	defer srv.Close()
	var page strings.Builder
	page.WriteString(`<body style="margin:0;line-height:0">`)
	for i := range 5 {
		fmt.Fprintf(&page, `<img src="%s/%d.png" width="40" height="40" style="margin:0 4px 4px 0">`, srv.URL, i)
	}
	p := newPoolWith(t, true, 20*time.Second, func(c *Config) { c.Fetches = 1; c.MaxImagePixels = 3*40*40 + 100 })
	shot, err := p.Image(context.Background(), page.String(), ImageOptions{Width: 440, Height: 100, MaxHeight: 500})
	if err != nil {
		t.Fatal(err)
	}
	if red, _ := redPixels(t, shot); red < 3*1500 || red > 3*1600 {
		t.Errorf("%d red pixels, want three images (the pixel budget's)", red)
	}

	p = newPool(t, true, 20*time.Second)
	svg := `<body style="margin:0"><img src="` + srv.URL + `/red.svg" width="40" height="40"><img src="` + srv.URL + `/red.png" width="40" height="40"></body>`
	shot, err = p.Image(context.Background(), svg, ImageOptions{Width: 200, Height: 100, MaxHeight: 500})
	if err != nil {
		t.Fatal(err)
	}
	if red, _ := redPixels(t, shot); red < 1500 || red > 1600 {
		t.Errorf("%d red pixels, want the PNG alone, not the SVG", red)
	}
}

// TestDataURLsRefused: data: URLs, which request interception never
// sees, load nothing, in the document or in a srcdoc frame of it (which
// interception does not see either): images would skip the pool's byte
// and pixel budgets (a 48 KB data: PNG of 20000×20000 took Chromium
// 2 GB), and stylesheets, fonts and frames are refused over the network.
// The page's own inline styles and HTTP images still show.
func TestDataURLsRefused(t *testing.T) {
	srv, _ := imageHost(t)
	p := newPool(t, true, 20*time.Second)
	red := "data:image/png;base64," + base64.StdEncoding.EncodeToString(redPNG())
	frame := `<body style="margin:0"><img src="` + red + `" width="40" height="40">`
	box := `<div style="width:40px;height:40px"></div>`
	cases := []struct {
		name, body string
		shown      bool
	}{
		{"img", `<img src="` + red + `" width="40" height="40">`, false},
		{"srcset", `<img srcset="` + red + ` 1x" width="40" height="40">`, false},
		{"input image", `<input type="image" src="` + red + `" width="40" height="40">`, false},
		{"background", `<div style="width:40px;height:40px;background:url(` + red + `)"></div>`, false},
		{"svg image", `<svg width="40" height="40"><image href="` + red + `" width="40" height="40"/></svg>`, false},
		{"object", `<object data="` + red + `" type="image/png" width="40" height="40"></object>`, false},
		{"embed", `<embed src="` + red + `" type="image/png" width="40" height="40">`, false},
		{"data frame", `<iframe style="border:0" src="data:text/html;base64,` + base64.StdEncoding.EncodeToString([]byte(frame)) + `"></iframe>`, false},
		{"srcdoc frame", `<iframe style="border:0" srcdoc='` + frame + `'></iframe>`, false},
		{"stylesheet", `<link rel="stylesheet" href="data:text/css,div{background:%23ff0000}">` + box, false},
		{"meta policy", `<meta http-equiv="Content-Security-Policy" content="img-src data:"><img src="` + red + `" width="40" height="40">`, false},
		{"import", `<style>@import url("data:text/css,div{background:%23ff0000}");</style>` + box, false},
		// What the page may show, so that each case above can fail.
		{"http image", `<img src="` + srv.URL + `/red.png" width="40" height="40">`, true},
		{"style element", `<style>div{background:#ff0000}</style>` + box, true},
		{"style attribute", `<div style="width:40px;height:40px;background:#ff0000"></div>`, true},
	}
	for _, c := range cases {
		shot, err := p.Image(context.Background(), `<body style="margin:0">`+c.body+`</body>`, ImageOptions{Width: 200, Height: 200, MaxHeight: 500})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if red, _ := redPixels(t, shot); (red >= 1500) != c.shown {
			t.Errorf("%s: %d red pixels, want shown %v", c.name, red, c.shown)
		}
	}
}

// gifFrame is a frame of a GIF made by redGIF: its place and size.
type gifFrame struct{ left, top, w, h int }

// redGIF is a GIF whose logical screen is w×h and whose frames are red,
// each where it says, whatever the screen.
func redGIF(w, h int, frames ...gifFrame) []byte {
	var b bytes.Buffer
	le := func(v int) { b.Write([]byte{byte(v), byte(v >> 8)}) }
	b.WriteString("GIF89a")
	le(w)
	le(h)
	b.Write([]byte{0x80, 0, 0, 255, 0, 0, 0, 0, 0}) // a palette: red, black
	for _, f := range frames {
		b.WriteByte(0x2c)
		for _, v := range []int{f.left, f.top, f.w, f.h} {
			le(v)
		}
		b.Write([]byte{0, 2})
		var data bytes.Buffer
		zw := lzw.NewWriter(&data, lzw.LSB, 2)
		_, _ = zw.Write(make([]byte, f.w*f.h))
		_ = zw.Close()
		for d := data.Bytes(); len(d) > 0; {
			n := min(255, len(d))
			b.WriteByte(byte(n))
			b.Write(d[:n])
			d = d[n:]
		}
		b.WriteByte(0)
	}
	b.WriteByte(0x3b)
	return b.Bytes()
}

// TestGIFFramesCounted: a GIF is counted at the size Chromium decodes it
// to, its screen grown to hold its frames. Counted by its screen alone, a
// 33-byte GIF that says 1×1, with a frame of one pixel at (19999, 19999),
// passed the pixel budget and raised Chromium's memory by 3.5 GB.
func TestGIFFramesCounted(t *testing.T) {
	gifs := map[string][]byte{
		"/screen.gif": redGIF(40, 40, gifFrame{0, 0, 40, 40}),
		// Says 1×1; Chromium shows 200×200, the frame in its corner.
		"/offset.gif": redGIF(1, 1, gifFrame{160, 160, 40, 40}),
		// A later frame far out: Chromium crops it today; the count does
		// not rely on that.
		"/second.gif": redGIF(40, 40, gifFrame{0, 0, 40, 40}, gifFrame{160, 160, 40, 40}),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/gif")
		_, _ = w.Write(gifs[r.URL.Path])
	}))
	defer srv.Close()
	cases := []struct {
		path  string
		shown bool
	}{
		{"/screen.gif", true},
		{"/offset.gif", false},
		{"/second.gif", false},
	}
	// A budget of 100×100 pixels: the 40×40 GIF fits, 200×200 does not.
	p := newPoolWith(t, true, 20*time.Second, func(c *Config) { c.MaxImagePixels = 100 * 100 })
	for _, c := range cases {
		html := `<body style="margin:0"><img src="` + srv.URL + c.path + `"></body>`
		shot, err := p.Image(context.Background(), html, ImageOptions{Width: 300, Height: 300, MaxHeight: 500})
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		if red, _ := redPixels(t, shot); (red >= 1500) != c.shown {
			t.Errorf("%s: %d red pixels, want shown %v", c.path, red, c.shown)
		}
	}
}

// TestGIFBounds: the size counted for a GIF, frames and malformed files
// included.
func TestGIFBounds(t *testing.T) {
	withLCT := redGIF(10, 10, gifFrame{0, 0, 4, 4})
	// The frame's flags (after the separator and four sizes): a local
	// colour table of 2 entries, spliced in after the descriptor.
	at := bytes.IndexByte(withLCT[19:], 0x2c) + 19
	withLCT[at+9] = 0x80
	withLCT = append(withLCT[:at+10:at+10], append([]byte{1, 2, 3, 4, 5, 6}, withLCT[at+10:]...)...)
	cases := []struct {
		name string
		gif  []byte
		w, h int // 0: refused
	}{
		{"screen", redGIF(40, 30, gifFrame{0, 0, 40, 30}), 40, 30},
		{"first frame past the screen", redGIF(1, 1, gifFrame{160, 100, 40, 30}), 200, 130},
		{"zero screen", redGIF(0, 0, gifFrame{0, 0, 5, 7}), 5, 7},
		{"later frame", redGIF(10, 10, gifFrame{0, 0, 10, 10}, gifFrame{65535, 0, 1, 1}), 65536, 10},
		{"local colour table", withLCT, 10, 10},
		{"junk after the frame", append(redGIF(10, 10, gifFrame{0, 0, 10, 10}), "junk"...), 10, 10},
		{"junk before any frame", append([]byte("GIF89a\x0a\x00\x0a\x00\x00\x00\x00"), 0x99, 0x2c), 0, 0},
		{"no frame", redGIF(10, 10), 0, 0},
		{"descriptor cut", redGIF(10, 10, gifFrame{0, 0, 10, 10})[:20], 0, 0},
		{"header cut", []byte("GIF89a\x0a\x00"), 0, 0},
	}
	for _, c := range cases {
		cfg, err := gifBounds(c.gif)
		if c.w == 0 {
			if err == nil {
				t.Errorf("%s: %dx%d, want refused", c.name, cfg.Width, cfg.Height)
			}
			continue
		}
		if err != nil || cfg.Width != c.w || cfg.Height != c.h {
			t.Errorf("%s: %dx%d, %v; want %dx%d", c.name, cfg.Width, cfg.Height, err, c.w, c.h)
		}
	}
}

// TestPageMemoryBounded: on Linux, a page that needs more memory than
// Config.MaxPageMemory crashes its own renderer, and its job fails with
// a *PageCrash that is OutOfMemory (Chromium ends the renderer with
// SIGTRAP) within moments, not at the timeout; the browser goes on
// rendering. The page is 150 forced page breaks under a position: fixed
// element of 200,000 words, which printing repeats on every page (22 MB
// a page, and more the more words). Uncapped, it took gigabytes until
// the timeout.
func TestPageMemoryBounded(t *testing.T) {
	if !PageMemoryBounded {
		t.Skip("page memory is bounded on Linux only")
	}
	var html strings.Builder
	html.WriteString(`<body style="margin:0"><div style="position:fixed;top:0;left:0;width:700px">`)
	for i := range 200000 {
		fmt.Fprintf(&html, "w%d ", i)
	}
	html.WriteString(`</div>` + strings.Repeat(`<div style="break-before:page">x</div>`, 150) + `</body>`)

	p := newPoolWith(t, false, 40*time.Second, func(c *Config) { c.MaxPageMemory = 1 << 30 })
	began := time.Now()
	err := p.PDF(context.Background(), html.String(), PDFOptions{WidthIn: 8.27, HeightIn: 11.69, Width: 800}, io.Discard)
	if crash := (*PageCrash)(nil); !errors.As(err, &crash) || !crash.OutOfMemory() {
		t.Fatalf("%v after %v, want a *PageCrash out of memory (SIGTRAP)", err, time.Since(began))
	}
	if elapsed := time.Since(began); elapsed > 30*time.Second {
		t.Errorf("failed after %v", elapsed)
	}
	var pdf bytes.Buffer
	if err := p.PDF(context.Background(), `<p>after</p>`, PDFOptions{WidthIn: 8.27, HeightIn: 11.69, Width: 800}, &pdf); err != nil || !bytes.HasPrefix(pdf.Bytes(), []byte("%PDF-")) {
		t.Fatalf("after the crash: %v", err)
	}
	// Every renderer has the cap, the ones forked before the pool set it
	// included.
	all := renderers(chromedp.FromContext(p.current.ctx).Browser.Process().Pid)
	if len(all) == 0 {
		t.Fatal("no renderer found")
	}
	for _, pid := range all {
		limits, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/limits")
		if !regexp.MustCompile(`Max data size\s+1073741824\s+1073741824`).Match(limits) {
			t.Errorf("renderer %d: %s", pid, limits)
		}
	}
}
