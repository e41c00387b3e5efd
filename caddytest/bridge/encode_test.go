package bridge

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestEncodeCompressesExports: a site's encode directive wraps
// design_bridge, so exports come back compressed, and the body is the
// upstream's once decompressed. Unwrapped JSON results are compressed too.
func TestEncodeCompressesExports(t *testing.T) {
	page := "<!doctype html><html><body>" + strings.Repeat("<p>Hello, compressed world.</p>", 200) + "</body></html>"
	wrapped, _ := json.Marshal(map[string]any{"body": map[string]string{"html": page}})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if ae := r.Header.Get("Accept-Encoding"); ae != "identity" {
			http.Error(w, "the bridge must ask the upstream not to compress, not "+ae, 500)
			return
		}
		if r.URL.Path == "/json/v1/message/html" {
			w.Header().Set("Content-Type", "application/json")
			w.Write(wrapped)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	})
	for _, block := range []string{bridgeBlock(up), "\t\tcontent_service " + up.URL + "/json\n\t\ttoken " + tokenPlain + "\n\t\tunwrap_html"} {
		t.Run(strings.Fields(block)[1], func(t *testing.T) {
			tc := load(t, site(block, "\tencode zstd gzip"))
			res := post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), map[string]string{"Accept-Encoding": "gzip"})
			if res.Status != 200 || res.Header.Get("Content-Encoding") != "gzip" {
				t.Fatalf("status %d, Content-Encoding %q, %d bytes; want 200 gzip", res.Status, res.Header.Get("Content-Encoding"), len(res.Body))
			}
			zr, err := gzip.NewReader(bytes.NewReader(res.Body))
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(zr)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != page {
				t.Fatalf("decompressed body differs from the upstream's (%d bytes, want %d)", len(got), len(page))
			}
			t.Logf("%d bytes compressed, %d plain", len(res.Body), len(got))
		})
	}
}
