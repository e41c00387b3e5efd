package browser

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	// Registers design_bridge, fsp_error and content_service.
	_ "github.com/designbridge/caddy-designbridge"
	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
)

// The example's ports, free ports chosen once per run (choosePorts): a
// test keeps its page open across the reloads it makes, so the sites keep
// their ports. The admin endpoint and http_port get new ones with every
// load (testcaddy).
var (
	sitePort           int // PORT: the host site
	contentServicePort int // CONTENT_SERVICE_PORT
	devPort            int // DEV_PORT: the development layout
	siteURL, devURL    string
)

// choosePorts picks the example's ports; TestMain calls it.
func choosePorts() error {
	for _, p := range []*int{&sitePort, &contentServicePort, &devPort} {
		port, err := testcaddy.FreePort()
		if err != nil {
			return err
		}
		*p = port
	}
	siteURL = fmt.Sprintf("http://localhost:%d", sitePort)
	devURL = fmt.Sprintf("http://localhost:%d", devPort)
	return nil
}

// secretNames are the .env settings that must never reach the browser.
var secretNames = []string{"CLIENT_SECRET", "CS_API_TOKEN", "SIGNING_KEY"}

// readEnvExample parses .env.example the way `caddy run --envfile` does
// (KEY=VALUE lines, # comments; the examples use no quoting).
func readEnvExample(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, ".env.example"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := map[string]string{}
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf(".env.example: line %q is not KEY=VALUE", line)
		}
		if before, _, found := strings.Cut(value, "#"); found {
			value = strings.TrimRight(before, " \t")
		}
		env[strings.TrimPrefix(key, "export ")] = value
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	for _, name := range append([]string{"CLIENT_ID", "PORT", "CONTENT_SERVICE_URL", "AUTH_URL"}, secretNames...) {
		if env[name] == "" {
			t.Fatalf(".env.example has no value for %s", name)
		}
	}
	return env
}

// setEnv puts .env.example's settings in the environment with this
// package's ports; contentServiceURL overrides CONTENT_SERVICE_URL when not
// empty.
func setEnv(t *testing.T, env map[string]string, contentServiceURL string) {
	t.Helper()
	values := map[string]string{}
	for k, v := range env {
		values[k] = v
	}
	values["PORT"] = fmt.Sprint(sitePort)
	// The example's FSP keeps its files here, not in the source tree.
	values["FSP_FOLDER"] = t.TempDir()
	values["DEV_PORT"] = fmt.Sprint(devPort)
	values["CONTENT_SERVICE_PORT"] = fmt.Sprint(contentServicePort)
	values["CONTENT_SERVICE_URL"] = fmt.Sprintf("http://localhost:%d", contentServicePort)
	values["AUTH_URL"] = fmt.Sprintf("http://localhost:%d/loginV2", contentServicePort)
	if contentServiceURL != "" {
		values["CONTENT_SERVICE_URL"] = contentServiceURL
	}
	for k, v := range values {
		t.Setenv(k, v)
	}
}

// exampleConfig returns Caddyfile.example with caddytest's global options
// in front. bridge replaces the values of subdirectives of the
// design_bridge block (e.g. {"token": "wrong"}); the content service's own
// settings stay as they are.
func exampleConfig(t *testing.T, bridge map[string]string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "Caddyfile.example"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	if len(bridge) > 0 {
		const directive = "design_bridge {"
		start := strings.Index(text, directive)
		if start < 0 {
			t.Fatal("Caddyfile.example has no design_bridge block")
		}
		end := start + strings.Index(text[start:], "\n\t}")
		lines := strings.Split(text[start:end], "\n")
		replaced := map[string]int{}
		for i, line := range lines {
			fields := strings.Fields(line)
			if len(fields) == 2 {
				if value, ok := bridge[fields[0]]; ok {
					lines[i] = "\t\t" + fields[0] + " " + value
					replaced[fields[0]]++
				}
			}
		}
		for name := range bridge {
			if replaced[name] != 1 {
				t.Fatalf("design_bridge block has %d %s lines, want 1", replaced[name], name)
			}
		}
		text = text[:start] + strings.Join(lines, "\n") + text[end:]
	}
	if strings.HasPrefix(strings.TrimSpace(stripComments(text)), "{") {
		t.Fatal("Caddyfile.example now has a global options block; merge caddytest's options into it here")
	}
	return testcaddy.Global() + text
}

