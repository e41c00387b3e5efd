package content

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
	"github.com/golang-jwt/jwt/v5"

	"github.com/designbridge/caddy-designbridge/testutil/designtest"
)

// tokenBody is the LoginV2 200 body.
type tokenBody struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshUntil int64  `json:"refresh_until"`
	UID          string `json:"uid"`
	V2           bool   `json:"v2"`
}

var jsonCT = map[string]string{"Content-Type": "application/json"}

func loginBody(clientID, secret string, uid any) []byte {
	b, _ := json.Marshal(map[string]any{"client_id": clientID, "client_secret": secret, "uid": uid})
	return b
}

// loginOK performs LoginV2 on site and checks the 200 body field by field.
func loginOK(t *testing.T, tester *testcaddy.Tester, site, clientID, secret, uid string) tokenBody {
	t.Helper()
	before := time.Now().Unix()
	r := post(t, tester, http.MethodPost, site+"/loginV2", jsonCT, loginBody(clientID, secret, uid))
	checkRequestID(t, r)
	if r.status != 200 {
		t.Fatalf("login: %d %s", r.status, r.body)
	}
	if r.header.Get("Content-Type") != "application/json" {
		t.Errorf("Content-Type %q", r.header.Get("Content-Type"))
	}
	checkTokenBody(t, r, clientID, uid, before)
	if bytes.Contains(r.body, []byte(clientID)) || bytes.Contains(r.body, []byte(secret)) {
		t.Errorf("the login answer reveals the client ID or secret: %s", r.body)
	}
	var body tokenBody
	_ = json.Unmarshal(r.body, &body)
	if body.RefreshUntil < before+12*3600 || body.RefreshUntil > time.Now().Unix()+12*3600 {
		t.Errorf("refresh_until %d is not 12 h after the login", body.RefreshUntil)
	}
	return body
}

// checkTokenBody checks the exact field set and values of a token body,
// that the access token is an HS256 JWT of the signing key, valid 300 s,
// and that no claim reveals the client ID.
func checkTokenBody(t *testing.T, r response, clientID, uid string, notBefore int64) {
	t.Helper()
	var fields map[string]any
	if err := json.Unmarshal(r.body, &fields); err != nil {
		t.Fatal(err)
	}
	if len(fields) != 6 {
		t.Errorf("fields %v: want access_token, token_type, expires_in, refresh_until, uid, v2", fields)
	}
	if fields["token_type"] != "Bearer" || fields["expires_in"] != float64(300) || fields["uid"] != uid || fields["v2"] != true {
		t.Errorf("body %s", r.body)
	}
	tok, _ := fields["access_token"].(string)
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(tok, claims, func(*jwt.Token) (any, error) { return []byte(signingKey), nil },
		jwt.WithValidMethods([]string{"HS256"}))
	if err != nil {
		t.Fatalf("access token does not verify with the signing key: %v", err)
	}
	exp, _ := claims.GetExpirationTime()
	if exp == nil || exp.Unix() < notBefore+300 || exp.Unix() > time.Now().Unix()+300 {
		t.Errorf("exp %v is not 300 s after issue", exp)
	}
	// The claims are readable by the browser; the body check of loginOK
	// only sees base64, so look at the decoded claims too.
	for name, value := range claims {
		if s, ok := value.(string); ok && strings.Contains(s, clientID) {
			t.Errorf("claim %s reveals the client ID", name)
		}
	}
}

// appReference is how an editor token names its application: a keyed
// hash of the client ID and the secret's digest (computed here
// independently of the module), so that the browser, which can read the
// claims, never sees the ID, and a new secret ends the old tokens.
func appReference(key, clientID string) string {
	secret := map[string]string{"alpha": alphaSecret, "editor-app": editorSecret, "disabled-app": "it-secret-disabled-0123"}[clientID]
	digest := sha256.Sum256([]byte(secret))
	mac := hmac.New(sha256.New, []byte(key))
	mac.Write([]byte("design-bridge app reference\x00"))
	mac.Write([]byte(clientID))
	mac.Write([]byte{0})
	mac.Write(digest[:])
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:16])
}

