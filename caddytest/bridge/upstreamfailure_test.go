package bridge

// Tests of an upstream that fails: in the middle of a held-back answer,
// with a closed kept-alive connection, or not at all; what the client gets
// and what the log says.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestUpstreamFailsMidBody: an export's answer is held until it is whole
// (recorded to be shared, and with unwrap_html also to be unwrapped), so
// when the upstream hangs or resets in the middle of its body nothing has
// reached the client yet: the client gets 504 or 502 with the error body
// instead of an empty reply, and Caddy keeps running (the abort happens
// in the shared call's goroutine, where no net/http recover stands).
func TestUpstreamFailsMidBody(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		kind, contentType, _ := strings.Cut(caseOf(body), " ")
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Content-Length", "1000")
		w.Header().Set("X-Upstream", "partial")
		io.WriteString(w, `{"body":{"html":"<p>half`)
		w.(http.Flusher).Flush()
		if kind == "reset" {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.(*net.TCPConn).SetLinger(0)
				conn.Close()
			}
			return
		}
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	for _, conf := range []struct{ name, option, contentType string }{
		{"html", "", "text/html"},
		{"unwrap_html", "unwrap_html", "application/json"},
	} {
		t.Run(conf.name, func(t *testing.T) {
			tc := load(t, site(bridgeBlock(up, conf.option, "timeout 500ms")))
			for _, c := range []struct {
				kind   string
				status int
				code   int
			}{{"hang", 504, 5040}, {"reset", 502, 5020}} {
				t.Run(c.kind, func(t *testing.T) {
					res := post(t, tc, "/v1/message/html", caseBody(c.kind+" "+conf.contentType), nil)
					if res.Status != c.status {
						t.Fatalf("status %d %q, want %d", res.Status, res.Body, c.status)
					}
					assertErrorBody(t, res, c.code)
					if res.Header.Get("X-Upstream") != "" {
						t.Error("the failed answer's headers were kept")
					}
					if res.Header.Get("Content-Security-Policy") != "sandbox" {
						t.Error("the bridge's own headers were lost")
					}
				})
			}
		})
	}
}

// TestClientGoneMidAnswer: when the only client waiting for an export
// goes away while the upstream's answer is being copied (the page's
// preview aborts its render on the next keystroke), the upstream call is
// cancelled in the middle of the body. That must end the call quietly,
// not Caddy: the next export is answered.
func TestClientGoneMidAnswer(t *testing.T) {
	started := make(chan struct{}, 1)
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Content-Type", "text/html")
		if caseOf(body) == "whole" {
			io.WriteString(w, "<p>whole</p>")
			return
		}
		io.WriteString(w, "<p>half")
		w.(http.Flusher).Flush()
		started <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	tc := load(t, site(bridgeBlock(up)))
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, siteURL+"/v1/message/html", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	done := make(chan error, 1)
	go func() {
		res, err := tc.Client.Do(req)
		if err == nil {
			res.Body.Close()
		}
		done <- err
	}()
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatal("the export never reached the upstream")
	}
	cancel()
	<-done
	// Another body: the server may not have seen the client go yet, and an
	// identical export would rightly join the call still in flight.
	if res := post(t, tc, "/v1/message/html", caseBody("whole"), nil); res.Status != 200 || string(res.Body) != "<p>whole</p>" {
		t.Errorf("the next export: %d %q", res.Status, res.Body)
	}
}

// TestAnswerOverSharedBound: an export's answer is recorded whole to be
// shared, up to 64 MiB; a longer one is refused with the JSON error (not
// an empty reply, and Caddy keeps running), and nothing of it is kept.
func TestAnswerOverSharedBound(t *testing.T) {
	const bound = 64 << 20 // design_bridge's maxSharedAnswer
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Content-Type", "text/html")
		if caseOf(body) == "small" {
			io.WriteString(w, "<p>small</p>")
			return
		}
		chunk := bytes.Repeat([]byte("<p>big</p>"), 1<<16)
		for n := 0; n <= bound; n += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	tc := load(t, site(bridgeBlock(up, "cache")))
	offset := len(readFile(t, logFile))
	res := post(t, tc, "/v1/message/html", caseBody("big"), nil)
	if res.Status != 502 {
		t.Fatalf("status %d (%d bytes), want 502", res.Status, len(res.Body))
	}
	assertErrorBody(t, res, 5020)
	if !bytes.Contains(res.Body, []byte("Upstream answer too large")) {
		t.Errorf("error body %q does not say why", res.Body)
	}
	// one ERROR entry, saying why (not also "the upstream failed")
	var errs []string
	for _, e := range logEntries(t, offset) {
		if e["level"] == "error" {
			errs = append(errs, fmt.Sprint(e["error"]))
		}
	}
	if len(errs) != 1 || !strings.Contains(errs[0], "answered more than") {
		t.Errorf("ERROR log entries %q, want one saying the answer was too large", errs)
	}
	if res := post(t, tc, "/v1/message/html", caseBody("small"), nil); res.Status != 200 || string(res.Body) != "<p>small</p>" {
		t.Errorf("the next export: %d %q", res.Status, res.Body)
	}
}

