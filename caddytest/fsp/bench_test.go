package fsp

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
	"github.com/designbridge/caddy-designbridge/testutil/proccpu"
	"github.com/designbridge/caddy-designbridge/testutil/testimage"
)

// startBench runs the provider sites in this process's Caddy (caddytest's
// Tester needs a *testing.T) and returns the backend; edits, pairs of old
// and new text, change the provider's configuration.
func startBench(b *testing.B, mk func(testing.TB) backend, src *sources, edits ...string) backend {
	b.Helper()
	b.Setenv("FSP_TEST_S3_ACCESS", s3Access)
	b.Setenv("FSP_TEST_S3_SECRET", s3Secret)
	be := mk(b)
	hash, err := bcrypt.GenerateFromPassword([]byte(fspPassword), bcrypt.MinCost)
	if err != nil {
		b.Fatal(err)
	}
	sites := providerSites(be, src, "", string(hash))
	// the benchmark's uploads are 200 KB
	sites = strings.Replace(sites, "max_size 300KB", "max_size 1MB", 1)
	sites = strings.NewReplacer(edits...).Replace(sites)
	if status, body, err := testcaddy.Load([]byte(template(globalOptions()+sites)), "text/caddyfile", true); err != nil || status != http.StatusOK {
		b.Fatalf("loading config: %v %s", err, body)
	}
	b.Cleanup(func() { _ = testcaddy.Stop() })
	return be
}

// benchRuns numbers the runs of a benchmark function (the testing package
// calls it again with a larger b.N), so that each run has a fresh tree.
var benchRuns int

var benchClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}

// benchDo sends one FSP request as the vendor would and checks for success.
func benchDo(b *testing.B, method, target, uid, body string) {
	req, err := http.NewRequest(method, fmt.Sprintf("http://127.0.0.1:%d/fsp%s", livePort(providerPort), target), strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(fspUser+":"+fspPassword)))
	req.Header.Set("X-BEE-ClientId", "c1")
	req.Header.Set("X-BEE-Uid", uid)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := benchClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		b.Fatalf("%s %s: %d %s", method, target, res.StatusCode, got)
	}
}

// noisePNG is a PNG of random pixels of about size bytes (noise does not
// compress), so that its upload stores that much and makes a thumbnail.
func noisePNG(size int) []byte {
	side := 1
	for (side+1)*(side+1)*3 <= size {
		side++
	}
	img := image.NewRGBA(image.Rect(0, 0, side, side))
	r := rand.New(rand.NewPCG(1, 2))
	for y := 0; y < side; y++ {
		for x := 0; x < side; x++ {
			v := r.Uint32()
			img.Set(x, y, color.RGBA{uint8(v), uint8(v >> 8), uint8(v >> 16), 255})
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}

// BenchmarkList lists a folder of 1,000 files; one op is one listing.
func BenchmarkList(b *testing.B) {
	for _, bk := range backends {
		b.Run(bk.name, func(b *testing.B) {
			src := newSources(b)
			be := startBench(b, bk.make, src)
			benchRuns++
			uid := fmt.Sprintf("bench-list-%s-%d", bk.name, benchRuns)
			benchDo(b, "POST", "/many/", uid, "")
			// 1,000 files put in place without the handler, which would take
			// 1,000 uploads to fill it.
			for i := 0; i < 1000; i++ {
				be.put(b, fmt.Sprintf("c1/%s/many/file-%04d.pdf", uid, i), src.pdf)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				benchDo(b, "GET", "/many/", uid, "")
			}
		})
	}
}

// BenchmarkUpload uploads 100 PNG files of about 200 KB from a source on
// loopback (thumbnail included); one op is the 100 uploads.
func BenchmarkUpload(b *testing.B) {
	for _, bk := range backends {
		b.Run(bk.name, func(b *testing.B) {
			src := newSources(b)
			data := noisePNG(200 << 10)
			srv := http.NewServeMux()
			srv.HandleFunc("/noise.png", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(data) })
			src.Config.Handler = srv
			startBench(b, bk.make, src)
			benchRuns++
			uid := fmt.Sprintf("bench-upload-%s-%d", bk.name, benchRuns)
			b.SetBytes(int64(100 * len(data)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				dir := fmt.Sprintf("/run-%d/", i)
				benchDo(b, "POST", dir, uid, "")
				for j := 0; j < 100; j++ {
					benchDo(b, "POST", fmt.Sprintf("%sfile-%03d.png", dir, j), uid, upload(src.URL+"/noise.png", "replace"))
				}
			}
			b.ReportMetric(float64(len(data)), "bytes/file")
		})
	}
}

// put writes a file straight into the back end's store.
func (be backend) put(b *testing.B, key string, data []byte) {
	b.Helper()
	if be.write == nil {
		b.Fatal("no direct write for " + be.name)
	}
	be.write(b, key, data)
}

// BenchmarkUploadPhoto uploads JPEG photos (fetched from a loopback
// source) to a local folder, with their thumbnail and without it
// (max_image_memory too small for any), and reports the CPU time of the
// whole process per upload (Caddy, the source and the client): the
// difference is what the thumbnail costs, the rest an upper bound of what
// the upload costs without it.
func BenchmarkUploadPhoto(b *testing.B) {
	for _, size := range []image.Point{{1600, 1067}, {4000, 3000}} {
		data := photoJPEG(size.X, size.Y)
		for _, thumb := range []bool{true, false} {
			name := fmt.Sprintf("%dx%d/thumbnail=%v", size.X, size.Y, thumb)
			b.Run(name, func(b *testing.B) {
				src := newSources(b)
				srv := http.NewServeMux()
				srv.HandleFunc("/photo.jpg", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(data) })
				src.Config.Handler = srv
				limits := "max_size 8MB"
				if !thumb {
					limits += "\n\t\t\tmax_image_memory 1KiB"
				}
				startBench(b, localBackend, src, "max_size 1MB", limits)
				benchRuns++
				uid := fmt.Sprintf("bench-photo-%d", benchRuns)
				benchDo(b, "POST", "/photos/", uid, "")
				cpu0 := proccpu.Used()
				for i := 0; b.Loop(); i++ {
					benchDo(b, "POST", fmt.Sprintf("/photos/photo-%d.jpg", i), uid, upload(src.URL+"/photo.jpg", "replace"))
				}
				b.ReportMetric(float64(proccpu.Used()-cpu0)/1e6/float64(b.N), "cpu-ms/op")
				b.ReportMetric(float64(len(data)), "bytes/file")
			})
		}
	}
}

// photoJPEG is testimage.Photo as a camera writes it.
func photoJPEG(w, h int) []byte {
	var buf bytes.Buffer
	_ = jpeg.Encode(&buf, testimage.Photo(w, h, false), &jpeg.Options{Quality: 90})
	return buf.Bytes()
}
