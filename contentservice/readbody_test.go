package contentservice

import (
	"bytes"
	"io"
	"runtime"
	"testing"
)

// trickle is a body of which only sent arrives before the client goes
// away (err), read in pieces of at most 4 KiB as a connection gives them.
type trickle struct {
	sent []byte
	err  error
}

func (t *trickle) Read(p []byte) (int, error) {
	if len(t.sent) == 0 {
		return 0, t.err
	}
	n := copy(p[:min(len(p), 4<<10)], t.sent)
	t.sent = t.sent[n:]
	return n, nil
}

// TestReadBodyGrowsAsBytesArrive: the body buffer holds about what
// arrived, whatever Content-Length announced. Sized from Content-Length
// before the body came, it took 4 MiB for a client that announced a body
// just under max_body and sent 8 bytes.
func TestReadBodyGrowsAsBytesArrive(t *testing.T) {
	s, _ := newTestService(t, nil) // max_body 4 MiB
	tests := []struct {
		name      string
		announced int64 // Content-Length; -1 for a chunked body
		sent      int
		err       error
		maxAlloc  int64 // bytes a read may allocate
	}{
		{"announced 4 MiB, sent 8 bytes", 4<<20 - 1, 8, io.ErrUnexpectedEOF, 64 << 10},
		{"announced 4 MiB, sent 100 KiB", 4<<20 - 1, 100 << 10, io.ErrUnexpectedEOF, 512 << 10},
		{"small body, as announced", 300, 300, io.EOF, 1 << 10},
		{"1 MiB, as announced", 1 << 20, 1 << 20, io.EOF, 5 << 19},
		{"chunked, 100 KiB", -1, 100 << 10, io.EOF, 512 << 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sent := bytes.Repeat([]byte("x"), tc.sent)
			const runs = 4
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			for range runs {
				// The buffers are not released: each read starts afresh, as
				// a read on a busy server whose pool is empty.
				body, _, err := s.readBody(&trickle{sent: sent, err: tc.err}, tc.announced)
				if (err != nil) != (tc.err != io.EOF) || !bytes.Equal(body, sent) {
					t.Fatalf("read %d bytes, %v; want the %d sent, error %v", len(body), err, tc.sent, tc.err)
				}
			}
			runtime.ReadMemStats(&after)
			if per := int64(after.TotalAlloc-before.TotalAlloc) / runs; per > tc.maxAlloc {
				t.Errorf("%d bytes allocated per read, want at most %d", per, tc.maxAlloc)
			}
		})
	}
}
