package bridge

// Tests of what reaches the browser besides the final answer: the sandbox
// on every answer, interim responses, and secrets in headers and wrappers.

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"net/textproto"
	"os"
	"strings"
	"sync"
	"testing"
)

// TestSandboxOnEveryAnswer: whatever the upstream answers (HTML, an error,
// its own headers) and whatever the bridge answers itself, the browser is
// told to run nothing of it on this origin.
func TestSandboxOnEveryAnswer(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		switch caseOf(body) {
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
					res = post(t, tc, "/v1/message/html", caseBody(kind), nil)
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
// token (export) and the client secret (auth); the bridge passes no
// interim response on, on either path.
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
			// identical exports, or kept), and LoginV2's answer goes to
			// the host's origin with only the headers the page needs, so
			// neither passes interim responses on.
			if len(interim) != 0 {
				t.Fatalf("interim responses %v, want none", interim)
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

func truncate(name string) error {
	if err := os.Truncate(name, 0); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}
