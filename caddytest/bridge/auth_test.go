package bridge

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/textproto"
	"os"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// loginUpstream answers LoginV2 like the contract says, echoing the uid.
func loginUpstream(t *testing.T) *upstream {
	return newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		var in struct {
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
			UID          string `json:"uid"`
		}
		w.Header().Set("Content-Type", "application/json")
		if json.Unmarshal(body, &in) != nil || in.ClientID != clientID || in.ClientSecret != clientSecret {
			w.WriteHeader(401)
			io.WriteString(w, `{"code":5002,"message":"bad client","status_code":401}`)
			return
		}
		fmt.Fprintf(w, `{"access_token":"editor-token","token_type":"Bearer","expires_in":300,"refresh_until":1764000000,"uid":%q,"v2":true}`, in.UID)
	})
}

// authBlock configures LoginV2 and exports against u. Unless extra sets
// uid or insecure_caller_uid, the uid is the fixed test-user: without
// either, LoginV2 is a load error.
func authBlock(u *upstream, extra ...string) string {
	uid := "uid test-user"
	for _, e := range extra {
		if f := strings.Fields(e); len(f) > 0 && (f[0] == "uid" || f[0] == "insecure_caller_uid") {
			uid = ""
		}
	}
	return fmt.Sprintf("\t\tauth_url %s/loginV2\n\t\tclient_id {env.DB_TEST_CLIENT_ID}\n\t\tclient_secret {env.DB_TEST_CLIENT_SECRET}\n\t\ttoken %s\n\t\tcontent_service %s\n%s",
		u.URL, tokenPlain, u.URL, indent(append(extra, uid)))
}

