package bridge

// Tests of issue 14's hardening: what a browser may send and navigate to,
// secrets on paths other than the final answer, slow and oversized
// uploads, failures in the middle of a held-back answer, abuse limits.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"os"
	"strings"
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

// TestSandboxOnEveryAnswer: whatever the upstream answers (HTML, an error,
// its own headers) and whatever the bridge answers itself, the browser is
// told to run nothing of it on this origin.
func TestSandboxOnEveryAnswer(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		switch r.Header.Get("X-Kind") {
		case "error":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			io.WriteString(w, `{"code":4101,"message":"m","details":"d"}`)
		case "own-headers":
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.Header().Set("Content-Security-Policy", "default-src 'none'")
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<script>alert(1)</script>")
		case "wrapper":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"body":{"html":"<script>alert(1)</script>"}}`)
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, "<script>alert(1)</script>")
		}
	})
	dead := "http://" + closedPort(t)
	for _, cfg := range []struct{ name, block string }{
		{"upstream", bridgeBlock(up)},
		{"unwrap_html", bridgeBlock(up, "unwrap_html")},
		{"unreachable", "\t\tcontent_service " + dead + "\n\t\ttoken " + tokenPlain},
	} {
		tc := load(t, site(cfg.block))
		for _, kind := range []string{"html", "error", "own-headers", "wrapper", "method", "cross-site"} {
			t.Run(cfg.name+" "+kind, func(t *testing.T) {
				var res response
				switch kind {
				case "method":
					res = do(t, tc, http.MethodGet, "/v1/message/html", nil, nil)
				case "cross-site":
					res = post(t, tc, "/v1/message/html", []byte(`{}`), map[string]string{"Sec-Fetch-Site": "cross-site"})
				default:
					res = post(t, tc, "/v1/message/html", []byte(`{}`), map[string]string{"X-Kind": kind})
				}
				csp := res.Header.Values("Content-Security-Policy")
				sandboxed := false
				for _, v := range csp {
					sandboxed = sandboxed || v == "sandbox"
				}
				if !sandboxed {
					t.Errorf("status %d: Content-Security-Policy %q, want a sandbox policy", res.Status, csp)
				}
				if v := res.Header.Values("X-Content-Type-Options"); len(v) != 1 || v[0] != "nosniff" {
					t.Errorf("status %d: X-Content-Type-Options %q, want one nosniff", res.Status, v)
				}
			})
		}
	}
}

// interimUpstream answers every request with a 103 Early Hints that
// echoes the request's headers and body, then a 200.
func interimUpstream(t *testing.T) *upstream {
	return newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		for name, values := range r.Header {
			for _, v := range values {
				w.Header().Add("X-Echo-"+name, v)
			}
		}
		w.Header().Set("X-Echo-Body", strings.NewReplacer("\r", "", "\n", "").Replace(string(body)))
		w.Header().Set("Link", "</style.css>; rel=preload")
		w.WriteHeader(http.StatusEarlyHints)
		for name := range w.Header() {
			w.Header().Del(name)
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"t"}`)
	})
}

// TestInterimResponsesScrubbed: a 103 that echoes the request carries the
// token (export) and the client secret (auth) unless the bridge scrubs
// interim responses like final ones.
func TestInterimResponsesScrubbed(t *testing.T) {
	up := interimUpstream(t)
	tc := load(t, site(authBlock(up)))
	for _, path := range []string{"/v1/message/html", "/proxy/bee-auth"} {
		t.Run(path, func(t *testing.T) {
			var mu sync.Mutex
			var interim []http.Header
			trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
				mu.Lock()
				defer mu.Unlock()
				interim = append(interim, http.Header(h).Clone())
				return nil
			}}
			ctx := httptrace.WithClientTrace(context.Background(), trace)
			send := func() (*http.Response, error) {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, siteURL+path, strings.NewReader(`{"uid":"u1"}`))
				req.Header.Set("Content-Type", "application/json")
				return tc.Client.Do(req)
			}
			res, err := send()
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 200 {
				t.Fatalf("status %d %s", res.StatusCode, body)
			}
			mu.Lock()
			defer mu.Unlock()
			// Exports are answered whole (their answer may be shared with
			// identical exports, or kept), so their interim responses are
			// dropped; LoginV2's pass through, scrubbed.
			want := 1
			if path != "/proxy/bee-auth" {
				want = 0
			}
			if len(interim) != want || (want == 1 && interim[0].Get("Link") == "") {
				t.Fatalf("interim responses %v, want %d (the 103 with its Link)", interim, want)
			}
			for _, h := range interim {
				assertNoSecretFold(t, "103 headers", headerText(h))
			}
			assertNoSecretFold(t, "final headers", headerText(res.Header))
		})
	}
}

