package fsp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
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

// fspSite is a site on port that serves fsp from storage (a backend's
// storage lines) under /fsp/, with the given further directives.
func fspSite(port int, storage string, directives ...string) string {
	return fmt.Sprintf(`:%d {
	handle_path /fsp/* {
		fsp {
			%s
			public_url http://localhost/files
			%s
		}
	}
}
`, port, storage, strings.Join(directives, "\n\t\t\t"))
}

// anonymousSite serves fsp from storage under /fsp/ on privatePort, with
// no authentication in front and the given further directives.
func anonymousSite(t *testing.T, storage string, directives ...string) {
	t.Helper()
	load(t, fspSite(privatePort, storage, append([]string{"allow_anonymous"}, directives...)...))
}

// s3Site loads a site of fsp on a new S3 bucket reached through a fault
// proxy (which counts requests and answers), and returns both.
func s3Site(t *testing.T) (backend, *faultProxy) {
	t.Setenv("FSP_TEST_S3_ACCESS", s3Access)
	t.Setenv("FSP_TEST_S3_SECRET", s3Secret)
	b := s3Backend(t)
	storage, proxy := behindFaultProxy(t, b, "")
	anonymousSite(t, storage)
	return b, proxy
}

// TestProviderKeepProbesCheaply: a keep upload past names taken by files
// and folders learns which are taken from one listing of the folder, not
// from a HEAD request per name (and a listing per folder of that name,
// which read each folder of 300 files to count them).
func TestProviderKeepProbesCheaply(t *testing.T) {
	b, proxy := s3Site(t)
	// Names 0-4 are folders of 300 files, 5-39 files.
	const folders, files, taken = 5, 300, 40
	for n := range taken {
		name := "pic.png"
		if n > 0 {
			name = fmt.Sprintf("pic_%d.png", n)
		}
		if n >= folders {
			b.write(t, "c1/u1/k/"+name, []byte("x"))
			continue
		}
		for i := range files {
			b.write(t, fmt.Sprintf("c1/u1/k/%s/f%d.png", name, i), []byte("x"))
		}
	}
	proxy.mu.Lock()
	before, requestsBefore := proxy.answerBytes, proxy.requests
	proxy.mu.Unlock()
	c := withStrategy(direct("/k/pic.png", string(noisePNG(2<<10))), "keep")
	c.auth = "-"
	res := send(t, privatePort, c)
	proxy.mu.Lock()
	answered, requests := proxy.answerBytes-before, proxy.requests-requestsBefore
	proxy.mu.Unlock()
	var ok struct {
		Data dataJSON `json:"data"`
	}
	if res.Status != 200 || json.Unmarshal(res.Body, &ok) != nil || ok.Data.Meta.Path != fmt.Sprintf("/k/pic_%d.png", taken) {
		t.Fatalf("keep upload: %d %s", res.Status, res.Body)
	}
	t.Logf("a keep upload past %d taken names: %d S3 requests, %d bytes of answers", taken, requests, answered)
	// The folder's listing (40 names, under 10 KB), the write, the
	// thumbnail's, the folder's own checks: a few, not one per name.
	if requests > 10 {
		t.Errorf("a keep upload past %d taken names made %d S3 requests", taken, requests)
	}
	if answered > 64<<10 {
		t.Errorf("a keep upload past %d folders of %d files read %d bytes of S3 answers", folders, files, answered)
	}
}

// TestProviderKeepPastTheNumberedNames: with pic.png and pic_1.png to
// pic_999.png all taken, a keep upload still stores the file, under a
// name of the same form (pic_N.png, N of 1,000 or more), instead of
// answering 3400 with a free name left.
func TestProviderKeepPastTheNumberedNames(t *testing.T) {
	data := noisePNG(1 << 10)
	onEachBackend(t, func(t *testing.T, b backend) {
		anonymousSite(t, b.storage)
		if res := send(t, privatePort, call{method: "POST", target: "/k/", auth: "-"}); res.Status != 200 {
			t.Fatalf("mkdir: %d %s", res.Status, res.Body)
		}
		for n := range 1000 {
			name := "pic.png"
			if n > 0 {
				name = fmt.Sprintf("pic_%d.png", n)
			}
			b.write(t, "c1/u1/k/"+name, []byte("taken"))
		}
		c := withStrategy(direct("/k/pic.png", string(data)), "keep")
		c.auth = "-"
		res := send(t, privatePort, c)
		var ok struct {
			Data dataJSON `json:"data"`
		}
		if res.Status != 200 || json.Unmarshal(res.Body, &ok) != nil {
			t.Fatalf("keep upload: %d %s", res.Status, res.Body)
		}
		var n int
		if _, err := fmt.Sscanf(ok.Data.Meta.Name, "pic_%d.png", &n); err != nil || n < 1000 || ok.Data.Meta.Name != fmt.Sprintf("pic_%d.png", n) {
			t.Errorf("kept as %q, want pic_N.png with N >= 1000", ok.Data.Meta.Name)
		}
	})
}

