// Package testcaddy runs the Caddy of a caddytest package (test-only
// code): each config is loaded in this process with caddy.Load, on ports
// chosen when it is loaded, and a handler that panics fails the test.
//
// Ports: a Caddyfile names each port it needs as an environment
// placeholder {$PORT_<NAME>} (admin, http_port, sites, upstream URLs).
// Every load of a config that differs from the running one gets a free
// port for each name, so a request sent after the load can only reach the
// new servers: the ones the load replaced listen elsewhere. That is why no
// request is ever sent twice, and why runs of one package never meet.
// A JSON config loaded again keeps its ports (as does a port a Caddyfile
// does not name); Load then returns only once the servers it replaced
// stopped listening on them (Load), so there too a request sent after the
// load reaches the new servers alone.
//
// Panics: every Caddyfile loaded gets a logger that writes Go's
// "http: panic serving" lines to a file of its own; a Tester fails its test
// when one was written during it, and TestMain (Finish) fails the run.
package testcaddy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	_ "github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddytest"
	_ "github.com/caddyserver/caddy/v2/modules/standard"
)

var (
	mu       sync.Mutex // serialises loads
	lastTmpl string     // the template of the running config
	logDir   string

	portsMu sync.RWMutex
	ports   = map[string]int{} // the running config's
)

// portName finds the port placeholders of a Caddyfile.
var portName = regexp.MustCompile(`\{\$PORT_([A-Z0-9_]+)\}`)

// Port is the port the running config gave to {$PORT_<name>}, or 0.
func Port(name string) int {
	portsMu.RLock()
	defer portsMu.RUnlock()
	return ports[name]
}

// setPorts records the running config's ports.
func setPorts(next map[string]int) {
	portsMu.Lock()
	defer portsMu.Unlock()
	ports = next
}

// currentPorts returns the running config's ports.
func currentPorts() map[string]int {
	portsMu.RLock()
	defer portsMu.RUnlock()
	return ports
}

// URL is "http://localhost:<port>" for {$PORT_<name>}.
func URL(name string) string { return "http://localhost:" + strconv.Itoa(Port(name)) }

