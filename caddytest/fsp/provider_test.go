package fsp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"golang.org/x/crypto/bcrypt"

	"github.com/designbridge/caddy-designbridge/caddytest/internal/testcaddy"
)

// Ports of the provider tests (port names: see load).
const (
	providerPort = 9220 // the site with the fsp handler
	brokenPort   = 9221 // a site whose storage fails
	privatePort  = 9222 // a site that keeps the default address policy

	faultSetupPort = 9224 // the fault table's setup, past the fault proxy
)

// versityPort is versitygw's, the S3 server's, chosen when it starts.
var versityPort int

// The vendor's resource server's credentials and the S3 keys.
const (
	fspUser     = "vendor"
	fspPassword = "fsp-password-3c9e1a"
	s3Access    = "fsptestaccess"
	s3Secret    = "fsptestsecret-6b2d4f"
	s3Bucket    = "fsp-files"

	// versitygwVersion is the version .ci/run installs.
	versitygwVersion = "v1.8.0"
)

// backend is one storage the same test table runs on.
type backend struct {
	name string
	// storage is the fsp directive's storage lines.
	storage string
	// broken is the storage lines of a storage that fails.
	broken string
	// keys lists every stored name (files and hidden ones) under the store.
	keys func(t testing.TB) []string
	// read returns the stored bytes of key.
	read func(t testing.TB, key string) []byte
	// write stores data at key directly (benchmark set-up).
	write func(t testing.TB, key string, data []byte)
	// head returns the stored Content-Type and Content-Disposition of
	// key (nil where the storage keeps no such metadata).
	head func(t testing.TB, key string) (contentType, disposition string)
	// bucket is the S3 bucket ("" for local).
	bucket string
	// publicBase is the public_url base.
	publicBase string
	// files is the folder served at /files.
	files string
}

