package browser

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestExampleLogin: Caddyfile.example, as it stands, mints editor tokens
// for its one development user whatever uid a caller names, and throttles
// logins per address.
func TestExampleLogin(t *testing.T) {
	setEnv(t, readEnvExample(t), "")
	tester := newTester(t)
	loadConfig(t, tester, exampleConfig(t, nil))
	// An address of its own, so that the page tests' logins do not count.
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.9")}}
	client := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}, Timeout: 10 * time.Second}
	login := func() (int, []byte) {
		req, _ := http.NewRequest(http.MethodPost, siteURL+"/proxy/bee-auth", strings.NewReader(`{"uid":"victim-user"}`))
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return res.StatusCode, body
	}
	status, body := login()
	var tok struct {
		UID string `json:"uid"`
	}
	if status != 200 || json.Unmarshal(body, &tok) != nil || tok.UID != "demo-user" {
		t.Fatalf("login naming victim-user: %d %s; want a token for demo-user", status, body)
	}
	for i := 2; i <= 30; i++ {
		if status, body := login(); status != 200 {
			t.Fatalf("login %d: %d %s", i, status, body)
		}
	}
	if status, body := login(); status != 429 {
		t.Errorf("login 31 within the minute: %d %s; want 429", status, body)
	}
}