func TestLoginV2(t *testing.T) {
	up := loginUpstream(t)
	type tcase struct {
		name    string
		body    string
		header  map[string]string
		status  int
		wantUID string // "" when the upstream must not be called
		code    int    // error code when design_bridge refuses
	}
	run := func(t *testing.T, block string, cases []tcase) {
		tc := load(t, site(block))
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				before := len(up.requests())
				var body []byte
				if c.body != "" {
					body = []byte(c.body)
				}
				res := post(t, tc, "/proxy/bee-auth", body, c.header)
				if res.Status != c.status {
					t.Fatalf("status %d %s", res.Status, res.Body)
				}
				if c.wantUID == "" {
					if c.code != 0 {
						assertErrorBody(t, res, c.code)
					}
					if len(up.requests()) != before {
						t.Errorf("upstream called for a refused request")
					}
					return
				}
				got := up.last(t)
				if got.Path != "/loginV2" || got.Header.Get("Content-Type") != "application/json" {
					t.Errorf("upstream got %s %q", got.Path, got.Header.Get("Content-Type"))
				}
				want := fmt.Sprintf(`{"client_id":%q,"client_secret":%q,"uid":%q}`, clientID, clientSecret, c.wantUID)
				if string(got.Body) != want {
					t.Errorf("LoginV2 body %s, want %s", got.Body, want)
				}
				for _, h := range []string{"Cookie", "Authorization", "X-User"} {
					if got.Header.Get(h) != "" {
						t.Errorf("%s forwarded to LoginV2", h)
					}
				}
				wantRes := fmt.Sprintf(`{"access_token":"editor-token","token_type":"Bearer","expires_in":300,"refresh_until":1764000000,"uid":%q,"v2":true}`, c.wantUID)
				if string(res.Body) != wantRes || res.Header.Get("Content-Type") != "application/json" {
					t.Errorf("response %q", res.Body)
				}
			})
		}
	}
	t.Run("uid from body with insecure_caller_uid", func(t *testing.T) {
		run(t, authBlock(up, "insecure_caller_uid"), []tcase{
			{name: "body uid", body: `{"uid":"customer-42"}`, header: map[string]string{"Cookie": "s=1", "Authorization": "Basic eDp5"}, status: 200, wantUID: "customer-42"},
			{name: "underscore digits", body: `{"uid":"A_b-9"}`, status: 200, wantUID: "A_b-9"},
			// The same bound as content_service's, so the bridge passes on
			// every uid the content service accepts.
			{name: "longest", body: `{"uid":"` + strings.Repeat("u", 256) + `"}`, status: 200, wantUID: strings.Repeat("u", 256)},
			{name: "too long", body: `{"uid":"` + strings.Repeat("u", 257) + `"}`, status: 400, code: 5005},
			{name: "empty body", status: 200, wantUID: "demo-user"},
			{name: "empty object", body: `{}`, status: 200, wantUID: "demo-user"},
			{name: "other members only", body: `{"name":"x"}`, status: 200, wantUID: "demo-user"},
			{name: "number", body: `{"uid":42}`, status: 400, code: 5005},
			{name: "null", body: `{"uid":null}`, status: 400, code: 5005},
			{name: "empty string", body: `{"uid":""}`, status: 400, code: 5005},
			{name: "space", body: `{"uid":"a b"}`, status: 400, code: 5005},
			{name: "slash", body: `{"uid":"../x"}`, status: 400, code: 5005},
			{name: "unicode", body: `{"uid":"jürgen"}`, status: 400, code: 5005},
			{name: "array", body: `{"uid":["a"]}`, status: 400, code: 5005},
			{name: "not JSON", body: `uid=customer-42`, status: 400, code: 4100},
			{name: "JSON array", body: `["customer-42"]`, status: 400, code: 4100},
		})
	})
	t.Run("uid from config literal", func(t *testing.T) {
		run(t, authBlock(up, "uid configured-7"), []tcase{
			{name: "body ignored", body: `{"uid":"other"}`, status: 200, wantUID: "configured-7"},
			{name: "invalid body ignored", body: `{"uid":42}`, status: 200, wantUID: "configured-7"},
		})
	})
	t.Run("uid from request placeholder", func(t *testing.T) {
		run(t, authBlock(up, "uid {http.request.header.X-User}"), []tcase{
			{name: "header", header: map[string]string{"X-User": "u-1"}, body: `{"uid":"other"}`, status: 200, wantUID: "u-1"},
			{name: "placeholder empty", body: `{"uid":"other"}`, status: 403, code: 5005},
			{name: "placeholder invalid", header: map[string]string{"X-User": "a@b"}, status: 400, code: 5005},
		})
	})
	t.Run("wrong credentials passed through", func(t *testing.T) {
		block := fmt.Sprintf("\t\tauth_url %s/loginV2\n\t\tclient_id wrong-id-123456\n\t\tclient_secret wrong-secret-123456\n\t\tuid u1\n", up.URL)
		tc := load(t, site(block))
		res := post(t, tc, "/proxy/bee-auth", nil, nil)
		if res.Status != 401 || string(res.Body) != `{"code":5002,"message":"bad client","status_code":401}` {
			t.Errorf("got %d %s", res.Status, res.Body)
		}
	})
	t.Run("credentials not configured", func(t *testing.T) {
		// The defaults {env.CLIENT_ID} and {env.CLIENT_SECRET}, unset
		// (a configured placeholder that is empty is a load error).
		for _, v := range []string{"CLIENT_ID", "CLIENT_SECRET"} {
			if old, ok := os.LookupEnv(v); ok {
				t.Cleanup(func() { os.Setenv(v, old) })
				os.Unsetenv(v)
			}
		}
		tc := load(t, site(fmt.Sprintf("\t\tauth_url %s/loginV2", up.URL)))
		res := post(t, tc, "/proxy/bee-auth", nil, nil)
		if res.Status != 500 {
			t.Errorf("got %d %s", res.Status, res.Body)
		}
		assertErrorBody(t, res, 5000)
	})
	t.Run("custom auth_path", func(t *testing.T) {
		tc := load(t, site(authBlock(up, "auth_path /login")))
		if res := post(t, tc, "/login", []byte(`{"uid":"x1"}`), nil); res.Status != 200 {
			t.Errorf("POST /login = %d", res.Status)
		}
		if res := post(t, tc, "/proxy/bee-auth", []byte(`{"uid":"x1"}`), nil); res.Status == 200 {
			t.Errorf("old auth path still answers")
		}
	})
}

