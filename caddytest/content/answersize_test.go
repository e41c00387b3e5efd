package content

import (
	"bytes"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/testutil/testimage"
)

// noiseHost serves n noise JPEGs of size×size at /<i>.jpg.
func noiseHost(t *testing.T, n, size int) *httptest.Server {
	imgs := make([][]byte, n)
	for i := range imgs {
		imgs[i] = testimage.NoiseJPEG(size, size, uint32(i+1))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var i int
		if _, err := fmt.Sscanf(r.URL.Path, "/%d.jpg", &i); err != nil || i < 0 || i >= n {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "image/jpeg")
		_, _ = w.Write(imgs[i])
	}))
	t.Cleanup(srv.Close)
	return srv
}

// heapPeak runs f and returns how far the process's Go heap (Caddy runs
// in the test's process) rose above where it was, sampled every 20 ms.
func heapPeak(f func()) int64 {
	base := heapInUse()
	var peak atomic.Int64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if v := int64(ms.HeapInuse); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	<-done
	return peak.Load() - base
}

func imagesPage(srv *httptest.Server, n, size int) string {
	var b strings.Builder
	b.WriteString(`<body style="margin:0;line-height:0">`)
	for i := range n {
		fmt.Fprintf(&b, `<img src="%s/%d.jpg" width="%d" height="%d">`, srv.URL, i, size, size)
	}
	return b.String()
}

// TestRenderAnswersBounded: an image answer is at most 16 Mi pixels
// (a shot as tall as the content is cut there, a larger width × height is
// refused), so at most 48 MiB of PNG even of noise; a PDF goes from the
// browser to its file in pieces. A 4096 px wide shot of 58 MB of noise
// images was a 200 MB PNG (4096 × 16384), and Caddy's heap rose by 1.3 GiB
// while it was answered.
func TestRenderAnswersBounded(t *testing.T) {
	tester := start(t)
	big := noiseHost(t, 16, 2048)
	noise := imagesPage(big, 16, 2048) // 4096 × 16384 px of noise at width 4096

	var r response
	grown := heapPeak(func() {
		r = postJSON(t, heavySite+"/v1/page/image", map[string]any{"html": noise, "width": 4096, "file_type": "png"})
	})
	if r.status != http.StatusOK {
		t.Fatalf("image: status %d: %.300s", r.status, r.body)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("image: %d bytes, %d×%d, heap +%d MiB", len(r.body), cfg.Width, cfg.Height, grown>>20)
	if cfg.Width != 4096 || cfg.Height != 4096 || len(r.body) > 48<<20+1<<20 {
		t.Errorf("image %d×%d of %d bytes; want 4096×4096 (16 Mi pixels), at most 49 MiB", cfg.Width, cfg.Height, len(r.body))
	}
	if grown > 600<<20 {
		t.Errorf("the heap rose by %d MiB while the image was answered", grown>>20)
	}

	r = postJSON(t, heavySite+"/v1/page/image", map[string]any{"html": noise, "width": 4096, "height": 8192, "file_type": "png"})
	if r.status != http.StatusBadRequest {
		t.Errorf("4096 × 8192: status %d, want 400", r.status)
	} else if code, _, details := exportError(t, r); code != 4102 || !strings.Contains(details, "16777216 pixels") {
		t.Errorf("4096 × 8192: code %d, %q; want 4102 naming the bound", code, details)
	}

	many := noiseHost(t, 100, 1024)
	r = postJSON(t, heavySite+"/v1/page/pdf", map[string]any{"html": imagesPage(many, 100, 1024), "page_size": "A4", "page_orientation": "portrait"})
	if r.status != http.StatusOK {
		t.Fatalf("pdf: status %d: %.300s", r.status, r.body)
	}
	_, _, pdf := downloadPDF(t, tester, r)
	if len(pdf) < 30<<20 || !bytes.HasPrefix(pdf, []byte("%PDF-")) || !bytes.Contains(pdf[len(pdf)-32:], []byte("%%EOF")) {
		t.Errorf("the PDF of 100 noise images: %d bytes, not whole", len(pdf))
	}
}
