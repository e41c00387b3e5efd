// Package bridge holds the integration tests of design_bridge: a real
// Caddy (in-process, started by caddytest) loads real Caddyfiles and
// forwards to real upstream HTTP servers on loopback that record what they
// received.
package bridge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
	"github.com/designbridge/caddy-designbridge/testutil/conntest"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"

	_ "github.com/designbridge/caddy-designbridge"
)

// The running config's ports, set after each load (setPorts): a config
// gets free ports when it loads (testcaddy).
var (
	adminPort int
	httpPort  int
	siteURL   string
)

// setPorts points the package's ports at the running config.
func setPorts() {
	adminPort = testcaddy.Port("ADMIN")
	httpPort = testcaddy.Port("HTTP")
	siteURL = testcaddy.URL("HTTP")
}

// Port names. In this package's Caddyfiles a port from 9100 to 9199 is a
// name, not a port (a second site, the content service): template turns
// each into a placeholder that gets a free port when the config loads.
var portName = regexp.MustCompile(`\b(91[0-9][0-9])\b`)

func template(cfg string) string {
	return portName.ReplaceAllString(cfg, "{$$PORT_$1}")
}

// Secrets used throughout; the leak test searches responses and logs for
// each of them.
const (
	tokenPlain   = "tok-plain-5f1d2c9a7b"
	tokenEnv     = "tok-env-8e4b1a0c3d"
	clientID     = "client-id-71c2e9d4"
	clientSecret = "client-secret-0a9f3e6b2c"
)

var (
	tmpDir  string
	wwwDir  string
	logFile string
	accLog  string
)

func TestMain(m *testing.M) {
	testcaddy.OnLoad(setPorts)
	var err error
	var removeHome func()
	tmpDir, removeHome, err = testcaddy.PrivateHome("bridge-caddytest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, kv := range [][2]string{
		{"DB_TEST_TOKEN", "Bearer " + tokenEnv},
		{"DB_TEST_CLIENT_ID", clientID},
		{"DB_TEST_CLIENT_SECRET", clientSecret},
	} {
		os.Setenv(kv[0], kv[1])
	}
	wwwDir = filepath.Join(tmpDir, "www")
	logFile = filepath.Join(tmpDir, "caddy.log")
	accLog = filepath.Join(tmpDir, "access.log")
	if err = os.MkdirAll(wwwDir, 0o755); err == nil {
		err = os.WriteFile(filepath.Join(wwwDir, "index.html"), []byte("<h1>editor page</h1>\n"), 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := testcaddy.Finish(m.Run())
	removeHome()
	os.Exit(code)
}

// site returns a complete Caddyfile: the global options every test needs
// (own admin and HTTP ports, DEBUG logs to a file, credentials logging on so
// that the leak test covers it) and one site with design_bridge between
// root and file_server.
func site(bridgeBlock string, extra ...string) string {
	return fmt.Sprintf(`{
	admin localhost:{$PORT_ADMIN}
	http_port {$PORT_HTTP}
	https_port {$PORT_HTTPS}
	skip_install_trust
	persist_config off
	log {
		output file %s
		level DEBUG
	}
	servers {
		log_credentials
	}
}

:{$PORT_HTTP} {
	log {
		output file %s
	}
	root * %s
	design_bridge {
%s
	}
	file_server
%s
}
`, logFile, accLog, wwwDir, bridgeBlock, strings.Join(extra, "\n"))
}

func newTester(t testing.TB) *testcaddy.Tester {
	return testcaddy.NewTester(t, 20*time.Second)
}

// load runs the Caddyfile cfg, whose ports are names (portName), and
// stops the test if Caddy refuses it.
func load(t testing.TB, cfg string) *testcaddy.Tester {
	t.Helper()
	tc := newTester(t)
	tc.InitServer(template(cfg), "caddyfile")
	if t.Failed() {
		t.FailNow()
	}
	return tc
}

// loadRaw loads cfg (its ports are names, see portName) and answers as
// the admin API's /load would (testcaddy.Load).
func loadRaw(cfg []byte, contentType string, force bool) (status int, body []byte, err error) {
	if contentType == "text/caddyfile" {
		cfg = []byte(template(string(cfg)))
	}
	return testcaddy.Load(cfg, contentType, force)
}

// recorded is one request as the upstream received it.
type recorded struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
}

// upstream is a real HTTP server on loopback that records every complete
// request, answers with respond, and tracks its open connections.
type upstream struct {
	*conntest.Server
	mu       sync.Mutex
	reqs     []recorded
	aborted  int // requests whose body could not be read completely
	respond  func(w http.ResponseWriter, r *http.Request, body []byte)
	canceled chan struct{}
}

func newUpstream(t *testing.T, respond func(w http.ResponseWriter, r *http.Request, body []byte)) *upstream {
	u := &upstream{respond: respond, canceled: make(chan struct{}, 16)}
	u.Server = conntest.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		u.mu.Lock()
		if err != nil {
			u.aborted++
			u.mu.Unlock()
			return
		}
		u.reqs = append(u.reqs, recorded{r.Method, r.URL.RequestURI(), r.Header.Clone(), body})
		u.mu.Unlock()
		if u.respond != nil {
			u.respond(w, r, body)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<p>ok</p>")
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) requests() []recorded {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]recorded(nil), u.reqs...)
}

