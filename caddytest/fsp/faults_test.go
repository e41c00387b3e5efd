package fsp

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"image/color"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// faultKind is what the fault proxy does to a request it was told about,
// always after the request reached the S3 server (so it took effect): the
// answer is a 500, never comes (the client's timeout ends the wait), or
// the connection is reset. Or, with faultTaken, another writer stores the
// request's key just before the request reaches the server, whose answer
// then passes unchanged: a real conflict.
type faultKind string

const (
	fault500   faultKind = "500"
	faultHang  faultKind = "hang"
	faultReset faultKind = "reset"
	faultTaken faultKind = "taken"
	// faultHold holds the request back until release is closed, then
	// passes it on: another request can run meanwhile.
	faultHold faultKind = "hold"
	// faultReload holds the request back while the configuration is
	// reloaded, then passes it on: the old configuration finishes the
	// operation.
	faultReload faultKind = "reload"
	// faultStall passes the answer's status and headers on, then half its
	// body (none when it has none), and sends nothing more for 45 s: the
	// server stalls in the middle of its answer.
	faultStall faultKind = "stall"
	// faultCut passes the answer's headers (its Content-Length too) and
	// half its body, then drops the connection: a 200 whose body is cut.
	faultCut faultKind = "cut"
	// faultEndless answers a listing with a page of 1000 new keys that
	// says more follow, whatever the continuation token: a listing that
	// never ends.
	faultEndless faultKind = "endless"
	// faultHuge answers a listing with one last page of 60,000 keys, some
	// 20 MB of XML: more than any S3 server puts in one.
	faultHuge faultKind = "huge"
	// faultDrip passes the answer's status (200 for a 204) and headers
	// on, then its body (or spaces, when it has none) one byte every
	// 300 ms for 60 s: a server that keeps every read just inside the s3
	// timeout.
	faultDrip faultKind = "drip"
)

// faultProxy is a proxy in front of the real S3 server that injects
// faults into the requests matching a method and a key suffix.
type faultProxy struct {
	*httptest.Server
	mu     sync.Mutex
	method string
	suffix string
	kind   faultKind
	// once ends the fault after the first request it hits, so that the
	// client's resent request reaches the server and its answer comes back.
	once bool
	hits int
	// held receives a value when faultHold holds a request; release lets
	// it go on.
	held, release chan struct{}
	// other is the other writer of faultTaken: it stores key in bucket.
	other func(bucket, key string) error
	// otherErr is the other writer's first failure.
	otherErr error
	// putBytes counts the bytes of every PUT's body: what was written.
	putBytes int64
	// answerBytes counts the bytes of the server's answers passed on,
	// requests the requests.
	answerBytes int64
	requests    int
	// seen records each request that reached the server ("METHOD key")
	// while recording is on.
	seen      []string
	recording bool
}

