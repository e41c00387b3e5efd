package bridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	designbridge "github.com/designbridge/caddy-designbridge"
)

// TestUnwrapRule: an HTML wrapper is a wrapper with a UTF-8 BOM in front
// and whatever its Content-Type, as the page reads it; unwrap_html
// unwraps it, and with or without unwrap_html the secret that the page's
// decoding of a JSON string would reveal is masked.
func TestUnwrapRule(t *testing.T) {
	// \u0074 is "t": the token appears only once the string is decoded.
	escaped := `\u0074` + tokenPlain[1:]
	wrappers := map[string]string{
		"BOM, text/html":          "\ufeff" + `{"body":{"html":"<p>` + escaped + `</p>"}}`,
		"BOM, application/json":   "\ufeff" + `{"body":{"html":"<p>` + escaped + `</p>"}}`,
		"no BOM, text/html":       `{"body":{"html":"<p>` + escaped + `</p>"}}`,
		"no BOM, text/plain":      `{"body":"<p>` + escaped + `</p>"}`,
		"error details, 500 JSON": `{"code":5000,"message":"boom","details":"` + escaped + `"}`,
	}
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		name := caseOf(body)
		ct := name[strings.LastIndex(name, " ")+1:]
		w.Header().Set("Content-Type", ct)
		if strings.HasPrefix(name, "error") {
			w.WriteHeader(500)
		}
		io.WriteString(w, wrappers[name])
	})
	masked := "<p>" + strings.Repeat("*", len(tokenPlain)) + "</p>"
	for _, unwrap := range []bool{false, true} {
		t.Run(fmt.Sprintf("unwrap_html=%v", unwrap), func(t *testing.T) {
			block := bridgeBlock(up)
			if unwrap {
				block = bridgeBlock(up, "unwrap_html")
			}
			tc := load(t, site(block))
			for name := range wrappers {
				t.Run(name, func(t *testing.T) {
					res := post(t, tc, "/v1/message/html", caseBody(name), nil)
					// What the page shows: the body read as text (Go keeps
					// the BOM, the page's UTF-8 decoding drops it), unwrapped.
					html, _ := designbridge.HTMLResult(res.Body)
					if bytes.Contains(html, []byte(tokenPlain)) || bytes.Contains(res.Body, []byte(tokenPlain)) {
						t.Errorf("the page would show the token: %q", res.Body)
					}
					if strings.HasPrefix(name, "error") {
						if res.Status != 500 || !strings.Contains(string(res.Body), `"details":"`+strings.Repeat("*", len(tokenPlain))+`"`) {
							t.Errorf("error: %d %s", res.Status, res.Body)
						}
						return
					}
					if unwrap {
						if res.Status != 200 || string(res.Body) != masked || res.Header.Get("Content-Type") != "text/html; charset=utf-8" {
							t.Errorf("got %d %q as %q, want %q as text/html", res.Status, res.Body, res.Header.Get("Content-Type"), masked)
						}
						return
					}
					if string(html) != masked {
						t.Errorf("the page gets %q, want %q", html, masked)
					}
				})
			}
		})
	}
}

// TestLoginAnswerMaskedAfterDecoding: the page parses the LoginV2 answer,
// so a secret the upstream wrote there with JSON escapes is masked as
// decoded, and the answer stays JSON with a right Content-Length.
func TestLoginAnswerMaskedAfterDecoding(t *testing.T) {
	escaped := `\u0063` + clientSecret[1:] // "c…": client_secret once decoded
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Content-Type", "application/json")
		if strings.Contains(r.URL.Path, "fail") {
			w.WriteHeader(401)
		}
		io.WriteString(w, `{"access_token":"`+escaped+`","uid":"u1","note":"a\"b"}`)
	})
	for _, path := range []string{"/loginV2", "/fail/loginV2"} {
		block := fmt.Sprintf("\t\tauth_url %s%s\n\t\tclient_id {env.DB_TEST_CLIENT_ID}\n\t\tclient_secret {env.DB_TEST_CLIENT_SECRET}\n\t\tuid u1", up.URL, path)
		tc := load(t, site(block))
		res := post(t, tc, "/proxy/bee-auth", []byte(`{}`), nil)
		var tok struct {
			AccessToken string `json:"access_token"`
			Note        string `json:"note"`
		}
		if err := json.Unmarshal(res.Body, &tok); err != nil {
			t.Fatalf("%s: %d %q: %v", path, res.Status, res.Body, err)
		}
		if tok.AccessToken != strings.Repeat("*", len(clientSecret)) || tok.Note != `a"b` {
			t.Errorf("%s: the page decodes access_token %q, note %q", path, tok.AccessToken, tok.Note)
		}
		if cl := res.Header.Get("Content-Length"); cl != fmt.Sprint(len(res.Body)) {
			t.Errorf("%s: Content-Length %s for %d bytes", path, cl, len(res.Body))
		}
	}
}
