package fsp

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// writtenBytes is the bytes this process (Caddy runs in it) has passed to
// write calls so far.
func writtenBytes(t *testing.T) int64 {
	t.Helper()
	raw, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skip("no /proc/self/io: written bytes cannot be counted here")
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no wchar in /proc/self/io")
	return 0
}

// TestProviderKeepWritesOnce: a keep upload whose name and its next 29
// numbered names are taken writes its bytes once, not once per name tried
// (locally: the bytes this process writes; on S3: the PUT bodies that
// reach the server, counted by a proxy in front of it).
func TestProviderKeepWritesOnce(t *testing.T) {
	t.Setenv("FSP_TEST_S3_ACCESS", s3Access)
	t.Setenv("FSP_TEST_S3_SECRET", s3Secret)
	data := noisePNG(600 << 10) // bench_test.go: about 600 KiB
	const taken = 30
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) {
			b := bk.make(t)
			storage, proxy := b.storage, (*faultProxy)(nil)
			if bk.name == "s3" {
				storage, proxy = behindFaultProxy(t, b, "")
			}
			load(t, fmt.Sprintf(`:%d {
	handle_path /fsp/* {
		fsp {
			%s
			public_url http://localhost/files
			allow_anonymous
			max_size 2MiB
		}
	}
}
`, privatePort, storage))
			if res := send(t, privatePort, call{method: "POST", target: "/k/", auth: "-"}); res.Status != 200 {
				t.Fatalf("mkdir: %d %s", res.Status, res.Body)
			}
			for n := range taken {
				name := "big.png"
				if n > 0 {
					name = fmt.Sprintf("big_%d.png", n)
				}
				b.write(t, "c1/u1/k/"+name, []byte("taken"))
			}
			var before int64
			if proxy != nil {
				proxy.mu.Lock()
				before = proxy.putBytes
				proxy.mu.Unlock()
			} else {
				before = writtenBytes(t)
			}
			c := withStrategy(direct("/k/big.png", string(data)), "keep")
			c.auth = "-"
			res := send(t, privatePort, c)
			var written int64
			if proxy != nil {
				proxy.mu.Lock()
				written = proxy.putBytes - before
				proxy.mu.Unlock()
			} else {
				written = writtenBytes(t) - before
			}
			var ok struct {
				Data dataJSON `json:"data"`
			}
			if res.Status != 200 || json.Unmarshal(res.Body, &ok) != nil || ok.Data.Meta.Path != fmt.Sprintf("/k/big_%d.png", taken) {
				t.Fatalf("keep upload: %d %s", res.Status, res.Body)
			}
			t.Logf("a %d-byte keep upload past %d taken names wrote %d bytes", len(data), taken, written)
			// Once for the file, plus its thumbnail; locally the test's
			// own sending of the request is counted too (same process).
			limit := 2 * int64(len(data))
			if proxy == nil {
				limit = 3 * int64(len(data))
			}
			if written > limit {
				t.Errorf("a %d-byte keep upload past %d taken names wrote %d bytes (%.1f times its size)", len(data), taken, written, float64(written)/float64(len(data)))
			}
		})
	}
}
