package fsp

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/testutil/conntest"
	"github.com/designbridge/caddy-designbridge/testutil/imagebomb"
)

// onlyFirstLoopback stands for "public": 127.0.0.1 is allowed, every other
// address (127.0.0.2 and ::1 included) is treated as private.
func onlyFirstLoopback(ip netip.Addr) bool { return ip == netip.MustParseAddr("127.0.0.1") }

func listen(t *testing.T, addr string, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen on %s: %v", addr, err)
	}
	s := httptest.NewUnstartedServer(h)
	s.Listener = l
	s.Start()
	t.Cleanup(s.Close)
	return s.URL
}

// TestFetchChecksEveryDial: the address policy applies at dial time, so a
// redirect from an allowed host to a refused one fails, and so does a name
// that resolves to a refused address.
func TestFetchChecksEveryDial(t *testing.T) {
	png := testImage(t, "png", 10, 10)
	private := listen(t, "127.0.0.2:0", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(png) }))
	public := listen(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, private+"/x.png", http.StatusFound)
		default:
			_, _ = w.Write(png)
		}
	}))
	f := newFetcher(1<<20, 2*time.Second, 0, onlyFirstLoopback)
	defer f.close()
	ctx := context.Background()
	if _, err := f.fetch(ctx, public+"/x.png"); err != nil {
		t.Fatalf("allowed address: %v", err)
	}
	for _, source := range []string{public + "/redirect", private + "/x.png"} {
		_, err := f.fetch(ctx, source)
		var ue *uploadError
		if !errors.As(err, &ue) || !strings.Contains(ue.reason, "not allowed") {
			t.Errorf("%s: %v, want address not allowed", source, err)
		}
	}
	// Without a policy the same redirect is followed: the test above fails
	// for the policy, not for an unreachable server.
	open := newFetcher(1<<20, 2*time.Second, 0, nil)
	defer open.close()
	if _, err := open.fetch(ctx, public+"/redirect"); err != nil {
		t.Errorf("redirect without a policy: %v", err)
	}
}

// TestFetchMinRate: a source that keeps sending, but more slowly than the
// minimum rate, is cut once the grace period is over, long before the
// total time limit.
func TestFetchMinRate(t *testing.T) {
	srv := listen(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 600; i++ { // 50 bytes a second for up to a minute
			if _, err := w.Write(make([]byte, 10)); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}))
	f := newFetcher(1<<20, time.Minute, 1000, nil)
	defer f.close()
	_, err := f.fetch(context.Background(), srv+"/")
	if err == nil || !strings.Contains(err.Error(), "arrived too slowly") {
		t.Errorf("a source at 50 B/s with a minimum of 1000 B/s: %v", err)
	}
}

func TestFetchLimits(t *testing.T) {
	srv := listen(t, "127.0.0.1:0", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/big":
			_, _ = w.Write(make([]byte, 2048))
		case "/exact":
			_, _ = w.Write(make([]byte, 1024))
		case "/chunked-big":
			for i := 0; i < 4; i++ {
				_, _ = w.Write(make([]byte, 512))
				w.(http.Flusher).Flush()
			}
		case "/slow":
			_, _ = w.Write([]byte("x"))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/empty":
		case "/cut-short":
			// Promises 1000 bytes and ends the connection after 100.
			w.Header().Set("Content-Length", "1000")
			_, _ = w.Write(make([]byte, 100))
		case "/cut-short-chunked":
			// A chunked answer whose connection ends before its last chunk.
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n64\r\n" + strings.Repeat("x", 100) + "\r\n")
			_ = buf.Flush()
			conn.Close()
		}
	}))
	f := newFetcher(1024, 300*time.Millisecond, 0, nil)
	defer f.close()
	for _, c := range []struct{ path, want string }{
		{"/exact", ""},
		{"/big", "larger than 1024"},
		{"/chunked-big", "larger than 1024"},
		{"/slow", "too long"},
		{"/loop", "could not be fetched"},
		{"/empty", "empty"},
		// A source whose connection ends early is not a shorter file.
		{"/cut-short", "could not be read"},
		{"/cut-short-chunked", "could not be read"},
	} {
		_, err := f.fetch(context.Background(), srv+c.path)
		if c.want == "" {
			if err != nil {
				t.Errorf("%s: %v", c.path, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.path, err, c.want)
		}
	}
	for _, bad := range []string{"ftp://example.com/x", "file:///etc/passwd", "/relative", "http://", "::"} {
		if _, err := f.fetch(context.Background(), bad); err == nil {
			t.Errorf("%q fetched", bad)
		}
	}
}