// forgeToken signs an editor token as the service would, with exp and
// refresh_until offset from now (seconds), to reach states that would
// otherwise take minutes or hours.
func forgeToken(t *testing.T, key, clientID, uid string, expIn, refreshIn int64) string {
	t.Helper()
	now := time.Now()
	claims := jwt.MapClaims{
		"app": appReference(key, clientID),
		"rfu": now.Unix() + refreshIn,
		"iss": "content_service",
		"aud": []string{"editor"},
		"sub": uid,
		"iat": now.Unix() + expIn - 300,
		"exp": now.Unix() + expIn,
	}
	s, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte(key))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLoginV2(t *testing.T) {
	t.Parallel()
	tester := start(t)
	tests := []struct {
		name    string
		method  string
		headers map[string]string
		body    []byte
		status  int
		code    int
	}{
		{"Content-Type missing", "POST", nil, loginBody("alpha", alphaSecret, "u1"), 415, 5001},
		{"Content-Type text/plain", "POST", map[string]string{"Content-Type": "text/plain"}, loginBody("alpha", alphaSecret, "u1"), 415, 5001},
		{"unknown client_id", "POST", jsonCT, loginBody("nobody", alphaSecret, "u1"), 401, 5002},
		{"wrong client_secret", "POST", jsonCT, loginBody("alpha", "wrong", "u1"), 401, 5002},
		{"another app's secret", "POST", jsonCT, loginBody("alpha", editorSecret, "u1"), 401, 5002},
		{"application disabled", "POST", jsonCT, loginBody("disabled-app", "it-secret-disabled-0123", "u1"), 403, 5003},
		{"uid missing", "POST", jsonCT, []byte(`{"client_id":"alpha","client_secret":"` + alphaSecret + `"}`), 400, 5005},
		{"uid a number", "POST", jsonCT, loginBody("alpha", alphaSecret, 42), 400, 5005},
		{"uid with a space", "POST", jsonCT, loginBody("alpha", alphaSecret, "a b"), 400, 5005},
		{"uid with a dot", "POST", jsonCT, loginBody("alpha", alphaSecret, "a.b"), 400, 5005},
		{"uid empty", "POST", jsonCT, loginBody("alpha", alphaSecret, ""), 400, 5005},
		// A member named twice is ambiguous (parsers disagree on which
		// one counts), and a body built by pasting a user's input into a
		// template could name the uid twice: refused, whichever comes
		// first, however the name is written.
		{"uid twice", "POST", jsonCT, []byte(`{"client_id":"alpha","client_secret":"` + alphaSecret + `","uid":"u1","uid":"victim"}`), 400, 400},
		{"uid twice, escaped", "POST", jsonCT, []byte(`{"client_id":"alpha","client_secret":"` + alphaSecret + `","uid":"u1","\u0075id":"victim"}`), 400, 400},
		{"client_id twice", "POST", jsonCT, []byte(`{"client_id":"nobody","client_id":"alpha","client_secret":"` + alphaSecret + `","uid":"u1"}`), 400, 400},
		{"client_secret twice", "POST", jsonCT, []byte(`{"client_id":"alpha","client_secret":"` + alphaSecret + `","client_secret":"x","uid":"u1"}`), 400, 400},
		{"GET", "GET", nil, nil, 405, 405},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := post(t, tester, tt.method, mainSite+"/loginV2", tt.headers, tt.body)
			checkRequestID(t, r)
			noSecrets(t, r)
			if r.status != tt.status {
				t.Fatalf("status %d, want %d: %s", r.status, tt.status, r.body)
			}
			if code, _ := loginError(t, r); code != tt.code {
				t.Errorf("code %d, want %d", code, tt.code)
			}
			if tt.status == 405 && r.header.Get("Allow") != "POST" {
				t.Errorf("Allow %q", r.header.Get("Allow"))
			}
		})
	}
	t.Run("success", func(t *testing.T) {
		for _, uid := range []string{"customer-42", "A_z-0", "demo-user"} {
			body := loginOK(t, tester, mainSite, "alpha", alphaSecret, uid)
			if body.UID != uid {
				t.Errorf("uid %q", body.UID)
			}
		}
	})
}

