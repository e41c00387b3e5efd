package designbridge

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

type htmlResultCase struct {
	Name string `json:"name"`
	Text string `json:"text"`
	HTML string `json:"html"`
}

func loadHTMLResultCases(t testing.TB) []htmlResultCase {
	t.Helper()
	raw, err := os.ReadFile("testdata/htmlresult_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var cases []htmlResultCase
	if err := dec.Decode(&cases); err != nil {
		t.Fatalf("testdata/htmlresult_cases.json: %v", err)
	}
	if len(cases) == 0 {
		t.Fatal("no cases")
	}
	return cases
}

func TestHTMLResultCases(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range loadHTMLResultCases(t) {
		if seen[tc.Name] {
			t.Errorf("duplicate case name %q", tc.Name)
		}
		seen[tc.Name] = true
		t.Run(tc.Name, func(t *testing.T) {
			got, wrapped := HTMLResult([]byte(tc.Text))
			if string(got) != tc.HTML {
				t.Errorf("HTMLResult(%q) = %q, want %q", tc.Text, got, tc.HTML)
			}
			// A result different from the text (less its BOM) can only
			// come from a wrapper.
			if !wrapped && string(got) != strings.TrimPrefix(tc.Text, "\ufeff") {
				t.Errorf("not wrapped but result differs from text")
			}
		})
	}
}

// TestUnwrapHTMLCases: unwrap_html gives the page's HTML for every case,
// whatever the answer's Content-Type (the page reads every answer as
// text): a wrapper becomes text/html, anything else passes byte for byte.
func TestUnwrapHTMLCases(t *testing.T) {
	for _, tc := range loadHTMLResultCases(t) {
		for _, ct := range []string{"application/json", "text/html; charset=utf-8", "text/plain", ""} {
			rec := httptest.NewRecorder()
			w := newWatcher(rec, nil)
			w.unwrapLimit = 1 << 20
			if ct != "" {
				w.Header().Set("Content-Type", ct)
			}
			w.WriteHeader(http.StatusOK)
			w.Write([]byte(tc.Text))
			if err := w.finish(); err != nil {
				t.Fatal(err)
			}
			_, wrapped := HTMLResult([]byte(tc.Text))
			got := rec.Body.String()
			switch {
			case wrapped && (got != tc.HTML || rec.Header().Get("Content-Type") != "text/html; charset=utf-8"):
				t.Errorf("%s (%q): got %q as %q, want %q as text/html", tc.Name, ct, got, rec.Header().Get("Content-Type"), tc.HTML)
			case !wrapped && got != tc.Text:
				t.Errorf("%s (%q): not a wrapper, but the body changed to %q", tc.Name, ct, got)
			}
		}
	}
}

// TestHTMLResultCasesInNode runs the page's htmlFromResponseText
// (www/htmlresult.js) on the case table with Node, where it is installed;
// caddytest/browser runs it in the browser as well.
func TestHTMLResultCasesInNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; caddytest/browser runs www/htmlresult.js on the cases in Chromium")
	}
	module, err := filepath.Abs("www/htmlresult.js")
	if err != nil {
		t.Fatal(err)
	}
	script := `const m = await import(process.argv[1]);
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
// Each text is the body's bytes decoded as Response.text() does by the
// Fetch standard (TextDecoder: one leading BOM dropped). Node 20's own
// Response.text() drops every leading BOM, so it is not used here.
const got = cases.map((c) => m.htmlFromResponseText(new TextDecoder().decode(new TextEncoder().encode(c.text))));
process.stdout.write(JSON.stringify(got));`
	script = strings.Replace(script, `require("fs")`, `(await import("node:fs"))`, 1)
	raw, err := os.ReadFile("testdata/htmlresult_cases.json")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "--input-type=module", "-e", script, "file://"+filepath.ToSlash(module))
	cmd.Stdin = bytes.NewReader(raw)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got []string
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node's output: %v", err)
	}
	cases := loadHTMLResultCases(t)
	if len(got) != len(cases) {
		t.Fatalf("%d results for %d cases", len(got), len(cases))
	}
	for i, tc := range cases {
		if got[i] != tc.HTML {
			t.Errorf("%s: the page gives %q, want %q", tc.Name, got[i], tc.HTML)
		}
	}
}

func TestMaskJSONStrings(t *testing.T) {
	secrets := [][]byte{[]byte("tok-secret-123")}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"raw html", `<p>tok\u002dsecret-123</p>`, `<p>tok\u002dsecret-123</p>`},
		{"no escapes", `{"body":{"html":"<p>x</p>"}}`, `{"body":{"html":"<p>x</p>"}}`},
		{"escaped secret in the wrapper", `{"body":{"html":"<p>\u0074ok-secret-123</p>"}}`, `{"body":{"html":"<p>**************</p>"}}`},
		{"after a BOM", "\ufeff" + `{"body":"\u0074ok-secret-123 <a href=\"x\">"}`, "\ufeff" + `{"body":"************** <a href=\"x\">"}`},
		{"escaped slash and member names", `{"t\u006fk":"tok-secret\u002d123","other":"a\"b","n":[1,"\\"]}`, `{"t\u006fk":"**************","other":"a\"b","n":[1,"\\"]}`},
		{"an error's details", `{"code":5000,"message":"x","details":"sent \u0074ok-secret-123"}`, `{"code":5000,"message":"x","details":"sent **************"}`},
		{"a top-level string", `"\u0074ok-secret-123"`, `"**************"`},
		// JSON.parse would fail, but a decoder further on might not.
		{"invalid JSON is masked too", `{"body":"\u0074ok-secret-123"`, `{"body":"**************"`},
		{"unterminated string passes", `{"body":"\u0074ok-secret-123`, `{"body":"\u0074ok-secret-123`},
		{"surrogate pair", `["\ud83d\ude00\u0074ok-secret-123"]`, `["😀**************"]`},
		{"escaped without secret keeps its form", `{"body":"\u003cp>ok\n"}`, `{"body":"\u003cp>ok\n"}`},
	} {
		got, changed := maskJSONStrings([]byte(tc.in), secrets)
		if string(got) != tc.want || changed != (tc.in != tc.want) {
			t.Errorf("%s: got %s (changed %v), want %s", tc.name, got, changed, tc.want)
		}
		if h, wrapped := HTMLResult(got); wrapped && bytes.Contains(h, secrets[0]) {
			t.Errorf("%s: the page would show the secret", tc.name)
		}
	}
}

