package content

import (
	"bytes"
	"encoding/json"
	"image"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
)

// filesDir keeps the test PDFs.
var filesDir = filepath.Join(os.TempDir(), "content-caddytest-files")

func init() {
	config += `
:{$PORT_RENDER} {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		fetch {
			allow_private all
			timeout 30s
		}
		browser {
			tabs 2
			timeout 4s
			files_dir ` + filesDir + `
			files_ttl 1h
		}
	}
}

:{$PORT_HEAVY} {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		fetch {
			allow_private all
			timeout 30s
		}
		browser {
			tabs 1
			timeout 60s
			files_dir ` + filesDir + `
			files_ttl 1h
		}
	}
}

:{$PORT_OFF} {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		browser off
	}
}
`
}

// renderClient waits longer than the tester's client: a site's first
// render starts its browser, which on a loaded machine takes seconds.
var renderClient = &http.Client{Timeout: time.Minute}

// downloadPDF reads a PDF answer's body members and downloads the file
// its url names: the members, the download's response (its body read and
// closed) and the file.
func downloadPDF(t *testing.T, tester *testcaddy.Tester, r response) (map[string]string, *http.Response, []byte) {
	t.Helper()
	var ans struct {
		Body map[string]string `json:"body"`
	}
	if err := json.Unmarshal(r.body, &ans); err != nil {
		t.Fatalf("PDF answer %.300s: %v", r.body, err)
	}
	res, err := tester.Client.Get(ans.Body["url"])
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	return ans.Body, res, data
}

func postJSON(t *testing.T, url string, body any) response {
	t.Helper()
	start(t)
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+apiToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := renderClient.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer res.Body.Close()
	got, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	r := response{status: res.StatusCode, header: res.Header, body: got}
	checkRequestID(t, r)
	noSecrets(t, r)
	return r
}

// tallHTML is a page of 3000 px of red blocks: several printed pages.
const tallHTML = `<!DOCTYPE html><html><body style="margin:0">` +
	`<div style="height:3000px;background:#ff0000">tall</div></body></html>`

// shortHTML is a 200×100 red block.
const shortHTML = `<!DOCTYPE html><html><body style="margin:0;background:#fff">` +
	`<div style="width:200px;height:100px;background:#ff0000"></div><p>hello</p></body></html>`

var (
	pageObject = regexp.MustCompile(`/Type\s*/Page[^s]`)
	mediaBox   = regexp.MustCompile(`/MediaBox\s*\[\s*0\s+0\s+([0-9.]+)\s+([0-9.]+)\s*\]`)
)

// pdfPages returns a PDF's page count and its first page's size in points.
func pdfPages(t *testing.T, data []byte) (int, float64, float64) {
	t.Helper()
	if !bytes.HasPrefix(data, []byte("%PDF-")) {
		t.Fatalf("not a PDF: %.40q", data)
	}
	m := mediaBox.FindSubmatch(data)
	if m == nil {
		t.Fatal("no MediaBox")
	}
	w, _ := strconv.ParseFloat(string(m[1]), 64)
	h, _ := strconv.ParseFloat(string(m[2]), 64)
	return len(pageObject.FindAll(data, -1)), w, h
}

func near(a, b float64) bool { return a > b-2 && a < b+2 }

func TestPDFExport(t *testing.T) {
	tester := start(t)
	for _, tc := range []struct {
		name, size, orient, html string
		minPages, maxPages       int
		w, h                     float64 // points
	}{
		{"A4 portrait, tall", "A4", "portrait", tallHTML, 3, 6, 595.4, 841.7},
		{"A4 landscape", "a4", "landscape", shortHTML, 1, 1, 841.7, 595.4},
		{"Letter", "Letter", "portrait", shortHTML, 1, 1, 612, 792},
		{"A3", "A3", "portrait", tallHTML, 2, 4, 841.7, 1190.9},
		{"Full: one page, 900px wide", "Full", "portrait", tallHTML, 1, 1, 675, 2250.8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := postJSON(t, renderSite+"/v1/message/pdf", map[string]string{"html": tc.html, "page_size": tc.size, "page_orientation": tc.orient})
			if r.status != http.StatusOK {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			b, res, data := downloadPDF(t, tester, r)
			if b["content_type"] != "application/pdf" || b["page_orientation"] != strings.ToLower(tc.orient) ||
				!strings.EqualFold(b["page_size"], tc.size) || !strings.HasSuffix(b["url"], "/v1/files/"+b["filename"]) ||
				!strings.HasPrefix(b["url"], renderSite+"/") {
				t.Fatalf("answer %s", r.body)
			}
			if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/pdf" {
				t.Fatalf("download: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
			}
			pages, w, h := pdfPages(t, data)
			if pages < tc.minPages || pages > tc.maxPages || !near(w, tc.w) || !near(h, tc.h) {
				t.Errorf("%d pages of %.1f×%.1f pt, want %d–%d of %.1f×%.1f", pages, w, h, tc.minPages, tc.maxPages, tc.w, tc.h)
			}
		})
	}
	// A name that was never issued, or not a name at all, is not found.
	for _, p := range []string{"/v1/files/0123456789abcdef0123456789abcdef.pdf", "/v1/files/../Caddyfile", "/v1/files/x.pdf"} {
		res, err := tester.Client.Get(renderSite + p)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 404 {
			t.Errorf("GET %s: %d, want 404", p, res.StatusCode)
		}
	}
}

