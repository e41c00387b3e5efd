// Package fsp holds the integration tests of fsp_error: a real Caddy
// (in-process, started by caddytest) loads real Caddyfiles whose handlers
// (basic_auth, file_server, reverse_proxy, request_body, error) raise real
// errors, in front of real upstream HTTP servers on loopback that record
// what reached them.
package fsp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"

	_ "github.com/designbridge/caddy-designbridge"
	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
)

// Port names. In this package's Caddyfiles a port from 9200 to 9229 is a
// name, not a port: load gives each name a free port when the config
// loads (testcaddy), and rawRequest(t, 9202, ...) reaches the port that
// 9202 names in the running config.
var portName = regexp.MustCompile(`\b(92[0-2][0-9])\b`)

// template turns the port names of a Caddyfile into testcaddy's
// placeholders.
func template(cfg string) string {
	return portName.ReplaceAllString(cfg, "{$$PORT_$1}")
}

// livePort is the port that name stands for in the running config.
func livePort(name int) int {
	if p := testcaddy.Port(strconv.Itoa(name)); p != 0 {
		return p
	}
	return name
}

// live is s with each port name replaced by its port in the running
// config, as Caddy writes URLs it was configured with.
func live(s string) string {
	return portName.ReplaceAllStringFunc(s, func(name string) string {
		n, _ := strconv.Atoi(name)
		return strconv.Itoa(livePort(n))
	})
}

var (
	tmpDir string
	// deadPort is never listened on: a reverse_proxy to it meets a
	// refused connection. TestMain picks it.
	deadPort int
)

func TestMain(m *testing.M) {
	os.Exit(testcaddy.Finish(run(m)))
}