// assertNoSecretFold is assertNoSecret without regard to case: net/http
// changes the case of header names.
func assertNoSecretFold(t *testing.T, where string, data []byte) {
	t.Helper()
	lower := bytes.ToLower(data)
	for _, s := range allSecrets {
		if i := bytes.Index(lower, []byte(strings.ToLower(s))); i >= 0 {
			t.Errorf("%s contains secret %q (any case): …%s…", where, s, data[max(0, i-200):min(len(data), i+len(s)+50)])
		}
	}
}

// TestSecretAsHeaderName: an upstream that uses the token it received as
// the name of a header or a trailer gets neither to the client nor into
// the access and DEBUG logs.
func TestSecretAsHeaderName(t *testing.T) {
	for _, f := range []string{logFile, accLog} {
		if err := truncate(f); err != nil {
			t.Fatal(err)
		}
	}
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		w.Header().Set(tok, "v")
		w.Header().Set("X-"+strings.ToUpper(tok), "v")
		w.Header().Set("Trailer", "X-Fine, "+tok)
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<p>ok</p>")
		w.Header().Set("X-Fine", "f")
		w.Header().Set(tok, "t")
	})
	tc := load(t, site(bridgeBlock(up)))
	req, _ := http.NewRequest(http.MethodPost, siteURL+"/v1/message/html", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	res, err := tc.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || string(body) != "<p>ok</p>" {
		t.Fatalf("got %d %q", res.StatusCode, body)
	}
	assertNoSecretFold(t, "headers", headerText(res.Header))
	assertNoSecretFold(t, "trailers", headerText(res.Trailer))
	if res.Trailer.Get("X-Fine") != "f" {
		t.Errorf("the harmless trailer was lost: %v", res.Trailer)
	}
	logs := readFile(t, logFile)
	if !bytes.Contains(logs, []byte(`"upstream roundtrip"`)) {
		t.Fatal("debug log not captured")
	}
	assertNoSecretFold(t, "caddy log", logs)
	assertNoSecretFold(t, "access log", readFile(t, accLog))
}