func TestLoginV2Refresh(t *testing.T) {
	t.Parallel()
	tester := start(t)
	first := loginOK(t, tester, mainSite, "alpha", alphaSecret, "refresher")
	refresh := func(site, tok string) response {
		t.Helper()
		r := post(t, tester, http.MethodPost, site+"/loginV2/refresh", bearer(tok), nil)
		checkRequestID(t, r)
		noSecrets(t, r)
		return r
	}

	t.Run("current token", func(t *testing.T) {
		before := time.Now().Unix()
		r := refresh(mainSite, first.AccessToken)
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		checkTokenBody(t, r, "alpha", "refresher", before)
		var body tokenBody
		_ = json.Unmarshal(r.body, &body)
		if body.RefreshUntil != first.RefreshUntil {
			t.Errorf("refresh_until moved from %d to %d", first.RefreshUntil, body.RefreshUntil)
		}
	})
	t.Run("expired token inside the refresh window", func(t *testing.T) {
		expired := forgeToken(t, signingKey, "alpha", "refresher", -3600, 3600)
		r := refresh(mainSite, expired)
		if r.status != 200 {
			t.Fatalf("%d %s", r.status, r.body)
		}
	})
	t.Run("after refresh_until: 5101", func(t *testing.T) {
		stale := forgeToken(t, signingKey, "alpha", "refresher", -13*3600, -3600)
		r := refresh(mainSite, stale)
		if r.status != 401 {
			t.Fatalf("%d %s", r.status, r.body)
		}
		if code, message := loginError(t, r); code != 5101 || message != "expired token cannot be refreshed" {
			t.Errorf("code %d %q", code, message)
		}
	})
	t.Run("token of a disabled app", func(t *testing.T) {
		tok := forgeToken(t, signingKey, "disabled-app", "u", 60, 3600)
		if r := refresh(mainSite, tok); r.status != 403 {
			t.Errorf("%d %s", r.status, r.body)
		} else if code, _ := loginError(t, r); code != 5003 {
			t.Errorf("code %d", code)
		}
	})
	t.Run("invalid tokens", func(t *testing.T) {
		for name, headers := range map[string]map[string]string{
			"none":      nil,
			"API token": bearer(apiToken),
			"garbage":   bearer("a.b.c"),
			"other key": bearer(forgeToken(t, otherKey, "alpha", "u", 60, 3600)),
		} {
			r := post(t, tester, http.MethodPost, mainSite+"/loginV2/refresh", headers, nil)
			if r.status != 401 {
				t.Errorf("%s: %d %s", name, r.status, r.body)
				continue
			}
			if code, _ := loginError(t, r); code != 401 {
				t.Errorf("%s: code %d", name, code)
			}
		}
	})
}

// Two sites with the same signing_key accept each other's tokens (as
// replicas would); a site with another key does not.
func TestLoginV2Replicas(t *testing.T) {
	t.Parallel()
	tester := start(t)
	tok := loginOK(t, tester, mainSite, "editor-app", editorSecret, "roaming").AccessToken
	if r := post(t, tester, http.MethodPost, replicaSite+"/loginV2/refresh", bearer(tok), nil); r.status != 200 {
		t.Errorf("refresh on the replica: %d %s", r.status, r.body)
	}
	body := designtest.OwnFile(t, smallDesign)
	if r := post(t, tester, http.MethodPost, replicaSite+"/v1/message/html", bearer(tok), body); r.status != 200 {
		t.Errorf("export with the editor token on the replica: %d %.200s", r.status, r.body)
	}
	r := post(t, tester, http.MethodPost, otherKeySite+"/loginV2/refresh", bearer(tok), nil)
	if r.status != 401 {
		t.Errorf("refresh on a site with another key: %d %s", r.status, r.body)
	}
	r = post(t, tester, http.MethodPost, otherKeySite+"/v1/message/html", bearer(tok), body)
	if code, _, _ := exportError(t, r); r.status != 403 || code != 4003 {
		t.Errorf("export on a site with another key: %d %d", r.status, code)
	}
	if strings.Contains(string(r.body), tok) {
		t.Error("the token is echoed")
	}
}

// TestLoginV2SecretRotation: editor tokens are bound to the secret they
// were obtained with. Once an application's secret is replaced (as after
// a leak), the tokens minted with the old one are neither refreshed nor
// accepted by the export endpoints, as the old secret itself is not;
// tokens minted with the new secret are.
func TestLoginV2SecretRotation(t *testing.T) {
	tester := start(t)
	old := loginOK(t, tester, mainSite, "editor-app", editorSecret, "before").AccessToken
	const rotated = "it-secret-editor-rotated-0123"
	tester.InitServer(strings.ReplaceAll(config, editorSecret, rotated), "caddyfile")
	defer tester.InitServer(config, "caddyfile")
	body := designtest.OwnFile(t, smallDesign)
	r := post(t, tester, http.MethodPost, mainSite+"/loginV2/refresh", bearer(old), nil)
	if r.status != 401 {
		t.Errorf("refresh of a token of the old secret: %d %.200s", r.status, r.body)
	} else if code, _ := loginError(t, r); code != 401 {
		t.Errorf("refresh of a token of the old secret: code %d", code)
	}
	r = post(t, tester, http.MethodPost, mainSite+"/v1/message/html", bearer(old), body)
	if r.status != 403 {
		t.Errorf("export with a token of the old secret: %d %.200s", r.status, r.body)
	} else if code, _, _ := exportError(t, r); code != 4003 {
		t.Errorf("export with a token of the old secret: code %d", code)
	}
	fresh := loginOK(t, tester, mainSite, "editor-app", rotated, "after").AccessToken
	if r := post(t, tester, http.MethodPost, mainSite+"/loginV2/refresh", bearer(fresh), nil); r.status != 200 {
		t.Errorf("refresh of a token of the new secret: %d %s", r.status, r.body)
	}
	if r := post(t, tester, http.MethodPost, mainSite+"/v1/message/html", bearer(fresh), body); r.status != 200 {
		t.Errorf("export with a token of the new secret: %d %.200s", r.status, r.body)
	}
}