func stripComments(text string) string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "#") {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// newTester is a Tester of this package's tests (testcaddy.NewTester).
func newTester(t *testing.T) *testcaddy.Tester {
	return testcaddy.NewTester(t, caddytest.Default.TestRequestTimeout)
}

// loadConfig loads config, always: the settings it reads from the
// environment (setEnv) may have changed while its text has not.
func loadConfig(t *testing.T, tester *testcaddy.Tester, config string) {
	t.Helper()
	if status, body, err := testcaddy.Load([]byte(config), "text/caddyfile", true); err != nil || status != 200 {
		t.Fatalf("loading config: %v %s", err, body)
	}
}

// loadExample loads Caddyfile.example, with bridge's design_bridge
// values (exampleConfig), in the environment of .env.example (setEnv),
// and returns that environment.
func loadExample(t *testing.T, bridge map[string]string) map[string]string {
	t.Helper()
	env := readEnvExample(t)
	setEnv(t, env, "")
	loadConfig(t, newTester(t), exampleConfig(t, bridge))
	return env
}

// loadExampleFor runs Caddyfile.example with contentService (a test's
// own server) as the bridge's content service.
func loadExampleFor(t *testing.T, contentService string) {
	t.Helper()
	setEnv(t, readEnvExample(t), contentService)
	loadConfig(t, newTester(t), exampleConfig(t, nil))
}

// countAuthPrompts answers every credentials prompt of the browser (on the
// requests fetch.Enable with auth handling pauses) with a refusal, and
// counts them: each is one the user would have been shown.
func countAuthPrompts(s *session) *atomic.Int32 {
	asked := new(atomic.Int32)
	chromedp.ListenTarget(s.ctx, func(ev any) {
		switch ev := ev.(type) {
		case *fetch.EventRequestPaused:
			go func() { _ = chromedp.Run(s.ctx, fetch.ContinueRequest(ev.RequestID)) }()
		case *fetch.EventAuthRequired:
			asked.Add(1)
			go func() {
				_ = chromedp.Run(s.ctx, fetch.ContinueWithAuth(ev.RequestID, &fetch.AuthChallengeResponse{
					Response: fetch.AuthChallengeResponseResponseCancelAuth,
				}))
			}()
		}
	})
	return asked
}

// otherOrigin is a server on another origin that answers every request
// with answer and counts the requests by what key makes of each; it
// returns its URL and a copy of the counts so far.
func otherOrigin(t *testing.T, key func(r *http.Request) string, answer func(w http.ResponseWriter)) (url string, counts func() map[string]int) {
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits[key(r)]++
		mu.Unlock()
		answer(w)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		return maps.Clone(hits)
	}
}

// starterWithBlock is the first starter design (www/designs/welcome.json)
// with an html block holding html in its first column: before the
// column's modules if first, else after them.
func starterWithBlock(t *testing.T, html string, first bool) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(repoRoot, "www", "designs", "welcome.json"))
	if err != nil {
		t.Fatal(err)
	}
	var design map[string]any
	if err := json.Unmarshal(raw, &design); err != nil {
		t.Fatal(err)
	}
	column := design["page"].(map[string]any)["rows"].([]any)[0].(map[string]any)["columns"].([]any)[0].(map[string]any)
	block := map[string]any{
		"type":       "mailup-bee-newsletter-modules-html",
		"descriptor": map[string]any{"html": map[string]any{"html": html}},
	}
	if first {
		column["modules"] = append([]any{block}, column["modules"].([]any)...)
	} else {
		column["modules"] = append(column["modules"].([]any), block)
	}
	starter, err := json.Marshal(design)
	if err != nil {
		t.Fatal(err)
	}
	return starter
}

// serveStarter has the page of s get starter as the first starter design:
// run the action it returns before the page loads.
func serveStarter(s *session, starter []byte) chromedp.Action {
	chromedp.ListenTarget(s.ctx, func(ev any) {
		if paused, ok := ev.(*fetch.EventRequestPaused); ok {
			go func() {
				_ = chromedp.Run(s.ctx, fetch.FulfillRequest(paused.RequestID, 200).
					WithResponseHeaders([]*fetch.HeaderEntry{{Name: "Content-Type", Value: "application/json"}}).
					WithBody(base64.StdEncoding.EncodeToString(starter)))
			}()
		}
	})
	return fetch.Enable().WithPatterns([]*fetch.RequestPattern{{URLPattern: "*/designs/welcome.json"}})
}

// wrappingUpstream is a content service in front of the local one that asks
// it for the JSON wrapper form ({"body": {"html": …}}), so the page gets
// the same design through the other response form of the contract.
type wrappingUpstream struct {
	server       *httptest.Server
	mu           sync.Mutex
	contentTypes []string // Content-Type of each answer it relayed
}

