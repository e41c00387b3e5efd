package contentservice

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestLoginErrors(t *testing.T) {
	h, _ := newTestService(t, nil)
	jsonCT := map[string]string{"Content-Type": "application/json"}
	tests := []struct {
		name    string
		method  string
		headers map[string]string
		body    string
		status  int
		code    int
	}{
		{"no content type", "", nil, `{"client_id":"alpha","client_secret":"` + testSecret + `","uid":"u"}`, 415, CodeLoginMediaType},
		{"text/plain", "", map[string]string{"Content-Type": "text/plain"}, `{}`, 415, CodeLoginMediaType},
		{"form", "", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, `client_id=alpha`, 415, CodeLoginMediaType},
		{"wrong secret", "", jsonCT, `{"client_id":"alpha","client_secret":"nope","uid":"u"}`, 401, CodeLoginCredentials},
		{"secret of another app", "", jsonCT, `{"client_id":"alpha","client_secret":"secret-editor-0123","uid":"u"}`, 401, CodeLoginCredentials},
		{"unknown client", "", jsonCT, `{"client_id":"zeta","client_secret":"` + testSecret + `","uid":"u"}`, 401, CodeLoginCredentials},
		{"client_id a number", "", jsonCT, `{"client_id":7,"client_secret":"` + testSecret + `","uid":"u"}`, 401, CodeLoginCredentials},
		{"missing credentials", "", jsonCT, `{"uid":"u"}`, 401, CodeLoginCredentials},
		{"disabled app", "", jsonCT, `{"client_id":"disabled-app","client_secret":"secret-disabled-0123","uid":"u"}`, 403, CodeLoginDisabled},
		{"disabled app, wrong secret", "", jsonCT, `{"client_id":"disabled-app","client_secret":"x","uid":"u"}`, 401, CodeLoginCredentials},
		{"uid missing", "", jsonCT, `{"client_id":"alpha","client_secret":"` + testSecret + `"}`, 400, CodeLoginUID},
		{"uid null", "", jsonCT, `{"client_id":"alpha","client_secret":"` + testSecret + `","uid":null}`, 400, CodeLoginUID},
		{"uid a number", "", jsonCT, `{"client_id":"alpha","client_secret":"` + testSecret + `","uid":42}`, 400, CodeLoginUID},
		{"uid empty", "", jsonCT, `{"client_id":"alpha","client_secret":"` + testSecret + `","uid":""}`, 400, CodeLoginUID},
		{"uid with a space", "", jsonCT, `{"client_id":"alpha","client_secret":"` + testSecret + `","uid":"a b"}`, 400, CodeLoginUID},
		{"uid with a slash", "", jsonCT, `{"client_id":"alpha","client_secret":"` + testSecret + `","uid":"../etc"}`, 400, CodeLoginUID},
		{"uid non-ASCII letter", "", jsonCT, `{"client_id":"alpha","client_secret":"` + testSecret + `","uid":"josé"}`, 400, CodeLoginUID},
		{"uid too long", "", jsonCT, `{"client_id":"alpha","client_secret":"` + testSecret + `","uid":"` + strings.Repeat("a", 257) + `"}`, 400, CodeLoginUID},
		// Member names are matched exactly, as JSON.parse would.
		{"names in upper case", "", jsonCT, `{"CLIENT_ID":"alpha","Client_Secret":"` + testSecret + `","UID":"u"}`, 401, CodeLoginCredentials},
		{"uid only in upper case", "", jsonCT, `{"client_id":"alpha","client_secret":"` + testSecret + `","UID":"u"}`, 400, CodeLoginUID},
		{"body null", "", jsonCT, `null`, 400, 400},
		{"body not JSON", "", jsonCT, `client_id=alpha`, 400, 400},
		{"body an array", "", jsonCT, `[]`, 400, 400},
		{"body over 64 KiB", "", jsonCT, `{"uid":"` + strings.Repeat("a", 70<<10) + `"}`, 400, 400},
		{"GET", http.MethodGet, nil, ``, 405, 405},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := do(t, h, request{method: tt.method, path: PathLogin, headers: tt.headers, body: tt.body})
			if w.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.status, w.Body)
			}
			if e := loginErrorOf(t, w); e.Code != tt.code {
				t.Errorf("code %d, want %d", e.Code, tt.code)
			}
			if tt.status == 405 && w.Header().Get("Allow") != "POST" {
				t.Errorf("Allow %q", w.Header().Get("Allow"))
			}
			if strings.Contains(w.Body.String(), testSecret) {
				t.Error("the response echoes the secret")
			}
		})
	}
}

