package content

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/render"
	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// The project's own designs the single-design tests send.
const (
	largeDesign = "starter-newsletter"
	smallDesign = "starter-welcome"
)

// The 200 path: for every test design (the project's own, and the
// third-party corpus when DESIGN_CORPUS names it), Caddy's answer is
// exactly what the renderer produces for the same design, in both forms,
// for both endpoints.
func TestExportRendersCorpus(t *testing.T) {
	t.Parallel()
	tester := start(t)
	designs := designtest.OwnAndCorpus(t, false)
	for _, name := range designtest.Names(designs) {
		t.Run(name, func(t *testing.T) {
			data := designs[name]
			d, err := design.Decode(data)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			wantHTML, err := render.HTML(d)
			if err != nil {
				t.Fatalf("render.HTML: %v", err)
			}
			wantText, err := render.PlainText(d)
			if err != nil {
				t.Fatalf("render.PlainText: %v", err)
			}
			for _, tt := range []struct {
				path, accept, ctype, key string
				want                     []byte
			}{
				{"/v1/message/html", "", "text/html; charset=utf-8", "", wantHTML.Body},
				{"/v1/message/html", "*/*", "text/html; charset=utf-8", "", wantHTML.Body},
				{"/v1/message/html", "text/html", "text/html; charset=utf-8", "", wantHTML.Body},
				{"/v1/message/html", "application/json", "application/json", "html", wantHTML.Body},
				{"/v1/message/plain-text", "", "text/plain; charset=utf-8", "", wantText.Body},
				{"/v1/message/plain-text", "application/json", "application/json", "text", wantText.Body},
			} {
				headers := bearer(apiToken)
				headers["Content-Type"] = "application/json"
				if tt.accept != "" {
					headers["Accept"] = tt.accept
				}
				r := post(t, tester, http.MethodPost, mainSite+tt.path, headers, data)
				checkRequestID(t, r)
				noSecrets(t, r)
				if r.status != 200 {
					t.Fatalf("%s Accept %q: status %d: %s", tt.path, tt.accept, r.status, r.body)
				}
				if ct := r.header.Get("Content-Type"); ct != tt.ctype {
					t.Errorf("%s Accept %q: Content-Type %q, want %q", tt.path, tt.accept, ct, tt.ctype)
				}
				got := r.body
				if tt.key != "" {
					var wrapped map[string]map[string]string
					if err := json.Unmarshal(r.body, &wrapped); err != nil || len(wrapped) != 1 || len(wrapped["body"]) != 1 {
						t.Fatalf("JSON form %.200s: %v", r.body, err)
					}
					got = []byte(wrapped["body"][tt.key])
				}
				if !bytes.Equal(got, tt.want) {
					t.Errorf("%s Accept %q: body differs from the renderer's (%d vs %d bytes)", tt.path, tt.accept, len(got), len(tt.want))
				}
				if tt.path == "/v1/message/html" && !bytes.HasPrefix(bytes.TrimSpace(got), []byte("<!DOCTYPE html>")) {
					t.Errorf("HTML does not start with <!DOCTYPE html>: %.80s", got)
				}
				if strings.Join(r.header.Values("X-Design-Warnings"), "\n") != strings.Join(wantHTML.Warnings, "\n") && tt.path == "/v1/message/html" {
					t.Errorf("X-Design-Warnings %q, renderer warned %q", r.header.Values("X-Design-Warnings"), wantHTML.Warnings)
				}
			}
		})
	}
}

