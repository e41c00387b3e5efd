package fsp

import (
	"fmt"
	"testing"
	"time"
)

// TestProviderS3AnswersBounded: an S3 server that stalls in the middle of
// an answer, cuts one short or pages a listing without end costs a
// request at most a few of the s3 timeouts, never the client's patience
// (nor, after a file is in place, for ever), and a listing reads a
// bounded number of pages of a bounded size.
func TestProviderS3AnswersBounded(t *testing.T) {
	t.Setenv("FSP_TEST_S3_ACCESS", s3Access)
	t.Setenv("FSP_TEST_S3_SECRET", s3Secret)
	src := newSources(t)
	img := string(src.png)
	b := s3Backend(t)
	storage, proxy := behindFaultProxy(t, b, "timeout 1s")
	load(t, fspSite(privatePort, storage, "allow_anonymous")+fspSite(faultSetupPort, b.storage, "allow_anonymous"))
	setup := []call{{method: "POST", target: "/a/"}, {method: "POST", target: "/b/"}, direct("/a/x.png", img)}
	rows := []struct {
		name           string
		op             call
		kind           faultKind
		method, suffix string
		wantCode       int // 0: success
		maxHits        int // 0: any
	}{
		// The file is in place: its thumbnail's write no longer depends
		// on the client waiting.
		{name: "upload, thumbnail write's answer stalls", op: direct("/a/p.png", img), kind: faultStall, method: "PUT", suffix: "/a/.thumb.p.png.png"},
		// Nor on a server that keeps each read just inside the timeout.
		{name: "upload, thumbnail write's answer drips", op: direct("/a/p.png", img), kind: faultDrip, method: "PUT", suffix: "/a/.thumb.p.png.png"},
		{name: "move, thumbnail's copy drips", op: call{method: "PATCH", target: "/a/x.png", body: moveBody("/b/", "replace")}, kind: faultDrip, method: "PUT", suffix: "/b/.thumb.x.png.png"},
		{name: "move, source delete drips", op: call{method: "PATCH", target: "/a/x.png", body: moveBody("/b/", "replace")}, kind: faultDrip, method: "DELETE", suffix: "/a/x.png"},
		{name: "delete, thumbnail delete drips", op: call{method: "DELETE", target: "/a/x.png"}, kind: faultDrip, method: "DELETE", suffix: "/a/.thumb.x.png.png"},
		{name: "list, listing stalls", op: call{method: "GET", target: "/a/"}, kind: faultStall, method: "GET", suffix: "/", wantCode: 3100},
		{name: "list, listing cut short", op: call{method: "GET", target: "/a/"}, kind: faultCut, method: "GET", suffix: "/", wantCode: 3100},
		{name: "list, listing page of 20 MB", op: call{method: "GET", target: "/a/"}, kind: faultHuge, method: "GET", suffix: "/", wantCode: 3100},
		{name: "list, listing without end", op: call{method: "GET", target: "/a/"}, kind: faultEndless, method: "GET", suffix: "/", wantCode: 3100, maxHits: 110},
	}
	for i, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			uid := fmt.Sprintf("s%d", i)
			for _, c := range setup {
				c.uid, c.auth = uid, "-"
				if res := send(t, faultSetupPort, c); res.Status != 200 {
					t.Fatalf("setup %s %s: %d %s", c.method, c.target, res.Status, res.Body)
				}
			}
			op := row.op
			op.uid, op.auth = uid, "-"
			proxy.inject(row.method, row.suffix, row.kind, false)
			start := time.Now()
			res := send(t, privatePort, op)
			took := time.Since(start)
			hits, _ := proxy.inject("", "", "", false)
			if hits == 0 {
				t.Fatalf("the fault hit no request (%s …%s)", row.method, row.suffix)
			}
			if got := decodeFSP(res.Body).Code; (row.wantCode == 0 && res.Status != 200) || (row.wantCode != 0 && got != row.wantCode) {
				t.Errorf("answer %d %.300s, want %d", res.Status, res.Body, row.wantCode)
			}
			// Five tries of 1 s each and minio-go's backoff: well under 15 s.
			if took > 15*time.Second {
				t.Errorf("the answer took %v", took)
			}
			if row.maxHits > 0 && hits > row.maxHits {
				t.Errorf("the listing read %d pages, want at most %d", hits, row.maxHits)
			}
		})
	}
}
