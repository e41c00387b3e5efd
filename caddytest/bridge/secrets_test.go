package bridge

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"
	"time"
)

// echoUpstream is a hostile upstream: it sends every request header back
// as a response header (X-Echo-…), as a trailer, and in the body together
// with the request body, so that anything design_bridge added on the way
// out would come straight back to the browser unless it is stopped.
func echoUpstream(t *testing.T) *upstream {
	return newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		var dump bytes.Buffer
		names := make([]string, 0, len(r.Header))
		for name := range r.Header {
			names = append(names, name)
		}
		sort.Strings(names)
		w.Header().Set("Trailer", "X-Echo-Trailer")
		for _, name := range names {
			for _, v := range r.Header[name] {
				w.Header().Add("X-Echo-"+name, v)
				fmt.Fprintf(&dump, "%s: %s\n", name, v)
			}
		}
		dump.WriteString("\n")
		dump.Write(body)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if caseOf(body) == "401" {
			w.WriteHeader(401)
		}
		w.Write(dump.Bytes())
		w.Header().Set("X-Echo-Trailer", r.Header.Get("Authorization"))
	})
}

var allSecrets = []string{tokenPlain, tokenEnv, clientID, clientSecret}

func assertNoSecret(t *testing.T, where string, data []byte) {
	t.Helper()
	for _, s := range allSecrets {
		if bytes.Contains(data, []byte(s)) {
			i := bytes.Index(data, []byte(s))
			lo, hi := max(0, i-150), min(len(data), i+len(s)+50)
			t.Errorf("%s contains secret %q: …%s…", where, s, data[lo:hi])
		}
	}
}

func headerText(h http.Header) []byte {
	var b bytes.Buffer
	h.Write(&b)
	return b.Bytes()
}