func newWrappingUpstream(t *testing.T, target string) *wrappingUpstream {
	t.Helper()
	targetURL, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	w := &wrappingUpstream{}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(targetURL)
			r.Out.Header.Set("Accept", "application/json")
		},
		ModifyResponse: func(resp *http.Response) error {
			w.mu.Lock()
			w.contentTypes = append(w.contentTypes, resp.Header.Get("Content-Type"))
			w.mu.Unlock()
			return nil
		},
	}
	w.server = httptest.NewServer(proxy)
	t.Cleanup(w.server.Close)
	return w
}

func (w *wrappingUpstream) relayed() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.contentTypes...)
}

// --- the browser --------------------------------------------------------------

// session is one headless Chromium tab and everything it saw.
type session struct {
	ctx context.Context

	mu        sync.Mutex
	responses map[network.RequestID]*seenResponse
	bodies    sync.WaitGroup
	requests  []sentRequest
	dialogs   []*page.EventJavascriptDialogOpening
	errors    []string // uncaught exceptions and console errors
}

// sentRequest is a request the page made, with its body.
type sentRequest struct {
	url, method, contentType string
	body                     []byte
}

type seenResponse struct {
	url     string
	status  int64
	headers []string // "name: value", from both header events
	body    []byte
	bodyErr error
	done    bool
}

func newSession(t *testing.T) *session {
	t.Helper()
	if _, err := os.Stat("/usr/bin/chromium"); err != nil {
		// A skipped browser suite would look green while testing nothing.
		t.Fatalf("headless Chromium is required at /usr/bin/chromium (apt-get install -y chromium): %v", err)
	}
	// Not t.TempDir: Chromium's helper processes may still write to the
	// profile for a moment after the browser exits, which would fail the
	// test in TempDir's cleanup.
	profile, err := os.MkdirTemp("", "browser-test-profile-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath("/usr/bin/chromium"),
		chromedp.UserDataDir(profile),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.WindowSize(1280, 900),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(allocCtx)
	s := &session{ctx: ctx, responses: map[network.RequestID]*seenResponse{}}
	t.Cleanup(func() {
		s.bodies.Wait()
		cancelCtx()
		cancelAlloc()
		for i := 0; i < 20 && os.RemoveAll(profile) != nil; i++ {
			time.Sleep(100 * time.Millisecond)
		}
	})
	chromedp.ListenTarget(ctx, s.onEvent)
	if err := chromedp.Run(ctx); err != nil { // starts the browser
		t.Fatal(err)
	}
	return s
}

func (s *session) onEvent(ev any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		req := sentRequest{url: ev.Request.URL, method: ev.Request.Method}
		for k, v := range ev.Request.Headers {
			if strings.EqualFold(k, "Content-Type") {
				req.contentType = fmt.Sprint(v)
			}
		}
		for _, entry := range ev.Request.PostDataEntries {
			if b, err := base64.StdEncoding.DecodeString(entry.Bytes); err == nil {
				req.body = append(req.body, b...)
			}
		}
		s.requests = append(s.requests, req)
	case *network.EventResponseReceived:
		r := s.response(ev.RequestID)
		r.url = ev.Response.URL
		r.status = ev.Response.Status
		for k, v := range ev.Response.Headers {
			r.headers = append(r.headers, fmt.Sprintf("%s: %v", k, v))
		}
	case *network.EventResponseReceivedExtraInfo:
		r := s.response(ev.RequestID)
		for k, v := range ev.Headers {
			r.headers = append(r.headers, fmt.Sprintf("%s: %v", k, v))
		}
		r.headers = append(r.headers, ev.HeadersText)
	case *network.EventLoadingFinished:
		r := s.response(ev.RequestID)
		id := ev.RequestID
		s.bodies.Add(1)
		// Fetching the body is a CDP call: not from the event loop.
		go func() {
			defer s.bodies.Done()
			c := chromedp.FromContext(s.ctx)
			body, err := network.GetResponseBody(id).Do(cdp.WithExecutor(s.ctx, c.Target))
			s.mu.Lock()
			r.body, r.bodyErr, r.done = body, err, true
			s.mu.Unlock()
		}()
	case *page.EventJavascriptDialogOpening:
		s.dialogs = append(s.dialogs, ev)
		go func() {
			_ = chromedp.Run(s.ctx, page.HandleJavaScriptDialog(true))
		}()
	case *cdpruntime.EventExceptionThrown:
		s.errors = append(s.errors, ev.ExceptionDetails.Error())
	}
}