// FreePort returns a port free on 127.0.0.1 right now, for a server the
// test starts itself (or for one that must refuse connections).
func FreePort() (int, error) {
	p, err := freePorts(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

// freePorts returns n distinct ports free on 127.0.0.1 right now.
func freePorts(n int) ([]int, error) {
	lns := make([]net.Listener, 0, n)
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	got := make([]int, 0, n)
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		got = append(got, ln.Addr().(*net.TCPAddr).Port)
	}
	return got, nil
}

// Adapt turns the Caddyfile tmpl into JSON with a free port for each
// {$PORT_<NAME>} (which Port then reports) and the panic logger. A JSON
// config made this way runs on ports no running server listens on.
func Adapt(tmpl string) ([]byte, error) {
	mu.Lock()
	defer mu.Unlock()
	out, next, err := adapt(tmpl)
	if err != nil {
		return nil, err
	}
	setPorts(next)
	lastTmpl = ""
	return out, nil
}

// adapt is Adapt without recording the new ports; on failure the
// environment keeps the running config's ports.
func adapt(tmpl string) (out []byte, next map[string]int, err error) {
	defer func() {
		if err != nil {
			setEnv(currentPorts())
		}
	}()
	names := map[string]bool{}
	for _, m := range portName.FindAllStringSubmatch(tmpl, -1) {
		names[m[1]] = true
	}
	free, err := freePorts(len(names))
	if err != nil {
		return nil, nil, err
	}
	next = map[string]int{}
	for name := range names {
		next[name] = free[len(next)]
	}
	setEnv(next)
	cfg, err := withPanicLog(tmpl)
	if err != nil {
		return nil, nil, err
	}
	out, _, err = caddyconfig.GetAdapter("caddyfile").Adapt([]byte(cfg), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("adapting config using caddyfile adapter: %v", err)
	}
	return out, next, nil
}

// setEnv puts ports where the Caddyfile lexer reads {$PORT_<NAME>}.
func setEnv(ports map[string]int) {
	for name, port := range ports {
		_ = os.Setenv("PORT_"+name, strconv.Itoa(port))
	}
}

// Load runs cfg in this process's Caddy and answers the way Caddy's
// /load endpoint does: status 200, or 400 with {"error": "..."} carrying
// the same message. contentType is "text/caddyfile" (a template, see the
// package doc) or "application/json". A Caddyfile equal to the running
// one is not loaded again unless force is set (which then gives it new
// ports too). A JSON config runs as it is: a test about reloads loads the
// same JSON again to reload on the same ports.
//
// Parallel tests may load the same config at once: one loads it, the
// others find it running.
//
// A config loaded on ports the replaced one listened on (a JSON config
// loaded again, or ports that are not {$PORT_<NAME>} names) is running
// alone there when Load returns: Load waits until the replaced servers
// have closed their listeners on those ports, and the Testers' client
// starts afresh: it never sends a request on a connection it made before
// (a stopping server closes such a connection, possibly while a request
// is on its way). http.DefaultTransport's idle connections are closed, but
// one that was still finishing an answer may be used again: a test's own
// client that sends right after such a reload opens a new connection per
// request. err is set, after a load, when a replaced server still listens
// 10 s later.
func Load(cfg []byte, contentType string, force bool) (status int, body []byte, err error) {
	mu.Lock()
	defer mu.Unlock()
	tmpl, js, next := string(cfg), cfg, currentPorts()
	isJSON := strings.HasSuffix(contentType, "/json")
	switch {
	case isJSON:
	case tmpl == lastTmpl && !force:
		return http.StatusOK, nil, nil
	default:
		js, next, err = adapt(tmpl)
	}
	if err != nil {
		return refused(err)
	}
	before := listeners()
	err = caddy.Load(js, force)
	// A port found free can be taken by another process before Caddy
	// binds it: choose again.
	for try := 0; try < 3 && err != nil && !isJSON && inUse(err); try++ {
		if js, next, err = adapt(tmpl); err == nil {
			before = listeners()
			err = caddy.Load(js, force)
		}
	}
	if err != nil {
		setEnv(currentPorts())
		return refused(fmt.Errorf("loading config: %v", err))
	}
	setPorts(next)
	lastTmpl = tmpl
	if isJSON {
		lastTmpl = ""
	}
	// Still under mu: a parallel test that finds this config running
	// sees the URLs onLoad set.
	if onLoad != nil {
		onLoad()
	}
	if replaced := replacedOn(before, listeners()); len(replaced) > 0 {
		// The config kept ports of the one it replaced: return once only
		// the new servers listen there, and leave the shared clients'
		// connections to the old ones behind (see listeners.go).
		err = awaitClosed(replaced)
		transport.renew()
		if dt, ok := http.DefaultTransport.(*http.Transport); ok {
			dt.CloseIdleConnections()
		}
	}
	return http.StatusOK, nil, err
}

// inUse reports whether err is a port already taken (Caddy does not
// always wrap the error, so its text is read too).
func inUse(err error) bool {
	return errors.Is(err, syscall.EADDRINUSE) || strings.Contains(err.Error(), "address already in use")
}

// onLoad is called after every config that loads (OnLoad).
var onLoad func()

// OnLoad makes TestMain's f run after every config that loads, to point
// the package's URLs at the new ports. f may call Port and URL.
func OnLoad(f func()) { onLoad = f }

func refused(err error) (int, []byte, error) {
	body, _ := json.Marshal(map[string]string{"error": err.Error()})
	return http.StatusBadRequest, body, nil
}

// Global is the global options block of a package's Caddyfile: the
// admin, HTTP and HTTPS ports testcaddy chooses, no root certificate
// installed and no config autosaved, then the given further options, one
// a line.
func Global(options ...string) string {
	var sb strings.Builder
	sb.WriteString("{\n\tadmin localhost:{$PORT_ADMIN}\n\thttp_port {$PORT_HTTP}\n\thttps_port {$PORT_HTTPS}\n\tskip_install_trust\n\tpersist_config off\n")
	for _, o := range options {
		sb.WriteString("\t" + o + "\n")
	}
	sb.WriteString("}\n")
	return sb.String()
}

// MustLoad loads the Caddyfile tmpl (Load) and stops the test if Caddy
// refuses it; the test fails if a handler panics (FailOnPanic).
func MustLoad(t testing.TB, tmpl string) {
	t.Helper()
	FailOnPanic(t)
	status, body, err := Load([]byte(tmpl), "text/caddyfile", false)
	if err != nil || status != http.StatusOK {
		t.Fatalf("loading config: %v %s\n%s", err, body, tmpl)
	}
}

// panicLogFile is where Go's http servers in Caddy report recovered
// handler panics.
func panicLogFile() (string, error) {
	if logDir == "" {
		d, err := os.MkdirTemp("", "testcaddy-")
		if err != nil {
			return "", err
		}
		logDir = d
	}
	return filepath.Join(logDir, "panics.log"), nil
}

// withPanicLog adds to the Caddyfile's global options a logger of the
// servers' "http.stdlib" errors, where Caddy logs a recovered panic.
func withPanicLog(cfg string) (string, error) {
	file, err := panicLogFile()
	if err != nil {
		return "", err
	}
	block := fmt.Sprintf("\tlog testcaddy_panics {\n\t\toutput file %s\n\t\tinclude http.stdlib\n\t\tlevel ERROR\n\t}\n", file)
	trimmed := strings.TrimLeft(cfg, " \t\r\n")
	if rest, ok := strings.CutPrefix(trimmed, "{\n"); ok {
		return "{\n" + block + rest, nil
	}
	return "{\n" + block + "}\n" + cfg, nil
}

// panicsLogged is the panic log's text from offset on, and its size.
func panicsLogged(offset int64) (string, int64) {
	mu.Lock()
	defer mu.Unlock()
	if logDir == "" {
		return "", 0
	}
	b, err := os.ReadFile(filepath.Join(logDir, "panics.log"))
	if err != nil || int64(len(b)) <= offset {
		return "", int64(len(b))
	}
	return string(b[offset:]), int64(len(b))
}

// FailOnPanic fails t if a handler panics between now and t's end (with
// tests in parallel, every test running at the time fails).
func FailOnPanic(t testing.TB) {
	_, start := panicsLogged(0)
	t.Cleanup(func() {
		if text, _ := panicsLogged(start); strings.Contains(text, "panic") {
			t.Errorf("a handler panicked during the test:\n%s", text)
		}
	})
}

// transport is shared by the Testers of a run; it sends every name to
// 127.0.0.1. Kept-alive connections to a replaced config's servers are
// never used again: the next config listens on other ports, or, when it
// kept them, Load renews the transport.
var transport = &renewable{}

// renewable is an http.Transport that Load replaces with a new one after
// a reload on the same ports. Closing the old one's idle connections is
// not enough: a connection whose answer was read just before the reload
// goes back to the idle pool a moment later (net/http does it in another
// goroutine), when the stopping server may be closing it.
type renewable struct {
	mu sync.Mutex
	t  *http.Transport
}

func (r *renewable) current() *http.Transport {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.t == nil {
		r.t = caddytest.CreateTestingTransport()
	}
	return r.t
}

func (r *renewable) RoundTrip(req *http.Request) (*http.Response, error) {
	return r.current().RoundTrip(req)
}

// CloseIdleConnections is what http.Client.CloseIdleConnections calls.
func (r *renewable) CloseIdleConnections() { r.current().CloseIdleConnections() }

// renew makes the next request use a new transport; requests in flight
// finish on the old one.
func (r *renewable) renew() {
	r.mu.Lock()
	old := r.t
	r.t = nil
	r.mu.Unlock()
	if old != nil {
		old.CloseIdleConnections()
	}
}

// Tester is caddytest's Tester (for its assertions) whose InitServer loads
// through Load, and whose client never sends a request twice: a
// connection closed unanswered is the test's failure.
type Tester struct {
	*caddytest.Tester
	t testing.TB
}

// NewTester returns a Tester whose requests time out after timeout. The
// test fails when a handler panics during it (FailOnPanic).
func NewTester(t testing.TB, timeout time.Duration) *Tester {
	FailOnPanic(t)
	jar, _ := cookiejar.New(nil)
	tc := caddytest.NewTester(t)
	tc.Client = &http.Client{Transport: transport, Jar: jar, Timeout: timeout}
	return &Tester{tc, t}
}

// InitServer loads cfg, of configType "caddyfile" or "json" (Load), and
// fails the test if Caddy refuses it.
func (tc *Tester) InitServer(cfg, configType string) {
	tc.t.Helper()
	ct := "text/caddyfile"
	if configType == "json" {
		ct = "application/json"
	}
	if status, body, err := Load([]byte(cfg), ct, false); err != nil || status != http.StatusOK {
		tc.t.Errorf("loading config: %v %s", err, body)
	}
}

// Client returns a client like a Tester's, for tests that make their own.
func Client(timeout time.Duration) *http.Client {
	return &http.Client{Transport: transport, Timeout: timeout}
}

// Stop stops Caddy; the next Load starts it again with any config.
func Stop() error {
	mu.Lock()
	defer mu.Unlock()
	lastTmpl = ""
	return caddy.Stop()
}

// Finish is for TestMain after m.Run: it stops Caddy and turns a run in
// which a handler panicked into a failed one.
func Finish(code int) int {
	_ = Stop()
	text, _ := panicsLogged(0)
	if strings.Contains(text, "panic") {
		fmt.Fprintf(os.Stderr, "a handler panicked during the run:\n%s\n", text)
		if code == 0 {
			code = 1
		}
	}
	if logDir != "" {
		os.RemoveAll(logDir)
	}
	return code
}
