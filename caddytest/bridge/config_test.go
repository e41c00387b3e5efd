package bridge

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
)

func adapt(t *testing.T, cfg string) []byte {
	t.Helper()
	// Through testcaddy, for ports of their own (portName).
	out, err := testcaddy.Adapt(template(cfg))
	if err != nil {
		t.Fatalf("adapt: %v", err)
	}
	return out
}

// findHandler returns the first handler object with the given name.
func findHandler(v any, name string) map[string]any {
	switch x := v.(type) {
	case map[string]any:
		if x["handler"] == name {
			return x
		}
		for _, e := range x {
			if h := findHandler(e, name); h != nil {
				return h
			}
		}
	case []any:
		for _, e := range x {
			if h := findHandler(e, name); h != nil {
				return h
			}
		}
	}
	return nil
}

// TestAdaptRoundTrip: the Caddyfile adapts to the documented JSON, and
// that JSON, loaded as is, configures the same working handler.
func TestAdaptRoundTrip(t *testing.T) {
	up := newUpstream(t, nil)
	block := fmt.Sprintf(`		content_service %s
		token {env.DB_TEST_TOKEN}
		client_id {env.DB_TEST_CLIENT_ID}
		client_secret {env.DB_TEST_CLIENT_SECRET}
		auth_url %s/loginV2
		uid {http.auth.user.id}
		export_paths /v1/message/html /v1/message/plain-text
		auth_path /proxy/bee-auth
		max_body 10MiB
		timeout 30s
		unwrap_html
		allowed_origins http://localhost:3000
		insecure_http`, up.URL, up.URL)
	raw := adapt(t, site(block))
	var cfg any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(findHandler(cfg, "design_bridge"))
	want := fmt.Sprintf(`{"allowed_origins":["http://localhost:3000"],"auth_path":"/proxy/bee-auth","auth_url":"%s/loginV2","client_id":"{env.DB_TEST_CLIENT_ID}","client_secret":"{env.DB_TEST_CLIENT_SECRET}","content_service":"%s","export_paths":["/v1/message/html","/v1/message/plain-text"],"handler":"design_bridge","insecure_http":true,"max_body":10485760,"timeout":30000000000,"token":"{env.DB_TEST_TOKEN}","uid":"{http.auth.user.id}","unwrap_html":true}`, up.URL, up.URL)
	if string(got) != want {
		t.Fatalf("adapted handler\n got %s\nwant %s", got, want)
	}
	// Load the JSON itself (not the Caddyfile) and use it.
	tc := newTester(t)
	tc.InitServer(string(raw), "json")
	res := post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), nil)
	if res.Status != 200 || up.last(t).Header.Get("Authorization") != "Bearer "+tokenEnv {
		t.Errorf("JSON config does not forward: %d", res.Status)
	}
}

// TestDirectiveOrder: without any `order` option, design_bridge runs after
// authentication and encode (which then compresses its answers) and before
// handle, respond, reverse_proxy and file_server.
func TestDirectiveOrder(t *testing.T) {
	cfg := `:9101 {
	file_server
	reverse_proxy /rp/* 127.0.0.1:9
	respond /r "r"
	handle /h/* {
		respond "h"
	}
	design_bridge
	encode gzip
	forward_auth /fa/* 127.0.0.1:9 {
		uri /check
	}
	basic_auth /private/* {
		u $2a$14$Zkx19XLiW6VYouLHR5NmfOFU0z2GTNmpkT/5qqR7hx4IjWJPDhjvG
	}
}`
	raw := string(adapt(t, cfg))
	pos := func(s string) int {
		i := strings.Index(raw, s)
		if i < 0 {
			t.Fatalf("%s not in adapted config", s)
		}
		return i
	}
	order := []string{`"handler":"authentication"`, `"uri":"/check"`, `"handler":"encode"`, `"handler":"design_bridge"`, `"body":"h"`, `"body":"r"`, `"path":["/rp/*"]`, `"handler":"file_server"`}
	for i := 1; i < len(order); i++ {
		if pos(order[i-1]) > pos(order[i]) {
			t.Errorf("%s comes after %s", order[i-1], order[i])
		}
	}
}

// TestConfigLoadErrors: bad configs fail at load time, naming the token.
func TestConfigLoadErrors(t *testing.T) {
	tests := []struct {
		block, want string
	}{
		{"\t\tcontentservice http://127.0.0.1:1", `unrecognized subdirective \"contentservice\"`},
		{"\t\tmax_body huge", `max_body: \"huge\" is not a size`},
		{"\t\ttimeout 5", `timeout: parsing \"5\"`},
		{"\t\tcontent_service http://cs.example.com\n\t\ttoken abcdefgh", "would receive the token over plain HTTP"},
	}
	load(t, site("")) // admin API up, with a valid config that must survive
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			status, body, err := loadRaw([]byte(site(tt.block)), "text/caddyfile", false)
			if err != nil {
				t.Fatal(err)
			}
			if status == 200 || !strings.Contains(string(body), tt.want) {
				t.Errorf("load: %d %s; want error containing %s", status, body, tt.want)
			}
		})
	}
}