// A module of an unknown type is rendered as nothing and listed in
// X-Design-Warnings, never a failure.
func TestExportUnknownModuleWarns(t *testing.T) {
	t.Parallel()
	tester := start(t)
	var doc map[string]any
	if err := json.Unmarshal(designtest.OwnFile(t, smallDesign), &doc); err != nil {
		t.Fatal(err)
	}
	// Add a module of an unknown type to the first column of the first row.
	rows := doc["page"].(map[string]any)["rows"].([]any)
	column := rows[0].(map[string]any)["columns"].([]any)[0].(map[string]any)
	column["modules"] = append(column["modules"].([]any), map[string]any{
		"type":       "x-vendor-unknown-module",
		"descriptor": map[string]any{"secretSauce": "SHOULD-NOT-RENDER"},
	})
	body, _ := json.Marshal(doc)
	for _, path := range []string{"/v1/message/html", "/v1/message/plain-text"} {
		r := post(t, tester, http.MethodPost, mainSite+path, bearer(apiToken), body)
		if r.status != 200 {
			t.Fatalf("%s: status %d: %s", path, r.status, r.body)
		}
		warnings := strings.Join(r.header.Values("X-Design-Warnings"), "\n")
		if !strings.Contains(warnings, "x-vendor-unknown-module") {
			t.Errorf("%s: X-Design-Warnings %q do not name the unknown type", path, warnings)
		}
		if bytes.Contains(r.body, []byte("SHOULD-NOT-RENDER")) {
			t.Errorf("%s: the unknown module was rendered", path)
		}
	}
}

// A CSS value the renderer drops from a design (here a background image
// of a script URL) is named in X-Design-Warnings, in both forms; a design
// of thousands of dropped values, all different, still gets a bounded
// header.
func TestExportDroppedCSSWarns(t *testing.T) {
	t.Parallel()
	tester := start(t)
	var doc map[string]any
	if err := json.Unmarshal(designtest.OwnFile(t, smallDesign), &doc); err != nil {
		t.Fatal(err)
	}
	row := doc["page"].(map[string]any)["rows"].([]any)[0].(map[string]any)
	row["container"] = map[string]any{"style": map[string]any{"background-image": "url(javascript:alert('SHOULD-NOT-RENDER'))"}}
	body, _ := json.Marshal(doc)
	for _, accept := range []string{"text/html", "application/json"} {
		headers := bearer(apiToken)
		headers["Accept"] = accept
		r := post(t, tester, http.MethodPost, mainSite+"/v1/message/html", headers, body)
		if r.status != 200 {
			t.Fatalf("%s: status %d: %s", accept, r.status, r.body)
		}
		const want = `CSS value of "background-image" dropped (URL scheme "javascript:" not allowed) at page.rows[0]`
		if got := r.header.Values("X-Design-Warnings"); len(got) != 1 || got[0] != want {
			t.Errorf("%s: X-Design-Warnings %q, want %q", accept, got, want)
		}
		if bytes.Contains(r.body, []byte("SHOULD-NOT-RENDER")) {
			t.Errorf("%s: the dropped value was rendered", accept)
		}
	}

	// 2400 values (6 properties × 5 reasons in 400 paragraphs, within
	// the site's body limit): 30 distinct warnings, each counting 80
	// places.
	bad := []func(n int) string{
		func(n int) string { return "a{" + strconv.Itoa(n) },
		func(n int) string { return "a<" + strconv.Itoa(n) },
		func(n int) string { return "a;" + strconv.Itoa(n) },
		func(n int) string { return "expression(" + strconv.Itoa(n) + ")" },
		func(n int) string { return "url(javascript:" + strconv.Itoa(n) + ")" },
	}
	var modules []any
	n := 0
	for range 400 {
		st := map[string]any{}
		for _, p := range []string{"font-family", "color", "font-size", "line-height", "letter-spacing", "font-weight"} {
			n++
			st[p] = bad[n%len(bad)](n)
		}
		modules = append(modules, map[string]any{"type": "mailup-bee-newsletter-modules-paragraph",
			"descriptor": map[string]any{"paragraph": map[string]any{"html": "<p>Hi</p>", "style": st}}})
	}
	body, _ = json.Marshal(map[string]any{"page": map[string]any{"rows": []any{
		map[string]any{"columns": []any{map[string]any{"grid-columns": 12, "modules": modules}}}}}})
	r := post(t, tester, http.MethodPost, mainSite+"/v1/message/html", bearer(apiToken), body)
	if r.status != 200 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	got := r.header.Values("X-Design-Warnings")
	size := 0
	for _, v := range got {
		size += len(v)
		if len(v) > 200 {
			t.Errorf("X-Design-Warnings value of %d bytes: %q", len(v), v)
		}
	}
	// At most 20 warnings, then how many more.
	if len(got) != 21 || got[20] != "10 more warnings" || !strings.HasSuffix(got[0], "(and 79 more)") {
		t.Errorf("X-Design-Warnings (%d values, %d bytes):\n%s", len(got), size, strings.Join(got, "\n"))
	}
}

