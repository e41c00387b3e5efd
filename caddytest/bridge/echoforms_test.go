package bridge

import (
	"bytes"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	htmltemplate "html/template"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	texttemplate "text/template"
)

// echoForms are the forms in which servers write text they echo: HTML
// escaped (Go's html.EscapeString and html/template, Python's
// html.escape), in a script (html/template, text/template's
// JSEscapeString), percent-encoded (a query value, a path segment, with
// lower-case hex too) and JSON-escaped as PHP's json_encode does (\/).
func echoForms(s string) map[string]string {
	var tpl, script strings.Builder
	htmltemplate.Must(htmltemplate.New("").Parse("{{.}}")).Execute(&tpl, s)
	htmltemplate.Must(htmltemplate.New("").Parse(`<script>var s = "{{.}}"</script>`)).Execute(&script, s)
	inScript := strings.TrimSuffix(strings.TrimPrefix(script.String(), `<script>var s = "`), `"</script>`)
	lower := regexp.MustCompile(`%[0-9A-F]{2}`)
	php, _ := json.Marshal(s)
	return map[string]string{
		"html.EscapeString":            html.EscapeString(s),
		"html/template":                tpl.String(),
		"python html.escape":           strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#x27;").Replace(s),
		"url.QueryEscape":              url.QueryEscape(s),
		"url.PathEscape":               url.PathEscape(s),
		"lower-case hex":               lower.ReplaceAllStringFunc(url.QueryEscape(s), strings.ToLower),
		"PHP json_encode":              strings.ReplaceAll(strings.Trim(string(php), `"`), "/", `\/`),
		"html/template in a script":    inScript,
		"text/template JSEscapeString": texttemplate.JSEscapeString(s),
	}
}

// TestEncodedEchoesMasked: a secret holding characters that HTML, URLs
// or JSON escape (a base64 token's + / =, a client secret's & < > " ')
// comes back escaped from an upstream that echoes it in an HTML page, a
// redirect's URL or a JSON dump; the browser reads it as readily as the
// secret. Each such form is masked in the body and removes a header that
// holds it, and none reaches the access or DEBUG log.
func TestEncodedEchoesMasked(t *testing.T) {
	const tok = "tok+/=&<>'\"-5f1d2c9a7b"
	const sec = "sec+/=&<>'\"-0a9f3e6b2c"
	t.Setenv("DB_TEST_ESC_TOKEN", tok)
	t.Setenv("DB_TEST_ESC_SECRET", sec)
	for _, f := range []string{logFile, accLog} {
		if err := truncate(f); err != nil {
			t.Fatal(err)
		}
	}
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		s := sentSecret(r, body)
		var page bytes.Buffer
		i := 0
		for name, form := range echoForms(s) {
			fmt.Fprintf(&page, "<p>%s: %s</p>\n", name, form)
			w.Header().Set(fmt.Sprintf("X-Echo-%d", i), form)
			i++
		}
		w.Header().Set("Location", "/next?t="+url.QueryEscape(s))
		w.Header().Set("Content-Type", "text/html")
		w.Write(page.Bytes())
	})
	block := fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken {env.DB_TEST_ESC_TOKEN}\n\t\tclient_id %s\n\t\tclient_secret {env.DB_TEST_ESC_SECRET}\n\t\tauth_url %s/loginV2\n\t\tuid u1\n", up.URL, clientID, up.URL)
	tc := load(t, site(block))
	for _, c := range []struct{ path, secret string }{{"/v1/message/html", tok}, {"/proxy/bee-auth", sec}} {
		t.Run(c.path, func(t *testing.T) {
			res := post(t, tc, c.path, []byte(`{}`), nil)
			if res.Status != 200 || !bytes.Contains(res.Body, []byte("<p>html/template: ")) {
				t.Fatalf("%d %s", res.Status, res.Body)
			}
			if got := sentSecret(&http.Request{Header: up.last(t).Header}, up.last(t).Body); got != c.secret {
				t.Fatalf("the upstream got the secret %q, want %q", got, c.secret)
			}
			head := headerText(res.Header)
			for name, form := range echoForms(c.secret) {
				if bytes.Contains(res.Body, []byte(form)) {
					t.Errorf("the body holds the secret as %s writes it (%s): %s", name, form, res.Body)
				}
				if bytes.Contains(bytes.ToLower(head), []byte(strings.ToLower(form))) {
					t.Errorf("the headers hold the secret as %s writes it (%s):\n%s", name, form, head)
				}
			}
		})
	}
	for name, log := range map[string][]byte{"caddy log": readFile(t, logFile), "access log": readFile(t, accLog)} {
		for _, s := range []string{tok, sec} {
			for form, f := range echoForms(s) {
				if bytes.Contains(bytes.ToLower(log), []byte(strings.ToLower(f))) {
					t.Errorf("the %s holds the secret as %s writes it (%s)", name, form, f)
				}
			}
		}
	}
}

// TestMaskedAnswerDropsDigests: an answer whose body held a secret is
// masked, but a validator or digest of the body as the upstream sent it
// (an ETag that is a hash of it, as Express makes one, Content-MD5,
// Digest, Content-Digest, Repr-Digest) would let whoever reads the
// answer test guesses of the secret offline against the masked body.
// Those headers are dropped from a masked answer, kept on one that held
// no secret.
func TestMaskedAnswerDropsDigests(t *testing.T) {
	digests := []string{"Etag", "Content-Md5", "Digest", "Content-Digest", "Repr-Digest"}
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		page := []byte("<p>ok</p>")
		if caseOf(body) == "echo" {
			page = fmt.Appendf(nil, "<p>%s</p>", r.Header.Get("Authorization"))
		}
		sum := sha256.Sum256(page)
		md := md5.Sum(page)
		b64 := base64.StdEncoding.EncodeToString(sum[:])
		w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:])+`"`)
		w.Header().Set("Content-MD5", base64.StdEncoding.EncodeToString(md[:]))
		w.Header().Set("Digest", "SHA-256="+b64)
		w.Header().Set("Content-Digest", "sha-256=:"+b64+":")
		w.Header().Set("Repr-Digest", "sha-256=:"+b64+":")
		w.Header().Set("Content-Type", "text/html")
		w.Write(page)
	})
	tc := load(t, site(bridgeBlock(up, "cache")))
	for _, c := range []struct {
		name string
		keep bool
	}{{"echo", false}, {"plain", true}} {
		t.Run(c.name, func(t *testing.T) {
			for _, from := range []string{"upstream", "cache"} {
				res := post(t, tc, "/v1/message/html", caseBody(c.name), nil)
				if res.Status != 200 {
					t.Fatalf("%s: %d %s", from, res.Status, res.Body)
				}
				assertNoSecret(t, from+" body", res.Body)
				for _, h := range digests {
					if got := res.Header.Get(h) != ""; got != c.keep {
						t.Errorf("%s: %s present %v, want %v (body %q)", from, h, got, c.keep, res.Body)
					}
				}
			}
		})
	}
}
