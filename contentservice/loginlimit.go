package contentservice

import (
	"crypto/sha256"
	"fmt"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/designbridge/caddy-designbridge/internal/ratelimit"
)

// loginFailures holds the login failure limiters across config reloads:
// a reload provisions the new handler before the old one is cleaned up,
// so the new one finds the old one's counts under the same key and an
// address past its limit is not given a new budget by a reload. The one
// package-level value, as Caddy's own modules keep state that outlives a
// config (reverse_proxy's hosts); entries go with the last config that
// uses them.
var loginFailures = caddy.NewUsagePool()

// failureKey identifies a failure limiter shared across reloads and
// handlers: those of the same signing key (the same service, replicas in
// one Caddy included) and limit count failures together.
type failureKey struct {
	signingKey [sha256.Size]byte
	requests   int
	window     time.Duration
}

// pooledFailures is a ratelimit.Limiter in loginFailures.
type pooledFailures struct{ *ratelimit.Limiter }

func (pooledFailures) Destruct() error { return nil }

// shareFailures replaces s's failure limiter with the one of its key in
// loginFailures (made when there is none); releaseFailures gives it back.
func (s *service) shareFailures() error {
	if s.failures == nil {
		return nil
	}
	key := failureKey{sha256.Sum256(s.signingKey), s.failureLimit.requests, s.failureLimit.window}
	fresh := s.failures
	v, _, err := loginFailures.LoadOrNew(key, func() (caddy.Destructor, error) {
		return pooledFailures{fresh}, nil
	})
	if err != nil {
		return fmt.Errorf("login_failure_limit: %v", err)
	}
	s.failures, s.failureKey = v.(pooledFailures).Limiter, &key
	return nil
}

// releaseFailures gives s's failure limiter back to loginFailures.
func (s *service) releaseFailures() {
	if s.failureKey != nil {
		_, _ = loginFailures.Delete(*s.failureKey)
		s.failureKey = nil
	}
}
