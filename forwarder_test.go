package designbridge

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/designbridge/caddy-designbridge/internal/retire"
	"github.com/designbridge/caddy-designbridge/testutil/conntest"
)

func TestMaskingReader(t *testing.T) {
	secrets := [][]byte{[]byte("s3cr3t-token"), []byte("client-secret-xyz"), []byte("short")}
	tests := []struct {
		name, in, want string
	}{
		{"no secret", "hello world", "hello world"},
		{"empty", "", ""},
		{"one", "a s3cr3t-token b", "a ************ b"},
		{"at start and end", "s3cr3t-tokenXs3cr3t-token", "************X************"},
		{"adjacent", "s3cr3t-tokens3cr3t-token", "************************"},
		{"two secrets", `{"client_secret":"client-secret-xyz","t":"s3cr3t-token"}`, `{"client_secret":"*****************","t":"************"}`},
		{"short secrets are not masked", "short", "short"},
		{"prefix only", "s3cr3t-toke", "s3cr3t-toke"},
		{"prefix at end after data", strings.Repeat("x", 100) + "s3cr3t-tok", strings.Repeat("x", 100) + "s3cr3t-tok"},
		{"binary", "\x00\xff\x89PNG s3cr3t-token\r\n", "\x00\xff\x89PNG ************\r\n"},
		{"long", strings.Repeat("ab", 40000) + "s3cr3t-token" + strings.Repeat("cd", 40000), strings.Repeat("ab", 40000) + "************" + strings.Repeat("cd", 40000)},
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"half":     iotest.HalfReader,
		"data+err": iotest.DataErrReader,
	}
	for _, tc := range tests {
		for rname, wrap := range readers {
			t.Run(tc.name+"/"+rname, func(t *testing.T) {
				eof := 0
				m := &maskingReader{src: io.NopCloser(wrap(strings.NewReader(tc.in))), secrets: secrets, onEOF: func() { eof++ }}
				got, err := io.ReadAll(iotest.OneByteReader(m))
				if err != nil {
					t.Fatal(err)
				}
				if string(got) != tc.want {
					t.Errorf("got %q, want %q", got, tc.want)
				}
				if eof != 1 {
					t.Errorf("onEOF called %d times", eof)
				}
				if err := m.Close(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

func TestMaskingReaderPassesErrors(t *testing.T) {
	boom := errors.New("boom")
	m := &maskingReader{src: io.NopCloser(io.MultiReader(strings.NewReader("data s3cr3t-token"), iotest.ErrReader(boom))), secrets: [][]byte{[]byte("s3cr3t-token")}}
	got, err := io.ReadAll(m)
	if !errors.Is(err, boom) || string(got) != "data ************" {
		t.Errorf("got %q, %v", got, err)
	}
}

func TestScrubHeader(t *testing.T) {
	tr := &upstreamTransport{folded: foldSecrets([][]byte{[]byte("s3cr3t-token"), []byte("short"), []byte("MiXeD-Secret-9")})}
	h := http.Header{
		"X-Plain":               {"fine"},
		"X-Mixed":               {"mixed-secret-9"},
		"X-Value":               {"a s3cr3t-token"},
		"X-Value-Case":          {"S3CR3T-TOKEN"},
		"S3cr3t-Token":          {"name is the secret"},
		"X-Prefix-S3cr3t-Token": {"name holds the secret"},
		"Trailer":               {"X-A, s3cr3t-token"},
		"X-Second-Value":        {"ok", "s3cr3t-token"},
		"X-Short":               {"short"},
	}
	if !tr.scrubHeader(h) {
		t.Fatal("nothing reported removed")
	}
	want := []string{"X-Plain", "X-Short"}
	if len(h) != len(want) || h.Get("X-Plain") != "fine" || h.Get("X-Short") != "short" {
		t.Errorf("left %v, want only %v", h, want)
	}
	if tr.scrubHeader(http.Header{"X-Ok": {"ok"}}) {
		t.Error("reported a removal from a clean header")
	}
}

func TestUnwrapMasked(t *testing.T) {
	secrets := [][]byte{[]byte("s3cr3t-token")}
	for _, tc := range []struct {
		name, in, want string
		wrapped        bool
	}{
		{"escaped character", `{"body":{"html":"<p>s3cr\u0033t-token</p>"}}`, "<p>************</p>", true},
		{"all escaped", `{"body":"\u0073\u0033\u0063\u0072\u0033\u0074\u002d\u0074\u006f\u006b\u0065\u006e"}`, "************", true},
		{"escaped slash-free", `{"body":{"result":"a s3cr3t-toke\u006e b"}}`, "a ************ b", true},
		{"clean", `{"body":{"html":"<p>hi</p>"}}`, "<p>hi</p>", true},
		{"not a wrapper stays", `{"x":"s3cr\u0033t-token"}`, `{"x":"s3cr\u0033t-token"}`, false},
	} {
		got, wrapped := unwrapMasked([]byte(tc.in), secrets)
		if string(got) != tc.want || wrapped != tc.wrapped {
			t.Errorf("%s: got %q %v, want %q %v", tc.name, got, wrapped, tc.want, tc.wrapped)
		}
	}
}

func TestCrossSite(t *testing.T) {
	b := &Bridge{AllowedOrigins: []string{"http://localhost:3000"}}
	if err := b.resolve(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		host   string
		tls    bool
		header map[string]string
		refuse bool
	}{
		{"no headers", "site.test", false, nil, false},
		{"same-origin", "site.test", false, map[string]string{"Sec-Fetch-Site": "same-origin"}, false},
		{"none (typed URL)", "site.test", false, map[string]string{"Sec-Fetch-Site": "none"}, false},
		{"cross-site", "site.test", false, map[string]string{"Sec-Fetch-Site": "cross-site"}, true},
		{"cross-site upper case", "site.test", false, map[string]string{"Sec-Fetch-Site": "Cross-Site"}, true},
		{"cross-site allowed origin", "site.test", false, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://localhost:3000"}, false},
		// Another port of the same host is same-site, and another origin.
		{"same-site", "site.test", false, map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://site.test:8081"}, true},
		{"same-site no origin", "site.test", false, map[string]string{"Sec-Fetch-Site": "same-site"}, true},
		{"same-site allowed origin", "site.test", false, map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://localhost:3000"}, false},
		{"unknown value", "site.test", false, map[string]string{"Sec-Fetch-Site": "same-planet", "Origin": "https://evil.example"}, true},
		{"unknown value own origin", "site.test", false, map[string]string{"Sec-Fetch-Site": "bogus", "Origin": "http://site.test"}, true},
		{"own origin http", "site.test", false, map[string]string{"Origin": "http://site.test"}, false},
		{"own origin https", "site.test", true, map[string]string{"Origin": "https://site.test"}, false},
		{"scheme mismatch", "site.test", true, map[string]string{"Origin": "http://site.test"}, true},
		{"foreign origin", "site.test", false, map[string]string{"Origin": "http://evil.test"}, true},
		{"allowed origin case", "site.test", false, map[string]string{"Origin": "HTTP://LOCALHOST:3000"}, false},
		// A sandboxed frame, a data: URL or a redirect across origins: an
		// opaque origin, cross-site to every site.
		{"null origin", "site.test", false, map[string]string{"Origin": "null"}, true},
		{"null origin cross-site", "site.test", false, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "null"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "http://"+tc.host+"/v1/message/html", nil)
			if tc.tls {
				r.TLS = &tls.ConnectionState{}
			}
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			if got := b.crossSite(r) != ""; got != tc.refuse {
				t.Errorf("refused = %v, want %v (%s)", got, tc.refuse, b.crossSite(r))
			}
		})
	}
}

func TestSecureTransport(t *testing.T) {
	for raw, want := range map[string]bool{
		"https://api.getbee.io": true,
		"http://localhost:8080": true,
		"http://LocalHost":      true,
		// Looked up like any name, so not loopback for sure.
		"http://app.localhost":   false,
		"http://localhost.":      false,
		"http://127.0.0.1:1":     true,
		"http://127.8.9.10":      true,
		"http://[::1]:80":        true,
		"http://10.0.0.1":        false,
		"http://api.example.com": false,
		"http://localhost.evil":  false,
	} {
		u, err := parseUpstreamURL(raw)
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		if got := secureTransport(u); got != want {
			t.Errorf("secureTransport(%s) = %v", raw, got)
		}
	}
}

// maskNaive is the masking rule in its plainest form, the fuzz targets'
// oracle: every byte of every occurrence of a secret in data as it came
// is masked.
func maskNaive(data []byte, secrets [][]byte) []byte {
	out := bytes.Clone(data)
	for _, s := range secrets {
		if len(s) < minMaskedSecret {
			continue
		}
		for i := 0; i+len(s) <= len(data); i++ {
			if bytes.Equal(data[i:i+len(s)], s) {
				star(out[i : i+len(s)])
			}
		}
	}
	return out
}

// FuzzMaskingReader streams data in chunks through the masking reader,
// with secrets that overlap (one holds another, one's end is another's
// start, one repeats itself): what comes out is the naive rule's masking
// of the whole, whatever the chunks.
func FuzzMaskingReader(f *testing.F) {
	f.Add([]byte("a s3cr3t-token b"), uint8(3))
	f.Add([]byte("s3cr3t-tokens3cr3t-token"), uint8(1))
	f.Add([]byte("s3cr3t-tos3cr3t-token"), uint8(7))
	f.Add([]byte("app-12345678-s3cr3t-token"), uint8(2))
	f.Add([]byte("x s3cr3t-token-tail-9 s3cr3t-tok"), uint8(5))
	f.Add([]byte("abababababababab"), uint8(4))
	f.Add([]byte("k3y-9+x/z k3y-9%2Bx%2Fz k3y-9&#43;x/z k3y-9+x\\/z"), uint8(6))
	// The last secret's forms (withEchoForms) share its anchor "k3y-9".
	secrets := withEchoForms([][]byte{[]byte("s3cr3t-token"), []byte("app-12345678"), []byte("app-12345678-s3cr3t"), []byte("token-tail-9"), []byte("abababab"), []byte("k3y-9+x/z")})
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		size := int(chunk%16) + 1
		src := io.NopCloser(&chunkReader{data: data, size: size})
		got, err := io.ReadAll(&maskingReader{src: src, secrets: secrets})
		if err != nil {
			t.Fatal(err)
		}
		if want := maskNaive(data, secrets); !bytes.Equal(got, want) {
			t.Fatalf("streamed %q\nwant     %q", got, want)
		}
		whole := bytes.Clone(data)
		maskSecrets(whole, secrets)
		if !bytes.Equal(whole, got) {
			t.Fatalf("whole-buffer masking %q differs from streamed %q", whole, got)
		}
	})
}

// FuzzUnwrapAndMask streams an upstream answer through the masking reader
// in chunks, as the bridge does, then unwraps it as unwrap_html does and
// masks the JSON strings of what is recorded as an export does: no
// configured secret may be in what the client would get, whether the
// answer was unwrapped or passed on as it came, nor in any string the page
// decodes of it when it is JSON.
func FuzzUnwrapAndMask(f *testing.F) {
	f.Add([]byte(`{"body":{"html":"<p>s3cr\u0033t-token</p>"}}`), uint8(3))
	f.Add([]byte(`{"body":"cl\u0069ent-secret-xyz and s3cr3t-token"}`), uint8(1))
	f.Add([]byte(`{"body":{"result":"\u0073\u0033cr3t-token"}}`), uint8(5))
	f.Add([]byte(`<p>s3cr3t-token</p>`), uint8(2))
	f.Add([]byte(`{"details":"client-secret\u002dxyz","body":1}`), uint8(4))
	f.Add([]byte(`["s3cr3t-tok\u0065n-secret-xyz"]`), uint8(6))
	secrets := [][]byte{[]byte("s3cr3t-token"), []byte("client-secret-xyz")}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8) {
		size := int(chunk%16) + 1
		src := io.NopCloser(&chunkReader{data: data, size: size})
		streamed, err := io.ReadAll(&maskingReader{src: src, secrets: secrets})
		if err != nil {
			t.Fatal(err)
		}
		unwrapped, _ := unwrapMasked(streamed, secrets)
		out, _ := maskJSONStrings(unwrapped, secrets) // exportShared, on the recorded answer
		for _, s := range secrets {
			if bytes.Contains(out, s) {
				t.Fatalf("secret %q reaches the client in %q", s, out)
			}
		}
		var v any
		if json.Unmarshal(trimBOM(out), &v) == nil {
			if s := decodedSecret(v, secrets); s != "" {
				t.Fatalf("the page decodes secret %q of %q", s, out)
			}
		}
	})
}

// decodedSecret is a secret that a string (or member name) of the decoded
// JSON value v holds, or "".
func decodedSecret(v any, secrets [][]byte) string {
	switch v := v.(type) {
	case string:
		for _, s := range secrets {
			if strings.Contains(v, string(s)) {
				return string(s)
			}
		}
	case []any:
		for _, e := range v {
			if s := decodedSecret(e, secrets); s != "" {
				return s
			}
		}
	case map[string]any:
		for k, e := range v {
			if s := decodedSecret(k, secrets); s != "" {
				return s
			}
			if s := decodedSecret(e, secrets); s != "" {
				return s
			}
		}
	}
	return ""
}

type chunkReader struct {
	data []byte
	size int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), c.size, len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// BenchmarkMaskingReader measures what secret masking adds to streaming a
// 40 KB export response (three secrets, none present).
func BenchmarkMaskingReader(b *testing.B) {
	benchMasking(b, [][]byte{[]byte("bench-token-123456"), []byte("bench-client"), []byte("bench-secret")})
}

// benchMasking streams a 40 KB export response through a maskingReader
// looking for secrets.
func benchMasking(b *testing.B, secrets [][]byte) {
	body := bytes.Repeat([]byte(`<td style="padding:0">Hello, world</td>`), 1024)
	buf := make([]byte, 32<<10)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		m := &maskingReader{src: io.NopCloser(bytes.NewReader(body)), secrets: secrets}
		if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{m}, buf); err != nil {
			b.Fatal(err)
		}
		m.Close()
	}
}

// BenchmarkMaskingReaderEchoForms is BenchmarkMaskingReader with secrets
// of the base64 alphabet (+ / =), searched in their escaped forms too
// (withEchoForms), none present.
func BenchmarkMaskingReaderEchoForms(b *testing.B) {
	benchMasking(b, withEchoForms([][]byte{[]byte("Zm9vY+Fy/mF6cXV4cXV1eA=="), []byte("bench-client"), []byte("Yw4kP7sQ2x+m9nB3vT6rZ1/A==")}))
}

// BenchmarkCopyUnmasked is the baseline: the same copy without masking.
func BenchmarkCopyUnmasked(b *testing.B) {
	body := bytes.Repeat([]byte(`<td style="padding:0">Hello, world</td>`), 1024)
	buf := make([]byte, 32<<10)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{bytes.NewReader(body)}, buf); err != nil {
			b.Fatal(err)
		}
	}
}