func TestCrossSiteRefused(t *testing.T) {
	up := loginUpstream(t)
	type tcase struct {
		name   string
		header map[string]string
		ok     bool
	}
	// A function: the site's origin (siteURL) is known once its config loads.
	cases := func() map[bool][]tcase {
		return map[bool][]tcase{
			false: { // no allowed_origins
				{"no browser headers", nil, true},
				{"same-origin fetch", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": siteURL}, true},
				// Another port or subdomain of the site's host is same-site but
				// another origin, whose pages this site does not vouch for.
				{"same-site fetch", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://localhost:9102"}, false},
				{"unknown Sec-Fetch-Site", map[string]string{"Sec-Fetch-Site": "nearby", "Origin": "https://evil.example"}, false},
				{"unknown Sec-Fetch-Site own origin", map[string]string{"Sec-Fetch-Site": "bogus", "Origin": siteURL}, false},
				{"cross-site fetch", map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.test"}, false},
				{"cross-site without origin", map[string]string{"Sec-Fetch-Site": "cross-site"}, false},
				{"old browser own origin", map[string]string{"Origin": siteURL}, true},
				{"old browser foreign origin", map[string]string{"Origin": "http://evil.test"}, false},
				{"old browser null origin", map[string]string{"Origin": "null"}, false},
				{"dev server origin not allowed", map[string]string{"Origin": "http://localhost:3000"}, false},
				// A dev server that forwards without rewriting Host: the
				// browser's origin and Host agree.
				{"dev server keeping Host", map[string]string{"Origin": "http://localhost:3000", "Host": "localhost:3000"}, true},
			},
			true: { // allowed_origins http://localhost:3000
				{"dev server origin allowed", map[string]string{"Origin": "http://localhost:3000"}, true},
				{"dev server same-origin fetch", map[string]string{"Origin": "http://localhost:3000", "Sec-Fetch-Site": "same-origin"}, true},
				{"allowed origin even if cross-site", map[string]string{"Origin": "http://localhost:3000", "Sec-Fetch-Site": "cross-site"}, true},
				{"other origin still refused", map[string]string{"Origin": "http://localhost:3002", "Sec-Fetch-Site": "cross-site"}, false},
				{"allowed origin same-site", map[string]string{"Origin": "http://localhost:3000", "Sec-Fetch-Site": "same-site"}, true},
				{"other same-site origin refused", map[string]string{"Origin": "http://localhost:3002", "Sec-Fetch-Site": "same-site"}, false},
				{"own origin still fine", map[string]string{"Origin": siteURL}, true},
			},
		}
	}
	for _, allowed := range []bool{false, true} {
		block := authBlock(up)
		if allowed {
			block = authBlock(up, "allowed_origins http://localhost:3000")
		}
		tc := load(t, site(block))
		for _, c := range cases()[allowed] {
			for _, path := range []string{"/v1/message/html", "/proxy/bee-auth"} {
				t.Run(fmt.Sprintf("allowed=%v %s %s", allowed, c.name, path), func(t *testing.T) {
					before := len(up.requests())
					res := post(t, tc, path, []byte(`{"uid":"u1"}`), c.header)
					if c.ok {
						if res.Status == 403 {
							t.Errorf("refused: %s", res.Body)
						}
						return
					}
					if res.Status != 403 {
						t.Errorf("status %d, want 403", res.Status)
					}
					assertErrorBody(t, res, 4031)
					if len(up.requests()) != before {
						t.Errorf("upstream called for a cross-site request")
					}
				})
			}
		}
	}
}

// TestUIDFromHost: with LoginV2 configured, the uid is the host's: no uid
// is a load error that says how to set it, and behind basic_auth the token
// is the authenticated user's whatever the body names. Only the loudly
// named development opt-in lets the caller choose.
func TestUIDFromHost(t *testing.T) {
	up := loginUpstream(t)
	t.Run("no uid is a load error", func(t *testing.T) {
		load(t, site(""))
		block := fmt.Sprintf("\t\tauth_url %s/loginV2\n\t\tclient_id {env.DB_TEST_CLIENT_ID}\n\t\tclient_secret {env.DB_TEST_CLIENT_SECRET}", up.URL)
		status, body, err := loadRaw([]byte(site(block)), "text/caddyfile", false)
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"uid: not set", "uid {http.auth.user.id}", "after basic_auth, or a header forward_auth copies", "insecure_caller_uid"} {
			if status == 200 || !strings.Contains(string(body), want) {
				t.Errorf("load: %d %s; want an error containing %q", status, body, want)
			}
		}
	})
	t.Run("uid from basic_auth", func(t *testing.T) {
		hash, err := bcrypt.GenerateFromPassword([]byte("alice-password-0123456789"), 4)
		if err != nil {
			t.Fatal(err)
		}
		tc := load(t, site(authBlock(up, "uid {http.auth.user.id}"), "\tbasic_auth /proxy/* {\n\t\talice "+string(hash)+"\n\t}"))
		before := len(up.requests())
		if res := post(t, tc, "/proxy/bee-auth", []byte(`{"uid":"victim-user"}`), nil); res.Status != 401 {
			t.Errorf("anonymous login: %d %s", res.Status, res.Body)
		}
		if len(up.requests()) != before {
			t.Errorf("anonymous login reached LoginV2")
		}
		basic := "Basic " + base64.StdEncoding.EncodeToString([]byte("alice:alice-password-0123456789"))
		res := post(t, tc, "/proxy/bee-auth", []byte(`{"uid":"victim-user"}`), map[string]string{"Authorization": basic})
		var tok struct {
			UID string `json:"uid"`
		}
		if res.Status != 200 || json.Unmarshal(res.Body, &tok) != nil || tok.UID != "alice" {
			t.Errorf("login as alice: %d %s", res.Status, res.Body)
		}
	})
	// The README's forward_auth recipe: the identity service's answer
	// names the user in a header, which forward_auth copies into the
	// request, replacing one the client sent.
	t.Run("uid from a header forward_auth copies", func(t *testing.T) {
		idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.Header.Get("Authorization") {
			case "Bearer alice":
				w.Header().Set("X-User-Id", "alice_1")
			case "Bearer no-id":
			default:
				w.WriteHeader(http.StatusUnauthorized)
			}
		}))
		t.Cleanup(idp.Close)
		forward := "\tforward_auth /proxy/* " + strings.TrimPrefix(idp.URL, "http://") + " {\n\t\turi /check\n\t\tcopy_headers X-User-Id\n\t}"
		tc := load(t, site(authBlock(up, "uid {http.request.header.X-User-Id}"), forward))
		spoof := map[string]string{"Authorization": "Bearer alice", "X-User-Id": "mallory"}
		res := post(t, tc, "/proxy/bee-auth", []byte(`{"uid":"victim-user"}`), spoof)
		if res.Status != 200 || !strings.Contains(string(res.Body), `"uid":"alice_1"`) {
			t.Errorf("login as alice: %d %s", res.Status, res.Body)
		}
		before := len(up.requests())
		spoof["Authorization"] = "Bearer no-id"
		if res := post(t, tc, "/proxy/bee-auth", []byte(`{"uid":"victim-user"}`), spoof); res.Status != 403 || !strings.Contains(string(res.Body), `"code":5005`) {
			t.Errorf("an answer naming no user, the client's own X-User-Id: %d %s, want 403 5005", res.Status, res.Body)
		}
		if len(up.requests()) != before {
			t.Error("a login without a user reached LoginV2")
		}
	})
	t.Run("fixed uid ignores the body", func(t *testing.T) {
		tc := load(t, site(authBlock(up, "uid demo-user")))
		res := post(t, tc, "/proxy/bee-auth", []byte(`{"uid":"victim-user"}`), nil)
		if res.Status != 200 || !strings.Contains(string(res.Body), `"uid":"demo-user"`) {
			t.Errorf("login: %d %s", res.Status, res.Body)
		}
	})
}

