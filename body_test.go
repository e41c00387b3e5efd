package designbridge

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"net/url"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp/reverseproxy"
	"github.com/designbridge/caddy-designbridge/internal/retire"
	"go.uber.org/zap"
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
			// With the size announced (Content-Length), arriving in
			// pieces: the buffer grows with the bytes up to the size
			// class of the body and its read margin, no further.
			announced := new(requestBody)
			defer announced.Close()
			announced.sizeFor(tt.size)
			if n, err := io.Copy(announced, pieces{bytes.NewReader(want), tt.chunk}); err != nil || n != int64(len(want)) {
				t.Fatalf("io.Copy in pieces: %d, %v", n, err)
			}
			if room := bufRoom(tt.size + bytes.MinRead); !tt.spooled && announced.mem.Cap() > room {
				t.Errorf("buffer of %d bytes for %d announced, want at most %d", announced.mem.Cap(), tt.size, room)
			}
			for _, rb := range []*requestBody{written, read, announced} {
				checkBody(t, rb, want, tt.spooled)
			}
		})
	}
}

// pieces reads at most n bytes at a time, as a body arrives from the
// network.
type pieces struct {
	r io.Reader
	n int
}

func (p pieces) Read(b []byte) (int, error) { return p.r.Read(b[:min(len(b), p.n)]) }

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

// TestBodyHeldByReaders: a body whose owner has let go stays whole while
// a reader handed to net/http is open (the transport may still be sending
// it after the answer is in), even as other bodies take buffers from the
// pool; the reader reads nothing once closed, and the body is freed then.
func TestBodyHeldByReaders(t *testing.T) {
	for _, size := range []int{40 << 10, 3 << 20} {
		want := bytes.Repeat([]byte("design "), size/7)
		rb := bodyHolding(t, want)
		r := rb.openReader()
		rb.Close()
		// Other exports take buffers of the same size and fill them: a
		// body freed too early would now hold their bytes.
		for range 4 {
			b := getBuf(min(len(want), largeChunk))
			b = append(b, bytes.Repeat([]byte{'x'}, cap(b))...)
			defer putBuf(b)
		}
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%d bytes: read %d bytes (%v) after the owner let go, not the body", size, len(got), err)
		}
		r.Close()
		if n, err := r.Read(make([]byte, 1)); n != 0 || err == nil {
			t.Errorf("%d bytes: a closed reader read %d bytes, err %v", size, n, err)
		}
		if rb.mem.Cap() != 0 || rb.chunks != nil {
			t.Errorf("%d bytes: the body was not freed after its last reader closed", size)
		}
	}
}

// TestSentReadersHoldTheBody: the readers the transport sends a body
// with (sendReaders) hold it after its owner has let go, even as other
// bodies take buffers from the pool, until the transport is done with
// each of them (wrote, for a body in one buffer; Close otherwise); wrote
// called more often than readers were handed over gives back nobody
// else's hold. A body in one buffer goes as a *bytes.Reader, which
// net/http writes together with the headers.
func TestSentReadersHoldTheBody(t *testing.T) {
	for _, size := range []int{40 << 10, 3 << 20} {
		want := bytes.Repeat([]byte("design "), size/7)
		rb := bodyHolding(t, want)
		get, wrote := rb.sendReaders()
		done := func(r io.ReadCloser) {
			if wrote != nil {
				wrote()
			} else {
				r.Close()
			}
		}
		first, _ := get()
		second, _ := get() // the request sent again on a fresh connection
		if inMemory := size <= spoolAbove; inMemory != (wrote != nil) {
			t.Fatalf("%d bytes: wrote is %v", size, wrote != nil)
		}
		if _, ok := first.(interface {
			WriteTo(io.Writer) (int64, error)
		}); wrote != nil && !ok {
			t.Errorf("%d bytes: sent as %T, not an io.NopCloser of a *bytes.Reader", size, first)
		}
		rb.Close()
		done(first)
		// Other exports take buffers of the same size and fill them: a
		// body freed too early would now hold their bytes.
		for range 4 {
			b := getBuf(min(len(want), largeChunk))
			b = append(b, bytes.Repeat([]byte{'x'}, cap(b))...)
			defer putBuf(b)
		}
		got, err := io.ReadAll(second)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%d bytes: read %d bytes (%v) after the owner let go, not the body", size, len(got), err)
		}
		rb.retain() // another holder (the flight group)
		done(second)
		if wrote != nil {
			wrote() // one more than the readers handed over
		}
		if rb.freed {
			t.Fatalf("%d bytes: freed while another holder still held it", size)
		}
		_ = rb.release()
		if !rb.freed || rb.mem.Cap() != 0 || rb.chunks != nil {
			t.Errorf("%d bytes: the body was not freed once every holder let go", size)
		}
	}
}

