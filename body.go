package designbridge

import (
	"bytes"
	"errors"
	"hash/maphash"
	"io"
	"os"
	"sync"
	"sync/atomic"
)

// spoolAbove is the size above which an export's body waits for the
// upstream in a temporary file instead of memory: designs are rarely
// larger, and memory then stays flat however many large exports arrive
// at once (each is still bounded by max_body).
const spoolAbove = 1 << 20

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
	mem  bytes.Buffer
	file *os.File
	name string // the file's name while it must still be removed
	size int64
	// sum, when set (hashWith), hashes what goes to the file as it
	// arrives, so that a spooled body's key needs no second read.
	sum *maphash.Hash

	holds  atomic.Int32 // references besides the owner's
	closed atomic.Bool  // the owner has let go (Close)
}

// sizeFor gives the body, before it is read, room for n bytes and
// bytes.Buffer's read margin (bytes.Buffer.ReadFrom wants MinRead bytes of
// room before each read: with that much to spare the buffer is never grown
// and copied on the way, however the body arrives).
func (rb *requestBody) sizeFor(n int) {
	rb.mem = *bytes.NewBuffer(getBuf(n + bytes.MinRead))
}

// hashWith makes the body hash, under seed, every byte that goes to a
// temporary file (all of a spooled body).
func (rb *requestBody) hashWith(seed maphash.Seed) {
	if seed == (maphash.Seed{}) {
		return // a bridge not provisioned: the key reads the file back
	}
	rb.sum = new(maphash.Hash)
	rb.sum.SetSeed(seed)
}

// fileWriter is where the spooled bytes go: the file, and the hash.
func (rb *requestBody) fileWriter() io.Writer {
	if rb.sum == nil {
		return rb.file
	}
	return io.MultiWriter(rb.file, rb.sum)
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
		n, err = rb.fileWriter().Write(p)
	} else {
		n, err = rb.mem.Write(p)
	}
	rb.size += int64(n)
	return n, err
}

// ReadFrom reads src to its end (io.Copy's path, without a copy buffer):
// into memory while the body fits in spoolAbove bytes, then into a
// temporary file.
func (rb *requestBody) ReadFrom(src io.Reader) (int64, error) {
	var n int64
	if rb.file == nil {
		m, err := rb.mem.ReadFrom(io.LimitReader(src, spoolAbove+1-rb.size))
		rb.size += m
		n += m
		if err != nil || rb.size <= spoolAbove {
			return n, err
		}
		if err := rb.spool(); err != nil {
			return n, err
		}
	}
	m, err := io.Copy(rb.fileWriter(), src)
	rb.size += m
	return n + m, err
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
	if _, err := rb.fileWriter().Write(rb.mem.Bytes()); err != nil {
		return err
	}
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
	return bytes.NewReader(rb.mem.Bytes())
}

// spooledSum is the hash of a spooled body taken as it arrived (false
// when the body is in memory, or was not hashed).
func (rb *requestBody) spooledSum() (uint64, bool) {
	if rb.file == nil || rb.sum == nil {
		return 0, false
	}
	return rb.sum.Sum64(), true
}

// Bytes returns a body held in memory (nil once spooled).
func (rb *requestBody) Bytes() []byte {
	if rb.file != nil {
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
	putBuf(rb.mem.Bytes())
	rb.mem = bytes.Buffer{}
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