func run(m *testing.M) int {
	var err error
	var removeHome func()
	tmpDir, removeHome, err = testcaddy.PrivateHome("fsp-caddytest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer removeHome()
	defer func() { stopVersitygw() }()
	if deadPort, err = testcaddy.FreePort(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if msg, _ := versityMissing.Load().(string); msg != "" {
		notice("caddytest/fsp: the S3 half of the tests was skipped: " + msg)
	}
	return code
}

// notice tells the person running the tests something once, in go test's
// default output too: a passing package's output is shown only with -v,
// so the line also goes to the terminal when there is one.
func notice(line string) {
	fmt.Fprintln(os.Stderr, line)
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		fmt.Fprintln(tty, line)
		tty.Close()
	}
}

// globalOptions is the global block every Caddyfile of this package starts
// with.
func globalOptions() string { return testcaddy.Global() }

// load starts (or reconfigures) the in-process Caddy with the given site
// blocks, whose ports are names (portName).
func load(t *testing.T, sites string) *testcaddy.Tester {
	t.Helper()
	return loadCaddyfile(t, globalOptions()+sites)
}

// loadCaddyfile runs a whole Caddyfile whose ports are names (portName)
// and stops the test if Caddy refuses it.
func loadCaddyfile(t *testing.T, cfg string) *testcaddy.Tester {
	t.Helper()
	tc := testcaddy.NewTester(t, caddytest.Default.TestRequestTimeout)
	tc.InitServer(template(cfg), "caddyfile")
	if t.Failed() {
		t.FailNow()
	}
	return tc
}

// loadError posts a Caddyfile to the admin endpoint and returns the error
// message Caddy answers, failing the test if the config is accepted. The
// running config stays as it was.
func loadError(t *testing.T, sites string) string {
	t.Helper()
	// make sure Caddy runs, so that the admin endpoint answers
	load(t, ":9201 {\n\trespond ok\n}\n")
	status, body, err := testcaddy.Load([]byte(template(globalOptions()+sites)), "text/caddyfile", false)
	if err != nil {
		t.Fatal(err)
	}
	if status == http.StatusOK {
		t.Fatalf("config was accepted:\n%s", sites)
	}
	var answer struct {
		Error string `json:"error"`
	}
	if err := json.Unmarshal(body, &answer); err != nil || answer.Error == "" {
		t.Fatalf("admin answered %d %s", status, body)
	}
	return answer.Error
}

// received is one request an upstream saw.
type received struct {
	Method string
	URI    string
	Body   string
}

// upstream is a real HTTP server on loopback that records every request.
type upstream struct {
	*httptest.Server
	mu   sync.Mutex
	seen []received
}

func newUpstream(t *testing.T) *upstream {
	t.Helper()
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		u.mu.Lock()
		u.seen = append(u.seen, received{r.Method, r.RequestURI, string(body)})
		u.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"success","data":null}`)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) requests() []received {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]received(nil), u.seen...)
}

func (u *upstream) reset() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.seen = nil
}

// response is what a client got back.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// rawRequest sends requestLine and headers exactly as written (so that raw
// characters and encodings in the request target reach Caddy untouched)
// and reads the response; port is a name (portName). A Content-Length is added for a non-empty body
// unless the headers choose chunked transfer encoding.
func rawRequest(t *testing.T, port int, requestLine string, headers []string, body string) response {
	t.Helper()
	var sb strings.Builder
	sb.WriteString(requestLine + "\r\n")
	port = livePort(port)
	sb.WriteString(fmt.Sprintf("Host: localhost:%d\r\n", port))
	for _, h := range headers {
		sb.WriteString(h + "\r\n")
	}
	chunked := strings.Contains(strings.Join(headers, "\n"), "Transfer-Encoding: chunked")
	if body != "" && !chunked {
		sb.WriteString(fmt.Sprintf("Content-Length: %d\r\n", len(body)))
	}
	sb.WriteString("Connection: close\r\n\r\n")
	sb.WriteString(body)
	method, _, _ := strings.Cut(requestLine, " ")
	// A connection closed unanswered fails the test: the port belongs to
	// the running config alone, so it means a handler aborted or panicked.
	res, err := exchange(port, sb.String(), method)
	if err != nil {
		t.Fatalf("%s: %v", requestLine, err)
	}
	defer res.Body.Close()
	got, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s: reading body: %v", requestLine, err)
	}
	return response{res.StatusCode, res.Header, got}
}

// exchange writes request on a new connection and reads the response head;
// the connection closes with the response body.
func exchange(port int, request, method string) (*http.Response, error) {
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 5*time.Second)
	if err != nil {
		return nil, err
	}
	// Long enough for the fault table's hang rows, which wait out several
	// S3 timeouts (each of five tries) in one request.
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, request); err != nil {
		conn.Close()
		return nil, err
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: method})
	if err != nil {
		conn.Close()
		return nil, err
	}
	res.Body = struct {
		io.Reader
		io.Closer
	}{res.Body, conn}
	return res, nil
}

// fspBody is an FSP error body.
type fspBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Details string `json:"details"`
}

// checkFSP asserts that res is the FSP error want with HTTP status
// wantStatus, in the contract's form (exactly three members, JSON, not
// cached).
func checkFSP(t *testing.T, what string, res response, wantStatus int, want fspBody) {
	t.Helper()
	if res.Status != wantStatus {
		t.Errorf("%s: status %d, want %d (body %s)", what, res.Status, wantStatus, res.Body)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: Content-Type %q", what, ct)
	}
	if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("%s: Cache-Control %q", what, cc)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(res.Body, &members); err != nil {
		t.Errorf("%s: body is not a JSON object: %s", what, res.Body)
		return
	}
	if len(members) != 3 {
		t.Errorf("%s: %d members, want 3: %s", what, len(members), res.Body)
	}
	var got fspBody
	if err := json.Unmarshal(res.Body, &got); err != nil {
		t.Errorf("%s: %v: %s", what, err, res.Body)
	}
	if got != want {
		t.Errorf("%s: body %+v, want %+v", what, got, want)
	}
}
