package testcaddy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

func TestMain(m *testing.M) {
	var remove func()
	var err error
	if homeDir, remove, err = PrivateHome("testcaddy-test-"); err != nil {
		panic(err)
	}
	code := m.Run()
	// Not Finish: the panic TestPanicFailsTheTest provokes must not fail
	// this run.
	_ = Stop()
	remove()
	os.Exit(code)
}

// homeDir is PrivateHome's folder for this run.
var homeDir string

// TestPrivateHome: what a loaded config may write (the autosaved config,
// the certificate storage's files) goes to PrivateHome's folder. Caddy
// computes both paths when it is initialised, so setting HOME and the
// XDG directories in TestMain alone left them in the real home (the
// storage's locks and local CA were found there).
func TestPrivateHome(t *testing.T) {
	inside := func(path string) bool {
		rel, err := filepath.Rel(homeDir, path)
		return err == nil && !strings.HasPrefix(rel, "..")
	}
	if !inside(caddy.ConfigAutosavePath) {
		t.Errorf("the config is autosaved to %s, outside %s", caddy.ConfigAutosavePath, homeDir)
	}
	if !inside(caddy.DefaultStorage.Path) {
		t.Errorf("the default storage is %s, outside %s", caddy.DefaultStorage.Path, homeDir)
	}
	for _, name := range []string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME"} {
		if !inside(os.Getenv(name)) {
			t.Errorf("%s=%s, outside %s", name, os.Getenv(name), homeDir)
		}
	}
}

// panicking is a handler that panics, as a bug would.
type panicking struct{}

func (panicking) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.handlers.testcaddy_panic", New: func() caddy.Module { return panicking{} }}
}

func (panicking) ServeHTTP(http.ResponseWriter, *http.Request, caddyhttp.Handler) error {
	panic("a bug")
}

func init() {
	caddy.RegisterModule(panicking{})
	httpcaddyfile.RegisterHandlerDirective("testcaddy_panic", func(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
		h.Next()
		return panicking{}, nil
	})
}

const global = "{\n\tadmin localhost:{$PORT_ADMIN}\n\thttp_port {$PORT_HTTP}\n\tskip_install_trust\n\tpersist_config off\n}\n"

// recorder is a testing.TB that keeps failures and cleanups to itself.
type recorder struct {
	testing.TB
	errs     []string
	cleanups []func()
}

func (r *recorder) Helper()                           {}
func (r *recorder) Errorf(format string, args ...any) { r.errs = append(r.errs, format) }
func (r *recorder) Cleanup(f func())                  { r.cleanups = append(r.cleanups, f) }
func (r *recorder) end() {
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
}

// TestPortsPerLoad: each new config gets ports of its own; the same
// config again keeps them; a refused one answers like /load and leaves the
// running one in place.
func TestPortsPerLoad(t *testing.T) {
	site := global + ":{$PORT_HTTP} {\n\trespond \"%s\"\n}\n"
	MustLoad(t, strings.Replace(site, "%s", "one", 1))
	first := Port("HTTP")
	MustLoad(t, strings.Replace(site, "%s", "two", 1))
	second := Port("HTTP")
	if first == 0 || first == second {
		t.Fatalf("ports %d then %d, want two different ones", first, second)
	}
	MustLoad(t, strings.Replace(site, "%s", "two", 1))
	if Port("HTTP") != second {
		t.Errorf("an unchanged config moved from %d to %d", second, Port("HTTP"))
	}
	status, body, err := Load([]byte(global+":{$PORT_HTTP} {\n\tno_such_directive\n}\n"), "text/caddyfile", false)
	if err != nil || status != http.StatusBadRequest || !strings.Contains(string(body), `"error":"adapting config using caddyfile adapter`) {
		t.Errorf("refused load: %d %s %v", status, body, err)
	}
	res, err := Client(0).Get(URL("HTTP"))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if string(got) != "two" {
		t.Errorf("after a refused load the site answers %q, want the running config's", got)
	}
}

