package designbridge

// The response watcher: the status an upstream answered and, with
// unwrap_html, the held-back answer unwrapped.

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// responseWatcher notes the status the proxy writes and, when unwrap_html
// is on, holds back a 2xx response (up to unwrapLimit bytes) so that
// finish can rewrite an HTML wrapper to raw HTML.
type responseWatcher struct {
	*caddyhttp.ResponseWriterWrapper
	status      int
	wroteHeader bool
	unwrapLimit int64 // 0: never buffer
	// maskOnly: hold back an answer of any status (up to unwrapLimit) to
	// mask the secrets its JSON strings decode to, and never unwrap it
	// (the auth path's token answer, which the page parses).
	maskOnly  bool
	overflow  bool // maskOnly: the answer passed unwrapLimit and was refused
	buffering bool
	buf       []byte
	// budget (answer_memory, for an export's held-back answer) counts
	// what buf holds past spoolAbove (held); without room left the
	// answer is passed on as it is.
	budget  *memoryBudget
	held    int64
	secrets [][]byte    // masked again in unwrapped HTML
	own     http.Header // the response's headers before the upstream's were added
	// passHeaders, when set, are the only headers of the upstream's
	// final answer that the client gets, beside own (which win over the
	// upstream's); its interim answers and trailers are dropped.
	passHeaders map[string]bool
}

func newWatcher(w http.ResponseWriter, secrets [][]byte) *responseWatcher {
	return &responseWatcher{
		ResponseWriterWrapper: &caddyhttp.ResponseWriterWrapper{ResponseWriter: w},
		secrets:               secrets,
		own:                   w.Header().Clone(),
	}
}

// sent reports whether the final response has started to reach the
// client, after which it can no longer be replaced by an error. An
// export's answer never has: it is recorded whole before anyone is sent
// it (answerRecorder), so an upstream failing in the middle of its body
// is answered with an error like one failing before it.
func (rw *responseWatcher) sent() bool {
	if _, recorded := rw.ResponseWriter.(*answerRecorder); recorded {
		return false
	}
	return rw.wroteHeader && !rw.buffering
}

// discard drops a held-back or recorded response and the upstream's
// headers, so that an error can be answered in its place.
func (rw *responseWatcher) discard() {
	rec, recorded := rw.ResponseWriter.(*answerRecorder)
	if !rw.buffering && !recorded {
		return
	}
	h := rw.Header()
	clear(h)
	maps.Copy(h, rw.own)
	rw.buffering = false
	rw.wroteHeader = false
	rw.dropHeld()
	if recorded {
		rec.reset()
	}
}

func (rw *responseWatcher) WriteHeader(code int) {
	if rw.wroteHeader {
		return
	}
	if code >= 100 && code < 200 {
		if rw.passHeaders == nil {
			rw.ResponseWriter.WriteHeader(code)
		}
		return
	}
	rw.wroteHeader, rw.status = true, code
	// Whatever its Content-Type: the page reads every answer as text and
	// unwraps a wrapper sent as text/html too, so the bridge must as well.
	if rw.unwrapLimit > 0 && (rw.maskOnly || code >= 200 && code < 300) {
		rw.buffering = true
		return
	}
	rw.writeHeader(code)
}

// writeHeader sends the final status with the headers passHeaders lets
// through.
func (rw *responseWatcher) writeHeader(code int) {
	if rw.passHeaders != nil {
		h := rw.Header()
		for k := range h {
			if v, ok := rw.own[k]; ok {
				h[k] = v
			} else if !rw.passHeaders[k] {
				delete(h, k) // trailers (announced, or by http.TrailerPrefix) too
			}
		}
	}
	rw.ResponseWriter.WriteHeader(code)
}

func (rw *responseWatcher) Write(p []byte) (int, error) {
	if !rw.wroteHeader {
		rw.WriteHeader(http.StatusOK)
	}
	if rw.buffering {
		if need := len(rw.buf) + len(p); int64(need) <= rw.unwrapLimit && rw.room(need) {
			rw.buf = append(rw.buf, p...)
			return len(p), nil
		}
		if rw.maskOnly {
			// Passed on as it streams, a secret written with JSON escapes
			// would reach the page unmasked; a token answer is a few
			// hundred bytes, so one this large is refused.
			rw.overflow = true
			return 0, errors.New("answer too large to mask")
		}
		// Too big to be worth unwrapping (or no room left for it): pass
		// it on as it is.
		rw.buffering = false
		rw.writeHeader(rw.status)
		held := rw.buf
		rw.dropHeld()
		if _, err := rw.ResponseWriter.Write(held); err != nil {
			return 0, err
		}
	}
	return rw.ResponseWriter.Write(p)
}

// room makes buf hold need bytes, within budget: false when it cannot.
func (rw *responseWatcher) room(need int) bool {
	if need <= cap(rw.buf) {
		return true
	}
	size := max(2*cap(rw.buf), need, 4<<10)
	if !rw.budget.cover(&rw.held, size) {
		return false
	}
	rw.buf = append(make([]byte, 0, size), rw.buf...)
	return true
}

// dropHeld lets go of the held-back answer and its room in budget.
func (rw *responseWatcher) dropHeld() {
	rw.buf = nil
	rw.budget.free(&rw.held)
}

// ReadFrom keeps io.Copy going through Write (the embedded wrapper's
// ReadFrom would bypass it).
func (rw *responseWatcher) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(struct{ io.Writer }{rw}, r)
}

// FlushError flushes unless the response is being held back.
func (rw *responseWatcher) FlushError() error {
	if rw.buffering {
		return nil
	}
	if !rw.wroteHeader {
		rw.WriteHeader(http.StatusOK)
		if rw.buffering {
			return nil
		}
	}
	return http.NewResponseController(rw.ResponseWriter).Flush()
}

// finish writes a held-back response, unwrapped when it is an HTML wrapper.
func (rw *responseWatcher) finish() error {
	if !rw.buffering {
		return nil
	}
	rw.buffering = false
	held := rw.buf
	rw.dropHeld() // what is written next counts where it is recorded
	if rw.maskOnly {
		body, changed := maskJSONStrings(held, rw.secrets)
		if changed {
			rw.Header().Set("Content-Length", fmt.Sprint(len(body)))
			rw.Header().Del("ETag")
		}
		rw.writeHeader(rw.status)
		_, err := rw.ResponseWriter.Write(body)
		return err
	}
	body, wrapped := unwrapMasked(held, rw.secrets)
	if wrapped {
		h := rw.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Length", fmt.Sprint(len(body)))
		h.Del("Content-Encoding")
		dropDigests(h)
	}
	rw.writeHeader(rw.status)
	_, err := rw.ResponseWriter.Write(body)
	return err
}

// unwrapMasked returns the HTML of an HTML wrapper, with the secrets
// masked again: the upstream's text was masked as it arrived, but a
// secret written with JSON escapes ("\u0074ok…") only appears once the
// string is decoded. Anything else is returned as it is.
func unwrapMasked(body []byte, secrets [][]byte) ([]byte, bool) {
	html, wrapped := HTMLResult(body)
	if !wrapped {
		return body, false
	}
	maskSecrets(html, secrets)
	return html, true
}

// Interface guard
var _ io.ReaderFrom = (*responseWatcher)(nil)
