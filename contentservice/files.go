package contentservice

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// storedName is a stored file's name: 128 random bits, so that the link
// itself is the permission to read it.
var storedName = regexp.MustCompile(`^[0-9a-f]{32}\.pdf$`)

// IsFileLink reports whether path is a stored file's link, under any
// prefix: its name is the permission to read the file, so the request is
// kept out of Caddy's access log. Only a path ending in a name of that
// form is: anything else skipping the log would let a client hide
// requests from it by putting /v1/files/ in their path.
func IsFileLink(path string) bool {
	_, ok := fileLinkName(path)
	return ok
}

// fileLinkName is the stored file's name path ends in (IsFileLink).
func fileLinkName(path string) (string, bool) {
	i := strings.LastIndex(path, PathFiles)
	if i < 0 || !storedName.MatchString(path[i+len(PathFiles):]) {
		return "", false
	}
	return path[i+len(PathFiles):], true
}

// IsFileAnswer reports whether h, the headers of an answer to a request
// of path, are those of the stored file path links to: the PDF itself
// (or a range of it, or "not modified"), which names the file in its
// Content-Disposition. A site that forwards the link leaves only these
// out of its access log, so that no other request is hidden by making
// up a name.
func IsFileAnswer(path string, h http.Header) bool {
	name, ok := fileLinkName(path)
	return ok && h.Get("Content-Disposition") == fileDisposition(name)
}

// fileDisposition is the Content-Disposition of stored file name.
func fileDisposition(name string) string { return `attachment; filename="` + name + `"` }

// serveFile answers GET /v1/files/<name>: a stored PDF until it expires.
func (s *service) serveFile(w http.ResponseWriter, r *http.Request) {
	// The name is the permission to read the file, and Caddy's access log
	// would record it (the request's URI, the answer's
	// Content-Disposition); no handler can redact that entry, so the
	// request is left out of it, as Caddy's log_skip leaves one out.
	if IsFileLink(r.URL.Path) {
		caddyhttp.SetVar(r.Context(), caddyhttp.LogSkipVar, true)
	}
	w.Header().Set("X-Request-Id", requestID(r))
	// Nothing opened from the file tells another site where it came from.
	w.Header().Set("Referrer-Policy", "no-referrer")
	if s.files == nil {
		writeError(w, http.StatusNotFound, http.StatusNotFound, "Not found", "no such file")
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, http.StatusMethodNotAllowed, "Method not allowed", "use GET")
		return
	}
	name := strings.TrimPrefix(r.URL.Path, PathFiles)
	if !storedName.MatchString(name) {
		writeError(w, http.StatusNotFound, http.StatusNotFound, "Not found", "no such file")
		return
	}
	f, expires, err := s.files.open(name)
	if err != nil {
		writeError(w, http.StatusNotFound, http.StatusNotFound, "Not found", "no such file, or it expired")
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", fileDisposition(name))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Content-Security-Policy", "sandbox")
	w.Header().Set("Cache-Control", "private, max-age="+strconv.Itoa(int(time.Until(expires).Seconds())))
	// The file's time is when it expires, so no Last-Modified; a file
	// never changes under its name, so a hash of the name (which the
	// name cannot be found from) validates resumed downloads.
	sum := sha256.Sum256([]byte(name))
	w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:16])+`"`)
	http.ServeContent(&fileAnswer{ResponseWriter: w}, r, name, time.Time{}, f)
}

// fileAnswer passes http.ServeContent's answer through, except its
// refusals (a Range outside the file, 416, as text; a failed If-Match,
// 412, with no body), which it answers with the error object instead.
type fileAnswer struct {
	http.ResponseWriter
	refused bool
}

func (w *fileAnswer) WriteHeader(status int) {
	if status < http.StatusBadRequest {
		w.ResponseWriter.WriteHeader(status)
		return
	}
	w.refused = true
	details := "a precondition of the request does not hold for this file"
	if status == http.StatusRequestedRangeNotSatisfiable {
		details = "the Range is not within the file"
	}
	writeError(w.ResponseWriter, status, status, http.StatusText(status), details)
}