// TestUnwrapEscapedSecret: a JSON wrapper that writes the token with one
// character \u-escaped is masked as it arrives only in its literal parts;
// once unwrapped, the decoded token must still be masked.
func TestUnwrapEscapedSecret(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		escaped := tok[:len(tok)-1] + fmt.Sprintf(`\u%04x`, tok[len(tok)-1])
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"body":{"html":"<p>%s</p>"}}`, escaped)
	})
	tc := load(t, site(bridgeBlock(up, "unwrap_html")))
	res := post(t, tc, "/v1/message/html", []byte(`{}`), nil)
	if res.Status != 200 || res.Header.Get("Content-Type") != "text/html; charset=utf-8" {
		t.Fatalf("got %d %q %q", res.Status, res.Header.Get("Content-Type"), res.Body)
	}
	assertNoSecret(t, "unwrapped body", res.Body)
	if want := "<p>" + strings.Repeat("*", len(tokenPlain)) + "</p>"; string(res.Body) != want {
		t.Errorf("body %q, want %q", res.Body, want)
	}
}

// TestUpstreamFailsMidBody: an export's answer is held until it is whole
// (recorded to be shared, and with unwrap_html also to be unwrapped), so
// when the upstream hangs or resets in the middle of its body nothing has
// reached the client yet: the client gets 504 or 502 with the error body
// instead of an empty reply, and Caddy keeps running (the abort happens
// in the shared call's goroutine, where no net/http recover stands).
func TestUpstreamFailsMidBody(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Content-Type", r.Header.Get("X-Type"))
		w.Header().Set("Content-Length", "1000")
		w.Header().Set("X-Upstream", "partial")
		io.WriteString(w, `{"body":{"html":"<p>half`)
		w.(http.Flusher).Flush()
		if r.Header.Get("X-Kind") == "reset" {
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
					res := post(t, tc, "/v1/message/html", []byte(`{}`), map[string]string{"X-Kind": c.kind, "X-Type": conf.contentType})
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
		if r.Header.Get("X-Kind") == "whole" {
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
	if res := post(t, tc, "/v1/message/html", []byte(`{}`), map[string]string{"X-Kind": "whole"}); res.Status != 200 || string(res.Body) != "<p>whole</p>" {
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
		if r.Header.Get("X-Size") == "small" {
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
	res := post(t, tc, "/v1/message/html", []byte(`{}`), map[string]string{"X-Size": "big"})
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
	if res := post(t, tc, "/v1/message/html", []byte(`{}`), map[string]string{"X-Size": "small"}); res.Status != 200 || string(res.Body) != "<p>small</p>" {
		t.Errorf("the next export: %d %q", res.Status, res.Body)
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

// clientFrom returns a client whose connections come from the loopback
// address ip, a distinct client address for the server.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 10 * time.Second}
}

func TestAuthRateLimit(t *testing.T) {
	up := loginUpstream(t)
	load(t, site(authBlock(up, "auth_rate_limit 3 per 1m")))
	login := func(c *http.Client) response {
		req, _ := http.NewRequest(http.MethodPost, siteURL+"/proxy/bee-auth", strings.NewReader(`{"uid":"u1"}`))
		req.Header.Set("Content-Type", "application/json")
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return response{res.StatusCode, res.Header, body}
	}
	a, b := clientFrom("127.0.0.1"), clientFrom("127.0.0.2")
	for i := 0; i < 3; i++ {
		if res := login(a); res.Status != 200 {
			t.Fatalf("login %d: %d %s", i+1, res.Status, res.Body)
		}
	}
	res := login(a)
	if res.Status != 429 || res.Header.Get("Retry-After") != "20" {
		t.Fatalf("4th login: %d Retry-After %q, want 429 after 20 s", res.Status, res.Header.Get("Retry-After"))
	}
	assertErrorBody(t, res, 4290)
	if res := login(b); res.Status != 200 {
		t.Fatalf("another address was limited: %d %s", res.Status, res.Body)
	}
	if n := len(up.requests()); n != 4 {
		t.Errorf("upstream got %d logins, want 4", n)
	}
	// Exports are not limited by it.
	for i := 0; i < 5; i++ {
		req, _ := http.NewRequest(http.MethodPost, siteURL+"/v1/message/html", strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		res, err := a.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode == 429 {
			t.Fatal("export limited by auth_rate_limit")
		}
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
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	n := 0
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
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
			}()
		}
	}()
	t.Cleanup(func() { l.Close() })
	return "http://" + l.Addr().String(), func() int { mu.Lock(); defer mu.Unlock(); return n }
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

func truncate(name string) error {
	if err := os.Truncate(name, 0); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// loginFrom posts a login through c with extra headers.
func loginFrom(t *testing.T, c *http.Client, header map[string]string) response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, siteURL+"/proxy/bee-auth", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, body}
}

// TestAuthRateLimitByDefault: without auth_rate_limit, logins are limited
// to 30 per minute per address; "off" lifts it; a reload that keeps the
// limit keeps the counts; an IPv6 client is one /64.
func TestAuthRateLimitByDefault(t *testing.T) {
	up := loginUpstream(t)
	logins := func(t *testing.T, c *http.Client, n int, header map[string]string) {
		t.Helper()
		for i := range n {
			if res := loginFrom(t, c, header); res.Status != 200 {
				t.Fatalf("login %d: %d %s", i+1, res.Status, res.Body)
			}
		}
	}
	t.Run("default", func(t *testing.T) {
		load(t, site(authBlock(up)))
		c := clientFrom("127.0.0.4")
		logins(t, c, 30, nil)
		if res := loginFrom(t, c, nil); res.Status != 429 || res.Header.Get("Retry-After") != "2" {
			t.Errorf("31st login: %d Retry-After %q, want 429 after 2 s", res.Status, res.Header.Get("Retry-After"))
		}
	})
	t.Run("off", func(t *testing.T) {
		load(t, site(authBlock(up, "auth_rate_limit off")))
		logins(t, clientFrom("127.0.0.5"), 35, nil)
	})
	t.Run("reload keeps the counts", func(t *testing.T) {
		load(t, site(authBlock(up, "auth_rate_limit 3 per 1m")))
		c := clientFrom("127.0.0.6")
		logins(t, c, 3, nil)
		// Another config (timeout changed) with the same limit.
		load(t, site(authBlock(up, "auth_rate_limit 3 per 1m", "timeout 29s")))
		if res := loginFrom(t, c, nil); res.Status != 429 {
			t.Errorf("after the reload: %d %s, want 429", res.Status, res.Body)
		}
	})
	t.Run("IPv6 by /64", func(t *testing.T) {
		cfg := strings.Replace(site(authBlock(up, "auth_rate_limit 3 per 1m")), "\t\tlog_credentials",
			"\t\tlog_credentials\n\t\ttrusted_proxies static 127.0.0.0/8\n\t\tclient_ip_headers X-Forwarded-For", 1)
		load(t, cfg)
		c := clientFrom("127.0.0.7")
		for i := range 3 {
			logins(t, c, 1, map[string]string{"X-Forwarded-For": fmt.Sprintf("2001:db8:1:2::%x", i+1)})
		}
		if res := loginFrom(t, c, map[string]string{"X-Forwarded-For": "2001:db8:1:2:ffff::9"}); res.Status != 429 {
			t.Errorf("same /64: %d, want 429", res.Status)
		}
		logins(t, c, 1, map[string]string{"X-Forwarded-For": "2001:db8:1:3::1"})
	})
}