// TestPanicFailsTheTest: a handler that panics closes the connection
// unanswered, which the client reports, and fails the test it ran in.
func TestPanicFailsTheTest(t *testing.T) {
	// Not MustLoad, which would fail this test itself.
	if status, body, err := Load([]byte(global+":{$PORT_HTTP} {\n\troute {\n\t\ttestcaddy_panic\n\t}\n}\n"), "text/caddyfile", false); status != http.StatusOK {
		t.Fatalf("load: %d %s %v", status, body, err)
	}
	_, before := panicsLogged(0)
	rec := &recorder{TB: t}
	tc := NewTester(rec, 0)
	_, err := tc.Client.Get(URL("HTTP"))
	if err == nil || !errors.Is(err, io.EOF) {
		t.Errorf("request to a panicking handler: %v, want it closed unanswered", err)
	}
	rec.end()
	if len(rec.errs) != 1 {
		t.Errorf("the panic failed the test %d times, want once", len(rec.errs))
	}
	// What Finish would see (this package's TestMain does not call it).
	if text, _ := panicsLogged(before); !strings.Contains(text, "http: panic serving") {
		t.Errorf("panic log %q", text)
	}
}

// TestPortTakenRecognised: Caddy's error for a port already taken is one
// inUse recognises, so that Load chooses other ports when another process
// took one between its choice and the load; a port written in the config
// stays taken, and the load is refused.
func TestPortTakenRecognised(t *testing.T) {
	ln, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().(*net.TCPAddr).Port
	cfg := global + fmt.Sprintf(":{$PORT_HTTP}, :%d {\n\trespond ok\n}\n", taken)
	status, body, _ := Load([]byte(cfg), "text/caddyfile", false)
	if status == http.StatusOK || !strings.Contains(string(body), "address already in use") {
		t.Fatalf("a config on a taken port: %d %s", status, body)
	}
	if !inUse(errors.New(string(body))) {
		t.Errorf("inUse does not recognise %s", body)
	}
}

// TestReloadOnSamePortsAnswersAtOnce: a config loaded again on the same
// ports (a JSON config, or a Caddyfile on a port it does not name) is
// answered by the new servers as soon as Load returns; no request is
// closed unanswered by a replaced server still stopping (net/http drops a
// request it reads while shutting down, and a stopping listener's queued
// connections are reset). A new connection and the shared kept-alive
// client are both tried after each reload.
func TestReloadOnSamePortsAnswersAtOnce(t *testing.T) {
	js, err := Adapt(global + ":{$PORT_HTTP} {\n\trespond \"ok\"\n}\n")
	if err != nil {
		t.Fatal(err)
	}
	fixed, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, config, contentType string
		url                       func() string
	}{
		{"JSON loaded again", string(js), "application/json", func() string { return URL("HTTP") }},
		{"Caddyfile on a port it does not name", global + fmt.Sprintf(":%d {\n\trespond \"ok\"\n}\n", fixed), "text/caddyfile",
			func() string { return fmt.Sprintf("http://localhost:%d", fixed) }},
	}
	clients := []struct {
		name   string
		client *http.Client
	}{
		{"new connection", &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}},
		{"kept-alive connection", Client(10 * time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if status, body, err := Load([]byte(tt.config), tt.contentType, true); err != nil || status != http.StatusOK {
				t.Fatalf("load: %d %s %v", status, body, err)
			}
			const reloads = 100
			failed := map[string]int{}
			var first []string
			for i := 0; i < reloads; i++ {
				if status, body, err := Load([]byte(tt.config), tt.contentType, true); err != nil || status != http.StatusOK {
					t.Fatalf("reload %d: %d %s %v", i, status, body, err)
				}
				for _, c := range clients {
					res, err := c.client.Post(tt.url(), "text/plain", strings.NewReader("a request body"))
					if err == nil {
						body, _ := io.ReadAll(res.Body)
						res.Body.Close()
						if res.StatusCode != http.StatusOK || string(body) != "ok" {
							err = fmt.Errorf("%d %q", res.StatusCode, body)
						}
					}
					if err != nil {
						failed[c.name]++
						if len(first) < 5 {
							first = append(first, fmt.Sprintf("reload %d, %s: %v", i, c.name, err))
						}
					}
				}
			}
			if len(failed) > 0 {
				t.Errorf("requests sent right after %d reloads on the same ports that were not answered: %v\n%s", reloads, failed, strings.Join(first, "\n"))
			}
		})
	}
}
