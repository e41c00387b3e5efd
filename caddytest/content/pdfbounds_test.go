package content

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// fixedOverTallPage is a position: fixed element of words words over a
// page height px tall: printing repeats the element on every page.
func fixedOverTallPage(words, height int) string {
	var b strings.Builder
	b.WriteString(`<body style="margin:0"><div style="position:fixed;top:0;left:0;width:700px">`)
	for i := range words {
		fmt.Fprintf(&b, "word%d ", i)
	}
	fmt.Fprintf(&b, `</div><div style="height:%dpx"></div></body>`, height)
	return b.String()
}

// pageBreaks is breaks blocks of one word, each starting a new page.
func pageBreaks(breaks int) string {
	return `<body style="margin:0">` + strings.Repeat(`<div style="break-before:page">x</div>`, breaks) + `</body>`
}

// TestPDFPageBound: a paginated PDF is refused (413, code 4130) before it
// is printed when its document lays out taller than 200 pages (as it
// prints: print media, the paper's width), and never has more than 200
// pages. A fixed element of 20,000 words on a page
// 1,000,000 px tall (947 A4 pages) ran until browser.timeout, its
// Chromium taking gigabytes.
func TestPDFPageBound(t *testing.T) {
	tester := start(t)
	for _, tc := range []struct {
		name, html, size, orient string
		status, pages            int
	}{
		{"947 pages with a fixed element", fixedOverTallPage(20000, 1000000), "A4", "portrait", 413, 0},
		{"tall in print only", `<style>@media print { div { height: 1000000px } }</style><div>x</div>`, "A3", "portrait", 413, 0},
		{"300 Letter pages, landscape", `<div style="height:` + fmt.Sprint(300*(816-77)) + `px"></div>`, "Letter", "landscape", 413, 0},
		{"190 A4 pages", `<div style="height:` + fmt.Sprint(190*1045) + `px;background:#ff0000"></div>`, "A4", "portrait", 200, 190},
		{"250 forced page breaks", pageBreaks(250), "A4", "portrait", 200, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			began := time.Now()
			r := postJSON(t, renderSite+"/v1/message/pdf", map[string]string{"html": tc.html, "page_size": tc.size, "page_orientation": tc.orient})
			if r.status != tc.status {
				t.Fatalf("status %d after %v, want %d: %.300s", r.status, time.Since(began), tc.status, r.body)
			}
			if tc.status == 413 {
				if code, _, details := exportError(t, r); code != 4130 || !strings.Contains(details, "200 pages") {
					t.Errorf("code %d, details %q; want 4130 naming 200 pages", code, details)
				}
				if elapsed := time.Since(began); elapsed > 3*time.Second {
					t.Errorf("refused after %v: not before printing", elapsed)
				}
				return
			}
			_, res, data := downloadPDF(t, tester, r)
			if res.StatusCode != http.StatusOK {
				t.Fatalf("download: %d", res.StatusCode)
			}
			if pages, _, _ := pdfPages(t, data); pages < tc.pages-2 || pages > tc.pages {
				t.Errorf("%d pages, want %d", pages, tc.pages)
			}
		})
	}
}