func testImage(t testing.TB, format string, w, h int) []byte {
	img := image.NewPaletted(image.Rect(0, 0, w, h), []color.Color{color.White, color.Black})
	var b bytes.Buffer
	var err error
	switch format {
	case "png":
		err = png.Encode(&b, img)
	case "jpeg":
		err = jpeg.Encode(&b, img, nil)
	case "gif":
		err = gif.Encode(&b, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestCheckContent(t *testing.T) {
	pngData := testImage(t, "png", 4, 4)
	for _, c := range []struct {
		name string
		data []byte
		want string // sniffed type or error text
	}{
		{"a.png", pngData, "image/png"},
		{"a.jpg", testImage(t, "jpeg", 4, 4), "image/jpeg"},
		{"a.JPEG", testImage(t, "jpeg", 4, 4), "image/jpeg"},
		{"a.gif", testImage(t, "gif", 4, 4), "image/gif"},
		{"a.pdf", []byte("%PDF-1.7\n"), "application/pdf"},
		{"notes.txt", []byte("hello\n"), "text/plain"},
		{"report.docx", []byte("PK\x03\x04rest"), "application/zip"},
		{"noext", pngData, "needs an extension"},
		{"a.", pngData, "needs an extension"},
		{"a.htm", pngData, "never stored"},
		{"a.html", []byte("just text"), "never stored"},
		{"a.xhtml", []byte("just text"), "never stored"},
		{"a.svg", []byte("just text <svg onload=alert(1)>"), "never stored"},
		{"a.xml", []byte("just text"), "never stored"},
		{"a.js", []byte("alert(1)"), "never stored"},
		{"a.mjs", []byte("alert(1)"), "never stored"},
		{"a.shtml", []byte("just text"), "stored"},
		{"a.xsl", []byte("just text"), "stored"},
		{"page.txt", []byte("<html><script>alert(1)</script>"), "can run script"},
		{"page.txt", []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`), "can run script"},
		{"page.csv", []byte("<!DOCTYPE html><p>x"), "can run script"},
		{"a.mp4", []byte("\x00\x00\x00\x18ftypmp42\x00\x00\x00\x00mp42isom" + strings.Repeat("\x00", 16)), "video/mp4"},
		{"a.mp3", []byte("ID3\x03\x00\x00\x00\x00\x00\x0f" + strings.Repeat("\x00", 16)), "audio/mpeg"},
		{"a.webm", []byte("\x1a\x45\xdf\xa3" + strings.Repeat("\x00", 16)), "video/webm"},
		{"a.mp4", []byte("plain words"), "not the video/mp4"},
		{"a.mp3", []byte("<html><script>alert(1)</script>"), "can run script"},
		{"a.png", []byte("plain text"), "not the image/png"},
		{"a.jpg", pngData, "not the image/jpeg"},
		{"a.png", pngData[:20], "damaged"},
		{"a.html", []byte("<html><script>alert(1)</script>"), "never stored"},
		{"a.svg", []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>`), "never stored"},
		{"a.bin", []byte{0, 1, 2, 3, 0xff}, "not stored"},
		{"a.txt", []byte{0, 1, 2, 3, 0xff}, "not the text/plain"},
	} {
		got, err := checkContent(c.name, c.data, defaultAllowedTypes())
		if err != nil {
			got = err.Error()
		}
		if !strings.Contains(got, c.want) {
			t.Errorf("checkContent(%s) = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestCheckAllowType(t *testing.T) {
	for _, c := range []struct{ typ, want string }{
		{"image/png", ""},
		{"video/mp4", ""},
		{"png", "type/subtype"},
		{"Image/PNG", "type/subtype"},
		{"image/", "type/subtype"},
		{"text/plain; charset=utf-8", "type/subtype"},
		{"text/html", "script"},
		{"image/svg+xml", "script"},
		{"text/xml", "script"},
		{"application/atom+xml", "script"},
		{"text/javascript", "script"},
		{"application/x-tar", "no file name extension"},
	} {
		err := checkAllowType(c.typ)
		if (err == nil) != (c.want == "") || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("checkAllowType(%q) = %v, want %q", c.typ, err, c.want)
		}
	}
}

// FuzzCheckContent: whatever the name and bytes, an accepted upload has an
// extension fsp lists, content that sniffs as that extension's type, and
// neither the name's served type nor the content is one a browser runs.
func FuzzCheckContent(f *testing.F) {
	for _, seed := range []struct {
		name string
		data []byte
	}{
		{"a.png", testImage(f, "png", 2, 2)},
		{"a.txt", []byte("hello")},
		{"a.html", []byte("<html>")},
		{"a.svg", []byte("text")},
		{"a.txt", []byte("<?xml version=\"1.0\"?><svg/>")},
		{"a.PDF", []byte("%PDF-1.4")},
		{"x.htm", testImage(f, "png", 2, 2)},
	} {
		f.Add(seed.name, seed.data)
	}
	allow := append(defaultAllowedTypes(), "video/mp4", "video/webm", "audio/mpeg", "audio/wave")
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		sniffed, err := checkContent(name, data, allow)
		if err != nil {
			return
		}
		ext := strings.ToLower(path.Ext(name))
		ft, ok := fileTypes[ext]
		if !ok {
			t.Fatalf("%q accepted with an unlisted extension", name)
		}
		direct, _, _ := mime.ParseMediaType(http.DetectContentType(data))
		if sniffed != ft.sniffed || direct != sniffed {
			t.Fatalf("%q: content %s (%s) accepted for %s", name, sniffed, direct, ft.sniffed)
		}
		served, _, _ := mime.ParseMediaType(mime.TypeByExtension(ext))
		if activeType(direct) || activeType(served) || activeType(typeForName(name)) {
			t.Fatalf("%q: an active type was accepted (%s, %s)", name, direct, served)
		}
	})
}

func TestThumbnail(t *testing.T) {
	for _, c := range []struct {
		format       string
		w, h         int
		wantW, wantH int
	}{
		{"png", 400, 300, 200, 150},
		{"jpeg", 120, 500, 48, 200},
		{"gif", 1000, 1, 200, 1},
		{"png", 50, 60, 50, 60},
		{"png", 200, 200, 200, 200},
	} {
		out, err := makeThumbnail(testImage(t, c.format, c.w, c.h), defaultMaxImageMemory, newThumbEncoder())
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(out))
		if err != nil || cfg.Width != c.wantW || cfg.Height != c.wantH {
			t.Errorf("%s %dx%d: thumbnail %dx%d (%v), want %dx%d", c.format, c.w, c.h, cfg.Width, cfg.Height, err, c.wantW, c.wantH)
		}
	}
}

// TestThumbnailKinds: every decoded type the scaler is fed (paletted,
// 16-bit, interlaced, gray, YCbCr) gives a thumbnail of the right size and
// colour.
func TestThumbnailKinds(t *testing.T) {
	nrgba64 := image.NewNRGBA64(image.Rect(0, 0, 300, 100))
	gray16 := image.NewGray16(image.Rect(0, 0, 300, 100))
	paletted := image.NewPaletted(image.Rect(0, 0, 300, 100), color.Palette{color.NRGBA{200, 10, 10, 255}})
	for i := 0; i < len(nrgba64.Pix); i += 8 {
		copy(nrgba64.Pix[i:], []byte{200, 0, 10, 0, 10, 0, 255, 255})
	}
	for i := 0; i < len(gray16.Pix); i += 2 {
		copy(gray16.Pix[i:], []byte{200, 0})
	}
	encode := func(img image.Image) []byte {
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	var jb bytes.Buffer
	_ = jpeg.Encode(&jb, paletted, &jpeg.Options{Quality: 95})
	for _, c := range []struct {
		name string
		data []byte
		want color.NRGBA
	}{
		{"nrgba64", encode(nrgba64), color.NRGBA{200, 10, 10, 255}},
		{"gray16", encode(gray16), color.NRGBA{200, 200, 200, 255}},
		{"paletted", encode(paletted), color.NRGBA{200, 10, 10, 255}},
		{"interlaced 16-bit", imagebomb.PNGOfZeros(300, 100, 16, 6, true), color.NRGBA{0, 0, 0, 0}},
		{"interlaced gray", imagebomb.PNGOfZeros(300, 100, 8, 0, true), color.NRGBA{0, 0, 0, 255}},
		{"jpeg", jb.Bytes(), color.NRGBA{200, 10, 10, 255}},
	} {
		out, err := makeThumbnail(c.data, defaultMaxImageMemory, newThumbEncoder())
		if err != nil || out == nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		img, err := png.Decode(bytes.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		if b := img.Bounds(); b.Dx() != 200 || b.Dy() != 66 {
			t.Errorf("%s: %v", c.name, b)
		}
		got := color.NRGBAModel.Convert(img.At(100, 33)).(color.NRGBA)
		near := func(a, b uint8) bool { return a-b < 8 || b-a < 8 }
		if !near(got.R, c.want.R) || !near(got.G, c.want.G) || !near(got.B, c.want.B) || got.A != c.want.A {
			t.Errorf("%s: colour %v, want %v", c.name, got, c.want)
		}
	}
}

// TestThumbnailQuality: fine detail averages out instead of aliasing
// (stripes one pixel wide, every third one white, give an even grey, where
// sampling a few pixels would give bands), and transparency is kept.
func TestThumbnailQuality(t *testing.T) {
	stripes := image.NewGray(image.Rect(0, 0, 1600, 1000))
	for y := range 1000 {
		for x := range 1600 {
			if x%3 == 0 {
				stripes.Pix[y*stripes.Stride+x] = 255
			}
		}
	}
	half := image.NewNRGBA(image.Rect(0, 0, 800, 400)) // clear left half
	for y := range 400 {
		for x := 400; x < 800; x++ {
			half.SetNRGBA(x, y, color.NRGBA{30, 140, 220, 255})
		}
	}
	decode := func(img image.Image) image.Image {
		var b bytes.Buffer
		if err := png.Encode(&b, img); err != nil {
			t.Fatal(err)
		}
		out, err := makeThumbnail(b.Bytes(), defaultMaxImageMemory, newThumbEncoder())
		if err != nil || out == nil {
			t.Fatal(err)
		}
		m, err := png.Decode(bytes.NewReader(out))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	m := decode(stripes)
	lo, hi := uint8(255), uint8(0)
	for y := range m.Bounds().Dy() {
		for x := 1; x < m.Bounds().Dx()-1; x++ {
			g := color.GrayModel.Convert(m.At(x, y)).(color.Gray).Y
			lo, hi = min(lo, g), max(hi, g)
		}
	}
	if lo < 85-25 || hi > 85+25 { // a third of 255
		t.Errorf("stripes: grey from %d to %d, want about 85 throughout", lo, hi)
	}
	m = decode(half)
	for _, c := range []struct {
		x, y int
		want color.NRGBA
	}{{20, 50, color.NRGBA{}}, {180, 50, color.NRGBA{30, 140, 220, 255}}} {
		got := color.NRGBAModel.Convert(m.At(c.x, c.y)).(color.NRGBA)
		if got.A != c.want.A || (c.want.A != 0 && got != c.want) {
			t.Errorf("transparency: pixel (%d,%d) is %v, want %v", c.x, c.y, got, c.want)
		}
	}
}

// TestThumbnailBudget: the memory a thumbnail takes is worked out from the
// header before anything is decoded; an image over the budget is not
// decoded at all, however small its file.
func TestThumbnailBudget(t *testing.T) {
	bomb := imagebomb.PNGOfZeros(6320, 6320, 16, 6, true) // the 310 KB bomb
	for _, c := range []struct {
		name     string
		data     []byte
		min, max int64 // bounds of the worked-out cost
	}{
		{"interlaced 16-bit RGBA 6320²", bomb, 6320 * 6320 * 20, 1 << 40},
		{"plain 16-bit RGBA 6320²", imagebomb.PNGOfZeros(6320, 6320, 16, 6, false), 6320 * 6320 * 12, 6320 * 6320 * 16},
		{"8-bit RGBA 2000²", imagebomb.PNGOfZeros(2000, 2000, 8, 6, false), 2000 * 2000 * 4, 64 << 20},
		{"interlaced gray 2000²", imagebomb.PNGOfZeros(2000, 2000, 8, 0, true), 2000 * 2000 * 2, 64 << 20},
		// Decoded at 4 bytes a pixel, then halved to 200 high: about as
		// much again in the steps.
		{"1 pixel wide, 3,000,000 high", imagebomb.PNGOfZeros(1, 3_000_000, 8, 0, false), 3_000_000 * 8, 1 << 40},
	} {
		cost, err := thumbCost(c.data)
		if err != nil || cost < c.min || cost > c.max {
			t.Errorf("%s: cost %d (%v), want %d..%d", c.name, cost, err, c.min, c.max)
		}
	}
	// Headers at the largest sizes a PNG can state: the cost must not
	// wrap around to a small or negative figure (a 77-byte file that
	// passed the budget crashed the decoder with its allocation).
	for _, huge := range []struct{ w, h int }{{1_000_000_000, 600_000_000}, {1<<31 - 1, 1<<31 - 1}, {1<<31 - 1, 1}} {
		for _, depth := range []byte{8, 16} {
			data := imagebomb.PNGHeader(huge.w, huge.h, depth, 6, true)
			if cost, err := thumbCost(data); err == nil && cost <= defaultMaxImageMemory {
				t.Errorf("%d×%d, %d-bit: cost %d, within the budget", huge.w, huge.h, depth, cost)
			}
			if out, err := makeThumbnail(data, defaultMaxImageMemory, newThumbEncoder()); out != nil {
				t.Errorf("%d×%d, %d-bit: a thumbnail (%v)", huge.w, huge.h, depth, err)
			}
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, err := makeThumbnail(bomb, defaultMaxImageMemory, newThumbEncoder())
	runtime.ReadMemStats(&after)
	if out != nil || err != nil {
		t.Errorf("the bomb got a thumbnail (%d bytes, %v)", len(out), err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 1<<20 {
		t.Errorf("refusing the bomb allocated %d bytes", n)
	}
	// Within the budget it is decoded, taking no more than worked out: a
	// PNG, and a colour JPEG (halved on its planes, see halveYCbCr).
	var photo bytes.Buffer
	if err := jpeg.Encode(&photo, ycbcrTestImage(2001, 1499, image.YCbCrSubsampleRatio420), nil); err != nil {
		t.Fatal(err)
	}
	for name, fits := range map[string][]byte{
		"PNG 2000²":      imagebomb.PNGOfZeros(2000, 2000, 8, 6, false),
		"JPEG 2001×1499": photo.Bytes(),
	} {
		runtime.ReadMemStats(&before)
		if out, err := makeThumbnail(fits, defaultMaxImageMemory, newThumbEncoder()); out == nil || err != nil {
			t.Fatalf("%s: no thumbnail for an image within the budget: %v", name, err)
		}
		runtime.ReadMemStats(&after)
		cost, _ := thumbCost(fits)
		if n := int64(after.TotalAlloc - before.TotalAlloc); n > cost {
			t.Errorf("%s: the thumbnail allocated %d bytes, more than the %d worked out", name, n, cost)
		}
	}
}

// TestClosedFetcherLeavesNoConnection: a fetch after close (a request the
// server being replaced by a reload still served) must not leave a
// kept-alive connection behind, since nothing would close it again.
func TestClosedFetcherLeavesNoConnection(t *testing.T) {
	src := conntest.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("file"))
	}))
	defer src.Close()
	for _, closed := range []bool{false, true} {
		f := newFetcher(1<<20, 2*time.Second, 0, nil)
		if closed {
			f.close()
		}
		if _, err := f.fetch(context.Background(), src.URL+"/a.png"); err != nil {
			t.Fatal(err)
		}
		switch {
		case closed:
			if n := src.WaitClosed(2 * time.Second); n != 0 {
				t.Errorf("a fetch after close left %d connection(s) open", n)
			}
		case src.Open() != 1:
			t.Errorf("a live fetcher kept %d connections, want 1 (kept alive)", src.Open())
		}
		f.transport.CloseIdleConnections()
		src.WaitClosed(2 * time.Second)
	}
}