func TestSecretsNeverLeak(t *testing.T) {
	// Search only what this test's configs log: other tests run upstreams
	// with log_credentials in the same Caddy, whose own access logs show
	// the Authorization they receive.
	for _, f := range []string{logFile, accLog} {
		if err := os.Truncate(f, 0); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
	echo := echoUpstream(t)
	slow := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	})
	dead := "http://" + closedPort(t)
	withEnv := fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken {env.DB_TEST_TOKEN}\n\t\tclient_id {env.DB_TEST_CLIENT_ID}\n\t\tclient_secret {env.DB_TEST_CLIENT_SECRET}\n\t\tauth_url %s/loginV2\n\t\tuid leak-test\n", echo.URL, echo.URL)
	configs := []struct {
		name, block string
	}{
		{"echo env secrets", withEnv},
		{"echo literal secrets", fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken %s\n\t\tclient_id %s\n\t\tclient_secret %s\n\t\tauth_url %s/loginV2\n\t\tunwrap_html\n\t\tuid leak-test\n", echo.URL, tokenPlain, clientID, clientSecret, echo.URL)},
		{"unreachable", fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken %s\n\t\tclient_id %s\n\t\tclient_secret %s\n\t\tauth_url %s/loginV2\n\t\tuid leak-test\n", dead, tokenPlain, clientID, clientSecret, dead)},
		{"slow", fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken %s\n\t\tclient_id %s\n\t\tclient_secret %s\n\t\tauth_url %s/loginV2\n\t\ttimeout 200ms\n\t\tuid leak-test\n", slow.URL, tokenPlain, clientID, clientSecret, slow.URL)},
	}
	for _, cfg := range configs {
		t.Run(cfg.name, func(t *testing.T) {
			tc := load(t, site(cfg.block))
			if cfg.name == "echo env secrets" {
				// With {env.*} placeholders the values are not even in the
				// config that the admin API shows.
				res, err := http.Get(fmt.Sprintf("http://localhost:%d/config/", adminPort))
				if err != nil {
					t.Fatal(err)
				}
				conf, _ := io.ReadAll(res.Body)
				res.Body.Close()
				if !bytes.Contains(conf, []byte("{env.DB_TEST_TOKEN}")) {
					t.Fatalf("unexpected config: %.300s", conf)
				}
				assertNoSecret(t, "admin /config/", conf)
			}
			requests := []struct {
				method, path, body string
				header             map[string]string
			}{
				{"POST", "/v1/message/html", `{"page":{"rows":[]}}`, map[string]string{"Authorization": "Basic YnJvd3Nlcjpwdw==", "Cookie": "a=b"}},
				{"POST", "/v1/message/plain-text", string(caseBody("401")), nil},
				{"POST", "/proxy/bee-auth", `{"uid":"leak-test"}`, nil},
				{"POST", "/proxy/bee-auth", `{"uid":42}`, nil},
				{"GET", "/v1/message/html", "", nil},
				{"POST", "/v1/message/html", `{}`, map[string]string{"Sec-Fetch-Site": "cross-site"}},
			}
			for _, rq := range requests {
				send := func() (*http.Response, error) {
					req, _ := http.NewRequest(rq.method, siteURL+rq.path, strings.NewReader(rq.body))
					req.Header.Set("Content-Type", "application/json")
					for k, v := range rq.header {
						req.Header.Set(k, v)
					}
					return tc.Client.Do(req)
				}
				res, err := send()
				if err != nil {
					t.Fatalf("%s %s: %v", rq.method, rq.path, err)
				}
				body, err := io.ReadAll(res.Body)
				res.Body.Close()
				if err != nil {
					t.Fatalf("reading %s: %v", rq.path, err)
				}
				where := fmt.Sprintf("%s %s (status %d)", rq.method, rq.path, res.StatusCode)
				assertNoSecret(t, where+" body", body)
				assertNoSecret(t, where+" headers", headerText(res.Header))
				assertNoSecret(t, where+" trailers", headerText(res.Trailer))
				if cl := res.Header.Get("Content-Length"); cl != "" && cl != fmt.Sprint(len(body)) {
					t.Errorf("%s: Content-Length %s, body %d bytes", where, cl, len(body))
				}
				// Prove that the hostile upstream did echo what it got:
				// the secret is there, masked to its length.
				if strings.HasPrefix(cfg.name, "echo") && res.StatusCode/100 == 2 || res.StatusCode == 401 && strings.HasPrefix(cfg.name, "echo") {
					tok := tokenPlain
					if cfg.name == "echo env secrets" {
						tok = tokenEnv
					}
					var want string
					if strings.HasPrefix(rq.path, "/v1/") {
						want = "Authorization: Bearer " + strings.Repeat("*", len(tok))
					} else {
						want = fmt.Sprintf(`"client_secret":%q`, strings.Repeat("*", len(clientSecret)))
					}
					if !bytes.Contains(body, []byte(want)) {
						t.Errorf("%s: echo does not show the masked secret %q:\n%s", where, want, body)
					}
					if res.Header.Get("X-Echo-Cookie") != "" || res.Header.Get("X-Echo-Authorization") != "" {
						t.Errorf("%s: echoed credential header reached the browser", where)
					}
				}
			}
		})
	}
	// Every log line Caddy wrote, at DEBUG level with log_credentials on,
	// including the reverse proxy's "upstream roundtrip" entries.
	logs := readFile(t, logFile)
	if !bytes.Contains(logs, []byte(`"upstream roundtrip"`)) {
		t.Fatalf("debug log of the reverse proxy not captured (%d bytes of log)", len(logs))
	}
	assertNoSecret(t, "caddy log", logs)
	access := readFile(t, accLog)
	if !bytes.Contains(access, []byte("/proxy/bee-auth")) {
		t.Fatalf("access log not captured")
	}
	assertNoSecret(t, "access log", access)
}

// TestAnswersTooOpaqueToMask: answers the bridge could not check for
// secrets are refused (502), not passed on. A compressed answer: masking
// would read compressed bytes, and the browser would decompress the
// secret (the bridge asks for "identity", and RFC 9110 lets a server
// compress when a request does not say). A LoginV2 answer past 1 MiB: it
// would stream on with only its raw bytes masked, and the page's
// JSON.parse would decode a secret written with \u escapes.
func TestAnswersTooOpaqueToMask(t *testing.T) {
	// gzipped echoes the request in gzip, with these Content-Encoding
	// lines: a client applies every line's codings, not only the first's
	// (curl --compressed decodes "identity" then "gzip", or "" then "gzip").
	gzipped := func(codings ...string) *upstream {
		return newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
			w.Header().Set("Content-Type", "application/json")
			w.Header()["Content-Encoding"] = codings
			zw := gzip.NewWriter(w)
			json.NewEncoder(zw).Encode(map[string]any{"authorization": r.Header.Get("Authorization"), "body": string(body)})
			zw.Close()
		})
	}
	gzipEcho := gzipped("gzip")
	afterIdentity, afterEmpty := gzipped("identity", "gzip"), gzipped("", "gzip")
	escape := func(s string) string {
		var b strings.Builder
		for _, c := range s {
			fmt.Fprintf(&b, `\u%04x`, c)
		}
		return b.String()
	}
	hugeLogin := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		var creds struct {
			Secret string `json:"client_secret"`
		}
		json.Unmarshal(body, &creds)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":"t","echo":"%s","pad":"%s"}`, escape(creds.Secret), strings.Repeat("x", 1<<20))
	})
	for _, c := range []struct {
		name, block, path, body, want string
		up                            *upstream
	}{
		{"compressed export", fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken %s\n", gzipEcho.URL, tokenPlain),
			"/v1/message/html", `{"page":{"rows":[]}}`, "answered compressed (Content-Encoding)", gzipEcho},
		{"compressed login", fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken %s\n\t\tclient_id %s\n\t\tclient_secret %s\n\t\tauth_url %s/loginV2\n\t\tuid u1\n", gzipEcho.URL, tokenPlain, clientID, clientSecret, gzipEcho.URL),
			"/proxy/bee-auth", `{}`, "answered compressed (Content-Encoding)", gzipEcho},
		{"gzip on a second line after identity", fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken %s\n", afterIdentity.URL, tokenPlain),
			"/v1/message/html", `{"page":{"rows":[]}}`, "answered compressed (Content-Encoding)", afterIdentity},
		{"gzip on a second line after an empty one", fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken %s\n", afterEmpty.URL, tokenPlain),
			"/v1/message/html", `{"page":{"rows":[]}}`, "answered compressed (Content-Encoding)", afterEmpty},
		{"login gzip on a second line", fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken %s\n\t\tclient_id %s\n\t\tclient_secret %s\n\t\tauth_url %s/loginV2\n\t\tuid u1\n", afterIdentity.URL, tokenPlain, clientID, clientSecret, afterIdentity.URL),
			"/proxy/bee-auth", `{}`, "answered compressed (Content-Encoding)", afterIdentity},
		{"login answer past 1 MiB", fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken %s\n\t\tclient_id %s\n\t\tclient_secret %s\n\t\tauth_url %s/loginV2\n\t\tuid u1\n", hugeLogin.URL, tokenPlain, clientID, clientSecret, hugeLogin.URL),
			"/proxy/bee-auth", `{}`, "answered more than 1048576 bytes", hugeLogin},
	} {
		t.Run(c.name, func(t *testing.T) {
			tc := load(t, site(c.block))
			// Go's client asks for gzip and decompresses, as a browser does.
			res := do(t, tc, "POST", c.path, []byte(c.body), nil)
			if c.up.last(t).Header.Get("Accept-Encoding") != "identity" {
				t.Errorf("the upstream was sent Accept-Encoding %q, want identity", c.up.last(t).Header.Get("Accept-Encoding"))
			}
			assertNoSecret(t, c.name+" body", res.Body)
			assertNoSecret(t, c.name+" headers", headerText(res.Header))
			if zr, err := gzip.NewReader(bytes.NewReader(res.Body)); err == nil {
				// What a client that applies every coding line reads.
				plain, _ := io.ReadAll(zr)
				assertNoSecret(t, c.name+" body decompressed", plain)
			}
			var decoded any
			if json.Unmarshal(res.Body, &decoded) == nil {
				text, _ := json.Marshal(decoded)
				assertNoSecret(t, c.name+" body as the page decodes it", text)
			}
			if res.Status != http.StatusBadGateway || !bytes.Contains(res.Body, []byte(c.want)) {
				t.Errorf("%d %.300s, want 502 saying %q", res.Status, res.Body, c.want)
			}
		})
	}
}