// TestLoginAnswerHeaders: of the LoginV2 answer's headers the browser
// gets only those the page's token request needs (Content-Type,
// Content-Length, caching directives, Retry-After) beside the site's and
// the bridge's own: no cookie the upstream sets on the host's origin, no
// redirect, CORS grant, policy or internal detail of the upstream, no
// trailer, and no interim response.
func TestLoginAnswerHeaders(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		var in struct{ UID string }
		_ = json.Unmarshal(body, &in)
		h := w.Header()
		h.Add("Set-Cookie", "early=1; Path=/")
		h.Set("Link", "</evil.js>; rel=preload; as=script")
		w.WriteHeader(http.StatusEarlyHints)
		clear(h)
		for k, v := range map[string][]string{
			"Set-Cookie":                       {"upstream_session=abc; Path=/; HttpOnly", "tracking=1; Domain=example.com"},
			"Cache-Control":                    {"no-store"},
			"Pragma":                           {"no-cache"},
			"Location":                         {"https://upstream.internal/next"},
			"Content-Location":                 {"/loginV2/result"},
			"Link":                             {"</evil.js>; rel=preload; as=script"},
			"Access-Control-Allow-Origin":      {"*"},
			"Access-Control-Allow-Credentials": {"true"},
			"Content-Security-Policy":          {"default-src *"},
			"Strict-Transport-Security":        {"max-age=0"},
			"Clear-Site-Data":                  {`"cookies"`},
			"Refresh":                          {"0; url=https://elsewhere.example"},
			"X-Internal-Host":                  {"auth-node-7.internal"},
			"Server":                           {"upstream/1.0"},
			"Via":                              {"1.1 internal-lb"},
			"Vary":                             {"Origin"},
			"Etag":                             {`"t1"`},
			"Trailer":                          {"X-Trailer-Cookie"},
			"Content-Type":                     {"application/json"},
		} {
			h[k] = v
		}
		status := http.StatusOK
		if in.UID == "busy" {
			h.Set("Retry-After", "9")
			status = http.StatusTooManyRequests
		}
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"access_token":"editor-token","uid":%q}`, in.UID)
		h.Set("X-Trailer-Cookie", "t=1")
	})
	tc := load(t, site(authBlock(up, "uid {http.request.header.X-Case}")))
	allowed := map[string]bool{"Content-Type": true, "Content-Length": true, "Cache-Control": true, "Pragma": true,
		"Retry-After": true, "Content-Security-Policy": true, "X-Content-Type-Options": true, "Date": true, "Server": true}
	for _, c := range []struct {
		uid    string
		status int
	}{{"u1", 200}, {"busy", 429}} {
		t.Run(c.uid, func(t *testing.T) {
			var interim []int
			trace := &httptrace.ClientTrace{Got1xxResponse: func(code int, _ textproto.MIMEHeader) error {
				interim = append(interim, code)
				return nil
			}}
			req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace), http.MethodPost, siteURL+"/proxy/bee-auth", strings.NewReader(`{}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Case", c.uid)
			res, err := tc.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if want := fmt.Sprintf(`{"access_token":"editor-token","uid":%q}`, c.uid); res.StatusCode != c.status || string(body) != want {
				t.Fatalf("got %d %s, want %d %s", res.StatusCode, body, c.status, want)
			}
			for name, v := range res.Header {
				if !allowed[name] {
					t.Errorf("%s: %q reached the browser", name, v)
				}
			}
			for name, v := range res.Trailer {
				t.Errorf("trailer %s: %q reached the browser", name, v)
			}
			if len(interim) != 0 {
				t.Errorf("interim responses %v reached the browser", interim)
			}
			for name, want := range map[string]string{"Cache-Control": "no-store", "Pragma": "no-cache",
				"Content-Security-Policy": "sandbox", "Server": "Caddy"} {
				if v := res.Header.Values(name); len(v) != 1 || v[0] != want {
					t.Errorf("%s: %q, want %q", name, v, want)
				}
			}
			if c.status == 429 && res.Header.Get("Retry-After") != "9" {
				t.Errorf("Retry-After %q, want 9", res.Header.Get("Retry-After"))
			}
		})
	}
}

