package contentservice

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
)

// errBearerMalformed means an Authorization header that is not
// "Bearer <token>".
var errBearerMalformed = errors.New("authorization header is not \"Bearer <token>\"")

// errNoAuthorization means the request has no Authorization header.
var errNoAuthorization = errors.New("no Authorization header")

// bearerToken extracts the token of "Authorization: Bearer <token>". The
// scheme is case-insensitive (RFC 9110 §11.1); the token must be one
// non-empty word. Several Authorization headers are ambiguous and refused.
func bearerToken(r *http.Request) (string, error) {
	values := r.Header.Values("Authorization")
	if len(values) == 0 {
		return "", errNoAuthorization
	}
	if len(values) > 1 {
		return "", errBearerMalformed
	}
	scheme, token, ok := strings.Cut(strings.TrimSpace(values[0]), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", errBearerMalformed
	}
	token = strings.TrimSpace(token)
	if token == "" || strings.ContainsAny(token, " \t") {
		return "", errBearerMalformed
	}
	return token, nil
}

// lookupAPIToken returns the index of the configured API token equal to
// token, or -1. It compares SHA-256 digests in constant time against every
// configured token, without stopping at a match, so that neither the
// position nor the length of a match shows in the timing.
func (s *service) lookupAPIToken(token string) int {
	digest := sha256.Sum256([]byte(token))
	found := -1
	for i := range s.apiTokens {
		eq := subtle.ConstantTimeCompare(digest[:], s.apiTokens[i].digest[:])
		found = subtle.ConstantTimeSelect(eq, i, found)
	}
	return found
}

// lookupApp returns the index of the application whose client ID and
// secret both match, or -1; constant-time over all applications.
func (s *service) lookupApp(clientID, secret string) int {
	idDigest := sha256.Sum256([]byte(clientID))
	secretDigest := sha256.Sum256([]byte(secret))
	found := -1
	for i := range s.apps {
		eq := subtle.ConstantTimeCompare(idDigest[:], s.apps[i].idDigest[:]) &
			subtle.ConstantTimeCompare(secretDigest[:], s.apps[i].secretDigest[:])
		found = subtle.ConstantTimeSelect(eq, i, found)
	}
	return found
}

// appRef names an application inside the editor tokens the browser holds.
// The token's payload is readable, and LoginV2 lets nothing the
// configuration holds reach the browser, so the reference is a keyed hash
// of the client ID and of the secret's digest: replicas sharing the
// signing key and the secret agree on it, nobody without the key learns
// the ID from it, and replacing a secret (after a leak) ends the tokens
// obtained with the old one, which would otherwise be refreshed for the
// rest of their refresh window.
func appRef(signingKey []byte, clientID string, secretDigest [sha256.Size]byte) string {
	mac := hmac.New(sha256.New, signingKey)
	mac.Write([]byte("design-bridge app reference\x00"))
	mac.Write([]byte(clientID))
	// The digest's fixed length at the end keeps the two apart.
	mac.Write([]byte{0})
	mac.Write(secretDigest[:])
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil)[:16])
}

// appByRef returns the index of the application an editor token's
// reference names (from a verified token), or -1.
func (s *service) appByRef(ref string) int {
	for i := range s.apps {
		if s.apps[i].ref == ref {
			return i
		}
	}
	return -1
}
