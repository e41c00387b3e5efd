package content

import (
	"encoding/json"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
)

func init() {
	config += `
:{$PORT_SHARE} {
	content_service {
		signing_key {env.CS_IT_SIGNING_KEY}` + apps + `
		fetch {
			allow_private all
			timeout 30s
			total_timeout 10s
			max_concurrent 4
		}
		browser {
			tabs 1
			timeout 6s
			files_dir ` + filesDir + `
			files_ttl 1h
		}
	}
}
`
}

// TestRenderFetchesNotStarvedByChecks: checks whose images hang hold
// every fetch slot they may take until their total_timeout; a render's
// image still gets one of the slots kept for renders, and the render
// answers at once with the image fetched. When checks could take every
// slot of fetch.max_concurrent, the render's image waited until
// browser.timeout and the render was answered 504.
func TestRenderFetchesNotStarvedByChecks(t *testing.T) {
	t.Parallel()
	start(t)
	site := testcaddy.URL("SHARE")
	srv, most, hung := slowImageHost(t, 10*time.Millisecond)
	imgSrv, hits := imageHost(t)
	// The browser starts with the site's first render: not measured.
	if r := postJSON(t, site+"/v1/message/image", map[string]any{"html": shortHTML, "width": 100, "file_type": "png"}); r.status != http.StatusOK {
		t.Fatalf("first render: %d %s", r.status, r.body)
	}
	// Three checks whose 6 images all hang: each weighs up to 4 at once,
	// more than max_concurrent's 4 slots together.
	var checks []<-chan checkResult
	for _, name := range []string{"/a", "/b", "/c"} {
		checks = append(checks, checkImagesWith(renderClient, site, json.RawMessage(regexp.MustCompile(`/(img/[0-9]+|hang)/`).
			ReplaceAllString(string(checkDesign(t, srv.URL+name)), "/hang/"))))
	}
	select {
	case <-hung:
	case <-time.After(15 * time.Second):
		t.Fatal("no check fetched")
	}
	// Time for the checks to take every slot they can.
	time.Sleep(500 * time.Millisecond)
	began := time.Now()
	r := postJSON(t, site+"/v1/message/image", map[string]any{
		"html": `<img src="` + imgSrv.URL + `/img/100/p.png">` + shortHTML, "width": 300, "file_type": "png"})
	elapsed := time.Since(began)
	t.Logf("render %d after %v; checks' fetches at once: %d", r.status, elapsed, most())
	if r.status != http.StatusOK || hits.Load() != 1 {
		t.Fatalf("render while checks hold their slots: %d after %v, image fetched %d times: %.200s", r.status, elapsed, hits.Load(), r.body)
	}
	if elapsed > 5*time.Second {
		t.Errorf("the render took %v", elapsed)
	}
	for i, ch := range checks {
		if _, _, _, err := imageCheck(<-ch); err != nil {
			t.Errorf("check %d: %v", i, err)
		}
	}
}