// rawUpstream is an upstream that reads one request per connection and
// writes what answer makes of it.
func rawUpstream(t *testing.T, answer func(req *http.Request, body []byte) string) string {
	return connUpstream(t, func(conn net.Conn) {
		req, err := http.ReadRequest(bufio.NewReader(conn))
		if err != nil {
			return
		}
		body, _ := io.ReadAll(req.Body)
		io.WriteString(conn, answer(req, body))
	})
}

// sentSecret is the secret a request to an upstream carries: the token of
// an export, the client secret of a LoginV2 request.
func sentSecret(req *http.Request, body []byte) string {
	if auth := req.Header.Get("Authorization"); auth != "" {
		return strings.TrimPrefix(auth, "Bearer ")
	}
	var creds struct {
		Secret string `json:"client_secret"`
	}
	json.Unmarshal(body, &creds)
	return creds.Secret
}

// TestMalformedAnswersLogNoSecret: an upstream that puts the secret it
// received where net/http cannot parse it (the status line, a header or
// trailer line) or in a Content-Encoding makes an error that quotes it;
// Caddy's reverse proxy logs that error (at DEBUG, and at WARN when it
// ends a body), so its text must be masked like an answer.
func TestMalformedAnswersLogNoSecret(t *testing.T) {
	for _, c := range []struct {
		name   string
		answer func(secret string) string
		// what the log must still say, so that the operator sees why
		cause string
	}{
		{"version", func(s string) string { return s + " 200 OK\r\nContent-Length: 2\r\n\r\nok" }, "malformed HTTP version"},
		{"status code", func(s string) string { return "HTTP/1.1 2" + s + " OK\r\nContent-Length: 2\r\n\r\nok" }, "malformed HTTP status code"},
		{"header line", func(s string) string { return "HTTP/1.1 200 OK\r\nX " + s + "\r\nContent-Length: 2\r\n\r\nok" }, "malformed MIME header"},
		{"header line upper case", func(s string) string {
			return "HTTP/1.1 200 OK\r\nX " + strings.ToUpper(s) + "\r\nContent-Length: 2\r\n\r\nok"
		}, "malformed MIME header"},
		{"content coding", func(s string) string {
			return "HTTP/1.1 200 OK\r\nContent-Encoding: " + s + "\r\nContent-Length: 2\r\n\r\nok"
		}, "content coding"},
		{"trailer line", func(s string) string {
			return "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-T\r\n\r\n2\r\nok\r\n0\r\nX " + s + "\r\n\r\n"
		}, "malformed MIME header"},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := rawUpstream(t, func(req *http.Request, body []byte) string { return c.answer(sentSecret(req, body)) })
			block := fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken %s\n\t\tclient_id %s\n\t\tclient_secret %s\n\t\tauth_url %s/loginV2\n\t\tuid u1\n", url, tokenPlain, clientID, clientSecret, url)
			tc := load(t, site(block))
			for _, path := range []string{"/v1/message/html", "/proxy/bee-auth"} {
				t.Run(path, func(t *testing.T) {
					for _, f := range []string{logFile, accLog} {
						if err := truncate(f); err != nil {
							t.Fatal(err)
						}
					}
					res := post(t, tc, path, []byte(`{}`), nil)
					if res.Status != http.StatusBadGateway {
						t.Errorf("status %d %s, want 502", res.Status, res.Body)
					}
					assertNoSecretFold(t, "body", res.Body)
					assertNoSecretFold(t, "headers", headerText(res.Header))
					logs := readFile(t, logFile)
					assertNoSecretFold(t, "caddy log", logs)
					assertNoSecretFold(t, "access log", readFile(t, accLog))
					if !bytes.Contains(logs, []byte(c.cause)) {
						t.Errorf("the log does not say %q:\n%s", c.cause, logs)
					}
				})
			}
		})
	}
}

