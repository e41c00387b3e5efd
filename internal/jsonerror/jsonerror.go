// Package jsonerror is the one way the modules answer an error with a JSON
// body ({"code", "message", "details"} or LoginV2's shape): the Caddy way,
// as a caddyhttp.Error that the server's handle_errors routes see, with the
// body written by the module itself when no such route would answer it.
package jsonerror

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// BodyVar is the request variable that holds the JSON body of an error
// handed to handle_errors, so that a route there can answer with it:
// respond {vars.error_body} {err.status_code}.
const BodyVar = "error_body"

// Respond answers an error with status and the JSON body v. When one of
// the server's handle_errors routes matches the request (with the error's
// placeholders set), the error is that route's to answer: Respond sets
// BodyVar and returns the error as a caddyhttp.Error. Otherwise it writes
// the body itself and returns nil, since Caddy answers an error that no
// route takes with an empty body, and the editor needs the body's details.
// cause is what the returned error says (for Caddy's log); it never
// reaches the client.
func Respond(w http.ResponseWriter, r *http.Request, status int, v any, cause error) error {
	body, err := Marshal(v)
	if err != nil {
		return caddyhttp.Error(http.StatusInternalServerError, err)
	}
	if cause == nil {
		cause = fmt.Errorf("%s", body)
	}
	herr := caddyhttp.Error(status, &bodyError{cause, body})
	if srv, ok := r.Context().Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server); ok && srv != nil && srv.Errors != nil && len(srv.Errors.Routes) > 0 {
		_, hasRepl := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
		_, hasVars := r.Context().Value(caddyhttp.VarsCtxKey).(map[string]any)
		if hasRepl && hasVars && routesMatch(srv.Errors.Routes, srv.Errors.WithError(r, herr)) {
			caddyhttp.SetVar(r.Context(), BodyVar, string(body))
			return herr
		}
	}
	return writeBody(w, r, status, body)
}

// bodyError is the cause of an error Respond hands to handle_errors,
// carrying the JSON body so that Adopt can give it to another request.
type bodyError struct {
	cause error
	body  []byte
}

func (e *bodyError) Error() string { return e.cause.Error() }
func (e *bodyError) Unwrap() error { return e.cause }

// Adopt sets BodyVar on r when err is an error that Respond handed to
// handle_errors on behalf of another request: identical exports share one
// upstream call, and each of them answers its error with the same body.
func Adopt(r *http.Request, err error) {
	var be *bodyError
	if errors.As(err, &be) {
		caddyhttp.SetVar(r.Context(), BodyVar, string(be.body))
	}
}

// routesMatch reports whether some route of routes (a server's error
// routes) would take r: a matching route whose handlers are not all
// subroutes, or a matching subroute in which some route would. Only
// Caddy's matchers decide; no handler runs.
func routesMatch(routes caddyhttp.RouteList, r *http.Request) bool {
	for _, route := range routes {
		match, err := route.MatcherSets.AnyMatchWithError(r)
		if err != nil || !match {
			continue
		}
		for _, h := range route.Handlers {
			sub, ok := h.(*caddyhttp.Subroute)
			if !ok || routesMatch(sub.Routes, r) {
				return true
			}
		}
		if route.Terminal {
			return false
		}
	}
	return false
}

// Write answers with status and the JSON body v, for a handler whose job
// is to write it (fsp_error, a success answer).
func Write(w http.ResponseWriter, r *http.Request, status int, v any) error {
	body, err := Marshal(v)
	if err != nil {
		return caddyhttp.Error(http.StatusInternalServerError, err)
	}
	return writeBody(w, r, status, body)
}

func writeBody(w http.ResponseWriter, r *http.Request, status int, body []byte) error {
	h := w.Header()
	// Headers an earlier handler may have set for a body that is not this one.
	for _, field := range []string{"Content-Encoding", "Content-Range", "Etag", "Last-Modified", "Accept-Ranges"} {
		h.Del(field)
	}
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r != nil && r.Method == http.MethodHead {
		return nil
	}
	_, err := w.Write(body)
	return err
}

// Marshal is json.Marshal without HTML escaping: bodies may carry HTML
// documents, and "\u003c" for every "<" only makes them larger.
func Marshal(v any) ([]byte, error) {
	var sb strings.Builder
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(sb.String(), "\n")), nil
}