// localBackend stores in a new folder for each caller, so that tests
// also pass when run again (go test -count).
func localBackend(t testing.TB) backend {
	store := t.TempDir()
	brokenStore := filepath.Join(tmpDir, "store-broken")
	for _, dir := range []string{brokenStore} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// A user root that is a symlink out of the folder: os.Root refuses to
	// follow it, which the handler must answer as a storage failure.
	if err := os.Symlink("/", filepath.Join(brokenStore, "escape")); err != nil && !os.IsExist(err) {
		t.Fatal(err)
	}
	return backend{
		name:       "local",
		storage:    "local " + store,
		broken:     "local " + brokenStore + "\n\t\t\troot escape",
		publicBase: fmt.Sprintf("http://localhost:%d/files", providerPort),
		files:      store,
		write: func(t testing.TB, key string, data []byte) {
			if err := os.WriteFile(filepath.Join(store, filepath.FromSlash(key)), data, 0o644); err != nil {
				t.Fatal(err)
			}
		},
		keys: func(t testing.TB) []string {
			var keys []string
			err := filepath.Walk(store, func(p string, info os.FileInfo, err error) error {
				if err != nil {
					return err
				}
				rel, _ := filepath.Rel(store, p)
				if info.IsDir() {
					rel += "/" // folders count: a refused request makes none
				}
				keys = append(keys, filepath.ToSlash(rel))
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			sort.Strings(keys)
			return keys
		},
		read: func(t testing.TB, key string) []byte {
			// through Caddy's file_server, as the public would
			res, err := http.Get(fmt.Sprintf("http://localhost:%d/files/%s", livePort(providerPort), key))
			if err != nil {
				t.Fatal(err)
			}
			defer res.Body.Close()
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != 200 {
				t.Fatalf("public GET %s: %d", key, res.StatusCode)
			}
			return body
		},
	}
}

// findVersitygw locates the S3 server .ci/run installs.
func findVersitygw(t testing.TB) string {
	if p, err := exec.LookPath("versitygw"); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", "versitygw")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	msg := "versitygw not found on PATH or in $(go env GOPATH)/bin; install it with: go install github.com/versity/versitygw/cmd/versitygw@" + versitygwVersion
	if os.Getenv("CI") == "true" {
		t.Fatal(msg)
	}
	versityMissing.Store(msg)
	t.Skip(msg)
	return ""
}

// versityMissing holds the skip message once an S3 half was skipped, so
// that TestMain says so once, outside -v.
var versityMissing atomic.Value

var (
	versityOnce sync.Once
	versityErr  error
)

// buckets numbers the buckets s3Backend makes.
var buckets atomic.Int32

// s3Backend starts versitygw on loopback (once per run) over a plain
// folder and makes a new bucket for each caller.
func s3Backend(t testing.TB) backend {
	bin := findVersitygw(t)
	versityOnce.Do(func() { versityErr = startVersitygw(bin) })
	if versityErr != nil {
		t.Fatal(versityErr)
	}
	client, err := minio.New(fmt.Sprintf("127.0.0.1:%d", versityPort), &minio.Options{
		Creds: credentials.NewStaticV4(s3Access, s3Secret, ""), Region: "us-east-1",
		BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	bucket := fmt.Sprintf("%s-%d", s3Bucket, buckets.Add(1))
	if err := client.MakeBucket(ctx, bucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	storage := func(port int, bucket string) string {
		return fmt.Sprintf(`s3 {
				endpoint 127.0.0.1:%d
				bucket %s
				access_key {env.FSP_TEST_S3_ACCESS}
				secret_key {env.FSP_TEST_S3_SECRET}
				insecure
			}`, port, bucket)
	}
	return backend{
		name:       "s3",
		bucket:     bucket,
		storage:    storage(versityPort, bucket),
		broken:     storage(deadPort, bucket), // nothing listens there
		publicBase: "https://cdn.example.test/" + bucket,
		files:      t.TempDir(),
		write: func(t testing.TB, key string, data []byte) {
			if _, err := client.PutObject(ctx, bucket, key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
		},
		head: func(t testing.TB, key string) (string, string) {
			info, err := client.StatObject(ctx, bucket, key, minio.StatObjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return info.ContentType, info.Metadata.Get("Content-Disposition")
		},
		keys: func(t testing.TB) []string {
			var keys []string
			for obj := range client.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true}) {
				if obj.Err != nil {
					t.Fatal(obj.Err)
				}
				keys = append(keys, obj.Key) // folder markers included
			}
			sort.Strings(keys)
			return keys
		},
		read: func(t testing.TB, key string) []byte {
			obj, err := client.GetObject(ctx, bucket, key, minio.GetObjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			defer obj.Close()
			data, err := io.ReadAll(obj)
			if err != nil {
				t.Fatalf("reading %s: %v", key, err)
			}
			return data
		},
	}
}

func startVersitygw(bin string) error {
	port, err := testcaddy.FreePort()
	if err != nil {
		return err
	}
	versityPort = port
	dir := filepath.Join(tmpDir, "versity")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(tmpDir, "versitygw.log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, "--port", fmt.Sprintf("127.0.0.1:%d", versityPort), "--quiet", "posix", dir)
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+s3Access, "ROOT_SECRET_ACCESS_KEY="+s3Secret)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return err
	}
	stopVersitygw = func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); logf.Close() }
	for i := 0; i < 100; i++ {
		if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", versityPort), 100*time.Millisecond); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("versitygw did not listen on %d (log in %s)", versityPort, logf.Name())
}

// stopVersitygw is set once versitygw runs; TestMain's run calls it.
var stopVersitygw = func() {}

// sources is the upload sources' server: real files, and misbehaving ones.
type sources struct {
	*httptest.Server
	png, png2, jpg, pdf []byte
}

func testPNG(w, h int, c color.Color) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	_ = png.Encode(&b, img)
	return b.Bytes()
}

func newSources(t testing.TB) *sources {
	s := &sources{
		png:  testPNG(400, 300, color.NRGBA{200, 30, 30, 255}),
		png2: testPNG(50, 60, color.NRGBA{30, 30, 200, 255}),
		pdf:  []byte("%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n"),
	}
	var jb bytes.Buffer
	_ = jpeg.Encode(&jb, image.NewGray(image.Rect(0, 0, 120, 500)), nil)
	s.jpg = jb.Bytes()
	mux := http.NewServeMux()
	serve := func(data []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(data) }
	}
	mux.Handle("/cat.png", serve(s.png))
	mux.Handle("/other.png", serve(s.png2))
	mux.Handle("/photo.jpg", serve(s.jpg))
	mux.Handle("/doc.pdf", serve(s.pdf))
	mux.Handle("/fake.png", serve([]byte("this is plain text, not a PNG at all\n")))
	mux.Handle("/damaged.png", serve(append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{7}, 64)...)))
	mux.Handle("/page.html", serve([]byte("<html><body>hi</body></html>")))
	mux.Handle("/empty.png", serve(nil))
	mux.Handle("/huge.png", serve(append(append([]byte{}, s.png[:100]...), make([]byte, 400<<10)...)))
	mux.HandleFunc("/gone.png", func(w http.ResponseWriter, _ *http.Request) { http.NotFound(w, nil) })
	mux.HandleFunc("/cut-short.pdf", func(w http.ResponseWriter, _ *http.Request) {
		// The PDF's first half, under the Content-Length of the whole:
		// the connection ends early, which is no file.
		w.Header().Set("Content-Length", fmt.Sprint(2*len(s.pdf)))
		_, _ = w.Write(s.pdf)
	})
	mux.HandleFunc("/slow.png", func(w http.ResponseWriter, r *http.Request) {
		// A source that never ends: a byte at a time until the client
		// gives up (bounded, so the test server always stops).
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(s.png[:16])
		for i := 0; i < 600; i++ {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
			if _, err := w.Write([]byte{0}); err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func providerSites(b backend, src *sources, store string, hash string) string {
	_ = store
	return fmt.Sprintf(`:%[1]d {
	handle_path /fsp/* {
		basic_auth {
			%[2]s %[3]s
		}
		fsp {
			%[4]s
			public_url %[5]s
			shared logos shared/logos
			max_size 300KB
			fetch_timeout 2s
			allow_private all
		}
	}
	handle_path /files/* {
		root * %[6]s
		file_server
	}
	handle_errors {
		@fsp path /fsp/*
		fsp_error @fsp
	}
}
:%[7]d {
	handle_path /fsp/* {
		fsp {
			%[8]s
			public_url http://localhost/files
			allow_anonymous
		}
	}
}
:%[9]d {
	handle_path /fsp/* {
		fsp {
			local %[10]s
			public_url http://localhost/files
			allow_anonymous
		}
	}
}
`, providerPort, fspUser, hash, b.storage, b.publicBase, b.files,
		brokenPort, b.broken, privatePort, filepath.Join(tmpDir, "store-private"))
}

// call is one request of the table.
type call struct {
	method, target string
	body           string
	uid            string // default u1
	client         string // X-BEE-ClientId; default c1
	auth           string // Authorization value; default the right one; "-" none
	headers        []string
	port           int // the site's port where a table sends to several (default providerPort)
}

// step is one row of the operation and error table: a request and what
// must come back. want* of 0 means "success".
type step struct {
	name string
	call
	wantCode int
	check    func(t *testing.T, env *env, data json.RawMessage)
}

// env is what a step's check can use.
type env struct {
	b   backend
	src *sources
}

type metaJSON struct {
	MimeType     string         `json:"mime-type"`
	Name         string         `json:"name"`
	Path         string         `json:"path"`
	LastModified int64          `json:"last-modified"`
	Size         int64          `json:"size"`
	Permissions  string         `json:"permissions"`
	ItemCount    *int           `json:"item-count"`
	PublicURL    string         `json:"public-url"`
	Thumbnail    string         `json:"thumbnail"`
	Extra        map[string]any `json:"extra"`
}

type dataJSON struct {
	Meta  metaJSON   `json:"meta"`
	Items []metaJSON `json:"items"`
}

func decodeData(t *testing.T, raw json.RawMessage) dataJSON {
	t.Helper()
	var d dataJSON
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("data %s: %v", raw, err)
	}
	return d
}

func names(items []metaJSON) string {
	var out []string
	for _, m := range items {
		out = append(out, m.Name)
	}
	return strings.Join(out, ",")
}

// wantMeta checks a file's meta against the contract's form.
func wantFile(t *testing.T, m metaJSON, path, mimeType string, size int, thumb bool) {
	t.Helper()
	if m.Path != path || m.MimeType != mimeType || (size >= 0 && m.Size != int64(size)) {
		t.Errorf("meta %+v, want path %s type %s size %d", m, path, mimeType, size)
	}
	if m.Permissions != "rw" || m.Extra["can-move"] != true || m.LastModified < time.Now().Add(-time.Hour).UnixMilli() {
		t.Errorf("meta %+v: want rw, can-move and a recent last-modified", m)
	}
	if m.PublicURL == "" || (m.Thumbnail != "") != thumb {
		t.Errorf("meta %+v: public-url and thumbnail (want thumbnail: %v)", m, thumb)
	}
}

func upload(source, strategy string) string {
	return fmt.Sprintf(`{"source":%q,"conflict_strategy":%q}`, source, strategy)
}

// direct is a multipart upload of content to target.
func direct(target, content string) call {
	return call{method: "POST", target: target, headers: []string{"Content-Type: multipart/form-data; boundary=XyZ"},
		body: "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"f\"\r\n\r\n" + content + "\r\n--XyZ--\r\n"}
}

func moveBody(newPath, strategy string) string {
	return fmt.Sprintf(`{"new_path":%q,"conflict_strategy":%q}`, newPath, strategy)
}

// steps is the table every back end runs, in order: later rows see what
// earlier rows made.
func steps(src *sources) []step {
	u := func(p string) string { return src.URL + p }
	return []step{
		{name: "list empty root", call: call{method: "GET", target: "/"}, check: func(t *testing.T, _ *env, raw json.RawMessage) {
			d := decodeData(t, raw)
			if d.Meta.Path != "/" || d.Meta.Name != "root" || d.Meta.MimeType != "application/directory" || names(d.Items) != "logos" || d.Items[0].Permissions != "ro" {
				t.Errorf("root %s", raw)
			}
		}},
		{name: "mkdir", call: call{method: "POST", target: "/photos/"}, check: func(t *testing.T, _ *env, raw json.RawMessage) {
			d := decodeData(t, raw)
			if d.Meta.Path != "/photos/" || d.Meta.Name != "photos" || d.Meta.Permissions != "rw" || d.Meta.ItemCount == nil || d.Meta.Extra == nil {
				t.Errorf("mkdir %s", raw)
			}
		}},
		{name: "mkdir existing", call: call{method: "POST", target: "/photos/"}, wantCode: 3400},
		{name: "mkdir root", call: call{method: "POST", target: "/"}, wantCode: 3400},
		{name: "mkdir without parent", call: call{method: "POST", target: "/nope/sub/"}, wantCode: 3200},
		{name: "mkdir control character", call: call{method: "POST", target: "/bad%01name/"}, wantCode: 3500},
		{name: "mkdir encoded backslash", call: call{method: "POST", target: "/st%5Car/"}, wantCode: 3500},
		{name: "mkdir reserved name", call: call{method: "POST", target: "/.thumb.s/"}, wantCode: 3500},
		{name: "mkdir encoded separator", call: call{method: "POST", target: "/photos%2Fsub/"}, wantCode: 3500},
		{name: "mkdir dot dot", call: call{method: "POST", target: "/photos/../evil/"}, wantCode: 3300},
		{name: "mkdir encoded dot dot", call: call{method: "POST", target: "/photos/%2E%2E/evil/"}, wantCode: 3300},
		{name: "mkdir with space and parens", call: call{method: "POST", target: "/photos/new%20dir%20(2)/"}},
		{name: "upload png", call: call{method: "POST", target: "/photos/cat.png", body: upload(u("/cat.png"), "ask")}, check: func(t *testing.T, e *env, raw json.RawMessage) {
			m := decodeData(t, raw).Meta
			wantFile(t, m, "/photos/cat.png", "image/png", len(e.src.png), true)
			checkThumb(t, e, m.Thumbnail, 200, 150)
			if got := e.b.read(t, keyOf(t, e, m.PublicURL)); !bytes.Equal(got, e.src.png) {
				t.Errorf("public-url serves %d bytes, want the uploaded %d", len(got), len(e.src.png))
			}
		}},
		{name: "upload conflict ask", call: call{method: "POST", target: "/photos/cat.png", body: upload(u("/cat.png"), "ask")}, wantCode: 3400},
		{name: "upload conflict no strategy", call: call{method: "POST", target: "/photos/cat.png", body: fmt.Sprintf(`{"source":%q}`, u("/cat.png"))}, wantCode: 3400},
		{name: "upload keep", call: call{method: "POST", target: "/photos/cat.png", body: upload(u("/cat.png"), "keep")}, check: func(t *testing.T, e *env, raw json.RawMessage) {
			wantFile(t, decodeData(t, raw).Meta, "/photos/cat_1.png", "image/png", len(e.src.png), true)
		}},
		{name: "upload keep again", call: call{method: "POST", target: "/photos/cat.png", body: upload(u("/cat.png"), "keep")}, check: func(t *testing.T, e *env, raw json.RawMessage) {
			wantFile(t, decodeData(t, raw).Meta, "/photos/cat_2.png", "image/png", len(e.src.png), true)
		}},
		{name: "upload replace", call: call{method: "POST", target: "/photos/cat.png", body: upload(u("/other.png"), "replace")}, check: func(t *testing.T, e *env, raw json.RawMessage) {
			m := decodeData(t, raw).Meta
			wantFile(t, m, "/photos/cat.png", "image/png", len(e.src.png2), true)
			checkThumb(t, e, m.Thumbnail, 50, 60)
		}},
		{name: "upload jpeg portrait", call: call{method: "POST", target: "/photos/photo.jpg", body: upload(u("/photo.jpg"), "")}, check: func(t *testing.T, e *env, raw json.RawMessage) {
			m := decodeData(t, raw).Meta
			wantFile(t, m, "/photos/photo.jpg", "image/jpeg", len(e.src.jpg), true)
			checkThumb(t, e, m.Thumbnail, 48, 200)
		}},
		{name: "upload pdf has no thumbnail", call: call{method: "POST", target: "/photos/doc.pdf", body: upload(u("/doc.pdf"), "")}, check: func(t *testing.T, e *env, raw json.RawMessage) {
			wantFile(t, decodeData(t, raw).Meta, "/photos/doc.pdf", "application/pdf", len(e.src.pdf), false)
		}},
		{name: "refused upload to editor_images creates nothing", call: call{method: "POST", target: "/editor_images/bad.png", body: upload(u("/fake.png"), "")}, wantCode: 3450},
		{name: "refused upload into a new tree creates nothing", call: call{method: "POST", target: "/x.png", uid: "u3", body: upload(u("/fake.png"), "")}, wantCode: 3450},
		{name: "upload to editor_images creates it", call: call{method: "POST", target: "/editor_images/0b7e5b1c-0d3c-4a57-9c41-2f6f3b7a1e10.png", body: upload(u("/cat.png"), "")}, check: func(t *testing.T, e *env, raw json.RawMessage) {
			wantFile(t, decodeData(t, raw).Meta, "/editor_images/0b7e5b1c-0d3c-4a57-9c41-2f6f3b7a1e10.png", "image/png", len(e.src.png), true)
		}},
		{name: "upload to favicon_images creates it", call: call{method: "POST", target: "/favicon_images/site.png", body: upload(u("/other.png"), "")}},
		{name: "upload to missing folder", call: call{method: "POST", target: "/nope/cat.png", body: upload(u("/cat.png"), "")}, wantCode: 3200},
		{name: "upload claims png, is text", call: call{method: "POST", target: "/photos/fake.png", body: upload(u("/fake.png"), "")}, wantCode: 3450},
		{name: "upload png signature, damaged", call: call{method: "POST", target: "/photos/damaged.png", body: upload(u("/damaged.png"), "")}, wantCode: 3450},
		{name: "upload html not allowed", call: call{method: "POST", target: "/photos/page.txt", body: upload(u("/page.html"), "")}, wantCode: 3450},
		{name: "refuse .svg whatever its content", call: direct("/photos/x.svg", "plain words, then <svg onload=alert(1)>"), wantCode: 3450},
		{name: "refuse .html whatever its content", call: direct("/photos/x.html", "plain words"), wantCode: 3450},
		{name: "refuse .xhtml whatever its content", call: direct("/photos/x.xhtml", "plain words"), wantCode: 3450},
		{name: "refuse .xml whatever its content", call: direct("/photos/x.xml", "plain words"), wantCode: 3450},
		{name: "refuse .js whatever its content", call: direct("/photos/x.js", "plain words"), wantCode: 3450},
		{name: "refuse a real png named .htm", call: direct("/photos/x.htm", string(src.png2)), wantCode: 3450},
		{name: "refuse a png without extension", call: direct("/photos/picture", string(src.png2)), wantCode: 3450},
		{name: "refuse xml content named .txt", call: direct("/photos/x.txt", `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`), wantCode: 3450},
		{name: "refuse html content named .csv", call: direct("/photos/x.csv", "<!DOCTYPE html><script>alert(1)</script>"), wantCode: 3450},
		{name: "a document is stored as an attachment", call: direct("/photos/report.docx", "PK\x03\x04 a zip container"), check: func(t *testing.T, e *env, raw json.RawMessage) {
			m := decodeData(t, raw).Meta
			wantFile(t, m, "/photos/report.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", -1, false)
			if e.b.head != nil {
				ct, disp := e.b.head(t, keyOf(t, e, m.PublicURL))
				if ct != m.MimeType || disp != "attachment" {
					t.Errorf("stored with Content-Type %q, Content-Disposition %q; want %q, attachment", ct, disp, m.MimeType)
				}
			}
		}},
		{name: "delete the document", call: call{method: "DELETE", target: "/photos/report.docx"}},
		{name: "upload empty source", call: call{method: "POST", target: "/photos/empty.png", body: upload(u("/empty.png"), "")}, wantCode: 3450},
		{name: "upload too large", call: call{method: "POST", target: "/photos/huge.png", body: upload(u("/huge.png"), "")}, wantCode: 3450},
		{name: "upload source never ends", call: call{method: "POST", target: "/photos/slow.png", body: upload(u("/slow.png"), "")}, wantCode: 3450},
		{name: "upload source cut short", call: call{method: "POST", target: "/photos/cut.pdf", body: upload(u("/cut-short.pdf"), "")}, wantCode: 3450},
		{name: "upload source 404", call: call{method: "POST", target: "/photos/gone.png", body: upload(u("/gone.png"), "")}, wantCode: 3450},
		{name: "upload source not http", call: call{method: "POST", target: "/photos/x.png", body: upload("file:///etc/passwd", "")}, wantCode: 3450},
		{name: "upload bad json", call: call{method: "POST", target: "/photos/x.png", body: `{"source":`}, wantCode: 3500},
		{name: "upload no source", call: call{method: "POST", target: "/photos/x.png", body: `{"conflict_strategy":"keep"}`}, wantCode: 3500},
		{name: "upload bad strategy", call: call{method: "POST", target: "/photos/x.png", body: upload(u("/cat.png"), "merge")}, wantCode: 3500},
		{name: "upload bad name", call: call{method: "POST", target: "/photos/caf%0A.png", body: upload(u("/cat.png"), "")}, wantCode: 3500},
		{name: "upload encoded separator", call: call{method: "POST", target: "/photos/..%2Fx.png", body: upload(u("/cat.png"), "")}, wantCode: 3500},
		{name: "upload encoded backslash", call: call{method: "POST", target: "/photos/a%5Cb.png", body: upload(u("/cat.png"), "")}, wantCode: 3500},
		{name: "upload into shared", call: call{method: "POST", target: "/logos/x.png", body: upload(u("/cat.png"), "")}, wantCode: 3300},
		{name: "multipart upload", call: call{method: "POST", target: "/photos/direct.png", headers: []string{"Content-Type: multipart/form-data; boundary=XyZ"},
			body: "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"direct.png\"\r\nContent-Type: image/png\r\n\r\n" + string(src.png2) + "\r\n--XyZ--\r\n"},
			check: func(t *testing.T, e *env, raw json.RawMessage) {
				wantFile(t, decodeData(t, raw).Meta, "/photos/direct.png", "image/png", len(e.src.png2), true)
			}},
		{name: "list folder", call: call{method: "GET", target: "/photos/"}, check: func(t *testing.T, _ *env, raw json.RawMessage) {
			d := decodeData(t, raw)
			if got := names(d.Items); got != "new dir (2),cat.png,cat_1.png,cat_2.png,direct.png,doc.pdf,photo.jpg" {
				t.Errorf("items %s", got)
			}
			if d.Meta.ItemCount == nil || *d.Meta.ItemCount != 7 || d.Meta.Path != "/photos/" {
				t.Errorf("meta %+v", d.Meta)
			}
			for _, m := range d.Items {
				if m.Extra == nil || (m.MimeType == "application/directory") == (m.PublicURL != "") {
					t.Errorf("item %+v", m)
				}
			}
		}},
		{name: "list for move: folders only", call: call{method: "GET", target: "/photos/", headers: []string{"X-BEE-Fsp-Flags: move"}}, check: func(t *testing.T, _ *env, raw json.RawMessage) {
			if got := names(decodeData(t, raw).Items); got != "new dir (2)" {
				t.Errorf("items %s", got)
			}
		}},
		{name: "list missing folder", call: call{method: "GET", target: "/nope/"}, wantCode: 3200},
		{name: "list a file as a folder", call: call{method: "GET", target: "/photos/cat.png/"}, wantCode: 3200},
		{name: "file meta", call: call{method: "GET", target: "/photos/cat_1.png"}, check: func(t *testing.T, e *env, raw json.RawMessage) {
			wantFile(t, decodeData(t, raw).Meta, "/photos/cat_1.png", "image/png", len(e.src.png), true)
		}},
		{name: "file meta missing", call: call{method: "GET", target: "/photos/none.png"}, wantCode: 3200},
		{name: "mkdir archive", call: call{method: "POST", target: "/archive/"}},
		{name: "move", call: call{method: "PATCH", target: "/photos/cat_1.png", body: moveBody("/archive/", "")}, check: func(t *testing.T, e *env, raw json.RawMessage) {
			m := decodeData(t, raw).Meta
			wantFile(t, m, "/archive/cat_1.png", "image/png", len(e.src.png), true)
			checkThumb(t, e, m.Thumbnail, 200, 150)
		}},
		{name: "moved away", call: call{method: "GET", target: "/photos/cat_1.png"}, wantCode: 3200},
		{name: "upload into archive", call: call{method: "POST", target: "/archive/cat_2.png", body: upload(u("/other.png"), "")}},
		{name: "move conflict", call: call{method: "PATCH", target: "/photos/cat_2.png", body: moveBody("/archive/", "")}, wantCode: 3400},
		{name: "move conflict ask", call: call{method: "PATCH", target: "/photos/cat_2.png", body: moveBody("/archive/", "ask")}, wantCode: 3400},
		{name: "move keep", call: call{method: "PATCH", target: "/photos/cat_2.png", body: moveBody("/archive/", "keep")}, check: func(t *testing.T, e *env, raw json.RawMessage) {
			wantFile(t, decodeData(t, raw).Meta, "/archive/cat_2_1.png", "image/png", len(e.src.png), true)
		}},
		{name: "move replace", call: call{method: "PATCH", target: "/photos/cat.png", body: moveBody("/archive/", "replace")}},
		{name: "move replace gave one file", call: call{method: "GET", target: "/archive/"}, check: func(t *testing.T, e *env, raw json.RawMessage) {
			d := decodeData(t, raw)
			if got := names(d.Items); got != "cat.png,cat_1.png,cat_2.png,cat_2_1.png" {
				t.Errorf("archive %s", got)
			}
		}},
		{name: "move replace left no source", call: call{method: "GET", target: "/photos/cat.png"}, wantCode: 3200},
		{name: "move to root", call: call{method: "PATCH", target: "/archive/cat_2_1.png", body: moveBody("/", "")}, check: func(t *testing.T, e *env, raw json.RawMessage) {
			wantFile(t, decodeData(t, raw).Meta, "/cat_2_1.png", "image/png", -1, true)
		}},
		{name: "move missing file", call: call{method: "PATCH", target: "/photos/none.png", body: moveBody("/archive/", "")}, wantCode: 3200},
		{name: "move to missing folder", call: call{method: "PATCH", target: "/photos/doc.pdf", body: moveBody("/nope/", "")}, wantCode: 3200},
		{name: "move outside the tree", call: call{method: "PATCH", target: "/photos/doc.pdf", body: moveBody("/../u2/", "")}, wantCode: 3300},
		{name: "move relative path", call: call{method: "PATCH", target: "/photos/doc.pdf", body: moveBody("archive/", "")}, wantCode: 3500},
		{name: "move to a file path", call: call{method: "PATCH", target: "/photos/doc.pdf", body: moveBody("/archive", "")}, wantCode: 3500},
		{name: "move bad name in path", call: call{method: "PATCH", target: "/photos/doc.pdf", body: moveBody("/a\\b/", "")}, wantCode: 3500},
		{name: "move into shared", call: call{method: "PATCH", target: "/photos/doc.pdf", body: moveBody("/logos/", "")}, wantCode: 3300},
		{name: "move no body", call: call{method: "PATCH", target: "/photos/doc.pdf", body: `{}`}, wantCode: 3500},
		{name: "delete non-empty folder", call: call{method: "DELETE", target: "/photos/"}, wantCode: 3500},
		{name: "delete file", call: call{method: "DELETE", target: "/photos/doc.pdf"}, check: func(t *testing.T, _ *env, raw json.RawMessage) {
			if string(raw) != "null" {
				t.Errorf("data %s", raw)
			}
		}},
		{name: "delete file again", call: call{method: "DELETE", target: "/photos/doc.pdf"}, wantCode: 3200},
		{name: "delete image and thumbnail", call: call{method: "DELETE", target: "/archive/cat.png"}},
		{name: "delete empty folder", call: call{method: "DELETE", target: "/photos/new%20dir%20(2)/"}},
		{name: "delete missing folder", call: call{method: "DELETE", target: "/photos/new%20dir%20(2)/"}, wantCode: 3200},
		{name: "delete root", call: call{method: "DELETE", target: "/"}, wantCode: 3300},
		{name: "delete shared folder", call: call{method: "DELETE", target: "/logos/"}, wantCode: 3300},
		{name: "create the shared folder", call: call{method: "POST", target: "/logos/"}, wantCode: 3400},
		{name: "create in the shared folder", call: call{method: "POST", target: "/logos/new/"}, wantCode: 3300},
		{name: "mkdir in shared", call: call{method: "POST", target: "/logos/sub/"}, wantCode: 3300},
		{name: "list shared", call: call{method: "GET", target: "/logos/"}, check: func(t *testing.T, _ *env, raw json.RawMessage) {
			if d := decodeData(t, raw); d.Meta.Permissions != "ro" || len(d.Items) != 0 {
				t.Errorf("shared %s", raw)
			}
		}},
		{name: "other uid sees its own tree", call: call{method: "GET", target: "/", uid: "u2"}, check: func(t *testing.T, _ *env, raw json.RawMessage) {
			if got := names(decodeData(t, raw).Items); got != "logos" {
				t.Errorf("u2 sees %s", got)
			}
		}},
		{name: "other uid cannot read", call: call{method: "GET", target: "/archive/cat_1.png", uid: "u2"}, wantCode: 3200},
		{name: "uid with a slash stays one folder", call: call{method: "GET", target: "/", uid: "../u1"}, check: func(t *testing.T, _ *env, raw json.RawMessage) {
			if got := names(decodeData(t, raw).Items); got != "logos" {
				t.Errorf("../u1 sees %s", got)
			}
		}},
		{name: "no uid", call: call{method: "GET", target: "/", uid: "-"}, wantCode: 3500},
		{name: "no credentials", call: call{method: "GET", target: "/", auth: "-"}, wantCode: 3650},
		{name: "wrong password", call: call{method: "GET", target: "/", auth: "Basic " + base64.StdEncoding.EncodeToString([]byte(fspUser+":wrong"))}, wantCode: 3650},
		{name: "unknown method", call: call{method: "PUT", target: "/photos/x.png", body: "x"}, wantCode: 3500},
		{name: "patch a folder", call: call{method: "PATCH", target: "/photos/", body: moveBody("/archive/", "")}, wantCode: 3500},
	}
}

// keyOf turns a public URL of this back end into its storage key.
func keyOf(t *testing.T, e *env, public string) string {
	t.Helper()
	base := live(e.b.publicBase)
	if !strings.HasPrefix(public, base+"/") {
		t.Fatalf("public URL %q is not under %q", public, base)
	}
	key, err := url.PathUnescape(strings.TrimPrefix(public, base+"/"))
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// checkThumb reads the thumbnail and checks its size.
func checkThumb(t *testing.T, e *env, thumbURL string, w, h int) {
	t.Helper()
	if thumbURL == "" {
		t.Error("no thumbnail")
		return
	}
	cfg, err := png.DecodeConfig(bytes.NewReader(e.b.read(t, keyOf(t, e, thumbURL))))
	if err != nil {
		t.Errorf("thumbnail: %v", err)
		return
	}
	if cfg.Width != w || cfg.Height != h {
		t.Errorf("thumbnail %dx%d, want %dx%d", cfg.Width, cfg.Height, w, h)
	}
}

// send performs c against the provider site as the vendor's resource
// server would.
func send(t *testing.T, port int, c call) response {
	t.Helper()
	uid := c.uid
	if uid == "" {
		uid = "u1"
	}
	client := c.client
	if client == "" {
		client = "c1"
	}
	headers := []string{"X-BEE-ClientId: " + client}
	if uid != "-" {
		headers = append(headers, "X-BEE-Uid: "+uid)
	}
	switch c.auth {
	case "":
		headers = append(headers, "Authorization: Basic "+base64.StdEncoding.EncodeToString([]byte(fspUser+":"+fspPassword)))
	case "-":
	default:
		headers = append(headers, "Authorization: "+c.auth)
	}
	hasType := false
	for _, h := range c.headers {
		hasType = hasType || strings.HasPrefix(h, "Content-Type:")
	}
	if c.body != "" && !hasType {
		headers = append(headers, "Content-Type: application/json")
	}
	headers = append(headers, c.headers...)
	return rawRequest(t, port, c.method+" /fsp"+c.target+" HTTP/1.1", headers, c.body)
}

// runSteps runs the table on b, checking each answer and that every
// refused request left the storage as it was.
func runSteps(t *testing.T, b backend, src *sources, port int, table []step) {
	e := &env{b: b, src: src}
	for _, s := range table {
		before := b.keys(t)
		res := send(t, port, s.call)
		what := fmt.Sprintf("%s %s (%s)", s.method, s.target, s.name)
		if s.wantCode != 0 {
			body, _ := fsperrRow(s.wantCode)
			gotBody := decodeFSP(res.Body)
			checkFSP(t, what, res, body.status, fspBody{s.wantCode, body.message, gotBody.Details})
			if gotBody.Details == "" {
				t.Errorf("%s: empty details", what)
			}
			if after := b.keys(t); strings.Join(after, "\n") != strings.Join(before, "\n") {
				t.Errorf("%s: refused, but the storage changed:\nbefore %v\nafter  %v", what, before, after)
			}
			continue
		}
		data, ok := successData(t, what, res)
		if !ok {
			continue
		}
		if ct := res.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s: Content-Type %q", what, ct)
		}
		if s.check != nil {
			s.check(t, e, data)
		}
	}
	// No temporary file is left anywhere.
	for _, k := range b.keys(t) {
		if strings.Contains(k, ".tmp-") {
			t.Errorf("temporary file left: %s", k)
		}
	}
}

// successData returns the data of a success answer; for any other
// answer it reports an error and returns false.
func successData(t *testing.T, what string, res response) (json.RawMessage, bool) {
	t.Helper()
	var ok struct {
		Status string          `json:"status"`
		Data   json.RawMessage `json:"data"`
	}
	if res.Status != 200 || json.Unmarshal(res.Body, &ok) != nil || ok.Status != "success" {
		t.Errorf("%s: got %d %s, want success", what, res.Status, res.Body)
		return nil, false
	}
	return ok.Data, true
}

func decodeFSP(raw []byte) fspBody {
	var b fspBody
	_ = json.Unmarshal(raw, &b)
	return b
}

type row struct {
	status  int
	message string
}

// fsperrRow is the contract's row, written out here independently of the
// code's table.
func fsperrRow(code int) (row, bool) {
	rows := map[int]row{
		3100: {503, "Something went wrong accessing backend filesystem"},
		3200: {404, "Resource not found"},
		3300: {403, "Permission denied"},
		3400: {409, "Resource Already Exists"},
		3450: {422, "File Not Uploaded"},
		3500: {400, "Request Error"},
		3600: {403, "User Error"},
		3650: {401, "Wrong Username or Password"},
	}
	r, ok := rows[code]
	return r, ok
}

// backends are the storages every table runs on.
var backends = []struct {
	name string
	make func(testing.TB) backend
}{{"local", localBackend}, {"s3", s3Backend}}

// onEachBackend runs fn as a subtest on a new storage of each back end,
// with the S3 credentials that the s3 storage lines read from the
// environment set.
func onEachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	t.Setenv("FSP_TEST_S3_ACCESS", s3Access)
	t.Setenv("FSP_TEST_S3_SECRET", s3Secret)
	for _, bk := range backends {
		t.Run(bk.name, func(t *testing.T) { fn(t, bk.make(t)) })
	}
}

// sharedFileReadOnly: a file in a shared folder is listed read-only (ro,
// no can-move), and its metadata says the same.
func sharedFileReadOnly(t *testing.T, b backend) {
	t.Helper()
	if b.name == "local" {
		if err := os.MkdirAll(filepath.Join(b.files, "shared", "logos"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	b.write(t, "shared/logos/brand.png", []byte("brand"))
	for _, target := range []string{"/logos/", "/logos/brand.png"} {
		res := send(t, providerPort, call{method: "GET", target: target})
		var ok struct {
			Data dataJSON `json:"data"`
		}
		if res.Status != 200 || json.Unmarshal(res.Body, &ok) != nil {
			t.Fatalf("GET %s: %d %s", target, res.Status, res.Body)
		}
		file := ok.Data.Meta
		if len(ok.Data.Items) > 0 {
			file = ok.Data.Items[0]
		}
		if file.Name != "brand.png" || file.Permissions != "ro" || file.Extra["can-move"] != nil {
			t.Errorf("GET %s: shared file %+v, want brand.png, ro, no can-move", target, file)
		}
	}
}

// TestProvider runs the operation and error table against a real Caddy
// on each back end.
func TestProvider(t *testing.T) {
	src := newSources(t)
	hash, err := bcrypt.GenerateFromPassword([]byte(fspPassword), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	onEachBackend(t, func(t *testing.T, b backend) {
		load(t, providerSites(b, src, "", string(hash)))
		runSteps(t, b, src, providerPort, steps(src))
		sharedFileReadOnly(t, b)

		// 3100: a storage that fails.
		res := send(t, brokenPort, call{method: "GET", target: "/", auth: "-"})
		checkFSP(t, "broken storage", res, 503, fspBody{3100, "Something went wrong accessing backend filesystem",
			"The storage behind the file service could not be reached; please try again later"})

		concurrentKeep(t, b, src)
	})
}

// concurrentKeep uploads one name many times at once with keep: every
// upload must get its own name and every file must be there.
func concurrentKeep(t *testing.T, b backend, src *sources) {
	const n = 8
	if res := send(t, providerPort, call{method: "POST", target: "/race/"}); res.Status != 200 {
		t.Fatalf("mkdir /race/: %d %s", res.Status, res.Body)
	}
	var wg sync.WaitGroup
	paths := make([]string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res := send(t, providerPort, call{method: "POST", target: "/race/same.png", body: upload(src.URL+"/cat.png", "keep")})
			var ok struct {
				Data dataJSON `json:"data"`
			}
			if res.Status != 200 || json.Unmarshal(res.Body, &ok) != nil {
				t.Errorf("concurrent upload %d: %d %s", i, res.Status, res.Body)
				return
			}
			paths[i] = ok.Data.Meta.Path
		}(i)
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, p := range paths {
		if seen[p] {
			t.Errorf("two uploads got %s", p)
		}
		seen[p] = true
	}
	res := send(t, providerPort, call{method: "GET", target: "/race/"})
	var list struct {
		Data dataJSON `json:"data"`
	}
	if err := json.Unmarshal(res.Body, &list); err != nil || len(list.Data.Items) != n {
		t.Errorf("after %d concurrent keeps the folder holds %s", n, res.Body)
	}
	for _, m := range list.Data.Items {
		if m.Size != int64(len(src.png)) {
			t.Errorf("%s: %d bytes, want %d", m.Path, m.Size, len(src.png))
		}
	}
}

// TestProviderRefusesPrivateSources keeps the default address policy: a
// source on loopback (by address or by name) is refused and nothing is
// stored.
func TestProviderRefusesPrivateSources(t *testing.T) {
	src := newSources(t)
	b := localBackend(t)
	hash, _ := bcrypt.GenerateFromPassword([]byte(fspPassword), bcrypt.MinCost)
	load(t, providerSites(b, src, "", string(hash)))
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(src.URL, "http://"))
	for _, source := range []string{
		src.URL + "/cat.png",
		"http://localhost:" + port + "/cat.png",
		"http://[::1]:" + port + "/cat.png",
		"http://169.254.169.254/latest/meta-data/",
		"http://10.0.0.1/x.png",
	} {
		res := send(t, privatePort, call{method: "POST", target: "/cat.png", body: upload(source, ""), auth: "-"})
		got := decodeFSP(res.Body)
		if res.Status != 422 || got.Code != 3450 || !strings.Contains(got.Details, "not allowed") {
			t.Errorf("%s: got %d %s, want 3450 address not allowed", source, res.Status, res.Body)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(tmpDir, "store-private", "c1", "u1"))
	if len(entries) != 0 {
		t.Errorf("refused uploads left %d entries", len(entries))
	}
}

// TestProviderNeedsAuthentication: without an authentication handler in
// front (and without allow_anonymous) every request is 3650.
func TestProviderNeedsAuthentication(t *testing.T) {
	store := t.TempDir()
	load(t, fspSite(privatePort, "local "+store))
	for _, c := range []call{{method: "GET", target: "/"}, {method: "POST", target: "/photos/"}} {
		res := send(t, privatePort, c)
		checkFSP(t, c.method+" "+c.target, res, 401, fspBody{3650, "Wrong Username or Password", "The file service credentials are missing or wrong"})
	}
	if entries, _ := os.ReadDir(store); len(entries) != 0 {
		t.Errorf("unauthenticated requests made %d entries", len(entries))
	}
}

// TestProviderRootNeedsEveryValue: a placeholder of the storage root that a
// request leaves empty (or that nothing sets) is 3500, not a shorter root:
// with "{tenant}/{uid}", a request without the tenant and uid "u" would
// otherwise get the folder "u", the parent of tenant u's users' folders.
func TestProviderRootNeedsEveryValue(t *testing.T) {
	store := t.TempDir()
	load(t, fspSite(privatePort, "local "+store, "root {http.request.header.X-Tenant}/{http.request.header.X-BEE-Uid}", "allow_anonymous")+
		fspSite(brokenPort, "local "+store, "root tenants/{http.request.header.X-BEE-Uid}/{no.such.placeholder}", "allow_anonymous"))
	res := send(t, privatePort, call{method: "POST", target: "/private/", uid: "alice", auth: "-", headers: []string{"X-Tenant: u"}})
	if res.Status != 200 {
		t.Fatalf("creating tenant u's folder: %d %s", res.Status, res.Body)
	}
	for _, c := range []struct {
		name string
		port int
		call call
	}{
		{"no tenant: list", privatePort, call{method: "GET", target: "/", uid: "u", auth: "-"}},
		{"no tenant: delete", privatePort, call{method: "DELETE", target: "/alice/private/", uid: "u", auth: "-"}},
		{"empty tenant", privatePort, call{method: "GET", target: "/", uid: "u", auth: "-", headers: []string{"X-Tenant: "}}},
		{"unknown placeholder", brokenPort, call{method: "GET", target: "/", uid: "u", auth: "-"}},
	} {
		res := send(t, c.port, c.call)
		got := decodeFSP(res.Body)
		if res.Status != 400 || got.Code != 3500 || !strings.Contains(got.Details, "The storage root needs {") {
			t.Errorf("%s: %d %s, want 3500 naming the empty placeholder", c.name, res.Status, res.Body)
		}
	}
	if _, err := os.Stat(filepath.Join(store, "u", "alice", "private")); err != nil {
		t.Errorf("tenant u's folder: %v", err)
	}
}

// TestProviderLoadErrors: invalid fsp configurations are refused at load
// time with an error naming the offending token.
func TestProviderLoadErrors(t *testing.T) {
	aFile := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(aFile, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("FSP_TEST_EMPTY", "")
	t.Setenv("FSP_TEST_ENDPOINT_WITH_PATH", "127.0.0.1:1/files")
	for _, c := range []struct{ name, block, want string }{
		{"folder through a file", "local " + aFile + "/store\n\t\tpublic_url http://x", `fsp: local.folder: the folder cannot be opened or created`},
		{"folder from an empty placeholder", "local {env.FSP_TEST_EMPTY}\n\t\tpublic_url http://x", `fsp: local.folder: evaluated placeholder {env.FSP_TEST_EMPTY} is empty`},
		{"media type without subtype", "local /tmp/x\n\t\tpublic_url http://x\n\t\tallow_types png", `"png" is not a media type: write type/subtype`},
		{"script type allowed", "local /tmp/x\n\t\tpublic_url http://x\n\t\tallow_types image/svg+xml", "image/svg+xml can carry script"},
		{"public_url without scheme", "local /tmp/x\n\t\tpublic_url example.com/files", `public_url "example.com/files": write an absolute URL with its scheme`},
		{"public_url from an empty placeholder", "local /tmp/x\n\t\tpublic_url {env.FSP_TEST_EMPTY}/files", "public_url: the placeholder {env.FSP_TEST_EMPTY} is empty"},
		{"root from an empty placeholder", "local /tmp/x\n\t\tpublic_url http://x\n\t\troot {env.FSP_TEST_EMPTY}/{http.request.header.X-BEE-Uid}", "root: the placeholder {env.FSP_TEST_EMPTY} is empty"},
		{"root with two placeholders in a segment", "local /tmp/x\n\t\tpublic_url http://x\n\t\troot {http.request.header.X-Tenant}-{http.request.header.X-BEE-Uid}", `root "{http.request.header.X-Tenant}-{http.request.header.X-BEE-Uid}": a path segment holds two placeholders`},
		{"root with a dot segment", "local /tmp/x\n\t\tpublic_url http://x\n\t\troot tenants/../{http.request.header.X-BEE-Uid}", `root "tenants/../{http.request.header.X-BEE-Uid}" must be a relative path`},
		{"s3 endpoint with a path", "public_url http://x\n\t\ts3 {\n\t\t\tendpoint 127.0.0.1:9230/files\n\t\t\tbucket fsp-files\n\t\t}", `fsp: s3.endpoint: write host:port only, without scheme or path`},
		{"s3 endpoint placeholder with a path", "public_url http://x\n\t\ts3 {\n\t\t\tendpoint {env.FSP_TEST_ENDPOINT_WITH_PATH}\n\t\t\tbucket fsp-files\n\t\t}", `fsp: s3.endpoint: write host:port only`},
		{"s3 key from an empty placeholder", "public_url http://x\n\t\ts3 {\n\t\t\tendpoint 127.0.0.1:1\n\t\t\tbucket fsp-files\n\t\t\taccess_key {env.FSP_TEST_EMPTY}\n\t\t\tsecret_key s\n\t\t}", "fsp: s3.access_key: evaluated placeholder {env.FSP_TEST_EMPTY} is empty"},
		{"unknown subdirective", "local /tmp/x\n\t\tpublic_url http://x\n\t\tfolder /tmp", `unrecognized subdirective "folder"`},
		{"two storages", "local /tmp/x\n\t\ts3 {\n\t\t\tbucket fsp-files\n\t\t}", "storage already specified"},
		{"no storage", "public_url http://x", "exactly one storage"},
		{"no public_url", "local /tmp/x", "public_url is required"},
		{"bad size", "local /tmp/x\n\t\tpublic_url http://x\n\t\tmax_size lots", `max_size "lots"`},
		{"size over 4GiB", "local /tmp/x\n\t\tpublic_url http://x\n\t\tmax_size 5GiB", `max_size "5GiB"`},
		{"zero size", "local /tmp/x\n\t\tpublic_url http://x\n\t\tmax_size 0", `max_size "0"`},
		{"bad timeout", "local /tmp/x\n\t\tpublic_url http://x\n\t\tfetch_timeout soon", `fetch_timeout "soon"`},
		{"bad upload bound", "local /tmp/x\n\t\tpublic_url http://x\n\t\tmax_uploads 0", `max_uploads "0"`},
		{"bad shared name", "local /tmp/x\n\t\tpublic_url http://x\n\t\tshared a|b logos", "fsp: shared[0].name: folder names match"},
		{"shared path escapes", "local /tmp/x\n\t\tpublic_url http://x\n\t\tshared logos ../up", "fsp: shared[0].key must be relative, without dot segments"},
		{"shared path is the whole storage", "local /tmp/x\n\t\tpublic_url http://x\n\t\tshared logos /", "fsp: shared[0].key is the storage itself"},
		{"shared folder holding every user's folder", "local /tmp/x\n\t\tpublic_url http://x\n\t\troot users/{http.request.header.X-BEE-Uid}\n\t\tshared all users", "fsp: shared[0].key and the users' folders (root) lie one inside the other"},
		{"shared folder inside the one users' folder", "local /tmp/x\n\t\tpublic_url http://x\n\t\troot team\n\t\tshared logos /team/logos/", "fsp: shared[0].key and the users' folders (root) lie one inside the other"},
		{"bad media type", "local /tmp/x\n\t\tpublic_url http://x\n\t\tallow_types Image/PNG", `"Image/PNG"`},
		{"s3 without bucket", "public_url http://x\n\t\ts3 {\n\t\t\tendpoint 127.0.0.1:1\n\t\t}", "fsp: s3.bucket is required"},
		{"s3 endpoint with scheme", "public_url http://x\n\t\ts3 {\n\t\t\tendpoint http://h:1\n\t\t\tbucket fsp-files\n\t\t}", "fsp: s3.endpoint: write host:port only, without scheme"},
		{"s3 endpoint holding keys", "public_url http://x\n\t\ts3 {\n\t\t\tendpoint https://AKIA:s3cr3t@h:1\n\t\t\tbucket fsp-files\n\t\t}", "fsp: s3.endpoint: write host:port only"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := loadError(t, fmt.Sprintf(":%d {\n\tfsp {\n\t\t%s\n\t}\n}\n", privatePort, c.block))
			if !strings.Contains(got, c.want) {
				t.Errorf("load error %s does not name %s", got, c.want)
			}
			if strings.Contains(got, "s3cr3t") {
				t.Errorf("load error %s names the secret", got)
			}
		})
	}
}

// TestProviderBoundsConcurrentUploads: with max_uploads 2, no more than two
// uploads (of six users) fetch (and hold their files in memory) at once;
// the others wait their turn and then succeed.
func TestProviderBoundsConcurrentUploads(t *testing.T) {
	src := newSources(t)
	release := make(chan struct{})
	var mu sync.Mutex
	inFlight, most := 0, 0
	held := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		inFlight++
		most = max(most, inFlight)
		mu.Unlock()
		defer func() {
			mu.Lock()
			inFlight--
			mu.Unlock()
		}()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, _ = w.Write(src.png)
	}))
	defer held.Close()
	anonymousSite(t, "local "+t.TempDir(), "allow_private all", "max_uploads 2")
	const n = 6
	var wg sync.WaitGroup
	results := make([]response, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = send(t, privatePort, call{method: "POST", target: fmt.Sprintf("/up%d.png", i), uid: fmt.Sprintf("u%d", i), body: upload(held.URL+"/cat.png", ""), auth: "-"})
		}()
	}
	waitFor := func(want int) {
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			mu.Lock()
			got := inFlight
			mu.Unlock()
			if got >= want {
				return
			}
		}
		t.Fatalf("fewer than %d uploads reached the source", want)
	}
	waitFor(2)
	time.Sleep(300 * time.Millisecond) // room for a third, were there no bound
	close(release)
	wg.Wait()
	if most != 2 {
		t.Errorf("%d uploads fetched at once, want at most (and here exactly) 2", most)
	}
	for i, res := range results {
		if res.Status != 200 {
			t.Errorf("upload %d: %d %s", i, res.Status, res.Body)
		}
	}
}