// TestSecretEchoedAsSentInJSON: the bridge writes the client secret into
// the LoginV2 body as a JSON string, where a secret holding <, >, &, ",
// \ or U+2028 is written with escapes. An upstream that echoes the body
// back as text (a debugging endpoint, an error page) sends the secret in
// that form, which the page reads as readily as the secret itself; as it
// does when the echo is a JSON string holding the body.
func TestSecretEchoedAsSentInJSON(t *testing.T) {
	const odd = "odd<&>\"\\secret\u2028x"
	t.Setenv("DB_TEST_ODD_SECRET", odd)
	forms := []string{odd}
	for _, escapeHTML := range []bool{true, false} {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(escapeHTML)
		enc.Encode(odd)
		forms = append(forms, strings.TrimSuffix(strings.TrimSpace(b.String()), `"`)[1:])
	}
	for _, c := range []struct {
		name, contentType string
		echo              func(body []byte) []byte
	}{
		{"text", "text/plain", func(body []byte) []byte { return append([]byte("you sent: "), body...) }},
		{"html", "text/html", func(body []byte) []byte { return fmt.Appendf(nil, "<pre>%s</pre>", body) }},
		{"JSON string of the body", "application/json", func(body []byte) []byte {
			out, _ := json.Marshal(map[string]string{"data": string(body)})
			return out
		}},
		{"JSON string of the body, no HTML escapes", "application/json", func(body []byte) []byte {
			var b bytes.Buffer
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			enc.Encode(map[string]string{"data": string(body)})
			return b.Bytes()
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				w.Header().Set("Content-Type", c.contentType)
				w.Write(c.echo(body))
			})
			tc := load(t, site(fmt.Sprintf("\t\tauth_url %s/loginV2\n\t\tclient_id %s\n\t\tclient_secret {env.DB_TEST_ODD_SECRET}\n\t\tuid u1\n", up.URL, clientID)))
			res := post(t, tc, "/proxy/bee-auth", []byte(`{}`), nil)
			if res.Status != 200 || !bytes.Contains(up.last(t).Body, []byte(forms[1])) {
				t.Fatalf("%d %s; the upstream got %s, want the secret as %s", res.Status, res.Body, up.last(t).Body, forms[1])
			}
			texts := map[string][]byte{"body": res.Body}
			var data struct{ Data string }
			if json.Unmarshal(res.Body, &data) == nil {
				texts["body as the page decodes it"] = []byte(data.Data)
			}
			for where, text := range texts {
				for _, form := range forms {
					if i := bytes.Index(text, []byte(form)); i >= 0 {
						t.Errorf("%s holds the secret as %q: %s", where, form, text)
					}
				}
			}
		})
	}
}