func TestLoginSuccess(t *testing.T) {
	h, _ := newTestService(t, nil)
	for _, uid := range []string{"customer-42", "A_b-9", strings.Repeat("z", 256)} {
		body := `{"client_id":"alpha","client_secret":"` + testSecret + `","uid":"` + uid + `"}`
		// Token times are whole seconds between these two.
		before := time.Now().Unix()
		w := do(t, h, request{path: PathLogin, headers: map[string]string{"Content-Type": "application/json; charset=utf-8"}, body: body})
		after := time.Now().Unix()
		if w.Code != 200 {
			t.Fatalf("uid %q: %d %s", uid, w.Code, w.Body)
		}
		if w.Header().Get("Cache-Control") != "no-store" || w.Header().Get("Content-Type") != "application/json" {
			t.Errorf("headers %v", w.Header())
		}
		// Exactly the contract's fields, with the contract's types.
		var fields map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &fields); err != nil {
			t.Fatal(err)
		}
		want := map[string]any{
			"token_type": "Bearer",
			"expires_in": float64(300),
			"uid":        uid,
			"v2":         true,
		}
		refreshUntil, _ := fields["refresh_until"].(float64)
		if window := int64(12 * time.Hour / time.Second); int64(refreshUntil) < before+window || int64(refreshUntil) > after+window {
			t.Errorf("refresh_until %v, want 12 h after the login", fields["refresh_until"])
		}
		if len(fields) != 6 {
			t.Errorf("fields %v, want the contract's six", fields)
		}
		for k, v := range want {
			if fields[k] != v {
				t.Errorf("%s = %v, want %v", k, fields[k], v)
			}
		}
		tok, _ := fields["access_token"].(string)
		claims, err := h.parseEditorToken(tok)
		if err != nil {
			t.Fatalf("access token does not verify: %v", err)
		}
		if claims.Subject != uid || claims.AppRef != testAppRef("alpha") ||
			claims.ExpiresAt.Unix() != claims.IssuedAt.Unix()+300 || claims.IssuedAt.Unix() < before || claims.IssuedAt.Unix() > after ||
			claims.RefreshUntil != int64(refreshUntil) {
			t.Errorf("claims %+v", claims)
		}
		// The browser can read the payload: the client ID must not be in it.
		for i, part := range strings.Split(tok, ".")[:2] {
			decoded, err := base64.RawURLEncoding.DecodeString(part)
			if err != nil {
				t.Fatalf("token part %d: %v", i, err)
			}
			if strings.Contains(string(decoded), "alpha") {
				t.Errorf("token part %d reveals the client ID: %s", i, decoded)
			}
		}
		// HS256 with the signing key, by an independent verification.
		parsed, err := jwt.Parse(tok, func(*jwt.Token) (any, error) { return []byte(testKey), nil },
			jwt.WithValidMethods([]string{"HS256"}))
		if err != nil || !parsed.Valid {
			t.Errorf("jwt.Parse: %v", err)
		}
	}
}