// countRed counts the pure red pixels of an image.
func countRed(img image.Image) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			if r>>8 > 230 && g>>8 < 30 && bl>>8 < 30 {
				n++
			}
		}
	}
	return n
}

func TestImageExport(t *testing.T) {
	start(t) // sets the sites' URLs when this test runs on its own
	for _, tc := range []struct {
		name string
		body map[string]any
		ct   string
		w, h int
	}{
		{"png, width and height", map[string]any{"html": shortHTML, "width": 400, "height": 300, "file_type": "png"}, "image/png", 400, 300},
		{"jpg", map[string]any{"html": shortHTML, "width": 320, "height": 120, "file_type": "jpg"}, "image/jpeg", 320, 120},
		{"size: height follows the content", map[string]any{"html": tallHTML, "size": "250", "file_type": "png"}, "image/png", 250, 3000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := postJSON(t, renderSite+"/v1/page/image", tc.body)
			if r.status != http.StatusOK || r.header.Get("Content-Type") != tc.ct || r.header.Get("Cache-Control") != "no-store" {
				t.Fatalf("status %d %s: %.200s", r.status, r.header.Get("Content-Type"), r.body)
			}
			var img image.Image
			var err error
			if tc.ct == "image/png" {
				img, err = png.Decode(bytes.NewReader(r.body))
			} else {
				img, err = jpeg.Decode(bytes.NewReader(r.body))
			}
			if err != nil {
				t.Fatal(err)
			}
			if b := img.Bounds(); b.Dx() != tc.w || b.Dy() < tc.h-1 || b.Dy() > tc.h+20 {
				t.Errorf("image %v, want %d×%d", b, tc.w, tc.h)
			}
			if red := countRed(img); red < 15000 {
				t.Errorf("%d red pixels: the red block is not there", red)
			}
		})
	}
}

