package bridge

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestAgainstLocalContentService runs the whole chain in one Caddy: the
// browser-facing site with design_bridge, and the repository's own
// content_service as the upstream on a second port, so that the two sides
// of the export and LoginV2 contracts are checked against each other.
func TestAgainstLocalContentService(t *testing.T) {
	csSite, cs := contentServiceSite(9102)
	cfg := site(fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken {env.DB_TEST_TOKEN}\n\t\tclient_id {env.DB_TEST_CLIENT_ID}\n\t\tclient_secret {env.DB_TEST_CLIENT_SECRET}\n\t\tauth_url %s/loginV2\n\t\tunwrap_html\n\t\tuid e2e-user\n",
		cs, cs)) + csSite
	tc := load(t, cfg)
	design := testDesign(t)

	raw := post(t, tc, "/v1/message/html", design, map[string]string{"Content-Type": "application/json"})
	if raw.Status != 200 || !strings.HasPrefix(raw.Header.Get("Content-Type"), "text/html") || !bytes.HasPrefix(bytes.TrimSpace(raw.Body), []byte("<!DOCTYPE html>")) {
		t.Fatalf("raw export: %d %q %.200s", raw.Status, raw.Header.Get("Content-Type"), raw.Body)
	}
	// Asking for the JSON wrapper: unwrap_html turns it back into the same HTML.
	wrapped := post(t, tc, "/v1/message/html", design, map[string]string{"Accept": "application/json"})
	if wrapped.Status != 200 || wrapped.Header.Get("Content-Type") != "text/html; charset=utf-8" || !bytes.Equal(wrapped.Body, raw.Body) {
		t.Errorf("unwrapped export differs from raw: %d %q (%d vs %d bytes)", wrapped.Status, wrapped.Header.Get("Content-Type"), len(wrapped.Body), len(raw.Body))
	}
	text := post(t, tc, "/v1/message/plain-text", design, nil)
	if text.Status != 200 || !strings.HasPrefix(text.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("plain-text export: %d %q", text.Status, text.Header.Get("Content-Type"))
	}
	bad := post(t, tc, "/v1/message/html", []byte(`{"not":"a design"}`), nil)
	if bad.Status != 400 {
		t.Errorf("invalid design: %d %s", bad.Status, bad.Body)
	}

	login := post(t, tc, "/proxy/bee-auth", []byte(`{"uid":"e2e-user"}`), map[string]string{"Content-Type": "application/json"})
	var tok struct {
		AccessToken string `json:"access_token"`
		UID         string `json:"uid"`
		V2          bool   `json:"v2"`
	}
	if login.Status != 200 || json.Unmarshal(login.Body, &tok) != nil || tok.AccessToken == "" || tok.UID != "e2e-user" || !tok.V2 {
		t.Errorf("LoginV2: %d %s", login.Status, login.Body)
	}
	for _, s := range allSecrets {
		for _, r := range []response{raw, wrapped, text, bad, login} {
			if bytes.Contains(r.Body, []byte(s)) {
				t.Errorf("response contains secret %q", s)
			}
		}
	}

	// A token the content service does not know: its 403 is passed through.
	wrong := site(fmt.Sprintf("\t\tcontent_service %s\n\t\ttoken wrong-token-123456\n", cs)) + csSite
	tc = load(t, wrong)
	res := post(t, tc, "/v1/message/html", design, nil)
	if res.Status != 403 {
		t.Errorf("unknown token: %d %s", res.Status, res.Body)
	}
	assertErrorBody(t, res, 4003)
}
