package fsp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"
)

// drip sends a multipart upload of a large declared size as uid, one
// byte every 200 ms (none at all with stall), and returns the answer once
// Caddy gives one (or an error if none comes within limit).
func drip(port int, uid, target string, stall bool, limit time.Duration) (int, fspBody, error) {
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", livePort(port)), 5*time.Second)
	if err != nil {
		return 0, fspBody{}, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(limit))
	head := "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\n"
	fmt.Fprintf(conn, "POST /fsp%s HTTP/1.1\r\nHost: localhost\r\nX-BEE-ClientId: c1\r\nX-BEE-Uid: %s\r\n"+
		"Content-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: %d\r\n\r\n%s", target, uid, len(head)+100000, head)
	answered := make(chan struct{})
	go func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-answered:
				return
			case <-t.C:
				if stall {
					continue
				}
				if _, err := conn.Write([]byte("a")); err != nil {
					return
				}
			}
		}
	}()
	defer close(answered)
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, fspBody{}, err
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var b fspBody
	_ = json.Unmarshal(raw, &b)
	return res.StatusCode, b, nil
}

// TestProviderUploadSlotsFair: four uploads that drip a byte every 200 ms
// from one user hold at most their user's share of the slots (max_uploads
// 2: one), so another user's 3-byte upload is answered before any of the
// drips; and each drip is cut, 3450, once it falls below the minimum rate.
func TestProviderUploadSlotsFair(t *testing.T) {
	anonymousSite(t, "local "+t.TempDir(), "max_uploads 2")
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, body, err := drip(privatePort, "dripper", fmt.Sprintf("/drip%d.txt", i), false, 30*time.Second)
			mu.Lock()
			order = append(order, "drip")
			mu.Unlock()
			if err != nil || status != 422 || body.Code != 3450 || body.Details != "The file could not be uploaded: the upload arrived too slowly" {
				t.Errorf("drip %d: %d %+v %v; want 3450, arrived too slowly", i, status, body, err)
			}
		}()
	}
	time.Sleep(time.Second) // the drips are all waiting or holding a slot
	res := send(t, privatePort, call{method: "POST", target: "/v.txt", uid: "victim", auth: "-", headers: []string{"Content-Type: multipart/form-data; boundary=XyZ"},
		body: "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"v.txt\"\r\n\r\nhi\n\r\n--XyZ--\r\n"})
	mu.Lock()
	order = append(order, "victim")
	mu.Unlock()
	if res.Status != 200 {
		t.Errorf("the other user's upload: %d %s", res.Status, res.Body)
	}
	wg.Wait()
	if order[0] != "victim" {
		t.Errorf("answers in the order %v: the other user waited for the drips", order)
	}
}

// TestProviderStalledUploadCut: a direct upload whose body stops arriving
// altogether is cut once the minimum rate is missed (its read is
// interrupted, not left waiting for bytes that never come).
func TestProviderStalledUploadCut(t *testing.T) {
	anonymousSite(t, "local "+t.TempDir())
	status, body, err := drip(privatePort, "u1", "/stalled.txt", true, 20*time.Second)
	if err != nil || status != 422 || body.Code != 3450 || body.Details != "The file could not be uploaded: the upload arrived too slowly" {
		t.Errorf("stalled upload: %d %+v %v; want 3450, arrived too slowly", status, body, err)
	}
}
