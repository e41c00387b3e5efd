package contentservice

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/designbridge/caddy-designbridge/internal/contract"
)

// exportError and loginError are the contract's error objects (one
// definition each, in internal/contract).
type (
	exportError = contract.Error
	loginError  = contract.LoginError
)

// writeError answers with the export error object. Where the contract
// defines no code (404, 405), code is the HTTP status.
func writeError(w http.ResponseWriter, status, code int, message, details string) {
	respondError(w, status, exportError{Code: code, Message: message, Details: details})
}

// writeLoginError answers with the LoginV2 error object.
func writeLoginError(w http.ResponseWriter, status, code int, message string) {
	respondError(w, status, loginError{Code: code, Message: message, StatusCode: status})
}

// respondError writes an error answer itself (the error policy in
// CONTRIBUTING.md): handle_errors never sees it. A write that fails is a
// client gone, with nothing left to tell.
func respondError(w http.ResponseWriter, status int, body any) {
	_ = contract.Write(w, nil, status, body)
}

// writeJSON answers with v as JSON. Marshalling our own small structs of
// strings and ints cannot fail.
func writeJSON(w http.ResponseWriter, status int, v any) {
	_ = contract.Write(w, nil, status, v)
}

// requestID returns the request's id: Caddy's {http.request.uuid} when the
// request went through a Caddy server (so that access logs carry the same
// id), else a random one.
func requestID(r *http.Request) string {
	ctx := r.Context()
	if repl, ok := ctx.Value(caddy.ReplacerCtxKey).(*caddy.Replacer); ok {
		// The uuid placeholder needs these two context values, which
		// Caddy's server sets; without them it would panic.
		_, hasExtra := ctx.Value(caddyhttp.ExtraLogFieldsCtxKey).(*caddyhttp.ExtraLogFields)
		_, hasVars := ctx.Value(caddyhttp.VarsCtxKey).(map[string]any)
		if hasExtra && hasVars {
			// Get, not ReplaceAll: no template to parse or build.
			if v, ok := repl.Get("http.request.uuid"); ok {
				if id, _ := v.(string); id != "" {
					return id
				}
			}
		}
	}
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// wantsJSON reports whether the Accept header prefers the JSON wrapper to
// the raw form (rawType: text/html or text/plain). The raw form wins ties
// and is the answer when Accept is absent or names neither, since it is
// the contract's default.
func wantsJSON(accept []string, rawType string) bool {
	if len(accept) == 0 {
		return false
	}
	jsonQ := acceptQuality(accept, "application/json")
	rawQ := acceptQuality(accept, rawType)
	return jsonQ > rawQ
}

// acceptQuality returns the quality the Accept header values give to the
// media type mt (type/subtype, lower case), following the most specific
// matching range as RFC 9110 §12.5.1 asks. Unmatched types get 0.
func acceptQuality(accept []string, mt string) float64 {
	typ, _, _ := strings.Cut(mt, "/")
	best, bestSpecificity := 0.0, -1
	for _, header := range accept {
		for _, part := range strings.Split(header, ",") {
			rng, params, _ := strings.Cut(strings.TrimSpace(part), ";")
			rng = strings.ToLower(strings.TrimSpace(rng))
			specificity := -1
			switch {
			case rng == mt:
				specificity = 2
			case rng == typ+"/*":
				specificity = 1
			case rng == "*/*":
				specificity = 0
			}
			if specificity < 0 || specificity < bestSpecificity {
				continue
			}
			q := 1.0
			for _, p := range strings.Split(params, ";") {
				name, value, ok := strings.Cut(strings.TrimSpace(p), "=")
				if ok && strings.EqualFold(strings.TrimSpace(name), "q") {
					if v, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil && v >= 0 && v <= 1 {
						q = v
					} else {
						q = 0
					}
				}
			}
			if specificity > bestSpecificity || q > best {
				best, bestSpecificity = q, specificity
			}
		}
	}
	return best
}
