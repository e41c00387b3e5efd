package contentservice

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"go.uber.org/zap"

	"github.com/designbridge/caddy-designbridge/internal/contract"
	"github.com/designbridge/caddy-designbridge/internal/ratelimit"
)

// admitJSON runs what every JSON endpoint of the Content Services API
// checks before it reads the request, in the export's order: method,
// authentication, rate limit, media type, size; then it reads the body.
// It sets X-Request-Id and returns the request id, the body and the
// function that releases the body's buffer (call it once the answer is
// written), or ok false after answering the failure.
func (s *service) admitJSON(w http.ResponseWriter, r *http.Request) (id string, body []byte, release func(), ok bool) {
	release = func() {}
	id = requestID(r)
	w.Header().Set("X-Request-Id", id)
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, http.StatusMethodNotAllowed, "Method not allowed", "use POST")
		return id, nil, release, false
	}
	key, authorized := s.authorizeExport(w, r)
	if !authorized {
		return id, nil, release, false
	}
	if s.limiter != nil {
		if allowed, wait := s.limiter.Allow(strconv.Itoa(key), time.Now()); !allowed {
			secs := ratelimit.RetryAfter(wait)
			s.logRefusal(w, r, "request rate-limited", "rate_limit reached", zap.String("client_id", s.keyApp(key)), zap.Int("retry_after_s", secs))
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			writeError(w, http.StatusTooManyRequests, CodeRateLimited, "Rate limit exceeded",
				fmt.Sprintf("retry after %d s", secs))
			return id, nil, release, false
		}
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && !contract.IsJSON(ct) {
		writeError(w, http.StatusUnsupportedMediaType, CodeMediaType, "Unsupported media type",
			"the body must be application/json")
		return id, nil, release, false
	}
	if r.ContentLength > s.maxBody {
		s.writeTooLarge(w)
		return id, nil, release, false
	}
	body, release, err := s.readBody(http.MaxBytesReader(w, r.Body, s.maxBody), r.ContentLength)
	if err != nil {
		release()
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			s.writeTooLarge(w)
		} else {
			writeError(w, http.StatusBadRequest, CodeNotJSON, "Body unreadable", "the request body could not be read")
		}
		return id, nil, func() {}, false
	}
	return id, body, release, true
}
