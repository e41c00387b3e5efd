package bridge

// Tests of auth_rate_limit, on by default.

import (
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// clientFrom returns a client whose connections come from the loopback
// address ip, a distinct client address for the server.
func clientFrom(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 10 * time.Second}
}

func TestAuthRateLimit(t *testing.T) {
	up := loginUpstream(t)
	load(t, site(authBlock(up, "auth_rate_limit 3 per 1m")))
	login := func(c *http.Client) response {
		req, _ := http.NewRequest(http.MethodPost, siteURL+"/proxy/bee-auth", strings.NewReader(`{"uid":"u1"}`))
		req.Header.Set("Content-Type", "application/json")
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		return response{res.StatusCode, res.Header, body}
	}
	a, b := clientFrom("127.0.0.1"), clientFrom("127.0.0.2")
	for i := 0; i < 3; i++ {
		if res := login(a); res.Status != 200 {
			t.Fatalf("login %d: %d %s", i+1, res.Status, res.Body)
		}
	}
	res := login(a)
	if res.Status != 429 || res.Header.Get("Retry-After") != "20" {
		t.Fatalf("4th login: %d Retry-After %q, want 429 after 20 s", res.Status, res.Header.Get("Retry-After"))
	}
	assertErrorBody(t, res, 4290)
	if res := login(b); res.Status != 200 {
		t.Fatalf("another address was limited: %d %s", res.Status, res.Body)
	}
	if n := len(up.requests()); n != 4 {
		t.Errorf("upstream got %d logins, want 4", n)
	}
	// Exports are not limited by it.
	for i := 0; i < 5; i++ {
		req, _ := http.NewRequest(http.MethodPost, siteURL+"/v1/message/html", strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		res, err := a.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode == 429 {
			t.Fatal("export limited by auth_rate_limit")
		}
	}
}

// loginFrom posts a login through c with extra headers.
func loginFrom(t *testing.T, c *http.Client, header map[string]string) response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, siteURL+"/proxy/bee-auth", strings.NewReader(`{}`))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	return response{res.StatusCode, res.Header, body}
}

// TestAuthRateLimitByDefault: without auth_rate_limit, logins are limited
// to 30 per minute per address; "off" lifts it; a reload that keeps the
// limit keeps the counts; an IPv6 client is one /64, and the /64s of one
// /48 share 8 times the budget.
func TestAuthRateLimitByDefault(t *testing.T) {
	up := loginUpstream(t)
	logins := func(t *testing.T, c *http.Client, n int, header map[string]string) {
		t.Helper()
		for i := range n {
			if res := loginFrom(t, c, header); res.Status != 200 {
				t.Fatalf("login %d: %d %s", i+1, res.Status, res.Body)
			}
		}
	}
	t.Run("default", func(t *testing.T) {
		load(t, site(authBlock(up)))
		c := clientFrom("127.0.0.4")
		logins(t, c, 30, nil)
		if res := loginFrom(t, c, nil); res.Status != 429 || res.Header.Get("Retry-After") != "2" {
			t.Errorf("31st login: %d Retry-After %q, want 429 after 2 s", res.Status, res.Header.Get("Retry-After"))
		}
	})
	t.Run("off", func(t *testing.T) {
		load(t, site(authBlock(up, "auth_rate_limit off")))
		logins(t, clientFrom("127.0.0.5"), 35, nil)
	})
	t.Run("reload keeps the counts", func(t *testing.T) {
		load(t, site(authBlock(up, "auth_rate_limit 3 per 1m")))
		c := clientFrom("127.0.0.6")
		logins(t, c, 3, nil)
		// Another config (timeout changed) with the same limit.
		load(t, site(authBlock(up, "auth_rate_limit 3 per 1m", "timeout 29s")))
		if res := loginFrom(t, c, nil); res.Status != 429 {
			t.Errorf("after the reload: %d %s, want 429", res.Status, res.Body)
		}
	})
	t.Run("IPv6 by /64", func(t *testing.T) {
		cfg := strings.Replace(site(authBlock(up, "auth_rate_limit 3 per 1m")), "\t\tlog_credentials",
			"\t\tlog_credentials\n\t\ttrusted_proxies static 127.0.0.0/8\n\t\tclient_ip_headers X-Forwarded-For", 1)
		load(t, cfg)
		c := clientFrom("127.0.0.7")
		for i := range 3 {
			logins(t, c, 1, map[string]string{"X-Forwarded-For": fmt.Sprintf("2001:db8:1:2::%x", i+1)})
		}
		if res := loginFrom(t, c, map[string]string{"X-Forwarded-For": "2001:db8:1:2:ffff::9"}); res.Status != 429 {
			t.Errorf("same /64: %d, want 429", res.Status)
		}
		logins(t, c, 1, map[string]string{"X-Forwarded-For": "2001:db8:1:3::1"})
	})
	t.Run("IPv6 by /48", func(t *testing.T) {
		cfg := strings.Replace(site(authBlock(up, "auth_rate_limit 3 per 1m")), "\t\tlog_credentials",
			"\t\tlog_credentials\n\t\ttrusted_proxies static 127.0.0.0/8\n\t\tclient_ip_headers X-Forwarded-For", 1)
		load(t, cfg)
		c := clientFrom("127.0.0.8")
		// A /48 no other run has used: the counts outlive the test.
		network := 0x100 + rand.IntN(0xfe00)
		from := func(subnet, host int) map[string]string {
			return map[string]string{"X-Forwarded-For": fmt.Sprintf("2001:db8:%x:%x::%x", network, subnet, host)}
		}
		// 24 logins (3 times 8), each from another /64 of the /48, then a
		// 25th from yet another one: a client with a /48 (or a /56) does
		// not get a budget per /64.
		for i := range 24 {
			logins(t, c, 1, from(i, 1))
		}
		res := loginFrom(t, c, from(0xffff, 1))
		if res.Status != 429 || res.Header.Get("Retry-After") != "3" {
			t.Errorf("a fresh /64 of the /48 after 24 logins: %d Retry-After %q, want 429 after 3 s", res.Status, res.Header.Get("Retry-After"))
		}
		// The next /48 is another client.
		logins(t, c, 1, map[string]string{"X-Forwarded-For": fmt.Sprintf("2001:db8:%x::1", network+1)})
	})
}
