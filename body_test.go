package designbridge

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"testing"
)

// TestRequestBody: a body stays in memory up to spoolAbove and moves to a
// temporary file past it, whatever the sizes of the writes; either way it
// reads back whole, as often as asked.
func TestRequestBody(t *testing.T) {
	for _, tt := range []struct {
		name    string
		size    int
		chunk   int
		spooled bool
	}{
		{"empty", 0, 1, false},
		{"small", 100, 7, false},
		{"exactly spoolAbove", spoolAbove, 32 << 10, false},
		{"one byte more, one write", spoolAbove + 1, spoolAbove + 1, true},
		{"past it in small writes", 3 * spoolAbove, 32 << 10, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := bytes.Repeat([]byte("0123456789abcdef"), tt.size/16+1)[:tt.size]
			written := new(requestBody)
			defer written.Close()
			for rest := want; len(rest) > 0; {
				n := min(tt.chunk, len(rest))
				if _, err := written.Write(rest[:n]); err != nil {
					t.Fatal(err)
				}
				rest = rest[n:]
			}
			// readBody's path: io.Copy from a reader with no WriteTo.
			read := new(requestBody)
			defer read.Close()
			if n, err := io.Copy(read, io.LimitReader(bytes.NewReader(want), int64(len(want)))); err != nil || n != int64(len(want)) {
				t.Fatalf("io.Copy: %d, %v", n, err)
			}
			for _, rb := range []*requestBody{written, read} {
				checkBody(t, rb, want, tt.spooled)
			}
		})
	}
}

func checkBody(t *testing.T, rb *requestBody, want []byte, spooled bool) {
	t.Helper()
	if got := rb.file != nil; got != spooled {
		t.Fatalf("spooled = %v, want %v", got, spooled)
	}
	if rb.Len() != int64(len(want)) {
		t.Errorf("Len = %d, want %d", rb.Len(), len(want))
	}
	for i := range 2 {
		got, err := io.ReadAll(rb.Reader())
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("read %d: %d bytes (err %v), want the %d written", i+1, len(got), err, len(want))
		}
	}
	if spooled {
		// Removed from its directory while open, where the system
		// allows it: nothing to clean up after a crash.
		if _, err := os.Stat(rb.file.Name()); err == nil && runtime.GOOS != "windows" {
			t.Errorf("%s is still in its directory", rb.file.Name())
		}
		if err := rb.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
}