// TestStatusTextHoldsNoSecret: the reason phrase of the upstream's status
// line becomes the request's {http.reverse_proxy.status_text} placeholder
// (the bridge's proxies are Caddy's reverse proxy), which a site may log
// or put in a header; one that holds the secret is replaced by the
// status's standard text.
func TestStatusTextHoldsNoSecret(t *testing.T) {
	if err := truncate(accLog); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, reason, want string }{
		{"secret", "OK %s", "200 OK"},
		{"secret in upper case", "%s", "200 OK"},
		{"no secret", "Fine", "200 Fine"},
	} {
		t.Run(c.name, func(t *testing.T) {
			url := rawUpstream(t, func(req *http.Request, body []byte) string {
				s := sentSecret(req, body)
				if c.name == "secret in upper case" {
					s = strings.ToUpper(s)
				}
				return "HTTP/1.1 200 " + strings.ReplaceAll(c.reason, "%s", s) + "\r\nContent-Length: 2\r\n\r\nok"
			})
			block := fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken %s\n\t\tclient_id %s\n\t\tclient_secret %s\n\t\tauth_url %s/loginV2\n\t\tuid u1\n", url, tokenPlain, clientID, clientSecret, url)
			tc := load(t, site(block, "\tlog_append upstream_status {http.reverse_proxy.status_text}", "\theader >X-Upstream-Status {http.reverse_proxy.status_text}"))
			for _, path := range []string{"/v1/message/html", "/proxy/bee-auth"} {
				t.Run(path, func(t *testing.T) {
					offset := len(readFile(t, accLog))
					res := post(t, tc, path, []byte(`{}`), nil)
					if res.Status != 200 || string(res.Body) != "ok" {
						t.Fatalf("%d %q", res.Status, res.Body)
					}
					assertNoSecretFold(t, "headers", headerText(res.Header))
					if got := res.Header.Get("X-Upstream-Status"); got != c.want {
						t.Errorf("status text %q, want %q", got, c.want)
					}
					access := readFile(t, accLog)[offset:]
					assertNoSecretFold(t, "access log", access)
					if !bytes.Contains(access, []byte(`"upstream_status":"`+c.want+`"`)) {
						t.Errorf("the access log does not show the status text %q:\n%s", c.want, access)
					}
				})
			}
		})
	}
}

