package bridge

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

func bridgeBlock(u *upstream, extra ...string) string {
	return fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken %s\n%s", u.URL, tokenPlain, indent(extra))
}

func indent(lines []string) string {
	var sb strings.Builder
	for _, l := range lines {
		sb.WriteString("\t\t" + l + "\n")
	}
	return sb.String()
}

func TestExportForwardsBodyAndToken(t *testing.T) {
	up := newUpstream(t, nil)
	design := testDesign(t)
	tests := []struct {
		name       string
		tokenLine  string
		wantHeader string
	}{
		{"token without prefix", "token " + tokenPlain, "Bearer " + tokenPlain},
		{"token with prefix", `token "Bearer ` + tokenPlain + `"`, "Bearer " + tokenPlain},
		{"token from env placeholder with prefix", "token {env.DB_TEST_TOKEN}", "Bearer " + tokenEnv},
		{"token from Caddyfile env substitution", "token {$DB_TEST_TOKEN}", "Bearer " + tokenEnv},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := load(t, site("\t\tcontent_service "+up.URL+"\n\t\t"+tt.tokenLine))
			res := post(t, tc, "/v1/message/html", design, map[string]string{
				"Content-Type":        "application/json; charset=UTF-8",
				"Authorization":       "Basic YnJvd3Nlcjpwdw==",
				"Cookie":              "session=browser-cookie",
				"Proxy-Authorization": "Basic cHJveHk6cHc=",
				"Connection":          "keep-alive, X-Hop",
				"X-Hop":               "hop-by-hop",
				"Sec-Fetch-Site":      "same-origin",
			})
			if res.Status != 200 || string(res.Body) != "<p>ok</p>" {
				t.Fatalf("response %d %q", res.Status, res.Body)
			}
			if csp, nosniff := res.Header.Values("Content-Security-Policy"), res.Header.Get("X-Content-Type-Options"); len(csp) != 1 || csp[0] != "sandbox" || nosniff != "nosniff" {
				t.Errorf("Content-Security-Policy %q, X-Content-Type-Options %q; want sandbox, nosniff", csp, nosniff)
			}
			got := up.last(t)
			if got.Method != http.MethodPost || got.Path != "/v1/message/html" {
				t.Errorf("upstream got %s %s", got.Method, got.Path)
			}
			if !bytes.Equal(got.Body, design) {
				t.Errorf("body differs: %d bytes sent, %d received", len(design), len(got.Body))
			}
			if auth := got.Header.Values("Authorization"); len(auth) != 1 || auth[0] != tt.wantHeader {
				t.Errorf("Authorization %q, want exactly %q", auth, tt.wantHeader)
			}
			if ct := got.Header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			for _, h := range []string{"Cookie", "Proxy-Authorization", "X-Hop"} {
				if v := got.Header.Values(h); len(v) != 0 {
					t.Errorf("%s forwarded: %q", h, v)
				}
			}
		})
	}
}

// TestExportPaths: every default export path is forwarded to the same path
// upstream, under the content_service's own path prefix.
func TestExportPaths(t *testing.T) {
	up := newUpstream(t, nil)
	tc := load(t, site("\t\tcontent_service "+up.URL+"/base/\n\t\ttoken "+tokenPlain))
	for _, p := range []string{"/v1/message/html", "/v1/message/plain-text", "/v1/message/pdf", "/v1/message/image"} {
		// The browser's query string is not forwarded: no export contract
		// has one, and it would travel next to the token.
		res := post(t, tc, p+"?x=1&token=y", []byte(`{"page":{}}`), nil)
		if res.Status != 200 {
			t.Errorf("%s: status %d", p, res.Status)
		}
		if got := up.last(t).Path; got != "/base"+p {
			t.Errorf("%s: upstream path %q", p, got)
		}
	}
}

// bigDesign builds a valid design JSON of at least size bytes.
func bigDesign(size int) []byte {
	var buf bytes.Buffer
	buf.WriteString(`{"page":{"rows":[`)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; buf.Len() < size; i++ {
		if i > 0 {
			buf.WriteByte(',')
		}
		fmt.Fprintf(&buf, `{"columns":[{"modules":[{"type":"mailup-bee-newsletter-modules-text","descriptor":{"text":{"html":"<p>row %d %x ünïcødé</p>"}}}]}]}`, i, rng.Uint64())
	}
	buf.WriteString(`]}}`)
	return buf.Bytes()
}