func FuzzMaskJSONStrings(f *testing.F) {
	for _, tc := range loadHTMLResultCases(f) {
		f.Add([]byte(tc.Text))
	}
	f.Add([]byte(`{"body":{"html":"\u0073ecret-value!"}}`))
	secrets := [][]byte{[]byte("secret-value!")}
	f.Fuzz(func(t *testing.T, text []byte) {
		masked := bytes.Clone(text)
		maskSecrets(masked, secrets) // what the stream masking leaves
		out, changed := maskJSONStrings(masked, secrets)
		if !changed {
			if !bytes.Equal(out, masked) {
				t.Fatal("unchanged but different")
			}
		} else if json.Valid(trimBOM(masked)) && !json.Valid(trimBOM(out)) {
			t.Fatalf("rewritten JSON is not JSON: %q", out)
		}
		// Whatever the page decodes holds no secret.
		var v any
		if json.Unmarshal(trimBOM(out), &v) == nil {
			var walk func(any)
			walk = func(v any) {
				switch v := v.(type) {
				case string:
					if strings.Contains(v, string(secrets[0])) {
						t.Fatalf("decoded string holds the secret: %q", out)
					}
				case []any:
					for _, e := range v {
						walk(e)
					}
				case map[string]any:
					for k, e := range v {
						walk(k)
						walk(e)
					}
				}
			}
			walk(v)
		}
	})
}

func FuzzHTMLResult(f *testing.F) {
	for _, tc := range loadHTMLResultCases(f) {
		f.Add([]byte(tc.Text))
	}
	f.Add([]byte("\xff{\"body\":\"x\"}"))
	f.Add([]byte(`{"body":{"html":"\ud800"}}`))
	f.Fuzz(func(t *testing.T, text []byte) {
		html, wrapped := HTMLResult(text)
		if !wrapped {
			if !bytes.Equal(html, trimBOM(text)) {
				t.Fatalf("unwrapped result differs from text")
			}
			return
		}
		// Only a valid JSON object with a body member can be a wrapper, and
		// the HTML is a decoded JSON string, hence valid UTF-8.
		var top map[string]json.RawMessage
		if err := json.Unmarshal(trimBOM(text), &top); err != nil {
			t.Fatalf("wrapped but text is not a JSON object: %v", err)
		}
		if _, ok := top["body"]; !ok {
			t.Fatalf("wrapped but no body member")
		}
		if !utf8.Valid(html) {
			t.Fatalf("wrapped HTML is not valid UTF-8")
		}
		// Re-encoding the HTML as a string body must give it back.
		again, _ := json.Marshal(map[string]string{"body": string(html)})
		if got, ok := HTMLResult(again); !ok || !bytes.Equal(got, html) {
			t.Fatalf("round trip through {\"body\": string} failed")
		}
	})
}

// FuzzUnescapeJSON: the hand-written decoder of maskJSONStrings decodes
// every valid JSON string as encoding/json does.
func FuzzUnescapeJSON(f *testing.F) {
	for _, s := range []string{`"a\u0074b"`, `"\ud83d\ude00"`, `"\ud800x"`, `"\"\\\/\b\f\n\r\t"`, `"\udc00\ud800"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, lit []byte) {
		var want string
		lit = bytes.Trim(lit, " \t\r\n")
		if json.Unmarshal(lit, &want) != nil || len(lit) < 2 || lit[0] != '"' {
			return
		}
		got, ok := unescapeJSON(nil, lit[1:len(lit)-1])
		if !ok || string(got) != want {
			t.Fatalf("unescapeJSON(%s) = %q, %v; want %q", lit, got, ok, want)
		}
	})
}

// BenchmarkMaskJSONStrings is the masking every export answer gets after
// decoding, on 40 KB of HTML: raw (the page's */* answer), in a wrapper
// as content_service encodes it, and in one with every < and > escaped
// (encoding/json's default), the densest escapes an upstream sends.
func BenchmarkMaskJSONStrings(b *testing.B) {
	page := "<!DOCTYPE html><html><body>" + strings.Repeat(`<table role="presentation"><tr><td style="padding:8px">Hello, world</td></tr></table>`+"\n", 400) + "</body></html>"
	var plain bytes.Buffer
	enc := json.NewEncoder(&plain)
	enc.SetEscapeHTML(false)
	enc.Encode(map[string]any{"body": map[string]string{"html": page}})
	escaped, _ := json.Marshal(map[string]any{"body": map[string]string{"html": page}})
	secrets := [][]byte{[]byte("tok-plain-5f1d2c9a7b"), []byte("client-id-71c2e9d4"), []byte("client-secret-0a9f3e6b2c")}
	for _, bc := range []struct {
		name string
		text []byte
	}{{"raw", []byte(page)}, {"wrapper", plain.Bytes()}, {"wrapper-html-escaped", escaped}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.text)))
			for b.Loop() {
				if _, changed := maskJSONStrings(bc.text, secrets); changed {
					b.Fatal("changed")
				}
			}
		})
	}
}
