package bridge

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestUnreadAnswersGiveBackMemory: a client that never reads its answer
// holds that answer, and its room in answer_memory, only until Caddy's
// write_idle timeout cuts it off (the server's default is a minute; 2s
// here). Two such clients with 24 MiB answers leave too little of
// answer_memory 64MiB for a third answer (503, code 5030); once they are
// cut off, that answer goes through, and their connections end without
// the rest of the answer. The bridge relies on that timeout: with it
// turned off ("write_idle -1s") the memory stays held for as long as the
// connections last, and this test fails.
func TestUnreadAnswersGiveBackMemory(t *testing.T) {
	const size = 24 << 20
	answered := make(chan string, 8)
	page := bytes.Repeat([]byte("<p>answer</p>"), size/13+1)[:size]
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request, body []byte) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", strconv.Itoa(size))
		w.Write(page)
		answered <- caseOf(body)
	})
	cfg := site(bridgeBlock(up, "answer_memory 64MiB", "max_body 32MiB"))
	cfg = strings.Replace(cfg, "\tservers {\n\t\tlog_credentials\n", "\tservers {\n\t\tlog_credentials\n\t\ttimeouts {\n\t\t\twrite_idle 2s\n\t\t}\n", 1)
	tc := load(t, cfg)

	// Two clients send an export each and read nothing.
	var stuck []net.Conn
	for i := range 2 {
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", httpPort))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		body := caseBody(fmt.Sprint("unread ", i))
		fmt.Fprintf(conn, "POST /v1/message/html HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
		stuck = append(stuck, conn)
	}
	for range stuck {
		select {
		case <-answered:
		case <-time.After(20 * time.Second):
			t.Fatal("the upstream did not answer both unread exports")
		}
	}
	// Their answers are being written: room for no third one.
	res := post(t, tc, "/v1/message/html", caseBody("while held"), nil)
	if res.Status != http.StatusServiceUnavailable {
		t.Fatalf("an export while two unread answers are held: %d, want 503 (the test's setup holds no memory)", res.Status)
	}
	assertErrorBody(t, res, 5030)
	<-answered

	// Once the unread answers are cut off, their room is given back.
	deadline := time.Now().Add(30 * time.Second)
	for i := 0; ; i++ {
		res := post(t, tc, "/v1/message/html", caseBody(fmt.Sprint("after ", i)), nil)
		<-answered
		if res.Status == http.StatusOK && len(res.Body) == size {
			break
		}
		if res.Status != http.StatusServiceUnavailable {
			t.Fatalf("export %d: status %d, %d bytes", i, res.Status, len(res.Body))
		}
		if time.Now().After(deadline) {
			t.Fatal("answer_memory still taken by answers nobody reads, 30 s on")
		}
		time.Sleep(250 * time.Millisecond)
	}
	for i, conn := range stuck {
		conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		n, err := io.Copy(io.Discard, conn)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("unread export %d: its connection is still open (%d bytes read)", i, n)
		}
		if n >= size {
			t.Errorf("unread export %d: got %d bytes, the whole answer; want it cut off", i, n)
		}
	}
}
