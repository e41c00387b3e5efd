package designbridge

// LoginV2 on the auth path: the uid and the request sent with the
// server's client credentials.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/designbridge/caddy-designbridge/internal/contract"
)

// login performs LoginV2 with the configured client credentials and hands
// the upstream's answer back unchanged.
func (b *Bridge) login(w http.ResponseWriter, r *http.Request, deadline time.Time) error {
	if b.clientID == "" || b.clientSecret == "" {
		return b.fail(w, r, http.StatusInternalServerError, contract.CodeNotConfigured, "LoginV2 credentials not configured",
			"set client_id and client_secret (defaults {env.CLIENT_ID}, {env.CLIENT_SECRET}) in the design_bridge block")
	}
	// Read even when uid is configured (and the body unused), so that the
	// same bounds apply to every auth request.
	raw, ok, err := b.readBody(w, r, maxAuthBody)
	if !ok {
		return err
	}
	uid, err := b.resolveUID(r, raw.Bytes())
	if err != nil {
		var refused *uidError
		if !errors.As(err, &refused) {
			return b.internalError(w, r, err)
		}
		return b.fail(w, r, refused.status, refused.code, refused.message, refused.details)
	}
	payload, err := json.Marshal(struct {
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
		UID          string `json:"uid"`
	}{b.clientID, b.clientSecret, uid})
	if err != nil {
		return b.internalError(w, r, err)
	}

	ctx, cancel := context.WithDeadline(r.Context(), deadline)
	defer cancel()
	out := r.Clone(context.WithValue(ctx, replayBodyKey{}, memoryBody(payload)))
	// A fresh request: nothing of the browser's request but what LoginV2
	// needs is sent.
	out.Header = http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json"}}
	out.Body = io.NopCloser(bytes.NewReader(payload))
	out.ContentLength = int64(len(payload))
	out.TransferEncoding = nil
	out.Trailer = nil
	out.URL.RawQuery = ""

	// An editor token is kept by no cache, whatever the upstream says:
	// set before the watcher, it is the site's own header and wins.
	w.Header().Set("Cache-Control", "no-store")
	watch := newWatcher(w, b.secrets)
	// The page parses the token answer: what its strings decode to is
	// masked too.
	watch.unwrapLimit, watch.maskOnly = maxAuthAnswer, true
	// The answer goes to the host's origin: nothing of it but what the
	// page's token request needs (authAnswerHeaders).
	watch.passHeaders = authAnswerHeaders
	if err := b.proxy(b.authProxy, watch, out); err != nil {
		return b.proxyError(w, r, ctx, watch, err)
	}
	if err := watch.finish(); err != nil {
		return err
	}
	if watch.status == http.StatusUnauthorized || watch.status == http.StatusForbidden {
		b.logger.Warn("LoginV2 refused the client credentials",
			zap.Int("status", watch.status),
			zap.String("hint", "client_id or client_secret is wrong, or the application is disabled"))
	}
	return nil
}

// uidError is why a LoginV2 request's uid is refused, with the answer's
// status and error object.
type uidError struct {
	status, code     int
	message, details string
}

func (e *uidError) Error() string { return e.message + ": " + e.details }

var (
	errNoUser = &uidError{http.StatusForbidden, contract.CodeLoginUID, "No user",
		"the configured uid is empty for this request; is authentication configured before design_bridge?"}
	errConfiguredUID = &uidError{http.StatusBadRequest, contract.CodeLoginUID, "Invalid uid",
		"the configured uid must be 1-256 letters, digits, _ or -"}
	errAuthJSON = &uidError{http.StatusBadRequest, contract.CodeNotJSON, "Invalid JSON",
		"the request body must be a JSON object such as {\"uid\": \"customer-42\"}"}
	errBodyUID = &uidError{http.StatusBadRequest, contract.CodeLoginUID, "Invalid uid",
		"uid must be a string of 1-256 letters, digits, _ or -"}
)

// resolveUID picks the LoginV2 uid: the configured uid (resolved per
// request); only with insecure_caller_uid the body's "uid", else
// demo-user. A refusal is a *uidError.
func (b *Bridge) resolveUID(r *http.Request, raw []byte) (string, error) {
	if b.UID != "" {
		repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
		if repl == nil {
			repl = caddy.NewReplacer()
		}
		uid := repl.ReplaceAll(b.UID, "")
		if uid == "" {
			// A configured uid that resolves to nothing (for example no
			// authenticated user) must not fall back to a browser-chosen
			// one.
			return "", errNoUser
		}
		if !contract.ValidUID(uid) {
			return "", errConfiguredUID
		}
		return uid, nil
	}
	if !b.InsecureCallerUID {
		// Validate refuses this configuration; never let the caller choose.
		return "", errNoUser
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return defaultUID, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return "", errAuthJSON
	}
	rawUID, ok := fields["uid"]
	if !ok {
		return defaultUID, nil
	}
	var uid string
	if err := json.Unmarshal(rawUID, &uid); err != nil || firstNonSpace(rawUID) != '"' || !contract.ValidUID(uid) {
		return "", errBodyUID
	}
	return uid, nil
}
