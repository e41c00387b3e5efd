package content

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestLoginFailureLimit: after login_failure_limit failed logins from one
// address, that address gets 429 with Retry-After, even with the right
// secret; another address still logs in. Without trusted_proxies, the
// address is the connection's: headers that name another client
// (X-Forwarded-For, X-Real-IP, Forwarded), new on every try, change
// nothing.
func TestLoginFailureLimit(t *testing.T) {
	t.Parallel()
	start(t)
	tries := 0
	login := func(from, secret string) response {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		client := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 10 * time.Second}
		defer client.CloseIdleConnections()
		body := []byte(`{"client_id":"alpha","client_secret":"` + secret + `","uid":"u1"}`)
		req, _ := http.NewRequest(http.MethodPost, failureSite+"/loginV2", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		tries++
		other := fmt.Sprintf("203.0.113.%d", tries)
		req.Header.Set("X-Forwarded-For", other)
		req.Header.Set("X-Real-IP", other)
		req.Header.Set("Forwarded", "for="+other)
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		data, _ := io.ReadAll(res.Body)
		return response{status: res.StatusCode, header: res.Header, body: data}
	}
	for i := 0; i < 3; i++ {
		if r := login("127.0.0.3", "wrong"); r.status != 401 {
			t.Fatalf("failure %d: %d %s", i+1, r.status, r.body)
		}
	}
	r := login("127.0.0.3", alphaSecret)
	if r.status != 429 || r.header.Get("Retry-After") != "20" {
		t.Fatalf("after 3 failures: %d Retry-After %q %s, want 429 after 20 s", r.status, r.header.Get("Retry-After"), r.body)
	}
	if code, _ := loginError(t, r); code != 429 {
		t.Errorf("code %d", code)
	}
	if r := login("127.0.0.4", alphaSecret); r.status != 200 {
		t.Fatalf("another address: %d %s", r.status, r.body)
	}
}

// TestLoginFailureLimitSurvivesReload: a config reload keeps the failed
// logins counted so far, so that an address past its limit is not given
// a new budget by the next reload.
func TestLoginFailureLimitSurvivesReload(t *testing.T) {
	start(t)
	login := func(secret string) int {
		t.Helper()
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.24")}}
		client := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 10 * time.Second}
		defer client.CloseIdleConnections()
		body := []byte(`{"client_id":"alpha","client_secret":"` + secret + `","uid":"u1"}`)
		req, _ := http.NewRequest(http.MethodPost, failureSite+"/loginV2", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		_, _ = io.ReadAll(res.Body)
		return res.StatusCode
	}
	for i := 0; i < 3; i++ {
		if got := login("wrong"); got != 401 {
			t.Fatalf("failure %d: %d", i+1, got)
		}
	}
	if status, answer, err := load(config, true); err != nil || status != 200 {
		t.Fatalf("reload: %d %s %v", status, answer, err)
	}
	if got := login(alphaSecret); got != 429 {
		t.Fatalf("after 3 failures and a reload: %d, want 429", got)
	}
}
