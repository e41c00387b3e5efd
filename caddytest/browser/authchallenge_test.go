package browser

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
)

// TestExportAuthChallengeNotShown: a content service that answers an
// export with 401 and a Basic challenge would have the browser ask the
// user for a name and password on the host's origin, in a dialog the
// user takes for the site's own, and then keep them for that origin. The
// page gets the 401, and the browser asks for nothing.
func TestExportAuthChallengeNotShown(t *testing.T) {
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", `Basic realm="Your session has expired: sign in again"`)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"code":401,"message":"Unauthorized"}`))
	}))
	defer hostile.Close()
	loadExampleFor(t, hostile.URL)

	s := newSession(t)
	asked := countAuthPrompts(s)
	var status int
	s.run(t,
		chromedp.Navigate(siteURL+"/"),
		fetch.Enable().WithHandleAuthRequests(true).WithPatterns([]*fetch.RequestPattern{{URLPattern: "*/v1/message/*"}}),
		eval(`fetch("/v1/message/html", {method: "POST", headers: {"Content-Type": "application/json"}, body: "{\"page\":{}}"}).then(r => r.status)`, &status),
	)
	if status != http.StatusUnauthorized {
		t.Errorf("the page got %d, want the upstream's 401", status)
	}
	if n := asked.Load(); n != 0 {
		t.Errorf("the browser asked the user for credentials on the host's origin %d times", n)
	}
}