// TestTransportHoldsBodyUntilWritten: net/http's transport may still be
// sending a body after RoundTrip has returned the answer (an upstream that
// answers first), and the export then lets go of the body. The readers
// upstreamTransport hands over keep it whole until the transport has
// written the request (WroteRequest) and closed them.
func TestTransportHoldsBodyUntilWritten(t *testing.T) {
	for _, size := range []int{40 << 10, 3 << 20} {
		want := bytes.Repeat([]byte("design "), size/7)
		rb := bodyHolding(t, want)
		late := &lateSender{start: make(chan struct{}), sent: make(chan []byte, 1)}
		tr := &upstreamTransport{inner: late, target: &url.URL{Scheme: "http", Host: "127.0.0.1:1"}, logger: zap.NewNop()}
		sendBody(t, tr, rb)
		rb.Close() // the export is done
		// Other exports take buffers of the same size and fill them: a
		// body freed too early would now hold their bytes.
		for range 4 {
			b := getBuf(min(len(want), largeChunk))
			b = append(b, bytes.Repeat([]byte{'x'}, cap(b))...)
			defer putBuf(b)
		}
		close(late.start)
		if got := <-late.sent; !bytes.Equal(got, want) {
			t.Fatalf("%d bytes: the transport sent %d bytes (%.20q…) after the export let go, not the body", size, len(got), got)
		}
		if !rb.freed {
			t.Errorf("%d bytes: the body was not freed once the transport had written it", size)
		}
	}
}

// lateSender answers at once and sends the request's body afterwards, when
// start is closed, as net/http's transport does for an upstream that
// answers before it has read the body.
type lateSender struct {
	start chan struct{}
	sent  chan []byte
}

func (l *lateSender) RoundTrip(req *http.Request) (*http.Response, error) {
	go func() {
		<-l.start
		got, _ := io.ReadAll(req.Body)
		req.Body.Close()
		if trace := httptrace.ContextClientTrace(req.Context()); trace != nil && trace.WroteRequest != nil {
			trace.WroteRequest(httptrace.WroteRequestInfo{})
		}
		l.sent <- got
	}()
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{}, Body: http.NoBody, Request: req}, nil
}

// TestLargeBodySentFromChunks: the connections to the content service
// (sendFromChunks) write a large body held in memory from its chunks, a
// write of a whole chunk each, not copied through net/http's 32 KiB
// buffer; every body arrives whole however it is held.
func TestLargeBodySentFromChunks(t *testing.T) {
	for _, tt := range []struct {
		name string
		size int
		file bool
	}{
		{"one buffer", 40 << 10, false},
		{"chunks", 3<<20 + 12345, false},
		{"file", 3<<20 + 12345, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			want := bytes.Repeat([]byte("design "), tt.size/7)
			got := make(chan []byte, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				got <- b
			}))
			defer srv.Close()
			var rb *requestBody
			if tt.file {
				rb = new(requestBody)
				if err := rb.spool(); err != nil {
					t.Fatal(err)
				}
				if _, err := io.Copy(rb, bytes.NewReader(want)); err != nil {
					t.Fatal(err)
				}
			} else {
				rb = bodyHolding(t, want)
			}
			defer rb.Close()
			chunked := rb.chunks != nil
			var writes writeSizes
			inner := &http.Transport{WriteBufferSize: exportWriteBuffer, DialContext: writes.dial}
			defer inner.CloseIdleConnections()
			sendFromChunks(inner)
			target, _ := url.Parse(srv.URL)
			tr := &upstreamTransport{inner: inner, target: target, logger: zap.NewNop()}
			sendBody(t, tr, rb)
			if b := <-got; !bytes.Equal(b, want) {
				t.Fatalf("the upstream got %d bytes (%.20q…), not the body", len(b), b)
			}
			if largest := writes.largest(); chunked && largest < largeChunk {
				t.Errorf("the largest write was %d bytes, want whole chunks of %d", largest, largeChunk)
			}
		})
	}
}

