package content

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

func init() {
	config += `
:{$PORT_FEWIMAGES} {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		fetch {
			allow_private all
			max_images 3
		}
		browser {
			tabs 1
			timeout 20s
			files_dir ` + filesDir + `
			files_ttl 1h
		}
	}
}
`
}

// redirectingImageHost answers /r/<n>/<name> with a redirect to
// /r/<n-1>/<name>, and /r/0/<name> with a small PNG; it counts every
// request.
func redirectingImageHost(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		parts := strings.Split(r.URL.Path, "/")
		if len(parts) != 4 || parts[1] != "r" {
			http.NotFound(w, r)
			return
		}
		n, _ := strconv.Atoi(parts[2])
		if n > 0 {
			http.Redirect(w, r, fmt.Sprintf("/r/%d/%s", n-1, parts[3]), http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(onePixelPNG)
	}))
	t.Cleanup(srv.Close)
	return srv, &hits
}

// onePixelPNG is a 1×1 PNG.
var onePixelPNG = []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89" +
	"\x00\x00\x00\rIDATx\x9cc\xf8\xcf\xc0\xf0\x1f\x00\x05\x00\x01\xff\x89\x99=\x1d\x00\x00\x00\x00IEND\xaeB`\x82")

// TestRenderImagesFollowFetchBounds: a render fetches at most
// fetch.max_images distinct images, as a check weighs at most that many,
// and sends at most 4 HTTP requests per image of max_images, every
// redirect counted, as a check does. Renders fetched 200 images whatever
// max_images said, each followed through 5 redirects: 20 images that
// redirect 5 times made 120 requests to their host, where max_images 3
// allows 12.
func TestRenderImagesFollowFetchBounds(t *testing.T) {
	start(t) // sets the sites' URLs when this test runs on its own
	for _, tc := range []struct {
		name      string
		redirects int
		max       int64
	}{
		{"distinct images", 0, 3},    // max_images
		{"redirected images", 5, 12}, // 4 × max_images requests
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, hits := redirectingImageHost(t)
			var b strings.Builder
			for i := range 20 {
				fmt.Fprintf(&b, `<img src="%s/r/%d/%d.png" width="1" height="1">`, srv.URL, tc.redirects, i)
			}
			for _, path := range []string{"/v1/message/image", "/v1/message/pdf"} {
				hits.Store(0)
				r := postJSON(t, fewImagesSite+path, map[string]any{
					"html": b.String(), "width": 100, "height": 100, "file_type": "png",
					"page_size": "A4", "page_orientation": "portrait"})
				if r.status != http.StatusOK {
					t.Fatalf("%s: status %d: %s", path, r.status, r.body)
				}
				if n := hits.Load(); n == 0 || n > tc.max {
					t.Errorf("%s: %d requests to the image host, want 1 to %d", path, n, tc.max)
				}
			}
		})
	}
}
