// Package contract holds what design_bridge and content_service share of
// the export and LoginV2 API (docs/contracts.md), so that both sides speak
// it the same way: the error object and its code table, the uid rule, the
// JSON media-type check, the configured-token rule, and the one writer of
// JSON answers (which fsp and fsp_error use too).
//
// Error policy: a module answers its own errors, writing the contract's
// JSON body itself, and never hands them to handle_errors (see
// CONTRIBUTING.md).
package contract

import (
	"errors"
	"mime"
	"strings"
)

// Error is the error object {"code", "message", "details"} of the export
// API and of design_bridge's own answers.
type Error struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Details string `json:"details"`
}

// AuthPathError is design_bridge's own error object on its auth path:
// the export API's members, and status_code, so that a client that reads
// LoginV2 errors ({"code", "message", "status_code"}) reads it too.
type AuthPathError struct {
	Code       int    `json:"code"`
	Message    string `json:"message"`
	Details    string `json:"details"`
	StatusCode int    `json:"status_code"`
}

// LoginError is the error object of the LoginV2 endpoints:
// {"code", "message", "status_code"}.
type LoginError struct {
	Code       int    `json:"code"`
	Message    string `json:"message"`
	StatusCode int    `json:"status_code"`
}

// The error codes of the export and LoginV2 API: the content service's
// (docs/contracts.md) and those design_bridge adds for its own checks
// (docs/design_bridge.md). Where neither defines a code (404, 405 on the
// content service), the code is the HTTP status.
const (
	CodeNoAuthorization = 4001 // no Authorization header
	CodeForbiddenToken  = 4003 // unknown or revoked token
	CodeMalformedBearer = 4005 // header present but not "Bearer <token>"
	CodeTokenExpired    = 4010 // expired editor token (apps with editor_tokens)
	CodeCrossSite       = 4031 // design_bridge: a cross-site call
	CodeMethod          = 4050 // design_bridge: a method other than POST
	CodeReadTimeout     = 4080 // design_bridge: the body did not arrive in time
	CodeNotJSON         = 4100 // body is not JSON
	CodeNotDesign       = 4101 // JSON but not a design
	CodeBodyTooLarge    = 4130 // body over the limit (or a design bound)
	CodeMediaType       = 4150 // media type other than JSON
	CodeInternal        = 4200 // internal failure
	CodeRateLimited     = 4290 // rate limit exceeded
	CodeNotConfigured   = 5000 // design_bridge: token or client credentials missing
	CodeBadGateway      = 5020 // design_bridge: upstream unreachable or failing
	CodeBusy            = 5030 // design_bridge: answers in flight took answer_memory
	CodeGatewayTimeout  = 5040 // design_bridge: upstream timeout

	CodeLoginMediaType   = 5001 // LoginV2: Content-Type not JSON
	CodeLoginCredentials = 5002 // LoginV2: client_id/client_secret unknown or not matching
	CodeLoginDisabled    = 5003 // LoginV2: application disabled
	CodeLoginUID         = 5005 // LoginV2: uid missing, not a string, or with other characters
	CodeRefreshExpired   = 5101 // LoginV2: refresh_until has passed
)

// IsJSON reports whether a Content-Type is application/json, with or
// without parameters: what the editor and the page send. Other types,
// +json ones included (a JSON Patch is no design), are refused.
func IsJSON(contentType string) bool {
	// The common case without parameters, which needs none of the parser's
	// allocations (its parameter map); the answer is the parser's.
	if strings.EqualFold(contentType, "application/json") {
		return true
	}
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
}

// Token is the bearer token a configured value names: the value with
// surrounding space and an optional "Bearer " prefix (any letter case)
// removed, so that tokens configured with and without it send the same
// header. An empty token, or one holding whitespace, is refused; the error
// never quotes it.
func Token(value string) (string, error) {
	tok := strings.TrimSpace(value)
	if strings.EqualFold(tok, "Bearer") {
		tok = ""
	} else if scheme, rest, ok := strings.Cut(tok, " "); ok && strings.EqualFold(scheme, "Bearer") {
		tok = strings.TrimSpace(rest)
	}
	if tok == "" {
		return "", errors.New("is empty")
	}
	if strings.ContainsAny(tok, " \t\r\n") {
		return "", errors.New("holds whitespace; each token is a value of its own")
	}
	return tok, nil
}