func TestExportLargeDesignByteIdentical(t *testing.T) {
	up := newUpstream(t, nil)
	tc := load(t, site(bridgeBlock(up)))
	design := bigDesign(5 << 20)
	res := post(t, tc, "/v1/message/html", design, map[string]string{"Content-Type": "application/json"})
	if res.Status != 200 {
		t.Fatalf("status %d %s", res.Status, res.Body)
	}
	got := up.last(t)
	if sha256.Sum256(got.Body) != sha256.Sum256(design) {
		t.Fatalf("5 MiB design altered: sent %d bytes, received %d", len(design), len(got.Body))
	}
}

func pngBytes() []byte {
	// A PNG signature followed by bytes that are not valid UTF-8 and
	// include NUL and CR/LF, so any text handling would corrupt them.
	b := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	for i := 0; i < 4096; i++ {
		b = append(b, byte(i*7+3))
	}
	return b
}

func TestExportPassesStatusAndBody(t *testing.T) {
	png := pngBytes()
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		if r.URL.Path == "/v1/message/image" {
			w.Header().Set("Content-Type", "image/png")
			w.Write(png)
			return
		}
		status, _ := strconv.Atoi(caseOf(body))
		w.Header().Set("Content-Type", "application/json")
		if status == 429 {
			w.Header().Set("Retry-After", "7")
		}
		if status == 200 {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"code":%d0,"message":"status %d","details":"d"}`, status, status)
	})
	tc := load(t, site(bridgeBlock(up)))
	for _, status := range []int{200, 400, 401, 403, 429, 500} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			before := strings.Count(string(readFile(t, logFile)), `"msg":"content service refused the token"`)
			res := post(t, tc, "/v1/message/html", caseBody(strconv.Itoa(status)), nil)
			want := fmt.Sprintf(`{"code":%d0,"message":"status %d","details":"d"}`, status, status)
			if res.Status != status || string(res.Body) != want {
				t.Errorf("got %d %q, want %d %q", res.Status, res.Body, status, want)
			}
			wantCT := "application/json"
			if status == 200 {
				wantCT = "text/html; charset=utf-8"
			}
			if ct := res.Header.Get("Content-Type"); ct != wantCT {
				t.Errorf("Content-Type %q, want %q", ct, wantCT)
			}
			if status == 429 && res.Header.Get("Retry-After") != "7" {
				t.Errorf("Retry-After %q", res.Header.Get("Retry-After"))
			}
			after := strings.Count(string(readFile(t, logFile)), `"msg":"content service refused the token"`)
			wantLogs := 0
			if status == 401 || status == 403 {
				wantLogs = 1
			}
			if after-before != wantLogs {
				t.Errorf("token hint logged %d times, want %d", after-before, wantLogs)
			}
		})
	}
	t.Run("binary png", func(t *testing.T) {
		res := post(t, tc, "/v1/message/image", []byte(`{"page":{}}`), nil)
		if res.Status != 200 || res.Header.Get("Content-Type") != "image/png" || !bytes.Equal(res.Body, png) {
			t.Errorf("png altered: %d %q, %d bytes (want %d)", res.Status, res.Header.Get("Content-Type"), len(res.Body), len(png))
		}
	})
}

func TestExportMethodNotAllowed(t *testing.T) {
	up := newUpstream(t, nil)
	tc := load(t, site(bridgeBlock(up)))
	for _, m := range []string{http.MethodGet, http.MethodPut, http.MethodDelete, http.MethodPatch} {
		for _, p := range []string{"/v1/message/html", "/proxy/bee-auth"} {
			res := do(t, tc, m, p, nil, nil)
			if res.Status != 405 || res.Header.Get("Allow") != "POST" {
				t.Errorf("%s %s: %d Allow=%q", m, p, res.Status, res.Header.Get("Allow"))
			}
			assertErrorBody(t, res, 4050)
		}
	}
	if n := len(up.requests()); n != 0 {
		t.Errorf("upstream called %d times", n)
	}
}

func assertErrorBody(t *testing.T, res response, code int) {
	t.Helper()
	var e struct {
		Code    *int    `json:"code"`
		Message *string `json:"message"`
		Details *string `json:"details"`
	}
	if err := json.Unmarshal(res.Body, &e); err != nil || e.Code == nil || e.Message == nil || e.Details == nil {
		t.Errorf("not an error body: %q (%v)", res.Body, err)
		return
	}
	if *e.Code != code {
		t.Errorf("code %d, want %d (%s)", *e.Code, code, res.Body)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("error Content-Type %q", ct)
	}
}

func TestExportBodyLimit(t *testing.T) {
	up := newUpstream(t, nil)
	tc := load(t, site(bridgeBlock(up, "max_body 1KiB")))
	t.Run("content-length over limit", func(t *testing.T) {
		res := post(t, tc, "/v1/message/html", bytes.Repeat([]byte("a"), 1025), nil)
		if res.Status != 413 {
			t.Fatalf("status %d", res.Status)
		}
		assertErrorBody(t, res, 4130)
	})
	t.Run("content-length at limit", func(t *testing.T) {
		res := post(t, tc, "/v1/message/html", bytes.Repeat([]byte("a"), 1024), nil)
		if res.Status != 200 || len(up.last(t).Body) != 1024 {
			t.Fatalf("status %d", res.Status)
		}
	})
	chunked := func(n int) response {
		send := func() (*http.Response, error) {
			req, _ := http.NewRequest(http.MethodPost, siteURL+"/v1/message/html", io.NopCloser(bytes.NewReader(bytes.Repeat([]byte("b"), n))))
			req.Header.Set("Content-Type", "application/json")
			req.ContentLength = -1 // chunked
			return tc.Client.Do(req)
		}
		res, err := send()
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return response{res.StatusCode, res.Header, body}
	}
	t.Run("chunked over limit", func(t *testing.T) {
		before := len(up.requests())
		res := chunked(64 << 10)
		if res.Status != 413 {
			t.Fatalf("status %d %s", res.Status, res.Body)
		}
		assertErrorBody(t, res, 4130)
		if len(up.requests()) != before {
			t.Errorf("upstream received an oversized request")
		}
	})
	t.Run("chunked at limit", func(t *testing.T) {
		res := chunked(1024)
		if res.Status != 200 || len(up.last(t).Body) != 1024 {
			t.Fatalf("status %d, upstream got %d bytes", res.Status, len(up.last(t).Body))
		}
	})
	for _, r := range up.requests() {
		if len(r.Body) > 1024 {
			t.Errorf("upstream received %d bytes", len(r.Body))
		}
	}
}

// closedPort returns a loopback port with nothing listening.
func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestExportUpstreamFailures(t *testing.T) {
	slow := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		select {
		case <-time.After(3 * time.Second):
		case <-r.Context().Done():
		}
	})
	dead := "http://" + closedPort(t)
	cases := []struct {
		name, block string
		status      int
		code        int
	}{
		{"unreachable", "\t\tcontent_service " + dead + "\n\t\ttoken " + tokenPlain, 502, 5020},
		{"slow", bridgeBlock(slow, "timeout 300ms"), 504, 5040},
	}
	for _, c := range cases {
		t.Run(c.name+" default JSON", func(t *testing.T) {
			tc := load(t, site(c.block))
			res := post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), nil)
			if res.Status != c.status {
				t.Fatalf("status %d %s", res.Status, res.Body)
			}
			assertErrorBody(t, res, c.code)
		})
		// A site's handle_errors sees none of the bridge's errors (the
		// error policy in CONTRIBUTING.md): the JSON body stays.
		t.Run(c.name+" handle_errors", func(t *testing.T) {
			tc := load(t, site(c.block, "\thandle_errors {\n\t\trespond \"handled {err.status_code}\" {err.status_code}\n\t}"))
			res := post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), nil)
			if res.Status != c.status {
				t.Fatalf("got %d %q, want %d", res.Status, res.Body, c.status)
			}
			assertErrorBody(t, res, c.code)
		})
	}
	// handle_errors for other paths only (like the example's FSP errors).
	t.Run("handle_errors for other paths", func(t *testing.T) {
		tc := load(t, site(cases[0].block, "\thandle_errors {\n\t\t@other path /other/*\n\t\trespond @other \"other {err.status_code}\" {err.status_code}\n\t\theader @other X-Error-Route seen\n\t}"))
		res := post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), nil)
		if res.Status != 502 {
			t.Fatalf("status %d %s", res.Status, res.Body)
		}
		assertErrorBody(t, res, 5020)
	})
	t.Run("handle_errors for some statuses", func(t *testing.T) {
		tc := load(t, site(cases[0].block, "\thandle_errors 404 405 {\n\t\trespond \"handled {err.status_code}\"\n\t}"))
		res := post(t, tc, "/v1/message/html", []byte(`{"page":{}}`), nil)
		if res.Status != 502 {
			t.Fatalf("status %d %s", res.Status, res.Body)
		}
		assertErrorBody(t, res, 5020)
		res = do(t, tc, http.MethodGet, "/v1/message/html", nil, nil)
		if res.Status != 405 {
			t.Fatalf("got %d %q", res.Status, res.Body)
		}
		assertErrorBody(t, res, 4050)
	})
	t.Run("405 beside handle_errors", func(t *testing.T) {
		tc := load(t, site(bridgeBlock(slow), "\thandle_errors {\n\t\trespond \"handled {err.status_code}\" {err.status_code}\n\t}"))
		res := do(t, tc, http.MethodGet, "/v1/message/html", nil, nil)
		if res.Status != 405 || res.Header.Get("Allow") != "POST" {
			t.Fatalf("got %d %q Allow=%q", res.Status, res.Body, res.Header.Get("Allow"))
		}
		assertErrorBody(t, res, 4050)
	})
}

func TestClientDisconnectCancelsUpstream(t *testing.T) {
	started := make(chan struct{}, 1)
	var up *upstream
	up = newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		started <- struct{}{}
		select {
		case <-r.Context().Done():
			up.canceled <- struct{}{}
		case <-time.After(10 * time.Second):
		}
	})
	tc := load(t, site(bridgeBlock(up)))
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, siteURL+"/v1/message/html", strings.NewReader(`{"page":{}}`))
	req.Header.Set("Content-Type", "application/json")
	errc := make(chan error, 1)
	go func() {
		res, err := tc.Client.Do(req)
		if err == nil {
			res.Body.Close()
		}
		errc <- err
	}()
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("upstream never got the request")
	}
	cancel()
	select {
	case <-up.canceled:
	case <-time.After(5 * time.Second):
		t.Fatal("upstream request was not canceled after the client went away")
	}
	if err := <-errc; err == nil {
		t.Error("client request unexpectedly completed")
	}
}

func TestFallThroughToFileServer(t *testing.T) {
	up := newUpstream(t, nil)
	tc := load(t, site(bridgeBlock(up)))
	res := do(t, tc, http.MethodGet, "/", nil, nil)
	if res.Status != 200 || string(res.Body) != "<h1>editor page</h1>\n" {
		t.Errorf("GET / = %d %q", res.Status, res.Body)
	}
	res = do(t, tc, http.MethodGet, "/index.html?x", nil, map[string]string{"Sec-Fetch-Site": "cross-site"})
	if res.Status != 308 && res.Status != 200 {
		t.Errorf("GET /index.html = %d", res.Status)
	}
	if res := do(t, tc, http.MethodGet, "/v1/message/other", nil, nil); res.Status != 404 {
		t.Errorf("GET /v1/message/other = %d", res.Status)
	}
	if res := post(t, tc, "/v1/message/html/extra", []byte("{}"), nil); res.Status == 200 {
		t.Errorf("POST below an export path was forwarded")
	}
	if n := len(up.requests()); n != 0 {
		t.Errorf("upstream received %d requests meant for file_server", n)
	}
}

func TestUnwrapHTML(t *testing.T) {
	png := pngBytes()
	wrapper := `{"body":{"html":"<!DOCTYPE html><p>caf\u00e9</p>"}}`
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		switch caseOf(body) {
		case "wrapper":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, wrapper)
		case "error":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(400)
			io.WriteString(w, `{"body":{"html":"<p>not for errors</p>"}}`)
		case "png":
			w.Header().Set("Content-Type", "image/png")
			w.Write(png)
		case "not-wrapper":
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"body":{"text":"plain"}}`)
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, "<p>raw</p>")
		}
	})
	cases := []struct {
		kind        string
		on          bool
		status      int
		wantBody    string
		wantCT      string
		binaryCheck bool
	}{
		{"wrapper", false, 200, wrapper, "application/json", false},
		{"wrapper", true, 200, "<!DOCTYPE html><p>café</p>", "text/html; charset=utf-8", false},
		{"error", true, 400, `{"body":{"html":"<p>not for errors</p>"}}`, "application/json", false},
		{"not-wrapper", true, 200, `{"body":{"text":"plain"}}`, "application/json", false},
		{"raw", true, 200, "<p>raw</p>", "text/html; charset=utf-8", false},
		{"raw", false, 200, "<p>raw</p>", "text/html; charset=utf-8", false},
		{"png", true, 200, string(png), "image/png", true},
	}
	for _, on := range []bool{false, true} {
		block := bridgeBlock(up)
		if on {
			block = bridgeBlock(up, "unwrap_html")
		}
		tc := load(t, site(block))
		for _, c := range cases {
			if c.on != on {
				continue
			}
			t.Run(fmt.Sprintf("%s unwrap=%v", c.kind, on), func(t *testing.T) {
				res := post(t, tc, "/v1/message/html", caseBody(c.kind), nil)
				if res.Status != c.status || string(res.Body) != c.wantBody || res.Header.Get("Content-Type") != c.wantCT {
					t.Errorf("got %d %q %q, want %d %q %q", res.Status, res.Header.Get("Content-Type"), res.Body, c.status, c.wantCT, c.wantBody)
				}
				if cl := res.Header.Get("Content-Length"); cl != "" && cl != strconv.Itoa(len(res.Body)) {
					t.Errorf("Content-Length %s for %d bytes", cl, len(res.Body))
				}
			})
		}
	}
}