func TestExportAuthentication(t *testing.T) {
	t.Parallel()
	tester := start(t)
	editor := loginOK(t, tester, mainSite, "editor-app", editorSecret, "it-user").AccessToken
	alphaEditor := loginOK(t, tester, mainSite, "alpha", alphaSecret, "it-user").AccessToken
	expiredEditor := forgeToken(t, signingKey, "editor-app", "it-user", -10*60, 3600)
	tests := []struct {
		name    string
		headers map[string]string
		status  int
		code    int
	}{
		{"no Authorization header", nil, 401, 4001},
		{"missing Bearer prefix", map[string]string{"Authorization": apiToken}, 401, 4005},
		{"Basic scheme", map[string]string{"Authorization": "Basic " + apiToken}, 401, 4005},
		{"empty token", map[string]string{"Authorization": "Bearer "}, 401, 4005},
		{"unknown token", bearer("it-api-token-unknown"), 403, 4003},
		{"revoked token (app disabled)", bearer(disabledTok), 403, 4003},
		{"editor token of an app without editor_tokens", bearer(alphaEditor), 403, 4003},
		{"editor token expired", bearer(expiredEditor), 401, 4010},
		{"API token", bearer(apiToken), 200, 0},
		{"second API token from the same placeholder", bearer(apiToken2), 200, 0},
		{"token of the editor app", bearer(editorAppTok), 200, 0},
		{"editor token allowed by editor_tokens", bearer(editor), 200, 0},
	}
	body := designtest.OwnFile(t, largeDesign)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := post(t, tester, http.MethodPost, mainSite+"/v1/message/html", tt.headers, body)
			checkRequestID(t, r)
			noSecrets(t, r)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %.300s", r.status, tt.status, r.body)
			}
			if tt.code != 0 {
				if code, _, _ := exportError(t, r); code != tt.code {
					t.Errorf("code %d, want %d", code, tt.code)
				}
			}
		})
	}
}

func TestExportErrors(t *testing.T) {
	t.Parallel()
	tester := start(t)
	tests := []struct {
		name    string
		method  string
		url     string
		headers map[string]string
		body    string
		status  int
		code    int
		details string // substring of details
	}{
		{"body is not JSON", "POST", mainSite + "/v1/message/html", nil, "<p>hello</p>", 400, 4100, ""},
		{"empty body", "POST", mainSite + "/v1/message/plain-text", nil, "", 400, 4100, ""},
		{"JSON without page", "POST", mainSite + "/v1/message/html", nil, `{"rows":[]}`, 400, 4101, "page"},
		{"rows not an array", "POST", mainSite + "/v1/message/html", nil, `{"page":{"body":{},"rows":"nope"}}`, 400, 4101, "rows"},
		{"JSON array", "POST", mainSite + "/v1/message/plain-text", nil, `[1,2]`, 400, 4101, ""},
		{"body over max_body", "POST", mainSite + "/v1/message/html", nil, `{"page":"` + strings.Repeat("a", 256<<10) + `"}`, 413, 4130, "262144"},
		{"media type text/plain", "POST", mainSite + "/v1/message/html", map[string]string{"Content-Type": "text/plain"}, `{}`, 415, 4150, ""},
		{"media type form", "POST", mainSite + "/v1/message/plain-text", map[string]string{"Content-Type": "multipart/form-data; boundary=x"}, `{}`, 415, 4150, ""},
		{"GET", "GET", mainSite + "/v1/message/html", nil, "", 405, 405, ""},
		{"PUT", "PUT", mainSite + "/v1/message/plain-text", nil, "{}", 405, 405, ""},
		{"unknown path", "POST", mainSite + "/v1/message/amp", nil, "{}", 404, 404, "/v1/message/html"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			headers := bearer(apiToken)
			for k, v := range tt.headers {
				headers[k] = v
			}
			r := post(t, tester, tt.method, tt.url, headers, []byte(tt.body))
			checkRequestID(t, r)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %.300s", r.status, tt.status, r.body)
			}
			code, _, details := exportError(t, r)
			if code != tt.code {
				t.Errorf("code %d, want %d", code, tt.code)
			}
			if !strings.Contains(details, tt.details) {
				t.Errorf("details %q, want %q in them", details, tt.details)
			}
			if tt.status == 405 && r.header.Get("Allow") != "POST" {
				t.Errorf("Allow %q, want POST", r.header.Get("Allow"))
			}
		})
	}
}