func (w *fileAnswer) Write(p []byte) (int, error) {
	if w.refused {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// ReadFrom keeps the writer's own ReadFrom (sendfile) for the file.
func (w *fileAnswer) ReadFrom(r io.Reader) (int64, error) {
	if w.refused {
		return io.Copy(io.Discard, r)
	}
	if rf, ok := w.ResponseWriter.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(w.ResponseWriter, r)
}

func (w *fileAnswer) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// fileStore keeps rendered PDFs in a folder for ttl. A file's
// modification time is when it expires, so that stores with other TTLs
// sharing the folder (every service's default, or other Caddy processes)
// keep each file for its own. Expired files are removed when a file is
// stored (no background work), and at most maxFiles files and maxBytes
// bytes are kept, the first to expire going first.
type fileStore struct {
	dir      string
	ttl      time.Duration
	maxFiles int
	maxBytes int64
	// abandoned is the age past which a temporary file is no write's: a
	// PDF is written as it renders, which may wait for a tab and render
	// for a browser timeout each.
	abandoned time.Duration
}

// newFileStore is a store in dir with the service's bounds, for renders
// of at most timeout (and as long waiting for a tab).
func newFileStore(dir string, ttl, timeout time.Duration) *fileStore {
	return &fileStore{dir: dir, ttl: ttl, maxFiles: maxStoredFiles, maxBytes: maxStoredBytes,
		abandoned: max(time.Hour, 3*timeout)}
}

// put stores the file write writes, under a new name; a write that
// fails leaves nothing.
func (fs *fileStore) put(write func(io.Writer) error) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	name := hex.EncodeToString(b[:]) + ".pdf"
	pending := &pendingFile{dir: fs.dir}
	err := write(pending)
	if err == nil && pending.f == nil {
		_, err = pending.Write(nil) // an empty file
	}
	tmp := pending.f
	if tmp == nil {
		return "", err
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chtimes(tmp.Name(), time.Time{}, time.Now().Add(fs.ttl))
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(fs.dir, name))
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return "", err
	}
	fs.sweep(name)
	return name, nil
}

// pendingFile is a write's temporary file, created with its first byte:
// a render may wait for a tab and print for a browser timeout each before
// it writes, and a store with a shorter timeout sharing the folder would
// meanwhile take a file idle that long for one a crash left.
type pendingFile struct {
	dir string
	f   *os.File
}

func (p *pendingFile) Write(b []byte) (int, error) {
	if p.f == nil {
		f, err := os.CreateTemp(p.dir, ".tmp-*")
		if err != nil {
			return 0, err
		}
		p.f = f
	}
	return p.f.Write(b)
}

// open returns a stored file that has not expired, with when it expires.
func (fs *fileStore) open(name string) (*os.File, time.Time, error) {
	path := filepath.Join(fs.dir, name)
	f, err := os.Open(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	info, err := f.Stat()
	if err != nil || !time.Now().Before(info.ModTime()) {
		f.Close()
		_ = os.Remove(path)
		return nil, time.Time{}, os.ErrNotExist
	}
	return f, info.ModTime(), nil
}

// sweep removes expired files, temporary files left by a write that
// never finished, and the first to expire beyond maxFiles or maxBytes; keep,
// the file just stored, always stays.
func (fs *fileStore) sweep(keep string) {
	entries, err := os.ReadDir(fs.dir)
	if err != nil {
		return
	}
	type file struct {
		name string
		mod  time.Time
		size int64
	}
	var live []file
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".tmp-") {
			// A write a crash cut short, once no render could still be
			// writing it.
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > fs.abandoned {
				_ = os.Remove(filepath.Join(fs.dir, e.Name()))
			}
			continue
		}
		if !storedName.MatchString(e.Name()) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		if !time.Now().Before(info.ModTime()) {
			_ = os.Remove(filepath.Join(fs.dir, e.Name()))
			continue
		}
		live = append(live, file{e.Name(), info.ModTime(), info.Size()})
	}
	// keep first, then the last to expire first: once one does not fit,
	// it and every one expiring sooner go.
	sort.Slice(live, func(i, j int) bool {
		if ki, kj := live[i].name == keep, live[j].name == keep; ki != kj {
			return ki
		}
		return live[i].mod.After(live[j].mod)
	})
	var total int64
	full := false
	for i, f := range live {
		total += f.size
		full = full || (i > 0 && (i >= fs.maxFiles || total > fs.maxBytes))
		if full {
			_ = os.Remove(filepath.Join(fs.dir, f.name))
		}
	}
}