// TestErrorsNameNoUpstreamURL: 502 and 504 answers name the upstream by
// its role; its URL goes to the log only.
func TestErrorsNameNoUpstreamURL(t *testing.T) {
	slow := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
	})
	dead := closedPort(t)
	slowHost := strings.TrimPrefix(slow.URL, "http://")
	for _, c := range []struct {
		name, block, host string
		status            int
	}{
		{"unreachable", fmt.Sprintf("\t\tcontent_service http://%s\n\t\ttoken %s\n\t\tauth_url http://%s/loginV2\n\t\tclient_id %s\n\t\tclient_secret %s\n\t\tuid u1", dead, tokenPlain, dead, clientID, clientSecret), dead, 502},
		{"slow", fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken %s\n\t\tauth_url %s/loginV2\n\t\tclient_id %s\n\t\tclient_secret %s\n\t\ttimeout 300ms\n\t\tuid u1", slow.URL, tokenPlain, slow.URL, clientID, clientSecret), slowHost, 504},
	} {
		tc := load(t, site(c.block))
		for _, path := range []string{"/v1/message/html", "/proxy/bee-auth"} {
			t.Run(c.name+" "+path, func(t *testing.T) {
				res := post(t, tc, path, []byte(`{}`), nil)
				if res.Status != c.status {
					t.Fatalf("status %d %s", res.Status, res.Body)
				}
				if bytes.Contains(res.Body, []byte(c.host)) || bytes.Contains(res.Body, []byte("http://")) {
					t.Errorf("answer names the upstream: %s", res.Body)
				}
				if !bytes.Contains(readFile(t, logFile), []byte(c.host)) {
					t.Errorf("the log does not name the upstream %s", c.host)
				}
			})
		}
	}
}

// closingUpstream answers the first request of each connection and closes
// the connection when a second one arrives on it, without answering: what
// a server shutting down (a config reload) does to a kept-alive
// connection that a request was just sent on.
func closingUpstream(t *testing.T) (url string, served func() int) {
	var mu sync.Mutex
	n := 0
	url = connUpstream(t, func(conn net.Conn) {
		br := bufio.NewReader(conn)
		for i := 0; ; i++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			if i > 0 {
				return
			}
			mu.Lock()
			n++
			mu.Unlock()
			io.WriteString(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 9\r\n\r\n<p>ok</p>")
		}
	})
	return url, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// TestRetryOnClosedKeptAliveConnection: a request sent on a kept-alive
// upstream connection that the upstream closes without answering is sent
// again on a new connection (its body is buffered), on both paths.
func TestRetryOnClosedKeptAliveConnection(t *testing.T) {
	url, served := closingUpstream(t)
	tc := load(t, site(fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken %s\n\t\tauth_url %s/loginV2\n\t\tclient_id %s\n\t\tclient_secret %s\n\t\tuid u1", url, tokenPlain, url, clientID, clientSecret)))
	for _, path := range []string{"/v1/message/html", "/proxy/bee-auth"} {
		for i := 0; i < 4; i++ {
			res := post(t, tc, path, []byte(`{"page":{}}`), nil)
			if res.Status != 200 {
				t.Fatalf("%s request %d: %d %s", path, i+1, res.Status, res.Body)
			}
		}
	}
	if n := served(); n != 8 {
		t.Errorf("upstream answered %d requests, want 8", n)
	}
}

// TestUpstreamFailureLogsCause: a 502 is logged at ERROR with its cause
// (refused connection, TLS mismatch), not only "could not be reached", and
// the browser gets the error body without the cause.
func TestUpstreamFailureLogsCause(t *testing.T) {
	plain := newUpstream(t, nil)
	cases := []struct {
		name, contentService, cause string
	}{
		{"refused", "http://" + closedPort(t), "connection refused"},
		{"TLS to a plain HTTP server", "https://" + strings.TrimPrefix(plain.URL, "http://"), "tls: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tc := load(t, site("\t\tcontent_service "+c.contentService+"\n\t\ttoken "+tokenPlain))
			offset := len(readFile(t, logFile))
			res := post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), nil)
			if res.Status != 502 {
				t.Fatalf("status %d %s", res.Status, res.Body)
			}
			assertErrorBody(t, res, 5020)
			if bytes.Contains(res.Body, []byte(c.cause)) {
				t.Errorf("the browser sees the cause: %s", res.Body)
			}
			var found bool
			for _, e := range logEntries(t, offset) {
				cause, _ := e["cause"].(string)
				if e["level"] == "error" && strings.Contains(cause, c.cause) {
					found = true
					t.Logf("%s: %s (%s)", e["msg"], e["error"], cause)
				}
			}
			if !found {
				t.Errorf("no ERROR entry with a cause containing %q in\n%s", c.cause, readFile(t, logFile)[offset:])
			}
		})
	}
}