func newFaultProxy(t *testing.T, target string) *faultProxy {
	t.Helper()
	p := &faultProxy{held: make(chan struct{}, 1), release: make(chan struct{})}
	transport := &http.Transport{}
	t.Cleanup(transport.CloseIdleConnections)
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && r.ContentLength > 0 {
			p.mu.Lock()
			p.putBytes += r.ContentLength
			p.mu.Unlock()
		}
		key, _ := url.PathUnescape(r.URL.EscapedPath())
		p.mu.Lock()
		if p.recording {
			p.seen = append(p.seen, r.Method+" "+key)
		}
		kind := faultKind("")
		release := p.release
		if p.kind != "" && r.Method == p.method && strings.HasSuffix(key, p.suffix) {
			kind = p.kind
			p.hits++
			if p.once {
				p.kind = ""
			}
		}
		p.mu.Unlock()
		if kind == faultHold {
			p.held <- struct{}{}
			<-release
		}
		if kind == faultTaken {
			bucket, object, _ := strings.Cut(strings.TrimPrefix(key, "/"), "/")
			if err := p.other(bucket, object); err != nil {
				p.mu.Lock()
				p.otherErr = cmp.Or(p.otherErr, err)
				p.mu.Unlock()
			}
		}
		out := r.Clone(r.Context())
		out.RequestURI = ""
		out.URL.Scheme, out.URL.Host = "http", target
		out.Host = r.Host // the signature covers the Host the client used
		res, err := transport.RoundTrip(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		switch kind {
		case fault500:
			_, _ = io.Copy(io.Discard, res.Body)
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>injected</Message></Error>`)
			return
		case faultHang:
			select {
			case <-r.Context().Done():
			case <-time.After(20 * time.Second):
			}
			return
		case faultStall, faultCut:
			body, _ := io.ReadAll(res.Body)
			for k, v := range res.Header {
				w.Header()[k] = v
			}
			if kind == faultStall {
				w.Header().Del("Content-Length")
			}
			w.WriteHeader(res.StatusCode)
			_, _ = w.Write(body[:len(body)/2])
			_ = http.NewResponseController(w).Flush()
			if kind == faultCut {
				panic(http.ErrAbortHandler)
			}
			select {
			case <-r.Context().Done():
			case <-time.After(45 * time.Second):
			}
			return
		case faultDrip:
			body, _ := io.ReadAll(res.Body)
			for k, v := range res.Header {
				w.Header()[k] = v
			}
			w.Header().Del("Content-Length")
			status := res.StatusCode
			if status == http.StatusNoContent {
				status = http.StatusOK // a delete's answer, which may then have a body
			}
			w.WriteHeader(status)
			rc := http.NewResponseController(w)
			for i := range 200 {
				b := byte(' ')
				if i < len(body) {
					b = body[i]
				}
				if _, err := w.Write([]byte{b}); err != nil || rc.Flush() != nil {
					return
				}
				select {
				case <-r.Context().Done():
					return
				case <-time.After(300 * time.Millisecond):
				}
			}
			return
		case faultEndless:
			_, _ = io.Copy(io.Discard, res.Body)
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprint(w, endlessPage(r.URL.Query().Get("prefix"), r.URL.Query().Get("continuation-token"), 1000, true))
			return
		case faultHuge:
			_, _ = io.Copy(io.Discard, res.Body)
			w.Header().Set("Content-Type", "application/xml")
			fmt.Fprint(w, endlessPage(r.URL.Query().Get("prefix"), "", 60000, false))
			return
		case faultReset:
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				if tcp, ok := conn.(*net.TCPConn); ok {
					_ = tcp.SetLinger(0) // RST, not FIN
				}
				conn.Close()
			}
			return
		}
		for k, v := range res.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(res.StatusCode)
		n, _ := io.Copy(w, res.Body)
		p.mu.Lock()
		p.answerBytes += n
		p.requests++
		p.mu.Unlock()
	}))
	t.Cleanup(p.Close)
	return p
}

// endlessPage is a ListObjectsV2 page of n keys under prefix, after the
// page of token, that says whether another page follows.
func endlessPage(prefix, token string, n int, more bool) string {
	page := 0
	fmt.Sscanf(token, "page-%d", &page)
	var sb strings.Builder
	fmt.Fprintf(&sb, `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">`+
		`<Prefix>%s</Prefix><KeyCount>%d</KeyCount><MaxKeys>1000</MaxKeys><EncodingType>url</EncodingType>`+
		`<IsTruncated>%t</IsTruncated>`, url.QueryEscape(prefix), n, more)
	if more {
		fmt.Fprintf(&sb, `<NextContinuationToken>page-%d</NextContinuationToken>`, page+1)
	}
	for i := range n {
		fmt.Fprintf(&sb, `<Contents><Key>%s</Key><LastModified>2024-01-01T00:00:00.000Z</LastModified><ETag>"e"</ETag><Size>1</Size></Contents>`,
			url.QueryEscape(fmt.Sprintf("%sendless-%d-%d-%s.txt", prefix, page, i, strings.Repeat("x", 200))))
	}
	sb.WriteString(`</ListBucketResult>`)
	return sb.String()
}

// behindFaultProxy returns the s3 storage block of b reached through a new
// fault proxy, with extra settings (one line, or ""), and the proxy.
func behindFaultProxy(t *testing.T, b backend, extra string) (string, *faultProxy) {
	proxy := newFaultProxy(t, fmt.Sprintf("127.0.0.1:%d", versityPort))
	client, err := minio.New(fmt.Sprintf("127.0.0.1:%d", versityPort), &minio.Options{
		Creds: credentials.NewStaticV4(s3Access, s3Secret, ""), Region: "us-east-1",
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	proxy.other = func(bucket, key string) error {
		data := "other"
		if strings.HasSuffix(key, "/") {
			data = "" // a folder marker
		}
		_, err := client.PutObject(context.Background(), bucket, key, strings.NewReader(data), int64(len(data)), minio.PutObjectOptions{})
		return err
	}
	storage := fmt.Sprintf("s3 {\n\t\t\tendpoint %s\n\t\t\tbucket %s\n\t\t\taccess_key {env.FSP_TEST_S3_ACCESS}\n\t\t\tsecret_key {env.FSP_TEST_S3_SECRET}\n\t\t\tinsecure\n\t\t\t%s\n\t\t}",
		strings.TrimPrefix(proxy.URL, "http://"), b.bucket, extra)
	return storage, proxy
}

// inject sets the fault for the next requests (kind "" for none), for
// the first matching one only if once, and returns how many requests the
// previous fault hit and the other writer's failure, if any.
func (p *faultProxy) inject(method, suffix string, kind faultKind, once bool) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	hits, otherErr := p.hits, p.otherErr
	if kind == faultHold {
		p.release = make(chan struct{}) // each hold its own release
	}
	p.method, p.suffix, p.kind, p.once, p.hits, p.otherErr = method, suffix, kind, once, 0, nil
	return hits, otherErr
}

// faultRow is one operation under one fault. Afterwards, for every group
// of keys in keep, one of them must exist: the old state or the new; and
// none of absent may.
type faultRow struct {
	name     string
	backends string // "s3", "local" or "" for both
	setup    []call
	op       call
	fault    faultKind
	once     bool   // only the first request the fault matches
	method   string // the S3 request the fault hits
	suffix   string // …whose key ends so
	wantCode int    // the answer (0: success)
	keep     [][]string
	absent   []string
	// thumbs are file paths whose served thumbnail, if any, must be the
	// served file's own.
	thumbs []string
	// thumbed are file paths that, where a file is, must be served with
	// a thumbnail: the operation left the old state or the new, whole.
	thumbed []string
	// orphans are keys (under the uid's tree) where a thumbnail of no
	// file is put before the operation; blocked (local) keys where a
	// folder is.
	orphans, blocked []string
}

// TestProviderFaultsLoseNothing runs operations while the storage fails
// at each step that could lose a file: on S3, the fault proxy answers 500,
// hangs past the timeout, or resets the connection after the server acted;
// locally (and on S3), names too long for their thumbnail's name. Each row
// checks that the old or the new state exists afterwards, never neither,
// and the answer the client gets.
func TestProviderFaultsLoseNothing(t *testing.T) {
	src := newSources(t)
	img := string(src.png)
	img2 := string(src.png2)
	big := string(testPNG(1200, 1000, color.NRGBA{30, 200, 30, 255})) // over max_image_memory: no thumbnail
	long := strings.Repeat("n", 246) + ".png"                         // 250 bytes: its thumbnail's name would be 261
	root := "c1/u1/"
	var rows []faultRow
	for _, kind := range []faultKind{fault500, faultHang, faultReset} {
		for _, strat := range []string{"keep", "ask", ""} {
			rows = append(rows, faultRow{
				name:     fmt.Sprintf("move %q, source delete %s", strat, kind),
				backends: "s3",
				setup:    []call{{method: "POST", target: "/a/"}, {method: "POST", target: "/b/"}, direct("/a/src.png", img)},
				op:       call{method: "PATCH", target: "/a/src.png", body: moveBody("/b/", strat)},
				fault:    kind, method: "DELETE", suffix: "/a/src.png",
				keep: [][]string{{root + "a/src.png", root + "b/src.png"}},
			})
		}
		rows = append(rows, faultRow{
			name:     fmt.Sprintf("move replace, source delete %s", kind),
			backends: "s3",
			setup:    []call{{method: "POST", target: "/a/"}, {method: "POST", target: "/b/"}, direct("/a/src.png", img), direct("/b/src.png", img2)},
			op:       call{method: "PATCH", target: "/a/src.png", body: moveBody("/b/", "replace")},
			fault:    kind, method: "DELETE", suffix: "/a/src.png",
			keep: [][]string{{root + "a/src.png", root + "b/src.png"}},
		})
		// (The thumbnail write of an upload: thumbfaults_test.go.)
		for _, up := range []struct{ strategy, existing, name, written string }{
			{"ask", "other.png", "new.png", "new.png"},
			{"replace", "r.png", "r.png", "r.png"},
			// the new file's write failed: 3100, or success if a retry made it
			{"keep", "k.png", "k.png", "k_1.png"},
		} {
			rows = append(rows, faultRow{
				name:     fmt.Sprintf("upload %s, file write %s", up.strategy, kind),
				backends: "s3",
				setup:    []call{{method: "POST", target: "/a/"}, direct("/a/"+up.existing, img)},
				op:       withStrategy(direct("/a/"+up.name, img2), up.strategy),
				fault:    kind, method: "PUT", suffix: "/a/" + up.written,
				wantCode: -1,
				keep:     [][]string{{root + "a/" + up.existing}},
			})
		}
		rows = append(rows, faultRow{
			name:     fmt.Sprintf("delete, file delete %s", kind),
			backends: "s3",
			setup:    []call{{method: "POST", target: "/a/"}, direct("/a/d.png", img), direct("/a/other.png", img)},
			op:       call{method: "DELETE", target: "/a/d.png"},
			fault:    kind, method: "DELETE", suffix: "/a/d.png",
			wantCode: -1,
			keep:     [][]string{{root + "a/other.png"}},
		})
		rows = append(rows, faultRow{
			name:     fmt.Sprintf("create folder, marker write %s", kind),
			backends: "s3",
			setup:    []call{{method: "POST", target: "/a/"}, direct("/a/f.png", img)},
			op:       call{method: "POST", target: "/a/new/"},
			fault:    kind, method: "PUT", suffix: "/a/new/",
			wantCode: -1,
			keep:     [][]string{{root + "a/f.png"}},
		})
	}
	// A conditional write the server carried out, whose answer was lost:
	// the client sends it again, and the second finds the first's object.
	// That object is the operation's own: it succeeded, once.
	for _, kind := range []faultKind{fault500, faultHang, faultReset} {
		rows = append(rows,
			faultRow{
				name:     fmt.Sprintf("create folder, marker write %s once", kind),
				backends: "s3",
				setup:    []call{{method: "POST", target: "/a/"}},
				op:       call{method: "POST", target: "/a/new/"},
				fault:    kind, once: true, method: "PUT", suffix: "/a/new/",
				keep: [][]string{{root + "a/new/"}},
			},
			faultRow{
				name:     fmt.Sprintf("upload keep, file write %s once", kind),
				backends: "s3",
				setup:    []call{{method: "POST", target: "/a/"}, direct("/a/k.png", img)},
				op:       withStrategy(direct("/a/k.png", img2), "keep"),
				fault:    kind, once: true, method: "PUT", suffix: "/a/k_1.png",
				keep:   [][]string{{root + "a/k.png"}, {root + "a/k_1.png"}},
				absent: []string{root + "a/k_2.png"},
			},
			faultRow{
				name:     fmt.Sprintf("move ask, destination write %s once", kind),
				backends: "s3",
				setup:    []call{{method: "POST", target: "/a/"}, {method: "POST", target: "/b/"}, direct("/a/src.png", img)},
				op:       call{method: "PATCH", target: "/a/src.png", body: moveBody("/b/", "ask")},
				fault:    kind, once: true, method: "PUT", suffix: "/b/src.png",
				keep:   [][]string{{root + "b/src.png"}},
				absent: []string{root + "a/src.png"},
			},
		)
	}
	// Another writer takes the name between the look and the conditional
	// write: a real conflict, however the client's requests fared.
	rows = append(rows,
		faultRow{
			name:     "create folder, another writer's marker",
			backends: "s3",
			setup:    []call{{method: "POST", target: "/a/"}},
			op:       call{method: "POST", target: "/a/new/"},
			fault:    faultTaken, method: "PUT", suffix: "/a/new/",
			wantCode: 3400,
		},
		faultRow{
			name:     "move ask, another writer's file",
			backends: "s3",
			setup:    []call{{method: "POST", target: "/a/"}, {method: "POST", target: "/b/"}, direct("/a/src.png", img)},
			op:       call{method: "PATCH", target: "/a/src.png", body: moveBody("/b/", "ask")},
			fault:    faultTaken, method: "PUT", suffix: "/b/src.png",
			wantCode: 3400,
			keep:     [][]string{{root + "a/src.png"}, {root + "b/src.png"}},
		},
		faultRow{
			name:     "upload ask, another writer's file",
			backends: "s3",
			setup:    []call{{method: "POST", target: "/a/"}},
			op:       withStrategy(direct("/a/n.png", img), "ask"),
			fault:    faultTaken, method: "PUT", suffix: "/a/n.png",
			wantCode: 3400,
			keep:     [][]string{{root + "a/n.png"}},
			absent:   []string{root + "a/.thumb.n.png.png"},
		},
		faultRow{
			name:     "upload keep, another writer's file",
			backends: "s3",
			setup:    []call{{method: "POST", target: "/a/"}, direct("/a/k.png", img)},
			op:       withStrategy(direct("/a/k.png", img2), "keep"),
			fault:    faultTaken, method: "PUT", suffix: "/a/k_1.png",
			keep: [][]string{{root + "a/k.png"}, {root + "a/k_1.png"}, {root + "a/k_2.png"}},
		},
	)
	rows = append(rows,
		// Local only: versitygw's posix store cannot overwrite such a key.
		faultRow{
			name:     "upload replace, name too long for its thumbnail",
			backends: "local",
			setup:    []call{{method: "POST", target: "/a/"}, direct("/a/"+long, img)},
			op:       withStrategy(direct("/a/"+long, img2), "replace"),
			keep:     [][]string{{root + "a/" + long}},
		},
		faultRow{
			name:     "upload keep, name too long for its thumbnail",
			backends: "local",
			setup:    []call{{method: "POST", target: "/a/"}, direct("/a/"+long, img)},
			op:       withStrategy(direct("/a/"+long, img2), "keep"),
			keep:     [][]string{{root + "a/" + long}, {root + "a/" + strings.Repeat("n", 246) + "_1.png"}},
		},
	)
	rows = append(rows, thumbFaultRows(img, img2, big)...)

	onEachBackend(t, func(t *testing.T, b backend) {
		storage, proxy := b.storage, (*faultProxy)(nil)
		if b.name == "s3" {
			storage, proxy = behindFaultProxy(t, b, "timeout 1s")
		}
		// Setup goes to a second site on the same storage, without the
		// fault proxy and its 1 s timeout (short, so that the hang rows
		// end soon): on a busy machine a setup write answered after 1 s
		// would be sent again, and the conditional write would find its
		// own first copy.
		// A reload row loads the other of two configurations.
		config := func(maxUploads int) string {
			return fspSite(privatePort, storage, "max_image_memory 4MiB", fmt.Sprintf("max_uploads %d", maxUploads), "allow_anonymous") +
				fspSite(faultSetupPort, b.storage, "max_image_memory 4MiB", "allow_anonymous")
		}
		maxUploads := 4
		load(t, config(maxUploads))
		for i, row := range rows {
			if row.backends != "" && row.backends != b.name {
				continue
			}
			t.Run(row.name, func(t *testing.T) {
				uid := fmt.Sprintf("f%d", i) // a tree of its own
				at := func(keys []string) []string {
					out := make([]string, len(keys))
					for j, k := range keys {
						out[j] = "c1/" + uid + "/" + strings.TrimPrefix(k, root)
					}
					return out
				}
				for _, c := range row.setup {
					c.uid, c.auth = uid, "-"
					if res := send(t, faultSetupPort, c); res.Status != 200 {
						t.Fatalf("setup %s %s: %d %s", c.method, c.target, res.Status, res.Body)
					}
				}
				prepareThumbs(t, b, uid, row)
				op := row.op
				op.uid, op.auth = uid, "-"
				var res response
				switch row.fault {
				case "":
					res = send(t, privatePort, op)
				case faultReload:
					proxy.inject(row.method, row.suffix, faultHold, true)
					done := make(chan response, 1)
					go func() { done <- send(t, privatePort, op) }()
					select {
					case <-proxy.held:
					case res = <-done:
						t.Fatalf("the operation ended (%d %s) before the request to hold", res.Status, res.Body)
					}
					maxUploads = 7 - maxUploads // another config: Caddy reloads
					load(t, config(maxUploads))
					proxy.mu.Lock()
					close(proxy.release)
					proxy.mu.Unlock()
					res = <-done
				default:
					proxy.inject(row.method, row.suffix, row.fault, row.once)
					res = send(t, privatePort, op)
				}
				if row.fault != "" {
					hits, otherErr := proxy.inject("", "", "", false)
					if hits == 0 {
						t.Fatalf("the fault hit no request (%s …%s)", row.method, row.suffix)
					}
					if otherErr != nil {
						t.Fatalf("the other writer: %v", otherErr)
					}
				}
				got := decodeFSP(res.Body).Code
				switch {
				case row.wantCode == 0 && res.Status != 200:
					t.Errorf("answer %d %s, want success", res.Status, res.Body)
				case row.wantCode > 0 && got != row.wantCode:
					t.Errorf("answer %d %s, want %d", res.Status, res.Body, row.wantCode)
				}
				stored := map[string]bool{}
				for _, k := range b.keys(t) {
					stored[k] = true
				}
				for _, group := range row.keep {
					found := false
					for _, k := range at(group) {
						found = found || stored[k]
					}
					if !found {
						t.Errorf("lost: none of %v exists (answer %d %s)", at(group), res.Status, res.Body)
					}
				}
				for _, k := range at(row.absent) {
					if stored[k] {
						t.Errorf("%s exists (answer %d %s)", k, res.Status, res.Body)
					}
				}
				checkServedThumbs(t, b, faultSetupPort, uid, row.thumbs)
				checkNoLeftThumbs(t, b, faultSetupPort, uid)
				for _, target := range row.thumbed {
					res := send(t, faultSetupPort, call{method: "GET", target: target, uid: uid, auth: "-"})
					var one struct {
						Data dataJSON `json:"data"`
					}
					if res.Status == 200 && (json.Unmarshal(res.Body, &one) != nil || one.Data.Meta.Thumbnail == "") {
						t.Errorf("%s is there without its thumbnail: %s", target, res.Body)
					}
				}
			})
		}
	})
}

// withStrategy adds a conflict_strategy field to a multipart upload.
func withStrategy(c call, strategy string) call {
	c.body = strings.Replace(c.body, "--XyZ--", "--XyZ\r\nContent-Disposition: form-data; name=\"conflict_strategy\"\r\n\r\n"+strategy+"\r\n--XyZ--", 1)
	return c
}
