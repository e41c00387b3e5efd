package fsp

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"mime/multipart"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// holdStorage is a storage whose first write of key waits, once it is
// called, until release is closed.
type holdStorage struct {
	Storage
	key           string
	held, release chan struct{}
	holding       atomic.Bool
}

func (s *holdStorage) Write(ctx context.Context, key string, data []byte, contentType string, exclusive bool) (string, error) {
	if key == s.key && s.holding.CompareAndSwap(false, true) {
		close(s.held)
		<-s.release
	}
	return s.Storage.Write(ctx, key, data, contentType, exclusive)
}

// TestConcurrentReplaceThumbnail: two replace uploads of one name at once,
// the first one's thumbnail written last, leave the file with its own
// thumbnail: never the other upload's, and not none (on a local folder;
// caddytest/fsp holds the S3 case, through a proxy that holds the request
// back).
func TestConcurrentReplaceThumbnail(t *testing.T) {
	dir := t.TempDir()
	h := &Handler{Local: &LocalConfig{Folder: dir}, PublicURL: "http://localhost/files", AllowAnonymous: true}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	defer cancel()
	if err := h.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	defer h.Cleanup()
	hold := &holdStorage{Storage: h.storage, key: "c1/u1/.thumb.pic.png.png", held: make(chan struct{}), release: make(chan struct{})}
	h.storage = hold
	img := func(w, h int, c color.Color) []byte {
		m := image.NewNRGBA(image.Rect(0, 0, w, h))
		for i := 0; i < len(m.Pix); i += 4 {
			r, g, b, a := c.RGBA()
			m.Pix[i], m.Pix[i+1], m.Pix[i+2], m.Pix[i+3] = uint8(r>>8), uint8(g>>8), uint8(b>>8), uint8(a>>8)
		}
		var buf bytes.Buffer
		_ = png.Encode(&buf, m)
		return buf.Bytes()
	}
	first, second := img(400, 300, color.NRGBA{200, 0, 0, 255}), img(50, 60, color.NRGBA{0, 0, 200, 255})
	upload := func(data []byte) int {
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		fw, _ := mw.CreateFormFile("file", "pic.png")
		_, _ = fw.Write(data)
		_ = mw.WriteField("conflict_strategy", "replace")
		_ = mw.Close()
		r := httptest.NewRequest("POST", "/pic.png", &body)
		r.Header.Set("Content-Type", mw.FormDataContentType())
		r.Header.Set("X-BEE-ClientId", "c1")
		r.Header.Set("X-BEE-Uid", "u1")
		r = r.WithContext(context.WithValue(r.Context(), caddy.ReplacerCtxKey, caddyhttp.NewTestReplacer(r)))
		w := httptest.NewRecorder()
		if err := h.ServeHTTP(w, r, nil); err != nil {
			t.Error(err)
		}
		return w.Code
	}
	done := make(chan int)
	go func() { done <- upload(first) }()
	<-hold.held // the first upload's file is stored, its thumbnail waits
	if code := upload(second); code != 200 {
		t.Fatalf("second upload: %d", code)
	}
	close(hold.release)
	if code := <-done; code != 200 {
		t.Fatalf("first upload: %d", code)
	}
	stored, err := os.ReadFile(filepath.Join(dir, "c1", "u1", "pic.png"))
	if err != nil || !bytes.Equal(stored, second) {
		t.Fatalf("the file is not the second upload's: %v", err)
	}
	thumb, err := os.ReadFile(filepath.Join(dir, "c1", "u1", ".thumb.pic.png.png"))
	if err != nil {
		t.Fatalf("the second upload's file has no thumbnail: %v", err)
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(thumb))
	if got := fmt.Sprintf("%dx%d", cfg.Width, cfg.Height); err != nil || got != "50x60" {
		t.Errorf("the second upload's file has a %s thumbnail (%v), want 50x60 (its own)", got, err)
	}
}