// TestOverlappingSecretsMaskedWhole: a secret that holds another (a
// client secret that begins with the client id, as some services make
// them) is masked whole wherever it is echoed, however the answer
// arrives: masking the shorter one first must not leave the rest of the
// longer one readable.
func TestOverlappingSecretsMaskedWhole(t *testing.T) {
	const id, secret = "app-1234567890", "app-1234567890-Xy9secretpart"
	t.Setenv("DB_TEST_PREFIX_ID", id)
	t.Setenv("DB_TEST_PREFIX_SECRET", secret)
	for _, c := range []struct {
		name  string
		write func(w http.ResponseWriter, body []byte)
	}{
		{"whole", func(w http.ResponseWriter, body []byte) { w.Write(body) }},
		{"byte by byte", func(w http.ResponseWriter, body []byte) {
			for i := range body {
				w.Write(body[i : i+1])
				w.(http.Flusher).Flush()
			}
		}},
		{"secrets side by side", func(w http.ResponseWriter, body []byte) {
			io.WriteString(w, id+secret+" "+secret[:len(id)+3]+secret)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
				w.Header().Set("Content-Type", "text/plain")
				c.write(w, body)
			})
			tc := load(t, site(fmt.Sprintf("\t\tauth_url %s/loginV2\n\t\tclient_id {env.DB_TEST_PREFIX_ID}\n\t\tclient_secret {env.DB_TEST_PREFIX_SECRET}\n\t\tuid u1\n", up.URL)))
			res := post(t, tc, "/proxy/bee-auth", []byte(`{}`), nil)
			if res.Status != 200 {
				t.Fatalf("%d %s", res.Status, res.Body)
			}
			if tail := secret[len(id):]; bytes.Contains(res.Body, []byte(tail)) {
				t.Errorf("the client secret's rest %q is readable: %s", tail, res.Body)
			}
		})
	}
}

// TestSwitchingProtocolsRefused: an upstream that answers 101 would turn
// the exchange into a tunnel whose bytes no masking reads. The bridge
// never asks to switch protocols (a browser's fetch cannot, a script
// can), so such an answer is a failed one: 502, never an empty 200 or a
// tunnel.
func TestSwitchingProtocolsRefused(t *testing.T) {
	url := rawUpstream(t, func(req *http.Request, body []byte) string {
		return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\ntunnel " + sentSecret(req, body) + "\n"
	})
	block := fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken %s\n\t\tclient_id %s\n\t\tclient_secret %s\n\t\tauth_url %s/loginV2\n\t\tuid u1\n", url, tokenPlain, clientID, clientSecret, url)
	tc := load(t, site(block))
	for _, path := range []string{"/v1/message/html", "/proxy/bee-auth"} {
		for _, upgrade := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s upgrade=%v", path, upgrade), func(t *testing.T) {
				var header map[string]string
				if upgrade {
					header = map[string]string{"Connection": "Upgrade", "Upgrade": "x"}
				}
				res := post(t, tc, path, []byte(`{}`), header)
				if res.Status != http.StatusBadGateway {
					t.Fatalf("%d %q, want 502", res.Status, res.Body)
				}
				assertErrorBody(t, res, 5020)
				assertNoSecret(t, "body", res.Body)
				if !strings.Contains(string(res.Body), `"message":"Upstream answer refused"`) || !strings.Contains(string(res.Body), "101 Switching Protocols") {
					t.Errorf("the answer does not say the upstream switched protocols: %s", res.Body)
				}
			})
		}
	}
}
