package designbridge

import (
	"bytes"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
)

// spoolAbove is the size above which an export's body no longer waits
// for the upstream in one buffer: designs are rarely larger. A larger body
// that says its length (Content-Length) is held in memory in chunks of
// largeChunk bytes while the bodies so held stay within the handler's
// large_body_memory (memoryBudget), and in a temporary file otherwise, so that memory stays
// bounded however many large exports arrive at once (each is still
// bounded by max_body). A file costs two more crossings of the kernel
// (written, read back) and page-cache work: a 10 MiB body cost about
// 1.5× reverse_proxy's CPU from a file, 1.1–1.2× from memory
// (docs/benchmarks.md).
const (
	spoolAbove = 1 << 20
	largeChunk = 1 << 20
)

// memoryBudget is the memory that large bodies may hold at once.
type memoryBudget struct {
	left atomic.Int64
}

func newMemoryBudget(n int64) *memoryBudget {
	m := new(memoryBudget)
	m.left.Store(n)
	return m
}

// take reserves n bytes, all or nothing.
func (m *memoryBudget) take(n int64) bool {
	if m.left.Add(-n) >= 0 {
		return true
	}
	m.left.Add(n)
	return false
}

func (m *memoryBudget) give(n int64) { m.left.Add(n) }

// cover makes *reserved, what one buffer holds of m, cover a buffer of
// size bytes: what it holds past spoolAbove counts (nil m counts
// nothing). False, with nothing taken, when m has no room for it.
func (m *memoryBudget) cover(reserved *int64, size int) bool {
	extra := int64(size) - spoolAbove - *reserved
	if m == nil || extra <= 0 {
		return true
	}
	if !m.take(extra) {
		return false
	}
	*reserved += extra
	return true
}

// free gives back what one buffer held of m (cover).
func (m *memoryBudget) free(reserved *int64) {
	if m != nil && *reserved > 0 {
		m.give(*reserved)
	}
	*reserved = 0
}

// requestBody is a request body read whole before anything goes upstream
// (so that a slow upload never holds an upstream connection, and the body
// can be sent again on a fresh connection): in memory, or past spoolAbove
// in a temporary file that no other process can open (it is removed from
// its directory at once where the system allows it).
//
// The memory is a pooled buffer (bufpool.go), so the body counts who
// still reads it: its owner (the request, then the call that sends it),
// and the holds taken with retain (each reader handed to net/http, which
// may go on sending the body after the answer is in; the flight group,
// while identical exports can still join and compare). The last to let go
// frees it.
type requestBody struct {
	mem bytes.Buffer
	// chunks hold a large body in memory (holdLarge), reserved from budget.
	chunks   [][]byte
	budget   *memoryBudget
	reserved int64
	file     *os.File
	name     string // the file's name while it must still be removed
	size     int64
	want     int // the announced size (sizeFor)

	holds  atomic.Int32 // references besides the owner's
	closed atomic.Bool  // the owner has let go (Close)
	freed  bool         // set by the last reference, after which nobody reads
}

// firstRoom is the most a body's buffer holds before any of the body has
// arrived: a Content-Length is only a claim, and a client that announces
// 1 MiB and sends nothing must not hold 1 MiB (HTTP/2 carries hundreds of
// such requests on one connection). 64 KiB holds most designs whole, so
// that they are read without growing and copying their buffer.
const firstRoom = 64 << 10

// sizeFor prepares the body, before it is read, for the n bytes its
// Content-Length announces (0: unknown). Its buffer starts small and
// grows as the bytes arrive (readMem), up to n and bytes.MinRead to spare.
func (rb *requestBody) sizeFor(n int) {
	rb.want = n
	rb.mem = *bytes.NewBuffer(getBuf(min(n+bytes.MinRead, firstRoom)))
}

// holdLarge makes the body, before it is read, hold its n bytes in
// chunks reserved from budget; false when the budget has no room left.
func (rb *requestBody) holdLarge(budget *memoryBudget, n int64) bool {
	if budget == nil || !budget.take(n) {
		return false
	}
	rb.budget, rb.reserved = budget, n
	rb.chunks = make([][]byte, 0, (n+largeChunk-1)/largeChunk)
	return true
}

