package content

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// TestLoginFailureLimitConcurrent: logins sent at once from one address
// get no more answers than login_failure_limit allows. Each request's
// headers arrive, and its handler starts, before any body has been sent,
// so that every check of the limit happens before any failure is
// counted; then the bodies, all with a wrong secret, go at once. Only
// the limit's 3 may be answered 401 (a guess told wrong); the others get
// 429 and learn nothing of their secret.
func TestLoginFailureLimitConcurrent(t *testing.T) {
	t.Parallel()
	start(t)
	u, err := url.Parse(failureSite)
	if err != nil {
		t.Fatal(err)
	}
	const n = 12
	body := `{"client_id":"alpha","client_secret":"wrong","uid":"u1"}`
	conns := make([]net.Conn, n)
	for i := range conns {
		d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.0.23")}, Timeout: 5 * time.Second}
		c, err := d.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(20 * time.Second))
		// The headers and the body's first byte: the handler runs and
		// waits for the rest.
		if _, err := fmt.Fprintf(c, "POST /loginV2 HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			u.Host, len(body), body[:1]); err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	time.Sleep(time.Second)
	for _, c := range conns {
		if _, err := c.Write([]byte(body[1:])); err != nil {
			t.Fatal(err)
		}
	}
	statuses := map[int]int{}
	for _, c := range conns {
		res, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		statuses[res.StatusCode]++
	}
	if statuses[401] > 3 || statuses[401]+statuses[429] != n {
		t.Fatalf("answers by status %v: want at most 3 of 401, the rest 429", statuses)
	}
}
