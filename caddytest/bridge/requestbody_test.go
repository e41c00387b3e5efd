package bridge

// Tests of what a browser may send: only JSON bodies, and bodies that are
// too large or too slow are cut short with a clear answer.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestOnlyJSONBodies: a form or a bodiless simple request (the kinds a
// page of another site can send without a CORS preflight) is 415 on both
// paths, before anything goes upstream.
func TestOnlyJSONBodies(t *testing.T) {
	up := loginUpstream(t)
	tc := load(t, site(authBlock(up)))
	for _, path := range []string{"/v1/message/html", "/proxy/bee-auth"} {
		code := 4150
		if path == "/proxy/bee-auth" {
			code = 5001
		}
		for _, ct := range []string{"", "text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
			"multipart/form-data; boundary=x", "application/json-patch+json", "text/json", "application/json; =x"} {
			t.Run(path+" "+ct, func(t *testing.T) {
				before := len(up.requests())
				res := post(t, tc, path, []byte(`{"uid":"u1","page":{}}`), map[string]string{"Content-Type": ct, "Sec-Fetch-Site": "same-origin"})
				if res.Status != 415 {
					t.Fatalf("status %d %s, want 415", res.Status, res.Body)
				}
				assertErrorBody(t, res, code)
				// On the auth path the object has the LoginV2 shape too.
				var e struct {
					StatusCode *int `json:"status_code"`
				}
				json.Unmarshal(res.Body, &e)
				if onAuth := path == "/proxy/bee-auth"; onAuth != (e.StatusCode != nil) || (onAuth && *e.StatusCode != 415) {
					t.Errorf("status_code in %s (auth path: %v)", res.Body, onAuth)
				}
				if res.Header.Get("Content-Security-Policy") != "sandbox" {
					t.Errorf("no sandbox CSP on the error")
				}
				if len(up.requests()) != before {
					t.Error("the request went upstream")
				}
			})
		}
		t.Run(path+" JSON with parameters", func(t *testing.T) {
			res := post(t, tc, path, []byte(`{"uid":"u1","page":{}}`), map[string]string{"Content-Type": "Application/JSON; charset=utf-8"})
			if res.Status == 415 {
				t.Fatalf("status %d %s", res.Status, res.Body)
			}
		})
	}
}

// rawExchange sends head (and then body, unless it is nil) on a new
// connection and reads one response, waiting at most wait.
func rawExchange(t *testing.T, head string, body []byte, wait time.Duration) (*http.Response, []byte, error) {
	t.Helper()
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", httpPort))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(wait))
	if _, err := io.WriteString(conn, head); err != nil {
		return nil, nil, err
	}
	if body != nil {
		conn.Write(body)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return nil, nil, err
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	return res, got, nil
}

// TestContentLengthOverLimitAnsweredAtOnce: the 413 does not wait for a
// body that will not be used, and the connection is closed after it.
func TestContentLengthOverLimitAnsweredAtOnce(t *testing.T) {
	up := loginUpstream(t)
	tc := load(t, site(authBlock(up, "max_body 1KiB")))
	_ = tc
	for _, c := range []struct{ path, length string }{
		{"/v1/message/html", "2000"},
		{"/proxy/bee-auth", "100000"},
	} {
		t.Run(c.path, func(t *testing.T) {
			head := "POST " + c.path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: " + c.length + "\r\n\r\n"
			// No byte of the body is ever sent: the answer must not need it.
			res, body, err := rawExchange(t, head, nil, 10*time.Second)
			if err != nil {
				t.Fatalf("no answer without the body: %v", err)
			}
			if res.StatusCode != 413 || !res.Close {
				t.Fatalf("got %d (close %v) %s, want 413 with Connection: close", res.StatusCode, res.Close, body)
			}
		})
	}
	if n := len(up.requests()); n != 0 {
		t.Errorf("upstream called %d times", n)
	}
}

// TestSlowBodyBoundedByTimeout: a client trickling its body gets 408 once
// timeout has passed, on both paths, and nothing goes upstream.
func TestSlowBodyBoundedByTimeout(t *testing.T) {
	up := loginUpstream(t)
	tc := load(t, site(authBlock(up, "timeout 1s")))
	_ = tc
	for _, path := range []string{"/v1/message/html", "/proxy/bee-auth"} {
		t.Run(path, func(t *testing.T) {
			head := "POST " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"
			// Part of the body, then nothing: the test's 10 s is the bound
			// the server must answer within (timeout is 1 s).
			res, body, err := rawExchange(t, head, []byte(`{"uid":`), 10*time.Second)
			if err != nil {
				t.Fatalf("no answer to a stalled body: %v", err)
			}
			if res.StatusCode != 408 {
				t.Fatalf("status %d %s, want 408", res.StatusCode, body)
			}
		})
	}
	if n := len(up.requests()); n != 0 {
		t.Errorf("upstream called %d times", n)
	}
}

// TestStalledBodiesHoldLittleMemory: a Content-Length is only a claim. A
// client that announces a body of up to 1 MiB and then sends almost none
// of it holds memory for what it sent, not for what it announced: many
// such requests at once (one connection each here; HTTP/2 carries
// hundreds on one) must not make Caddy allocate the announced sizes.
// (The auth path's bodies are at most 64 KiB, a body's first buffer.)
func TestStalledBodiesHoldLittleMemory(t *testing.T) {
	up := loginUpstream(t)
	load(t, site(authBlock(up, "timeout 2s", "auth_rate_limit off")))
	const clients = 40
	for _, path := range []string{"/v1/message/html"} {
		t.Run(path, func(t *testing.T) {
			length := 1 << 20 // the largest body held in one buffer
			head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, length)
			// Two collections empty the buffer pools: every buffer the
			// requests hold is then allocated while they run.
			runtime.GC()
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			var wg sync.WaitGroup
			statuses := make(chan int, clients)
			for range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					res, _, err := rawExchange(t, head, []byte(`{"uid":`), 20*time.Second)
					if err != nil {
						t.Errorf("no answer to a stalled body: %v", err)
						return
					}
					statuses <- res.StatusCode
				}()
			}
			wg.Wait()
			runtime.ReadMemStats(&after)
			close(statuses)
			for s := range statuses {
				if s != 408 {
					t.Errorf("status %d, want 408", s)
				}
			}
			// Announced: 40 MiB on the export path. What was sent: 7
			// bytes each. Caddy's own work per request is some tens of
			// KiB, and a body's first buffer 64 KiB; the announced size
			// (or twice it, its buffer's size class) is far more.
			allocated := int64(after.TotalAlloc - before.TotalAlloc)
			t.Logf("%d stalled requests allocated %d KiB", clients, allocated>>10)
			if limit := int64(clients * length / 4); allocated > limit {
				t.Errorf("%d stalled requests allocated %d KiB, want at most %d KiB", clients, allocated>>10, limit>>10)
			}
		})
	}
}