// The 4101 details name the JSON path of the first problem.
func TestExportNotADesignNamesPath(t *testing.T) {
	t.Parallel()
	tester := start(t)
	body := `{"page":{"body":{},"rows":[{"columns":[{"modules":"not-a-list"}]}]}}`
	r := post(t, tester, http.MethodPost, mainSite+"/v1/message/html", bearer(apiToken), []byte(body))
	if r.status != 400 {
		t.Fatalf("status %d: %s", r.status, r.body)
	}
	code, message, details := exportError(t, r)
	if code != 4101 || message != "Invalid design" || !strings.Contains(details, "page.rows[0]") {
		t.Errorf("got %d %q %q, want 4101 with details naming page.rows[0]…", code, message, details)
	}
}

func TestExportRateLimit(t *testing.T) {
	tester := start(t)
	// The buckets live with the loaded config: a forced reload empties
	// them of what earlier tests (or runs, with -count) spent.
	if status, answer, err := load(config, true); err != nil || status != 200 {
		t.Fatalf("reload: %d %s %v", status, answer, err)
	}
	body := designtest.OwnFile(t, smallDesign)
	// rate_limit 2 per 1m: two answered, the third refused.
	for i := 0; i < 2; i++ {
		if r := post(t, tester, http.MethodPost, limitedSite+"/v1/message/plain-text", bearer(editorAppTok), body); r.status != 200 {
			t.Fatalf("request %d: %d %s", i, r.status, r.body)
		}
	}
	r := post(t, tester, http.MethodPost, limitedSite+"/v1/message/plain-text", bearer(editorAppTok), body)
	if r.status != 429 {
		t.Fatalf("third request at 2 per minute: %d, want 429", r.status)
	}
	checkRequestID(t, r)
	if code, _, _ := exportError(t, r); code != 4290 {
		t.Errorf("code %d, want 4290", code)
	}
	secs, err := strconv.Atoi(r.header.Get("Retry-After"))
	if err != nil || secs < 1 || secs > 30 {
		t.Errorf("Retry-After %q, want 1..30 s", r.header.Get("Retry-After"))
	}
	// Another token has its own budget; the other sites have no limit.
	if r := post(t, tester, http.MethodPost, limitedSite+"/v1/message/plain-text", bearer(apiToken), body); r.status != 200 {
		t.Errorf("another token: %d", r.status)
	}
	for i := 0; i < 4; i++ {
		if r := post(t, tester, http.MethodPost, mainSite+"/v1/message/plain-text", bearer(editorAppTok), body); r.status != 200 {
			t.Fatalf("unlimited site, request %d: %d", i, r.status)
		}
	}
}

// With pass_thru, other paths reach the next handler; the service's own
// paths are still its own. Under handle_path the service answers at a
// prefix.
func TestPassThruAndPrefix(t *testing.T) {
	t.Parallel()
	tester := start(t)
	r := post(t, tester, http.MethodGet, sharedSite+"/index.html", nil, nil)
	if r.status != 200 || string(r.body) != "the next handler" {
		t.Errorf("pass_thru: %d %q", r.status, r.body)
	}
	r = post(t, tester, http.MethodPost, sharedSite+"/v1/message/html", nil, []byte("{}"))
	if code, _, _ := exportError(t, r); r.status != 401 || code != 4001 {
		t.Errorf("export path on the pass_thru site: %d %d", r.status, code)
	}
	body := designtest.OwnFile(t, smallDesign)
	r = post(t, tester, http.MethodPost, prefixSite+"/cs/v1/message/plain-text", bearer(apiToken), body)
	if r.status != 200 || r.header.Get("Content-Type") != "text/plain; charset=utf-8" {
		t.Errorf("under /cs: %d %.200s", r.status, r.body)
	}
	if r := post(t, tester, http.MethodGet, prefixSite+"/other", nil, nil); string(r.body) != "outside /cs" {
		t.Errorf("outside the prefix: %d %q", r.status, r.body)
	}
}