func TestRefresh(t *testing.T) {
	h, _ := newTestService(t, nil)
	first := login(t, h, "alpha", testSecret, "user-7")
	refresh := func(tok string) (int, *loginResponse, loginError) {
		w := do(t, h, request{path: PathRefresh, headers: map[string]string{"Authorization": "Bearer " + tok}})
		if w.Code == 200 {
			var r loginResponse
			if err := json.Unmarshal(w.Body.Bytes(), &r); err != nil {
				t.Fatal(err)
			}
			return 200, &r, loginError{}
		}
		return w.Code, nil, loginErrorOf(t, w)
	}

	// A current token.
	status, r, _ := refresh(first.AccessToken)
	if status != 200 || r.RefreshUntil != first.RefreshUntil || r.UID != "user-7" || !r.V2 || r.ExpiresIn != 300 || r.AccessToken == first.AccessToken {
		t.Fatalf("refresh of a current token: %d %+v", status, r)
	}
	// An expired token, inside the refresh window: logged in 11 h ago.
	now := time.Now()
	loggedIn := now.Add(-11 * time.Hour)
	expired := editorToken(t, "alpha", "user-7", loggedIn, loggedIn.Add(RefreshWindow))
	if status, r, _ = refresh(expired); status != 200 || r.RefreshUntil != loggedIn.Add(RefreshWindow).Unix() {
		t.Fatalf("refresh of an expired token: %d %+v", status, r)
	}
	// In the second of refresh_until it has not passed yet: refreshed
	// (tried again if the clock ticked into the next second meanwhile).
	for try := 0; ; try++ {
		at := time.Now().Truncate(time.Second)
		status, _, e := refresh(editorToken(t, "alpha", "user-7", at.Add(-time.Hour), at))
		if time.Now().Truncate(time.Second).Equal(at) {
			if status != 200 {
				t.Errorf("at refresh_until: %d %+v, want a refresh (it has not passed)", status, e)
			}
			break
		}
		if try == 10 {
			t.Fatal("never answered within one second")
		}
	}
	// Once refresh_until has passed: 5101, whichever token (just issued or not).
	loggedIn = now.Add(-RefreshWindow)
	for name, tok := range map[string]string{
		"past refresh_until":  editorToken(t, "alpha", "user-7", loggedIn, loggedIn.Add(RefreshWindow-time.Second)),
		"expired and past it": editorToken(t, "alpha", "user-7", loggedIn.Add(-time.Hour), loggedIn.Add(RefreshWindow-time.Hour)),
	} {
		if status, _, e := refresh(tok); status != 401 || e.Code != CodeRefreshExpired || e.Message != "expired token cannot be refreshed" {
			t.Errorf("%s: %d %+v", name, status, e)
		}
	}

	// Tokens that are not ours.
	other, _ := newTestService(t, func(o *Handler) { o.SigningKey = strings.Repeat("q", 32) })
	foreign := login(t, other, "alpha", testSecret, "user-7").AccessToken
	for name, tok := range map[string]string{"other key": foreign, "garbage": "abc.def.ghi", "API token": testAPIToken} {
		if status, _, e := refresh(tok); status != 401 || e.Code != 401 {
			t.Errorf("%s: %d %+v", name, status, e)
		}
	}
	w := do(t, h, request{path: PathRefresh})
	if w.Code != 401 || loginErrorOf(t, w).Code != 401 {
		t.Errorf("no Authorization: %d %s", w.Code, w.Body)
	}
	if w := do(t, h, request{method: http.MethodGet, path: PathRefresh}); w.Code != 405 {
		t.Errorf("GET refresh: %d", w.Code)
	}
}

func TestRefreshDisabledApp(t *testing.T) {
	h, _ := newTestService(t, nil)
	tok := login(t, h, "alpha", testSecret, "u").AccessToken
	// The same key, the app now disabled (a reload of the config).
	h2, _ := newTestService(t, func(h *Handler) { h.Apps[0].Disabled = true })
	w := do(t, h2, request{path: PathRefresh, headers: bearer(tok)})
	if w.Code != 403 || loginErrorOf(t, w).Code != CodeLoginDisabled {
		t.Errorf("disabled: %d %s", w.Code, w.Body)
	}
	// The app removed altogether.
	h3, _ := newTestService(t, func(h *Handler) { h.Apps = h.Apps[1:] })
	if w := do(t, h3, request{path: PathRefresh, headers: bearer(tok)}); w.Code != 401 {
		t.Errorf("removed app: %d %s", w.Code, w.Body)
	}
}

func TestReplicasShareTokens(t *testing.T) {
	a, _ := newTestService(t, nil)
	b, _ := newTestService(t, nil)
	tok := login(t, a, "editor-app", "secret-editor-0123", "u").AccessToken
	if w := do(t, b, request{path: PathRefresh, headers: bearer(tok)}); w.Code != 200 {
		t.Errorf("refresh on the replica: %d %s", w.Code, w.Body)
	}
	if w := do(t, b, request{path: PathHTML, headers: bearer(tok), body: minimalDesign}); w.Code != 200 {
		t.Errorf("export on the replica: %d %s", w.Code, w.Body)
	}
}

// TestLoginUIDNamedExactly: beside "uid", a member "UID" is another
// member, not a second spelling of it that could choose the token's uid.
func TestLoginUIDNamedExactly(t *testing.T) {
	h, _ := newTestService(t, nil)
	for _, body := range []string{
		`{"client_id":"alpha","client_secret":"` + testSecret + `","uid":"customer-42","UID":"admin"}`,
		`{"client_id":"alpha","client_secret":"` + testSecret + `","UID":"admin","uid":"customer-42"}`,
	} {
		w := do(t, h, request{path: PathLogin, headers: map[string]string{"Content-Type": "application/json"}, body: body})
		var r loginResponse
		if w.Code != 200 || json.Unmarshal(w.Body.Bytes(), &r) != nil || r.UID != "customer-42" {
			t.Errorf("%s: %d %s, want a token for customer-42", body, w.Code, w.Body)
		}
	}
}