func (u *upstream) last(t *testing.T) recorded {
	t.Helper()
	reqs := u.requests()
	if len(reqs) == 0 {
		t.Fatal("upstream received no request")
	}
	return reqs[len(reqs)-1]
}

// connUpstream is an upstream that writes its answers by hand, as no
// net/http server would: it listens on loopback, runs serve on each
// connection it accepts and then closes the connection; it returns its
// URL.
func connUpstream(t *testing.T, serve func(conn net.Conn)) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				serve(conn)
			}()
		}
	}()
	return "http://" + l.Addr().String()
}

// contentServiceSite is a site on port with the repository's own
// content_service, which knows the test app (clientID, clientSecret,
// tokenEnv), with the given further lines in its block; it returns the
// site and the service's URL.
func contentServiceSite(port int, extra ...string) (site, url string) {
	return fmt.Sprintf(`
:%d {
	content_service {
		signing_key 0123456789abcdef0123456789abcdef-e2e
		app %s {
			secret %s
			token %s
		}
%s	}
}
`, port, clientID, clientSecret, tokenEnv, indent(extra)), fmt.Sprintf("http://127.0.0.1:%d", port)
}

// response is what the browser got back.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

func do(t *testing.T, tc *testcaddy.Tester, method, path string, body []byte, header map[string]string) response {
	t.Helper()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, siteURL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if method == http.MethodPost {
		// What the page sends; a test that means another type says so,
		// and "" leaves the header out.
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		switch {
		case k == "Host":
			req.Host = v
		case v == "":
			req.Header.Del(k)
		default:
			req.Header.Set(k, v)
		}
	}
	res, err := tc.Client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	got, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("reading response: %v", err)
	}
	return response{res.StatusCode, res.Header, got}
}

func post(t *testing.T, tc *testcaddy.Tester, path string, body []byte, header map[string]string) response {
	t.Helper()
	return do(t, tc, http.MethodPost, path, body, header)
}

// caseBody is an export body naming the case a test's upstream is to
// answer: the bridge passes the body on unchanged but none of a request's
// own headers (only those forward_headers names), so the body is how a
// test tells its upstream what to do.
func caseBody(c string) []byte {
	return fmt.Appendf(nil, `{"case":%q,"page":{}}`, c)
}

// caseOf is the case a body made by caseBody names ("" for another body).
func caseOf(body []byte) string {
	var v struct {
		Case string `json:"case"`
	}
	_ = json.Unmarshal(body, &v)
	return v.Case
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return b
}

// testDesign is one of the project's own designs, the example's product
// launch (every common block kind, two- and three-column rows).
func testDesign(t *testing.T) []byte {
	t.Helper()
	return designtest.OwnFile(t, "starter-product-launch")
}