// sendBody sends an export of the held body rb through tr, as the bridge
// does, and closes the answer.
func sendBody(t *testing.T, tr *upstreamTransport, rb *requestBody) {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/v1/message/html", nil)
	req = req.WithContext(context.WithValue(req.Context(), replayBodyKey{}, rb))
	res, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
}

// writeSizes dials connections that note the largest write made on them.
type writeSizes struct {
	mu  sync.Mutex
	max int
}

func (s *writeSizes) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return sizedConn{c, s}, nil
}

func (s *writeSizes) largest() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.max
}

type sizedConn struct {
	net.Conn
	sizes *writeSizes
}

func (c sizedConn) Write(p []byte) (int, error) {
	c.sizes.mu.Lock()
	c.sizes.max = max(c.sizes.max, len(p))
	c.sizes.mu.Unlock()
	return c.Conn.Write(p)
}

// TestLargeBodyMemoryBudget: bodies past spoolAbove that say their length
// are held in memory while the bridge's budget lasts, then in temporary
// files; a freed body gives its share back.
func TestLargeBodyMemoryBudget(t *testing.T) {
	b := &Bridge{largeBodies: newMemoryBudget(5 << 20)}
	read := func() *requestBody {
		body := bytes.Repeat([]byte("x"), 2<<20)
		r := httptest.NewRequest(http.MethodPost, "/v1/message/html", bytes.NewReader(body))
		rb, ok, err := b.readBody(httptest.NewRecorder(), r, 16<<20)
		if !ok || err != nil {
			t.Fatalf("readBody: %v", err)
		}
		if got, _ := io.ReadAll(rb.Reader()); !bytes.Equal(got, body) {
			t.Fatal("the body reads back as other bytes")
		}
		return rb
	}
	one, two, three := read(), read(), read()
	if one.chunks == nil || two.chunks == nil || three.file == nil {
		t.Errorf("in memory: %v %v %v, want the first two (4 MiB of the 5 MiB budget)", one.chunks != nil, two.chunks != nil, three.chunks != nil)
	}
	one.Close()
	four := read()
	if four.chunks == nil {
		t.Error("a body freed did not give its memory back to the budget")
	}
	for _, rb := range []*requestBody{two, three, four} {
		rb.Close()
	}
	if left := b.largeBodies.left.Load(); left != 5<<20 {
		t.Errorf("budget left %d after every body was freed, want %d", left, 5<<20)
	}
}

// bodyHolding is a request body read from want as an export's is: in one
// pooled buffer, or past spoolAbove in chunks of a large-body budget.
func bodyHolding(t *testing.T, want []byte) *requestBody {
	t.Helper()
	rb := new(requestBody)
	if len(want) > spoolAbove {
		rb.holdLarge(newMemoryBudget(int64(len(want))), int64(len(want)))
	} else {
		rb.sizeFor(len(want))
	}
	if _, err := io.Copy(rb, io.LimitReader(bytes.NewReader(want), int64(len(want)))); err != nil {
		t.Fatal(err)
	}
	return rb
}

// TestExportConnectionsSendFromChunks: the connections that a provisioned
// bridge dials to the content service for exports are the ones that send
// a body held in chunks from its chunks (bodyConn); those of the auth
// endpoint need not be.
func TestExportConnectionsSendFromChunks(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	b := &Bridge{ContentService: "http://" + ln.Addr().String(), Token: "a-token-for-tests"}
	if err := b.Provision(provisionContext(t)); err != nil {
		t.Fatal(err)
	}
	defer b.Cleanup()
	inner := b.exportProxy.Transport.(*upstreamTransport).inner.(*retire.Transport).Unwrap()
	ht, ok := inner.(*reverseproxy.HTTPTransport)
	if !ok || ht.Transport == nil {
		t.Fatalf("the export transport is a %T, not Caddy's HTTP transport", inner)
	}
	conn, err := ht.Transport.DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, ok := conn.(bodyConn); !ok {
		t.Errorf("an export connection is a %T, not a bodyConn: large bodies would be copied once more on the way out", conn)
	}
}
