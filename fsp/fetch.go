package fsp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"time"

	"github.com/designbridge/caddy-designbridge/internal/retire"
	"github.com/designbridge/caddy-designbridge/internal/safefetch"
)

// errUpload is an upload refused for its source or content (3450); the
// wrapped text is for the log, the client sees the table's text plus a
// short reason.
type uploadError struct{ reason string }

func (e *uploadError) Error() string { return e.reason }

func uploadErr(format string, args ...any) error {
	return &uploadError{reason: fmt.Sprintf(format, args...)}
}

// fetcher downloads upload sources with bounded size and time, and never
// connects to a private, loopback or link-local address unless allowed.
type fetcher struct {
	client    *http.Client
	transport *retire.Transport // the client's, retired by close
	maxSize   int64
	minRate   int64 // bytes per second; 0: no minimum
}

// newFetcher returns a fetcher that dials only addresses allow accepts
// (every address when allow is nil).
func newFetcher(maxSize int64, timeout time.Duration, minRate int64, allow func(netip.Addr) bool) *fetcher {
	client, transport := safefetch.NewClientAllowing(timeout, allow)
	return &fetcher{client: client, transport: transport, maxSize: maxSize, minRate: minRate}
}

func (f *fetcher) close() { f.transport.Retire() }

// fetch downloads source, at most maxSize bytes.
func (f *fetcher) fetch(ctx context.Context, source string) ([]byte, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	u, err := url.Parse(source)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, uploadErr("source must be an http or https URL")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, uploadErr("source must be an http or https URL")
	}
	res, err := f.client.Do(req)
	if err != nil {
		if errors.Is(err, safefetch.ErrAddressRefused) {
			return nil, uploadErr("source address not allowed")
		}
		var netErr net.Error
		if errors.As(err, &netErr) && netErr.Timeout() {
			return nil, uploadErr("source took too long")
		}
		return nil, uploadErr("source could not be fetched")
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, uploadErr("source answered %d", res.StatusCode)
	}
	if res.ContentLength > f.maxSize {
		return nil, uploadErr("source is larger than %d bytes", f.maxSize)
	}
	if f.minRate <= 0 {
		return readLimited(res.Body, f.maxSize, "source")
	}
	body := newRateReader(res.Body, f.minRate, minRateGrace, cancel)
	defer body.stop()
	return readLimited(body, f.maxSize, "source")
}

// readLimited reads r whole, refusing more than max bytes or nothing. It
// reads into chunks and copies them once into a slice of the exact size,
// so an upload of n bytes holds at most 2n (not the 3n of a doubling
// buffer) while it arrives.
//
// what names the bytes in the reasons: "source" for a fetch, "the file"
// for a direct upload.
func readLimited(r io.Reader, max int64, what string) ([]byte, error) {
	const chunk = 64 << 10
	var chunks [][]byte
	var n int64
	lr := io.LimitReader(r, max+1)
	for {
		// Filled by hand, not io.ReadFull: its io.ErrUnexpectedEOF for a
		// short last chunk would hide the same error from a body whose
		// connection ended early (fewer bytes than its Content-Length, a
		// chunked body without its last chunk), storing a truncated file.
		buf := make([]byte, chunk)
		m := 0
		var err error
		for m < chunk && err == nil {
			var k int
			k, err = lr.Read(buf[m:])
			m += k
		}
		if m > 0 {
			chunks = append(chunks, buf[:m])
			n += int64(m)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			var ue *uploadError
			if errors.As(err, &ue) {
				return nil, err
			}
			var netErr net.Error
			if errors.As(err, &netErr) && netErr.Timeout() || errors.Is(err, context.DeadlineExceeded) {
				return nil, uploadErr("%s took too long", what)
			}
			return nil, uploadErr("%s could not be read", what)
		}
	}
	if n > max {
		return nil, uploadErr("%s is larger than %d bytes", what, max)
	}
	if n == 0 {
		return nil, uploadErr("%s is empty", what)
	}
	out := make([]byte, 0, n)
	for _, c := range chunks {
		out = append(out, c...)
	}
	return out, nil
}