// TestProviderKeepWritesOnce: a keep upload whose name and its next 29
// numbered names are taken writes its bytes once, not once per name tried
// (locally: the bytes this process writes; on S3: the PUT bodies that
// reach the server, counted by a proxy in front of it).
func TestProviderKeepWritesOnce(t *testing.T) {
	data := noisePNG(600 << 10) // bench_test.go: about 600 KiB
	const taken = 30
	onEachBackend(t, func(t *testing.T, b backend) {
		storage, proxy := b.storage, (*faultProxy)(nil)
		if b.name == "s3" {
			storage, proxy = behindFaultProxy(t, b, "")
		}
		anonymousSite(t, storage, "max_size 2MiB")
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

// TestProviderFolderCountAtTheBound: in its parent's listing a folder of
// exactly maxDirCount (1,000) files has the item-count 1,000, on S3 too
// (where its own marker is listed beside them), and a folder of one more
// has 0, the contract's "unknown": never a wrong number.
func TestProviderFolderCountAtTheBound(t *testing.T) {
	t.Setenv("FSP_TEST_S3_ACCESS", s3Access)
	t.Setenv("FSP_TEST_S3_SECRET", s3Secret)
	for _, b := range []backend{localBackend(t), s3Backend(t)} {
		t.Run(b.name, func(t *testing.T) {
			anonymousSite(t, b.storage)
			want := map[string]int{"full": 1000, "over": 0}
			for name, files := range map[string]int{"full": 1000, "over": 1001} {
				if res := send(t, privatePort, call{method: "POST", target: "/" + name + "/", auth: "-"}); res.Status != 200 {
					t.Fatalf("mkdir: %d %s", res.Status, res.Body)
				}
				for i := range files {
					b.write(t, fmt.Sprintf("c1/u1/%s/f%d.png", name, i), []byte("x"))
				}
			}
			res := send(t, privatePort, call{method: "GET", target: "/", auth: "-"})
			var ok struct {
				Data dataJSON `json:"data"`
			}
			if res.Status != 200 || json.Unmarshal(res.Body, &ok) != nil || len(ok.Data.Items) != 2 {
				t.Fatalf("listing: %d %.300s", res.Status, res.Body)
			}
			for _, it := range ok.Data.Items {
				if n := it.ItemCount; n == nil || *n != want[it.Name] {
					t.Errorf("%s: item-count %s, want %d", it.Name, count(n), want[it.Name])
				}
			}
		})
	}
}

// TestProviderKeepPastAListingBound: when the folder holds more names of
// the shared prefix than the listing reads (two pages), the names past
// the last one listed are checked one by one, so that a folder of a
// candidate's name is still seen: a keep upload never makes a file of a
// folder's name.
func TestProviderKeepPastAListingBound(t *testing.T) {
	b, _ := s3Site(t)
	b.write(t, "c1/u1/k/pic.png", []byte("x"))
	// 2,100 names between "pic.png" and "pic_1.png" in key order.
	for i := range 2100 {
		b.write(t, fmt.Sprintf("c1/u1/k/pic_0%04d.png", i), []byte("x"))
	}
	b.write(t, "c1/u1/k/pic_1.png/inside.png", []byte("x")) // a folder
	c := withStrategy(direct("/k/pic.png", string(noisePNG(2<<10))), "keep")
	c.auth = "-"
	res := send(t, privatePort, c)
	var ok struct {
		Data dataJSON `json:"data"`
	}
	if res.Status != 200 || json.Unmarshal(res.Body, &ok) != nil || ok.Data.Meta.Path != "/k/pic_2.png" {
		t.Fatalf("keep upload: %d %s, want /k/pic_2.png", res.Status, res.Body)
	}
}

// TestProviderS3NotValid: an S3 storage no longer valid as configured
// (its bucket gone; keys it refuses are a load error already) answers the
// contract's 3600 "User Error", 403, not 3100, which says the storage
// failed for a while.
func TestProviderS3NotValid(t *testing.T) {
	t.Setenv("FSP_TEST_S3_ACCESS", s3Access)
	t.Setenv("FSP_TEST_S3_SECRET", s3Secret)
	gone := s3Backend(t)
	load(t, fmt.Sprintf(`:%d {
	handle_path /fsp/gone/* {
		fsp {
			%s
			public_url http://localhost/files
			allow_anonymous
		}
	}
}
`, privatePort, gone.storage))
	client, err := minio.New(fmt.Sprintf("127.0.0.1:%d", versityPort), &minio.Options{
		Creds: credentials.NewStaticV4(s3Access, s3Secret, ""), Region: "us-east-1",
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := client.RemoveBucket(context.Background(), gone.bucket); err != nil {
		t.Fatal(err)
	}
	for _, c := range []call{
		{method: "GET", target: "/gone/", auth: "-"},
		{method: "POST", target: "/gone/new/", auth: "-"},
	} {
		res := send(t, privatePort, c)
		checkFSP(t, c.method+" "+c.target, res, 403, fspBody{3600, "User Error", "The storage configured for this user is not valid"})
	}
}

// TestProviderS3RequestsPerOperation counts the HEAD requests each
// operation sends to the S3 server (at a proxy in front of it): each
// looks at a name as often as it needs to, not once more. An ask upload
// of a free name looks at the file before its fetch and, before its
// write, only at the thumbnail there: the write is conditional and
// answers a file stored meanwhile, and the file is looked at again only
// when a thumbnail there would be removed.
func TestProviderS3RequestsPerOperation(t *testing.T) {
	src := newSources(t)
	img, img2 := string(src.png), string(src.png2)
	_, proxy := s3Site(t)
	for _, row := range []struct {
		name  string
		op    call
		heads int
	}{
		{"create folder", call{method: "POST", target: "/a/"}, 4},
		{"create another folder", call{method: "POST", target: "/b/"}, 4},
		// Its folder's marker; a folder of its name (twice: before
		// the content is read and before the write); the file before
		// the content is read; the thumbnail's name before the write;
		// the file's version after the thumbnail's write; the answer's
		// file and thumbnail.
		{"upload ask", withStrategy(direct("/a/n.png", img), "ask"), 8},
		{"upload without a strategy", direct("/a/m.png", img), 8},
		{"upload ask onto a file", withStrategy(direct("/a/n.png", img2), "ask"), 3},
		{"upload replace", withStrategy(direct("/a/n.png", img2), "replace"), 8},
		{"upload keep", withStrategy(direct("/a/n.png", img2), "keep"), 5},
		{"move", call{method: "PATCH", target: "/a/m.png", body: moveBody("/b/", "")}, 8},
		{"list", call{method: "GET", target: "/a/"}, 0},
		{"file", call{method: "GET", target: "/a/n.png"}, 2},
		{"delete", call{method: "DELETE", target: "/a/n.png"}, 2},
	} {
		row.op.auth = "-"
		proxy.mu.Lock()
		proxy.recording, proxy.seen = true, nil
		proxy.mu.Unlock()
		res := send(t, privatePort, row.op)
		proxy.mu.Lock()
		seen := proxy.seen
		proxy.recording = false
		proxy.mu.Unlock()
		if res.Status != 200 && !(row.name == "upload ask onto a file" && res.Status == 409) {
			t.Fatalf("%s: %d %s", row.name, res.Status, res.Body)
		}
		heads := 0
		for _, r := range seen {
			if strings.HasPrefix(r, "HEAD ") {
				heads++
			}
		}
		if heads > row.heads {
			t.Errorf("%s: %d HEAD requests, want at most %d:\n\t%s", row.name, heads, row.heads, strings.Join(seen, "\n\t"))
		}
	}
}
