package browser

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExampleLogin: Caddyfile.example, as it stands, mints editor tokens
// for its one development user whatever uid a caller names, and throttles
// logins per address.
func TestExampleLogin(t *testing.T) {
	loadExample(t, nil)
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

// TestExampleRebinding: a page of another site whose name the attacker
// points at this machine's address after it has loaded (DNS rebinding)
// calls the example's sites as its own origin: Sec-Fetch-Site says
// same-origin and the Origin is the Host. The example answers only under
// the names of this machine (localhost, 127.0.0.1, [::1]), so such a page
// gets neither an editor token nor an export spent with the host's
// credentials, on the host site or through the development site.
func TestExampleRebinding(t *testing.T) {
	loadExample(t, nil)
	// Each case from an address of its own: the login limit counts per
	// address and outlives reloads.
	client := func() *http.Client {
		local := net.IPv4(127, 43, byte(rand.IntN(256)), byte(1+rand.IntN(254)))
		dialer := &net.Dialer{LocalAddr: &net.TCPAddr{IP: local}}
		return &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}, Timeout: 10 * time.Second}
	}
	design, err := os.ReadFile(filepath.Join(repoRoot, "www", "designs", "welcome.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, host, path string
		body             string
		want             bool // a token or an export
	}{
		{"login, localhost", "localhost", "/proxy/bee-auth", "{}", true},
		{"login, 127.0.0.1", "127.0.0.1", "/proxy/bee-auth", "{}", true},
		{"login, rebound name", "rebind.attacker.test", "/proxy/bee-auth", "{}", false},
		{"export, rebound name", "rebind.attacker.test", "/v1/message/html", string(design), false},
		{"login, rebound IP name", "127.0.0.1.nip.io", "/proxy/bee-auth", "{}", false},
	} {
		for _, port := range []int{sitePort, devPort} {
			t.Run(fmt.Sprintf("%s:%d", tc.name, port), func(t *testing.T) {
				origin := fmt.Sprintf("http://%s:%d", tc.host, port)
				req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("http://127.0.0.1:%d%s", port, tc.path), strings.NewReader(tc.body))
				req.Host = fmt.Sprintf("%s:%d", tc.host, port)
				// What a browser sends with a page's same-origin fetch.
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Origin", origin)
				req.Header.Set("Sec-Fetch-Site", "same-origin")
				req.Header.Set("Sec-Fetch-Mode", "cors")
				res, err := client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer res.Body.Close()
				body, _ := io.ReadAll(res.Body)
				got := res.StatusCode == 200 && (strings.Contains(string(body), `"access_token"`) || strings.Contains(string(body), "<html"))
				if got != tc.want {
					t.Errorf("Host %s: %d %.200s; want a token or export: %v", req.Host, res.StatusCode, body, tc.want)
				}
			})
		}
	}
}
