package contract

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// Write answers with status and the JSON body v: every error answer of
// the modules, and content_service's JSON successes. The error is a body
// that cannot be encoded, or the client's connection failing.
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
