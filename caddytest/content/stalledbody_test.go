package content

import (
	"fmt"
	"net"
	"net/url"
	"runtime"
	"testing"
	"time"
)

// TestStalledBodiesHoldLittle: clients that announce a body just under
// max_body (4 MiB by default) and send only its first bytes make the
// service hold what arrived, not what was announced. The buffer was sized
// from Content-Length before the body came: 32 such connections held
// 128 MiB of Caddy's heap until the server's read timeout.
func TestStalledBodiesHoldLittle(t *testing.T) {
	start(t)
	const conns = 32
	const announced = 4<<20 - 1
	for _, path := range []string{"/v1/message/html", "/v1/message/image"} {
		t.Run(path, func(t *testing.T) {
			u, err := url.Parse(renderSite)
			if err != nil {
				t.Fatal(err)
			}
			before := heapInUse()
			var open []net.Conn
			defer func() {
				for _, c := range open {
					c.Close()
				}
			}()
			for range conns {
				c, err := net.Dial("tcp", u.Host)
				if err != nil {
					t.Fatal(err)
				}
				open = append(open, c)
				fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"page\":",
					path, u.Host, apiToken, announced)
			}
			// The handlers have read the headers and the first bytes, and
			// wait for the rest.
			time.Sleep(time.Second)
			grown := heapInUse() - before
			t.Logf("%d connections announcing %d bytes: heap +%d KiB", conns, announced, grown>>10)
			if grown > conns*128<<10 {
				t.Errorf("heap grew by %d MiB for %d connections that sent 8 bytes each; want at most 128 KiB each", grown>>20, conns)
			}
		})
	}
}

// heapInUse is the Go heap of the process (Caddy runs in the test's) after
// a collection.
func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}
