package browser

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestFSPFilesRunNoScript opens, at their public URLs under /fsp-files of
// Caddyfile.example, files of every kind fsp refuses to store or stores
// only as inert data, each holding script that reports itself to a beacon
// on another origin if it ever runs. The files are put in the folder
// directly, as if they had got there some other way (an older version, a
// copy by hand): the recipe's headers alone must keep every one of them
// from running script on the site's origin.
func TestFSPFilesRunNoScript(t *testing.T) {
	beaconURL, ran := otherOrigin(t, func(r *http.Request) string { return r.URL.Query().Get("k") }, func(w http.ResponseWriter) {
		w.WriteHeader(http.StatusNoContent)
	})

	env := readEnvExample(t)
	setEnv(t, env, "")
	folder := filepath.Join(os.Getenv("FSP_FOLDER"), "c1", "u1")
	if err := os.MkdirAll(folder, 0o755); err != nil {
		t.Fatal(err)
	}
	report := func(kind string) string {
		return `new Image().src="` + beaconURL + `/ran?k=` + kind + `";` +
			`fetch("/proxy/bee-auth",{method:"POST",body:"{}"}).then(()=>{new Image().src="` + beaconURL + `/ran?k=` + kind + `-token"})`
	}
	page := func(kind string) string {
		return `<!DOCTYPE html><html><body><script>` + report(kind) + `</script>` +
			`<img src="nope" onerror='` + report(kind+"-onerror") + `'></body></html>`
	}
	files := map[string]string{
		"x.html":  page("html"),
		"x.htm":   page("htm"),
		"X.HTML":  page("upper-html"),
		"x.shtml": page("shtml"),
		"x.xhtml": `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><body><script>` + report("xhtml") + `</script></body></html>`,
		"x.svg":   `<svg xmlns="http://www.w3.org/2000/svg" onload='` + report("svg-onload") + `'><script>` + report("svg") + `</script></svg>`,
		"x.xml":   `<?xml version="1.0"?><h:html xmlns:h="http://www.w3.org/1999/xhtml"><h:script>` + report("xml") + `</h:script></h:html>`,
		"x.js":    report("js"),
		"x.mjs":   report("mjs"),
		"x.txt":   page("txt"),
		"x.csv":   page("csv"),
		"x.png":   page("png-polyglot"),
		"x.pdf":   page("pdf-polyglot"),
		"noext":   page("no-extension"),
		"x.docx":  page("docx"),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(folder, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	tester := newTester(t)
	loadConfig(t, tester, exampleConfig(t, nil))
	s := newSession(t)
	for name := range files {
		// A download ends the navigation with an error: that is a file
		// that was not rendered, which is the point.
		ctx, cancel := context.WithTimeout(s.ctx, 10*time.Second)
		_ = chromedp.Run(ctx, chromedp.Navigate(siteURL+"/fsp-files/c1/u1/"+name))
		cancel()
	}
	time.Sleep(2 * time.Second) // time for a script's beacon, had one run

	for kind, n := range ran() {
		t.Errorf("script in the %s file ran on the site's origin (%d beacons)", kind, n)
	}

	// Every answer carries the recipe's headers, and only images, PDF and
	// plain text are shown inline.
	s.mu.Lock()
	defer s.mu.Unlock()
	seen := 0
	for _, r := range s.responses {
		name, ok := strings.CutPrefix(r.url, siteURL+"/fsp-files/c1/u1/")
		if !ok {
			continue
		}
		seen++
		headers := strings.ToLower(strings.Join(r.headers, "\n"))
		for _, want := range []string{"content-security-policy: sandbox", "x-content-type-options: nosniff"} {
			if !strings.Contains(headers, want) {
				t.Errorf("%s: no %q header", name, want)
			}
		}
		inline := false
		for _, ext := range []string{".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".ico", ".pdf", ".txt"} {
			inline = inline || strings.HasSuffix(strings.ToLower(name), ext)
		}
		if attached := strings.Contains(headers, "content-disposition: attachment"); attached == inline {
			t.Errorf("%s: attachment %v, want %v", name, attached, !inline)
		}
	}
	if seen == 0 {
		t.Error("the browser saw no answer from /fsp-files")
	}
}