func TestResolveUID(t *testing.T) {
	tests := []struct {
		name, configured, header, body string
		callerUID                      bool
		want                           string
		wantErr                        *uidError
	}{
		{name: "empty body", callerUID: true, want: defaultUID},
		{name: "no uid member", callerUID: true, body: `{"x":1}`, want: defaultUID},
		{name: "body uid", callerUID: true, body: `{"uid":"customer-42"}`, want: "customer-42"},
		{name: "body uid not a string", callerUID: true, body: `{"uid":42}`, wantErr: errBodyUID},
		{name: "body uid bad characters", callerUID: true, body: `{"uid":"a b"}`, wantErr: errBodyUID},
		{name: "body not an object", callerUID: true, body: `[1]`, wantErr: errAuthJSON},
		// Without the opt-in the caller never chooses, even if Validate
		// was bypassed.
		{name: "body uid without opt-in", body: `{"uid":"customer-42"}`, wantErr: errNoUser},
		{name: "empty body without opt-in", wantErr: errNoUser},
		{name: "configured", configured: "{http.request.header.X-User}", header: "u-1", body: `{"uid":"other"}`, want: "u-1"},
		{name: "configured empty", configured: "{http.request.header.X-User}", body: `{"uid":"other"}`, wantErr: errNoUser},
		{name: "configured invalid", configured: "{http.request.header.X-User}", header: "a@b", wantErr: errConfiguredUID},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/proxy/bee-auth", strings.NewReader(tc.body))
			if tc.header != "" {
				r.Header.Set("X-User", tc.header)
			}
			repl := caddy.NewReplacer()
			r = caddyhttp.PrepareRequest(r, repl, httptest.NewRecorder(), nil)
			b := &Bridge{UID: tc.configured, InsecureCallerUID: tc.callerUID}
			got, err := b.resolveUID(r, []byte(tc.body))
			var refused *uidError
			errors.As(err, &refused)
			if got != tc.want || refused != tc.wantErr {
				t.Errorf("got %q, %v; want %q, %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

// TestCleanupLeavesNoUpstreamConnection: a server that a reload replaces
// can still accept a connection and serve it with the unloaded config.
// Such a request must close its upstream connection: Cleanup closed the
// transport's idle connections, and nothing would close a new one again.
// A live config keeps its connection for the next export.
func TestCleanupLeavesNoUpstreamConnection(t *testing.T) {
	up := conntest.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<p>ok</p>")
	}))
	defer up.Close()
	target, _ := url.Parse(up.URL)

	for _, cleanedUp := range []bool{false, true} {
		inner := retire.New(&http.Transport{})
		tr := &upstreamTransport{inner: inner, target: target, logger: zap.NewNop()}
		if cleanedUp {
			b := &Bridge{retiring: []*retire.Transport{inner}}
			if err := b.Cleanup(); err != nil {
				t.Fatal(err)
			}
		}
		req := httptest.NewRequest(http.MethodPost, "/v1/message/html", strings.NewReader(`{"page":{}}`))
		req.RequestURI = ""
		res, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		switch {
		case cleanedUp:
			if n := up.WaitClosed(2 * time.Second); n != 0 {
				t.Errorf("an export after Cleanup left %d upstream connection(s) open", n)
			}
		case up.Open() != 1:
			t.Errorf("a live config kept %d upstream connections, want 1 (kept alive)", up.Open())
		}
		inner.CloseIdleConnections()
		up.WaitClosed(2 * time.Second)
	}
}

// TestMaskError: an error quoting an upstream's answer is logged with the
// secrets masked as they are, in another letter case, and as %q writes
// them; it still unwraps to the original error.
func TestMaskError(t *testing.T) {
	secrets := [][]byte{[]byte("s3cr3t-token"), []byte(`odd"se\cret`), []byte("short")}
	for _, c := range []struct {
		name, text, want string
	}{
		{"none", `malformed HTTP version "HTTP/9"`, `malformed HTTP version "HTTP/9"`},
		{"as sent", `malformed HTTP version "s3cr3t-token"`, `malformed HTTP version "************"`},
		{"twice", "s3cr3t-token s3cr3t-tokens3cr3t-token", "************ ************************"},
		{"other case", `malformed MIME header: missing colon: "X S3CR3T-Token"`, `malformed MIME header: missing colon: "X ************"`},
		{"quoted", fmt.Sprintf("malformed MIME header line: %q", `x odd"se\cret`), `malformed MIME header line: "x *************"`},
		{"too short to mask", "short", "short"},
	} {
		t.Run(c.name, func(t *testing.T) {
			orig := errors.New(c.text)
			err := maskError(orig, secrets)
			if err.Error() != c.want {
				t.Errorf("got %q, want %q", err, c.want)
			}
			if !errors.Is(err, orig) {
				t.Error("the masked error does not unwrap to the original")
			}
			if c.text == c.want && err != orig {
				t.Error("an error without a secret was wrapped")
			}
		})
	}
}

// TestWithJSONForms: a secret that JSON writes with escapes is also
// masked in those forms; one that JSON writes as it is adds nothing.
func TestWithJSONForms(t *testing.T) {
	for _, c := range []struct {
		name    string
		secrets []string
		want    []string
	}{
		{"plain", []string{"s3cr3t-token"}, []string{"s3cr3t-token"}},
		{"html characters", []string{"a<b>c&d-secret"}, []string{"a<b>c&d-secret", `a\u003cb\u003ec\u0026d-secret`}},
		{"quote and backslash", []string{`q"b\s-secret`}, []string{`q"b\s-secret`, `q\"b\\s-secret`}},
		{"line separator", []string{"ls\u2028-secret"}, []string{"ls\u2028-secret", `ls\u2028-secret`}},
		{"too short to mask", []string{"a<b"}, []string{"a<b"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var secrets [][]byte
			for _, s := range c.secrets {
				secrets = append(secrets, []byte(s))
			}
			var got []string
			for _, s := range withJSONForms(secrets) {
				got = append(got, string(s))
			}
			if !slices.Equal(got, c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestPassFileLink: a request whose path ends in a PDF link's name is
// left out of the access log only when its answer is that PDF or its
// forward failed (5xx); any other handler's answer to a made-up name is
// logged, so that such a path hides no other request.
func TestPassFileLink(t *testing.T) {
	const name = "0123456789abcdef0123456789abcdef.pdf"
	pdf := func(w http.ResponseWriter, _ *http.Request) error {
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
		w.WriteHeader(http.StatusOK)
		return nil
	}
	for _, tt := range []struct {
		name string
		path string
		next caddyhttp.HandlerFunc
		skip bool
	}{
		{"the PDF", "/v1/files/" + name, pdf, true},
		{"the PDF under a prefix", "/pdf/v1/files/" + name, pdf, true},
		{"forward failed", "/v1/files/" + name, func(http.ResponseWriter, *http.Request) error {
			return caddyhttp.Error(http.StatusBadGateway, errors.New("dial"))
		}, true},
		{"another handler's answer", "/admin.php/v1/files/" + name, func(w http.ResponseWriter, _ *http.Request) error {
			_, err := io.WriteString(w, "admin")
			return err
		}, false},
		{"another handler's 404", "/admin/v1/files/" + name, func(http.ResponseWriter, *http.Request) error {
			return caddyhttp.Error(http.StatusNotFound, nil)
		}, false},
		{"another file's disposition", "/v1/files/" + name, func(w http.ResponseWriter, _ *http.Request) error {
			w.Header().Set("Content-Disposition", `attachment; filename="x.pdf"`)
			return nil
		}, false},
		{"not a link", "/v1/files/notes.txt", pdf, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := &Bridge{exportPaths: map[string]struct{}{}, AuthPath: "/proxy/bee-auth"}
			r := httptest.NewRequest(http.MethodGet, tt.path, nil)
			r = r.WithContext(context.WithValue(r.Context(), caddyhttp.VarsCtxKey, map[string]any{}))
			_ = b.ServeHTTP(httptest.NewRecorder(), r, tt.next)
			skip, _ := caddyhttp.GetVar(r.Context(), caddyhttp.LogSkipVar).(bool)
			if skip != tt.skip {
				t.Errorf("left out of the access log: %v, want %v", skip, tt.skip)
			}
		})
	}
}