// TestRenderHungPage: a page whose image never arrives is answered 504
// once browser.timeout passes, and the service renders afterwards.
func TestRenderHungPage(t *testing.T) {
	start(t) // sets the sites' URLs when this test runs on its own
	srv, _ := imageHost(t)
	began := time.Now()
	r := postJSON(t, renderSite+"/v1/message/image", map[string]any{
		"html": `<img src="` + srv.URL + `/hang/x.png">`, "width": 100, "file_type": "png"})
	if r.status != http.StatusGatewayTimeout {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if code, _, _ := exportError(t, r); code != 5040 {
		t.Errorf("code %d, want 5040", code)
	}
	if elapsed := time.Since(began); elapsed > 15*time.Second {
		t.Errorf("answered after %v", elapsed)
	}
	r = postJSON(t, renderSite+"/v1/message/image", map[string]any{"html": shortHTML, "width": 100, "file_type": "png"})
	if r.status != http.StatusOK {
		t.Fatalf("after the timeout: %d %s", r.status, r.body)
	}
}

// TestRenderPrivateImageNotFetched: without allow_private, the image of
// the HTML on loopback is never requested; the render still succeeds.
func TestRenderPrivateImageNotFetched(t *testing.T) {
	start(t) // sets the sites' URLs when this test runs on its own
	srv, hits := imageHost(t)
	r := postJSON(t, mainSite+"/v1/message/image", map[string]any{
		"html": `<img src="` + srv.URL + `/img/100/a.png">` + shortHTML, "width": 300, "file_type": "png"})
	if r.status != http.StatusOK {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	if hits.Load() != 0 {
		t.Fatalf("the loopback image host got %d requests", hits.Load())
	}
	// With allow_private, the same image is fetched: the test can fail.
	r = postJSON(t, renderSite+"/v1/message/image", map[string]any{
		"html": `<img src="` + srv.URL + `/img/100/a.png">`, "width": 300, "file_type": "png"})
	if r.status != http.StatusOK || hits.Load() == 0 {
		t.Fatalf("allow_private: status %d, %d requests", r.status, hits.Load())
	}
}

func TestRenderErrors(t *testing.T) {
	start(t) // sets the sites' URLs when this test runs on its own
	for _, tc := range []struct {
		name, site, path string
		body             any
		status, code     int
		details          string
	}{
		{"no html", renderSite, "/v1/message/pdf", map[string]any{"page_size": "A4", "page_orientation": "portrait"}, 400, 4102, "html is required"},
		{"bad page_size", renderSite, "/v1/message/pdf", map[string]any{"html": "x", "page_size": "B5", "page_orientation": "portrait"}, 400, 4102, "page_size"},
		{"bad orientation", renderSite, "/v1/page/pdf", map[string]any{"html": "x", "page_size": "A4", "page_orientation": "diagonal"}, 400, 4102, "page_orientation"},
		{"html not a string", renderSite, "/v1/page/pdf", map[string]any{"html": 5}, 400, 4102, "html"},
		{"bad file_type", renderSite, "/v1/message/image", map[string]any{"html": "x", "width": 10, "file_type": "gif"}, 400, 4102, "file_type"},
		{"no size", renderSite, "/v1/message/image", map[string]any{"html": "x", "file_type": "png"}, 400, 4102, "width"},
		{"too wide", renderSite, "/v1/message/image", map[string]any{"html": "x", "width": 100000, "file_type": "png"}, 400, 4102, "width must be"},
		{"too tall", renderSite, "/v1/message/image", map[string]any{"html": "x", "width": 10, "height": 100000, "file_type": "png"}, 400, 4102, "height must be"},
		{"bad size", renderSite, "/v1/message/image", map[string]any{"html": "x", "size": "large", "file_type": "png"}, 400, 4102, "size"},
		{"turned off", offSite, "/v1/message/pdf", map[string]any{"html": "x", "page_size": "A4", "page_orientation": "portrait"}, 501, 501, "turned off"},
		{"turned off image", offSite, "/v1/page/image", map[string]any{"html": "x", "width": 10, "file_type": "png"}, 501, 501, "turned off"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := postJSON(t, tc.site+tc.path, tc.body)
			if r.status != tc.status {
				t.Fatalf("status %d, want %d: %s", r.status, tc.status, r.body)
			}
			if code, _, details := exportError(t, r); code != tc.code || !strings.Contains(details, tc.details) {
				t.Errorf("code %d details %q, want %d with %q", code, details, tc.code, tc.details)
			}
		})
	}
	tester := start(t)
	if r := post(t, tester, http.MethodPost, renderSite+"/v1/message/pdf", nil, []byte(`{}`)); r.status != 401 {
		t.Errorf("no token: %d", r.status)
	}
}

// TestReloadStopsBrowser: a reload stops the old config's browser (its
// process and profile are gone), and the new config renders with its own.
func TestReloadStopsBrowser(t *testing.T) {
	tester := start(t)
	if r := postJSON(t, renderSite+"/v1/message/image", map[string]any{"html": shortHTML, "width": 50, "file_type": "png"}); r.status != 200 {
		t.Fatalf("render: %d %s", r.status, r.body)
	}
	before := browserProfiles(t)
	if len(before) == 0 {
		t.Fatal("no browser process found after a render")
	}
	// A different config (one more site) replaces every handler.
	tester.InitServer(config+"\n:{$PORT_EXTRA} {\n\trespond ok\n}\n", "caddyfile")
	// The processes go first, then (once their tabs' handlers are done)
	// the profiles, which Chromium's helpers may write into for seconds
	// after on a loaded machine (removeProfile tries for ten).
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		left := 0
		now := browserProfiles(t)
		for dir := range before {
			if _, err := os.Stat(dir); now[dir] || !os.IsNotExist(err) {
				left++
			}
		}
		if left == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	now := browserProfiles(t)
	for dir := range before {
		if now[dir] {
			t.Errorf("the browser with profile %s outlived the reload", dir)
		}
		if _, err := os.Stat(dir); !os.IsNotExist(err) {
			t.Errorf("profile %s outlived the reload", dir)
		}
	}
	tester.InitServer(config, "caddyfile")
	if r := postJSON(t, renderSite+"/v1/message/image", map[string]any{"html": shortHTML, "width": 50, "file_type": "png"}); r.status != 200 {
		t.Fatalf("render after the reload: %d %s", r.status, r.body)
	}
}

// browserProfiles returns the profile folders of this process's running
// browsers (children of the test binary, which runs Caddy).
func browserProfiles(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	self := strconv.Itoa(os.Getpid())
	for _, p := range procs {
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join(filepath.Dir(p), "stat"))
		if err != nil {
			continue
		}
		fields := strings.Fields(string(stat))
		if len(fields) < 4 || fields[2] == "Z" || fields[3] != self {
			continue
		}
		for _, arg := range strings.Split(string(data), "\x00") {
			if dir, ok := strings.CutPrefix(arg, "--user-data-dir="); ok && strings.Contains(dir, "content-service-chromium-") {
				out[dir] = true
			}
		}
	}
	return out
}
