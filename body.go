package designbridge

import (
	"bytes"
	"hash/maphash"
	"io"
	"os"
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
type requestBody struct {
	mem  bytes.Buffer
	file *os.File
	name string // the file's name while it must still be removed
	size int64
	// sum, when set (hashWith), hashes what goes to the file as it
	// arrives, so that a spooled body's key needs no second read.
	sum *maphash.Hash
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

// Close releases the temporary file, if any.
func (rb *requestBody) Close() error {
	if rb.file == nil {
		return nil
	}
	err := rb.file.Close()
	if rb.name != "" {
		_ = os.Remove(rb.name)
	}
	return err
}