// readChunks reads src to its end into the chunks.
// More than was reserved (net/http holds a body to its Content-Length, so
// never) is refused.
func (rb *requestBody) readChunks(src io.Reader) (int64, error) {
	var n int64
	for {
		last := len(rb.chunks) - 1
		if last < 0 || len(rb.chunks[last]) == cap(rb.chunks[last]) {
			if rb.size >= rb.reserved {
				// Only EOF may follow.
				var one [1]byte
				m, err := io.ReadFull(src, one[:])
				if m > 0 {
					return n, errors.New("design_bridge: body longer than its Content-Length")
				}
				if err == io.EOF {
					err = nil
				}
				return n, err
			}
			rb.chunks = append(rb.chunks, getBuf(largeChunk))
			last++
		}
		c := rb.chunks[last]
		m, err := src.Read(c[len(c):cap(c)])
		rb.chunks[last] = c[:len(c)+m]
		rb.size += int64(m)
		n += int64(m)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// memoryBody is a body already in memory, such as LoginV2's.
func memoryBody(b []byte) *requestBody {
	rb := &requestBody{size: int64(len(b))}
	rb.mem.Write(b)
	return rb
}

// Write appends p, moving the body to a temporary file once it outgrows
// spoolAbove.
func (rb *requestBody) Write(p []byte) (int, error) {
	if rb.file == nil && rb.size+int64(len(p)) > spoolAbove {
		if err := rb.spool(); err != nil {
			return 0, err
		}
	}
	var n int
	var err error
	if rb.file != nil {
		n, err = rb.file.Write(p)
	} else {
		n, err = rb.mem.Write(p)
	}
	rb.size += int64(n)
	return n, err
}

// ReadFrom reads src to its end (io.Copy's path, without a copy buffer):
// into memory while the body fits in spoolAbove bytes (readMem), then into
// a temporary file.
func (rb *requestBody) ReadFrom(src io.Reader) (int64, error) {
	if rb.chunks != nil {
		return rb.readChunks(src)
	}
	var n int64
	if rb.file == nil {
		m, err := rb.readMem(src)
		n += m
		if err != nil || rb.size <= spoolAbove {
			return n, err
		}
		if err := rb.spool(); err != nil {
			return n, err
		}
	}
	// In writes of largeChunk: os.File's own ReadFrom would copy through
	// 32 KiB, a system call each.
	buf := getBuf(largeChunk)
	m, err := io.CopyBuffer(struct{ io.Writer }{rb.file}, src, buf[:cap(buf)])
	putBuf(buf)
	rb.size += m
	return n + m, err
}

// readMem reads src into memory, to its end or until the body holds more
// than spoolAbove bytes. The buffer grows with the bytes that arrive,
// never ahead of them: each time it is full it doubles (pooled, the old one
// given back), up to the announced size and bytes.MinRead to spare, so
// that a body that arrives as announced ends in a buffer of its size class
// without a further copy. It is at most about twice what has arrived.
func (rb *requestBody) readMem(src io.Reader) (int64, error) {
	buf := rb.mem.Bytes()
	defer func() { rb.mem = *bytes.NewBuffer(buf) }()
	var n int64
	for len(buf) <= spoolAbove {
		if len(buf) == cap(buf) {
			next := max(2*cap(buf), minPooled)
			if want := rb.want + bytes.MinRead; want > cap(buf) {
				next = min(next, want)
			}
			grown := append(getBuf(next), buf...)
			putBuf(buf)
			buf = grown
		}
		m, err := src.Read(buf[len(buf):min(cap(buf), spoolAbove+1)])
		buf = buf[:len(buf)+m]
		rb.size += int64(m)
		n += int64(m)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// spool moves the body to a temporary file.
func (rb *requestBody) spool() error {
	f, err := os.CreateTemp("", "design-bridge-body-")
	if err != nil {
		return err
	}
	rb.file, rb.name = f, f.Name()
	if os.Remove(rb.name) == nil { // not on Windows, while the file is open
		rb.name = ""
	}
	if _, err := rb.file.Write(rb.mem.Bytes()); err != nil {
		return err
	}
	putBuf(rb.mem.Bytes())
	rb.mem = bytes.Buffer{}
	return nil
}

// Len is the body's size in bytes.
func (rb *requestBody) Len() int64 { return rb.size }

// Reader returns a reader of the whole body, from its start; each call
// returns a new one.
func (rb *requestBody) Reader() io.Reader {
	if rb.file != nil {
		return io.NewSectionReader(rb.file, 0, rb.size)
	}
	if rb.chunks != nil {
		return io.NewSectionReader(rb, 0, rb.size)
	}
	return bytes.NewReader(rb.mem.Bytes())
}

// ReadAt reads the body from off, wherever it is held.
func (rb *requestBody) ReadAt(p []byte, off int64) (int, error) {
	switch {
	case rb.freed:
		return 0, errBodyClosed
	case rb.file != nil:
		return rb.file.ReadAt(p, off)
	case rb.chunks == nil:
		return bytes.NewReader(rb.mem.Bytes()).ReadAt(p, off)
	}
	n := 0
	for _, c := range rb.chunks {
		if off >= int64(len(c)) {
			off -= int64(len(c))
			continue
		}
		m := copy(p[n:], c[off:])
		n += m
		off = 0
		if n == len(p) {
			return n, nil
		}
	}
	return n, io.EOF
}

// Bytes returns a body held in one buffer (nil for a large one).
func (rb *requestBody) Bytes() []byte {
	if rb.file != nil || rb.chunks != nil {
		return nil
	}
	return rb.mem.Bytes()
}

// Close is the owner letting go of the body (once; a second Close does
// nothing): the body is freed when no reader or other holder is left.
func (rb *requestBody) Close() error {
	if rb.closed.Swap(true) {
		return nil
	}
	return rb.release()
}

// retain takes a reference to the body for a holder other than the
// owner, which release gives back. It must be taken while another
// reference is still held, never on a body that may have been freed.
func (rb *requestBody) retain() { rb.holds.Add(1) }

// release gives back a reference; the last one frees the body: the
// temporary file is closed and removed, the memory goes back to the pool.
func (rb *requestBody) release() error {
	if rb.holds.Add(-1) != -1 {
		return nil
	}
	rb.freed = true
	putBuf(rb.mem.Bytes())
	rb.mem = bytes.Buffer{}
	for _, c := range rb.chunks {
		putBuf(c)
	}
	rb.chunks = nil
	if rb.budget != nil {
		rb.budget.give(rb.reserved)
		rb.budget = nil
	}
	if rb.file == nil {
		return nil
	}
	err := rb.file.Close()
	if rb.name != "" {
		_ = os.Remove(rb.name)
	}
	return err
}

// openReader returns a reader of the whole body that holds a reference to
// it until closed: what net/http sends, from its own goroutine and
// possibly after the answer has arrived. Once closed it reads nothing,
// whoever still calls Read.
func (rb *requestBody) openReader() io.ReadCloser {
	rb.retain()
	return &bodyReader{rb: rb, r: rb.Reader()}
}

// sendReaders returns the GetBody that net/http's transport sends the
// body with, and wrote, for its WroteRequest trace: each reader holds a
// reference to the body until the transport is done with it.
//
// A body in one buffer is handed over as an io.NopCloser of a
// *bytes.Reader, which net/http knows to be in memory: it then writes the
// request's headers and body through its write buffer together, in one
// write when they fit (exportWriteBuffer), where for any other reader it
// sends the headers alone and then the body, through a 32 KiB buffer
// allocated for each request, a write each (from its chunks for a large
// body held in memory: bodyConn). Closing such a reader does
// nothing, so its reference is given back by wrote instead: net/http calls
// WroteRequest once for each request it wrote, after the last read of its
// body, and writes each reader once at most (a request sent again gets a
// new one). A reader never written (a request that failed before that)
// keeps its reference: its buffer is then left to the collector instead
// of going back to the pool.
func (rb *requestBody) sendReaders() (get func() (io.ReadCloser, error), wrote func()) {
	buf := rb.Bytes()
	if buf == nil {
		return func() (io.ReadCloser, error) { return rb.openReader(), nil }, nil
	}
	var lent atomic.Int32 // readers handed over and not yet written
	get = func() (io.ReadCloser, error) {
		rb.retain()
		lent.Add(1)
		return io.NopCloser(bytes.NewReader(buf)), nil
	}
	wrote = func() {
		if lent.Add(-1) < 0 {
			lent.Add(1) // not one of these readers: nothing to give back
			return
		}
		_ = rb.release()
	}
	return get, wrote
}

type bodyReader struct {
	mu sync.Mutex // Close may come from another goroutine than Read
	rb *requestBody
	r  io.Reader
}

var errBodyClosed = errors.New("design_bridge: request body read after close")

func (br *bodyReader) Read(p []byte) (int, error) {
	br.mu.Lock()
	defer br.mu.Unlock()
	if br.rb == nil {
		return 0, errBodyClosed
	}
	return br.r.Read(p)
}

// sendTo writes the rest of a body held in chunks (holdLarge) to w, at
// most n bytes, from the chunks themselves, a write each, where the
// reader's caller would copy them once more through a buffer of its own.
// sent is false, with nothing written, for a body held otherwise. Each
// write holds the reader's lock, as Read does, so that a Close meanwhile
// waits for it (a write to a connection that is closed ends at once)
// instead of freeing the chunk under it.
func (br *bodyReader) sendTo(w io.Writer, n int64) (written int64, sent bool, err error) {
	br.mu.Lock()
	sr, ok := br.r.(*io.SectionReader)
	ok = ok && br.rb.chunks != nil // br.r is nil once closed
	br.mu.Unlock()
	if !ok {
		return 0, false, nil
	}
	for written < n {
		br.mu.Lock()
		if br.rb == nil {
			br.mu.Unlock()
			return written, true, errBodyClosed
		}
		off, _ := sr.Seek(0, io.SeekCurrent)
		p := br.rb.chunkAt(off)
		p = p[:min(int64(len(p)), n-written)]
		if len(p) == 0 {
			br.mu.Unlock()
			break
		}
		m, err := w.Write(p)
		_, _ = sr.Seek(int64(m), io.SeekCurrent)
		br.mu.Unlock()
		written += int64(m)
		if err != nil {
			return written, true, err
		}
	}
	return written, true, nil
}

// chunkAt is the rest of the chunk that holds the body's byte at off
// (empty at the end).
func (rb *requestBody) chunkAt(off int64) []byte {
	for _, c := range rb.chunks {
		if off < int64(len(c)) {
			return c[off:]
		}
		off -= int64(len(c))
	}
	return nil
}

func (br *bodyReader) Close() error {
	br.mu.Lock()
	defer br.mu.Unlock()
	if br.rb == nil {
		return nil
	}
	rb := br.rb
	br.rb, br.r = nil, nil
	return rb.release()
}
