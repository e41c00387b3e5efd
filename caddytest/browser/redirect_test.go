package browser

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestExportRedirectNotFollowed: the browser follows a redirect in the
// answer to the page's fetch, and a 307 or 308 has it post the design
// again, with its JSON type, to the place named. A content service that
// answers an export with 307 to the site's own auth path would have the
// page's "design HTML" be the user's editor token, which the page shows,
// copies, and sends back to the content service with the next PDF or
// image export. The page gets the redirect answer itself, and no token.
func TestExportRedirectNotFollowed(t *testing.T) {
	var mu sync.Mutex
	var got []string // what the content service was sent to make images of
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/message/image" {
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			got = append(got, string(body))
			mu.Unlock()
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n"))
			return
		}
		w.Header().Set("Location", "/proxy/bee-auth")
		w.WriteHeader(http.StatusTemporaryRedirect)
	}))
	defer hostile.Close()
	loadExampleFor(t, hostile.URL)

	s := newSession(t)
	var answer struct {
		Status int    `json:"status"`
		URL    string `json:"url"`
		Text   string `json:"text"`
	}
	s.run(t,
		chromedp.Navigate(siteURL+"/"),
		waitFor(`!document.querySelector("#get-html").disabled`),
		eval(`fetch("/v1/message/html", {method: "POST", headers: {"Content-Type": "application/json"}, body: "{\"page\":{}}"})
			.then(async r => ({status: r.status, url: r.url, text: await r.text()}))`, &answer),
	)
	if strings.Contains(answer.Text, "access_token") || answer.URL != siteURL+"/v1/message/html" {
		t.Errorf("the page's export was redirected to %s and got %d %.200s", answer.URL, answer.Status, answer.Text)
	}

	// The user's way: Get design HTML (an alert says it failed, or the
	// result shows), then Download image of what is shown.
	s.run(t,
		eval(`window.alert = () => {}`, nil),
		chromedp.Click("#get-html", chromedp.ByQuery),
		chromedp.Sleep(time.Second),
		eval(`document.querySelector("#html-result").hidden || document.querySelector("#download-image").click()`, nil),
		chromedp.Sleep(time.Second),
	)
	var shown string
	s.run(t, eval(`document.querySelector("#result-html").value`, &shown))
	if strings.Contains(shown, "access_token") {
		t.Errorf("the page shows the editor token as the design's HTML: %.100s", shown)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, body := range got {
		if strings.Contains(body, "access_token") {
			t.Errorf("the content service was sent the user's editor token: %.200s", body)
		}
	}
}