// TestReloadLeaks reloads the config (with answer_memory, forward_headers
// and the cache set) through the admin API 100 times, using the bridge
// after each reload, and then counts goroutines, open file descriptors
// and the connections the upstream still has open. A config that left
// its transport's keep-alive connections behind would leave one
// connection and its goroutines per reload.
func TestReloadLeaks(t *testing.T) {
	up := newUpstream(t, nil)
	raw := adapt(t, site(bridgeBlock(up, "answer_memory 64MiB", "forward_headers X-Request-Id", "cache 1MiB 10m")))
	tc := newTester(t)
	tc.InitServer(string(raw), "json")
	// Each reload keeps the ports; Load returns once only the new servers
	// listen there, and a new connection per request reaches them alone.
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 10 * time.Second}
	reload := func() {
		status, body, err := loadRaw(raw, "application/json", true) // reload even though unchanged
		if err != nil {
			t.Fatalf("reload: %v", err)
		}
		if status != 200 {
			t.Fatalf("reload: %d %s", status, body)
		}
	}
	use := func() {
		req, _ := http.NewRequest(http.MethodPost, siteURL+"/v1/message/html", strings.NewReader(`{"page":{}}`))
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("request: %v", err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			t.Fatalf("request: %d", res.StatusCode)
		}
	}
	settle := func(ok func() bool) {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && !ok(); {
			time.Sleep(100 * time.Millisecond)
		}
	}
	for i := 0; i < 5; i++ {
		reload()
		use()
	}
	reload() // drops the last keep-alive connection
	settle(func() bool { return up.Open() == 0 })
	time.Sleep(500 * time.Millisecond)
	baseG, baseC, baseFD := runtime.NumGoroutine(), up.Open(), openFDs()
	const reloads = 100
	for i := 0; i < reloads; i++ {
		reload()
		use() // leaves an idle keep-alive connection in this config's transport
	}
	reload()
	const slack = 20
	settle(func() bool {
		return up.Open() <= baseC && runtime.NumGoroutine() <= baseG+slack && openFDs() <= baseFD+slack
	})
	g, c, fd := runtime.NumGoroutine(), up.Open(), openFDs()
	t.Logf("after %d reloads: goroutines %d (baseline %d), open upstream connections %d (baseline %d), file descriptors %d (baseline %d)",
		reloads, g, baseG, c, baseC, fd, baseFD)
	if fd > baseFD+slack {
		t.Errorf("open file descriptors grew from %d to %d over %d reloads", baseFD, fd, reloads)
	}
	if c > baseC {
		t.Errorf("%d upstream connections left open after %d reloads (baseline %d)", c, reloads, baseC)
	}
	if g > baseG+slack {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		t.Errorf("goroutines grew from %d to %d over %d reloads\n%s", baseG, g, reloads, buf[:min(n, 20000)])
	}
}

// TestLocalhostWithoutDNS: plain HTTP is allowed to literal loopback
// addresses and to localhost itself, which the bridge dials as 127.0.0.1;
// a name under .localhost would be looked up, so a secret sent to it over
// plain HTTP is a load error.
func TestLocalhostWithoutDNS(t *testing.T) {
	up := newUpstream(t, nil)
	u, err := url.Parse(up.URL)
	if err != nil {
		t.Fatal(err)
	}
	port := u.Port()
	tc := load(t, site(fmt.Sprintf("\t\tcontent_service http://localhost:%s\n\t\ttoken %s", port, tokenPlain)))
	if res := post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), nil); res.Status != 200 {
		t.Fatalf("export to localhost: %d %s", res.Status, res.Body)
	}
	if got := up.last(t); got.Header.Get("Authorization") != "Bearer "+tokenPlain {
		t.Errorf("upstream got Authorization %q", got.Header.Get("Authorization"))
	}
	for _, host := range []string{"app.localhost", "localhost.", "LOCALHOST.example.com"} {
		for _, field := range []string{"content_service", "auth_url"} {
			block := fmt.Sprintf("\t\t%s http://%s:%s\n\t\ttoken %s\n\t\tclient_id %s\n\t\tclient_secret %s\n\t\tuid u1", field, host, port, tokenPlain, clientID, clientSecret)
			status, body, err := loadRaw([]byte(site(block)), "text/caddyfile", false)
			if err != nil {
				t.Fatal(err)
			}
			if status == 200 || !strings.Contains(string(body), "over plain HTTP on a non-loopback host") {
				t.Errorf("%s http://%s: load %d %s; want the plain-HTTP error", field, host, status, body)
			}
		}
	}
}

// openFDs is the number of this process's open file descriptors (0
// where /proc does not tell).
func openFDs() int {
	entries, _ := os.ReadDir("/proc/self/fd")
	return len(entries)
}
