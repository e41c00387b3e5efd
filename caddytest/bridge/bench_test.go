package bridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// BenchmarkExport is one ordinary export through a real Caddy: a 40 KB
// design posted to design_bridge, answered by an upstream on loopback
// with 40 KB of HTML, raw or in a JSON wrapper (as the page's */* and an
// API client's application/json get them), with unwrap_html off and on.
func BenchmarkExport(b *testing.B) {
	page := "<!DOCTYPE html><html><body>" + strings.Repeat(`<table role="presentation"><tr><td style="padding:8px">Hello, world</td></tr></table>`+"\n", 400) + "</body></html>"
	// Encoded as content_service encodes it (no \u003c for <).
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(map[string]any{"body": map[string]string{"html": page}})
	wrapped := buf.Bytes()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		if r.Header.Get("Accept") == "application/json" {
			w.Header().Set("Content-Type", "application/json")
			w.Write(wrapped)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	}))
	defer up.Close()
	design := []byte(`{"page":{"rows":[` + strings.Repeat(`{"columns":[{"modules":[{"type":"text","text":"Hello, world"}]}]},`, 600) + `{}]}}`)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	for _, unwrap := range []bool{false, true} {
		block := fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken %s\n", up.URL, tokenPlain)
		if unwrap {
			block += "\t\tunwrap_html\n"
		}
		load(b, site(block))
		for _, accept := range []string{"*/*", "application/json"} {
			b.Run(fmt.Sprintf("unwrap=%v/accept=%s", unwrap, strings.ReplaceAll(accept, "/", "_")), func(b *testing.B) {
				b.SetBytes(int64(len(design)))
				for b.Loop() {
					req, _ := http.NewRequest(http.MethodPost, siteURL+"/v1/message/html", bytes.NewReader(design))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("Accept", accept)
					res, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					n, _ := io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode != 200 || n < int64(len(page)) {
						b.Fatalf("%d, %d bytes", res.StatusCode, n)
					}
				}
			})
		}
	}
}
