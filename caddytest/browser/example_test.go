package browser

import (
	"encoding/json"
	"io"
	"math/rand/v2"
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
	// An address of its own, new on every run, so that neither the page
	// tests' logins nor an earlier run's (the limit outlives reloads)
	// count: all of 127.0.0.0/8 is loopback.
	local := net.IPv4(127, 42, byte(rand.IntN(256)), byte(1+rand.IntN(254)))
	dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: local}}
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
