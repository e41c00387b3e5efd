package content

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
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
	from := freshIP(127)
	login := func(from, secret string) response {
		tries++
		other := fmt.Sprintf("203.0.113.%d", tries)
		h := http.Header{"X-Forwarded-For": {other}, "X-Real-Ip": {other}, "Forwarded": {"for=" + other}}
		return postLogin(t, clientFrom(t, from), failureSite, secret, h)
	}
	for i := 0; i < 3; i++ {
		if r := login(from, "wrong"); r.status != 401 {
			t.Fatalf("failure %d: %d %s", i+1, r.status, r.body)
		}
	}
	r := login(from, alphaSecret)
	if r.status != 429 || r.header.Get("Retry-After") != "20" {
		t.Fatalf("after 3 failures: %d Retry-After %q %s, want 429 after 20 s", r.status, r.header.Get("Retry-After"), r.body)
	}
	if code, _ := loginError(t, r); code != 429 {
		t.Errorf("code %d", code)
	}
	if r := login(freshIP(127), alphaSecret); r.status != 200 {
		t.Fatalf("another address: %d %s", r.status, r.body)
	}
}

// TestLoginFailureLimitSurvivesReload: a config reload keeps the failed
// logins counted so far, so that an address past its limit is not given
// a new budget by the next reload.
func TestLoginFailureLimitSurvivesReload(t *testing.T) {
	start(t)
	client := clientFrom(t, freshIP(127))
	login := func(secret string) int {
		t.Helper()
		return postLogin(t, client, failureSite, secret, nil).status
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

// clientFrom is a client whose connections come from the loopback
// address from (the login limits count per address); its idle
// connections close with t.
func clientFrom(t *testing.T, from string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	client := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 10 * time.Second}
	t.Cleanup(client.CloseIdleConnections)
	return client
}

// postLogin posts app alpha's LoginV2 request with secret to site's
// /loginV2 as JSON, with header's values set over the request's own.
func postLogin(t *testing.T, client *http.Client, site, secret string, header http.Header) response {
	t.Helper()
	body := []byte(`{"client_id":"alpha","client_secret":"` + secret + `","uid":"u1"}`)
	req, _ := http.NewRequest(http.MethodPost, site+"/loginV2", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for name, values := range header {
		req.Header[name] = values
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	data, _ := io.ReadAll(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: data}
}

// freshIP is a random address in first.0.0.0/8 (never first.0.0.x): the
// login limits outlive reloads and tests, so a test that counts failures
// uses addresses no earlier run has used.
func freshIP(first byte) string {
	return net.IPv4(first, byte(1+rand.IntN(255)), byte(rand.IntN(256)), byte(1+rand.IntN(254))).String()
}
