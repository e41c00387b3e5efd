// Package bridge holds the integration tests of design_bridge: a real
// Caddy (in-process, started by caddytest) loads real Caddyfiles and
// forwards to real upstream HTTP servers on loopback that record what they
// received.
package bridge

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/pkglock"
	"github.com/designbridge/caddy-designbridge/testutil/conntest"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"

	"github.com/caddyserver/caddy/v2/caddytest"

	_ "github.com/designbridge/caddy-designbridge"
	"github.com/designbridge/caddy-designbridge/caddytest/internal/adminapi"
)

const (
	adminPort = 2901
	httpPort  = 9101
	httpsPort = 9143
	siteURL   = "http://localhost:9101"
)

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
	if err := pkglock.Acquire("bridge"); err != nil {
		fmt.Fprintln(os.Stderr, "locking:", err)
		os.Exit(1)
	}
	adminapi.SteadyLoads()
	var err error
	tmpDir, err = os.MkdirTemp("", "bridge-caddytest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	for _, kv := range [][2]string{
		{"XDG_CONFIG_HOME", filepath.Join(tmpDir, "config")},
		{"XDG_DATA_HOME", filepath.Join(tmpDir, "data")},
		{"HOME", filepath.Join(tmpDir, "home")},
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
	code := m.Run()
	os.RemoveAll(tmpDir)
	os.Exit(code)
}

// site returns a complete Caddyfile: the global options every test needs
// (own admin and HTTP ports, DEBUG logs to a file, credentials logging on so
// that the leak test covers it) and one site with design_bridge between
// root and file_server.
func site(bridgeBlock string, extra ...string) string {
	return fmt.Sprintf(`{
	admin localhost:%d
	http_port %d
	https_port %d
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

:%d {
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
`, adminPort, httpPort, httpsPort, logFile, httpPort, accLog, wwwDir, bridgeBlock, strings.Join(extra, "\n"))
}

func newTester(t *testing.T) *caddytest.Tester {
	return adminapi.NewTester(t, caddytest.Config{
		AdminPort:          adminPort,
		TestRequestTimeout: 20 * time.Second,
		LoadRequestTimeout: 10 * time.Second,
	})
}

func load(t *testing.T, cfg string) *caddytest.Tester {
	t.Helper()
	tc := newTester(t)
	tc.InitServer(cfg, "caddyfile")
	if t.Failed() {
		t.FailNow()
	}
	return tc
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

// response is what the browser got back.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

func do(t *testing.T, tc *caddytest.Tester, method, path string, body []byte, header map[string]string) response {
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

func post(t *testing.T, tc *caddytest.Tester, path string, body []byte, header map[string]string) response {
	t.Helper()
	return do(t, tc, http.MethodPost, path, body, header)
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