func (s *session) response(id network.RequestID) *seenResponse {
	r := s.responses[id]
	if r == nil {
		r = &seenResponse{}
		s.responses[id] = r
	}
	return r
}

func (s *session) dialogCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.dialogs)
}

func (s *session) run(t *testing.T, actions ...chromedp.Action) {
	t.Helper()
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// eval evaluates a JavaScript expression (awaiting a promise) into res.
func eval(expression string, res any) chromedp.Action {
	return chromedp.Evaluate(expression, res, func(p *cdpruntime.EvaluateParams) *cdpruntime.EvaluateParams {
		return p.WithAwaitPromise(true)
	})
}

// waitFor polls a JavaScript condition until it is true.
func waitFor(condition string) chromedp.Action {
	return chromedp.Poll(condition, nil, chromedp.WithPollingTimeout(20*time.Second))
}

// --- secrets ---------------------------------------------------------------------

// secretForms returns the strings whose presence would reveal a secret: the
// value itself and its base64 encodings (standard and URL alphabets) at each
// of the three byte alignments, as inside a JWT or a basic-auth header.
func secretForms(secret string) []string {
	forms := []string{secret}
	for pad := 0; pad < 3; pad++ {
		b := append(make([]byte, pad), secret...)
		for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
			e := enc.EncodeToString(b)
			first := (8*pad + 5) / 6 // first character made only of secret bits
			last := 8 * len(b) / 6   // end of the last such character
			if last-first >= 8 {
				forms = append(forms, e[first:last])
			}
		}
	}
	return forms
}

// checkNoSecrets fails the test if a secret (in any form of secretForms)
// appears in a response body or header the browser received. It returns
// how many bodies it searched.
func (s *session) checkNoSecrets(t *testing.T, env map[string]string) int {
	t.Helper()
	s.bodies.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]string, 0, len(s.responses))
	for id := range s.responses {
		ids = append(ids, string(id))
	}
	sort.Strings(ids)
	searched := 0
	for _, id := range ids {
		r := s.responses[network.RequestID(id)]
		if r.done && r.bodyErr == nil {
			searched++
		}
		haystack := string(r.body) + "\n" + strings.Join(r.headers, "\n")
		for _, name := range secretNames {
			for _, form := range secretForms(env[name]) {
				if strings.Contains(haystack, form) {
					t.Errorf("response of %s (HTTP %d) contains %s", r.url, r.status, name)
				}
			}
		}
	}
	return searched
}

// lastRequest returns the last request made to a URL ending in suffix.
func (s *session) lastRequest(t *testing.T, suffix string) sentRequest {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.requests) - 1; i >= 0; i-- {
		if strings.HasSuffix(s.requests[i].url, suffix) {
			return s.requests[i]
		}
	}
	t.Fatalf("no request to %s", suffix)
	return sentRequest{}
}

// bodiesFor returns the bodies received for URLs ending in suffix. A
// response's body arrives after the page has seen the response, so it waits
// up to 5s for at least one.
func (s *session) bodiesFor(suffix string) [][]byte {
	deadline := time.Now().Add(5 * time.Second)
	for {
		s.bodies.Wait()
		s.mu.Lock()
		var out [][]byte
		for _, r := range s.responses {
			if strings.HasSuffix(r.url, suffix) && r.done && r.bodyErr == nil {
				out = append(out, r.body)
			}
		}
		s.mu.Unlock()
		if len(out) > 0 || time.Now().After(deadline) {
			return out
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// --- files ----------------------------------------------------------------------------

// waitForFile waits until path exists with no download in progress beside it.
func waitForFile(t *testing.T, path string) []byte {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		partial, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*.crdownload"))
		if data, err := os.ReadFile(path); err == nil && len(partial) == 0 {
			return data
		}
		time.Sleep(100 * time.Millisecond)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	t.Fatalf("no %s after 15s; the download directory holds %v", filepath.Base(path), names)
	return nil
}

func saveArtifact(t *testing.T, name string, data []byte) {
	t.Helper()
	dir := filepath.Join(repoRoot, "artifacts", "screenshots")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("saved %s", path)
}

// documentHeader returns the value of the header name of the answer to a
// request for url ("" when none was seen).
func (s *session) documentHeader(url, name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.responses {
		if r.url != url {
			continue
		}
		for _, h := range r.headers {
			if k, v, ok := strings.Cut(h, ": "); ok && strings.EqualFold(k, name) {
				return v
			}
		}
	}
	return ""
}

// requested reports whether the page asked for a URL ending in suffix.
func (s *session) requested(suffix string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.requests {
		if strings.HasSuffix(r.url, suffix) {
			return true
		}
	}
	return false
}