// TestLoginAnswerNeverCached: a LoginV2 answer carries an editor token,
// so whatever caching the upstream asks for (or none), the browser and
// any cache on the way are told to keep none of it.
func TestLoginAnswerNeverCached(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		var in struct{ UID string }
		_ = json.Unmarshal(body, &in)
		switch in.UID {
		case "cacheable":
			w.Header().Set("Cache-Control", "public, max-age=3600")
			w.Header().Set("Expires", "Thu, 01 Jan 2099 00:00:00 GMT")
		case "twice":
			w.Header()["Cache-Control"] = []string{"max-age=60", "public"}
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":"editor-token","uid":%q}`, in.UID)
	})
	tc := load(t, site(authBlock(up, "uid {http.request.header.X-Case}")))
	for _, uid := range []string{"silent", "cacheable", "twice"} {
		t.Run(uid, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, siteURL+"/proxy/bee-auth", strings.NewReader(`{}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Case", uid)
			res, err := tc.Client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != 200 {
				t.Fatalf("status %d", res.StatusCode)
			}
			if v := res.Header.Values("Cache-Control"); len(v) != 1 || v[0] != "no-store" {
				t.Errorf("Cache-Control %q, want no-store", v)
			}
			if v := res.Header.Get("Expires"); v != "" {
				t.Errorf("Expires %q reached the browser", v)
			}
		})
	}
}
