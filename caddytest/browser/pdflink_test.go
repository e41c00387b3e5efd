package browser

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestPDFLinkElsewhereKeepsThePage: a PDF link on another site is not
// followed from the editor's page. Its server may show the PDF rather
// than save it (or show anything at all), and following it would replace
// the page and the design being edited; the page offers the link to open
// in a tab of its own instead.
func TestPDFLinkElsewhereKeepsThePage(t *testing.T) {
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<title>elsewhere</title><p>not the editor")
	}))
	defer elsewhere.Close()
	service := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/v1/message/pdf" {
			fmt.Fprintf(w, `{"statusCode":200,"body":{"url":%q,"filename":"design.pdf"}}`, elsewhere.URL+"/design.pdf")
			return
		}
		fmt.Fprint(w, `{"statusCode":200,"body":{"html":"<p>hello</p>"}}`)
	}))
	defer service.Close()
	loadExampleFor(t, service.URL)

	s := newSession(t)
	var after struct {
		URL      string `json:"url"`
		Href     string `json:"href"`
		Hidden   bool   `json:"hidden"`
		Focused  string `json:"focused"`
		Target   string `json:"target"`
		Rel      string `json:"rel"`
		LinkText string `json:"text"`
	}
	s.run(t,
		chromedp.Navigate(siteURL+"/"),
		waitFor(`!document.querySelector("#get-html").disabled`),
		chromedp.Click("#get-html", chromedp.ByQuery),
		waitFor(`!document.querySelector("#html-result").hidden`),
		chromedp.Click("#download-pdf", chromedp.ByQuery),
		chromedp.Sleep(2*time.Second),
		eval(`(() => { const a = document.querySelector("#pdf-link") || {}; return {url: location.href, href: a.href, hidden: a.hidden,
			focused: document.activeElement.id, target: a.target, rel: a.rel, text: a.textContent}; })()`, &after),
	)
	if after.URL != siteURL+"/" {
		t.Fatalf("the page went to %s", after.URL)
	}
	if after.Hidden || after.Href != elsewhere.URL+"/design.pdf" || after.Focused != "pdf-link" || after.LinkText != "Open design.pdf" {
		t.Errorf("the PDF link: %+v; want it shown, focused, to %s", after, elsewhere.URL+"/design.pdf")
	}
	if after.Target != "_blank" || after.Rel != "noopener noreferrer" {
		t.Errorf("the PDF link opens with target %q rel %q; want a tab of its own, without an opener", after.Target, after.Rel)
	}
}
