package contentservice

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// benchDesign returns a typical design: the corpus's 2-column newsletter
// (~88 KB) when the corpus is configured, else the example's newsletter.
func benchDesign(b *testing.B) []byte {
	if dir, _ := designtest.Lookup(); dir != "" {
		return designtest.CorpusFile(b, "beefree-sdk-assets-templates__v2-email-BF-newsletter-template.json")
	}
	return designtest.OwnFile(b, "starter-newsletter")
}

// BenchmarkServeHTTP measures the whole handler path of an export (token
// check, body read, decode, render, response) with the real renderer and a
// request prepared as Caddy's server prepares it.
// The small case (one spacer, 2 KB) is mostly the handler's own work:
// authentication, body read, headers and the write.
func BenchmarkServeHTTP(b *testing.B) {
	typical := benchDesign(b)
	small := designtest.OwnFile(b, "fixture-module-spacer")
	h, _ := newTestService(b, nil)
	for _, bc := range []struct {
		name, path, accept string
		body               []byte
	}{
		{"html", PathHTML, "", typical},
		{"html-json", PathHTML, "application/json", typical},
		{"plain-text", PathPlainText, "", typical},
		{"html-small", PathHTML, "", small},
	} {
		body := bc.body
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				r := httptest.NewRequest(http.MethodPost, bc.path, bytes.NewReader(body))
				r.Header.Set("Authorization", "Bearer "+testAPIToken)
				r.Header.Set("Content-Type", "application/json")
				if bc.accept != "" {
					r.Header.Set("Accept", bc.accept)
				}
				w := httptest.NewRecorder()
				r = caddyhttp.PrepareRequest(r, caddy.NewReplacer(), w, nil)
				if err := h.ServeHTTP(w, r, nil); err != nil || w.Code != http.StatusOK {
					b.Fatalf("status %d, err %v: %.200s", w.Code, err, w.Body)
				}
			}
		})
	}
}

// BenchmarkLogin measures LoginV2 (credential check and HS256 signing).
func BenchmarkLogin(b *testing.B) {
	h, _ := newTestService(b, nil)
	body := []byte(`{"client_id":"alpha","client_secret":"` + testSecret + `","uid":"customer-42"}`)
	b.ReportAllocs()
	for b.Loop() {
		r := httptest.NewRequest(http.MethodPost, PathLogin, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		if err := h.ServeHTTP(w, r, nil); err != nil || w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}
