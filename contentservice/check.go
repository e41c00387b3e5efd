package contentservice

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/designbridge/caddy-designbridge/design"
	"github.com/designbridge/caddy-designbridge/designcheck"
)

// The Check API's paths.
const (
	PathMessageCheck = "/v1/message/check"
	PathPageCheck    = "/v1/page/check"
	PathRowCheck     = "/v1/row/check"
)

// CodeInvalidRequest is a request that is JSON but cannot be served: a
// check request without template (or row), with an unknown check, a bad
// option or language; a PDF or image request without html or with a bad
// size.
const CodeInvalidRequest = 4102

// checkCollection maps a check path to its collection.
func checkCollection(path string) (designcheck.Collection, bool) {
	switch path {
	case PathMessageCheck:
		return designcheck.Message, true
	case PathPageCheck:
		return designcheck.Page, true
	case PathRowCheck:
		return designcheck.Row, true
	}
	return "", false
}

// serveCheck answers POST /v1/{message,page,row}/check: the request's
// checks run on its template (or row), answered per language as a JSON
// array. Admission is the export's (method, token, rate limit, media
// type, size); then the request, the design, the checks.
func (s *service) serveCheck(w http.ResponseWriter, r *http.Request, coll designcheck.Collection) {
	id, body, release, ok := s.admitJSON(w, r)
	defer release()
	if !ok {
		return
	}
	var req designcheck.Request
	if err := json.Unmarshal(body, &req); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			details := "the body must be a JSON object with checks and " + designMember(coll)
			if typeErr.Field != "" {
				details = fmt.Sprintf("%s must not be %s", typeErr.Field, typeErr.Value)
			}
			writeError(w, http.StatusBadRequest, CodeInvalidRequest, "Invalid check request", details)
			return
		}
		writeError(w, http.StatusBadRequest, CodeNotJSON, "Body is not JSON", "the body must be a JSON object")
		return
	}
	specs, langs, err := req.Validate(coll)
	if err != nil {
		writeError(w, http.StatusBadRequest, CodeInvalidRequest, "Invalid check request", err.Error())
		return
	}
	d, failure := s.checkedDesign(&req, coll)
	if failure != nil {
		writeError(w, failure.status, failure.code, failure.message, failure.details)
		return
	}
	// The answer holds no part of the tree (its strings are the
	// template's), so the tree's blocks go back to the decoder's pool.
	defer d.Release()

	ctx, cancel := context.WithTimeout(r.Context(), s.fetch.totalTimeout)
	defer cancel()
	results, failure := s.runChecks(ctx, d, coll, specs, langs)
	if failure != nil {
		s.logger.Error("check failed",
			zap.String("request_id", id),
			zap.String("path", r.URL.Path),
			zap.String("error", failure.internal),
			zap.String("stack", failure.stack))
		writeError(w, http.StatusInternalServerError, CodeInternal, "Internal error", "request id "+id)
		return
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(results); err != nil {
		s.logger.Error("check answer not encodable", zap.String("request_id", id), zap.Error(err))
		writeError(w, http.StatusInternalServerError, CodeInternal, "Internal error", "request id "+id)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}

// checkedDesign decodes the request's template, or its row as a design of
// that one row, under the service's design bounds.
func (s *service) checkedDesign(req *designcheck.Request, coll designcheck.Collection) (*design.Design, *renderFailure) {
	member, raw := designMember(coll), req.Template
	if coll == designcheck.Row {
		raw = req.Row
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		// The editor hands designs over as a JSON string (jsonFile).
		var inner string
		if err := json.Unmarshal(raw, &inner); err == nil {
			raw = []byte(inner)
		}
	}
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, &renderFailure{status: http.StatusBadRequest, code: CodeInvalidRequest,
			message: "Invalid check request", details: member + " is required"}
	}
	if coll == designcheck.Row {
		if raw[0] != '{' {
			return nil, &renderFailure{status: http.StatusBadRequest, code: CodeInvalidRequest,
				message: "Invalid check request", details: "row must be an object"}
		}
		wrapped := make([]byte, 0, len(raw)+24)
		wrapped = append(wrapped, `{"page":{"rows":[`...)
		wrapped = append(wrapped, raw...)
		raw = append(wrapped, "]}}"...)
	}
	d, err := design.DecodeWithLimits(raw, s.limits)
	if err != nil {
		f := classifyDecodeError(err)
		var pathErr *design.PathError
		if errors.As(err, &pathErr) {
			// Name the member of the request: template.page.rows[…],
			// or row.columns[…] for a row.
			at := member + "." + pathErr.Path
			if coll == designcheck.Row {
				at = member
				if rest, under := strings.CutPrefix(pathErr.Path, "page.rows[0]"); under {
					at += rest
				}
			}
			f.details = at + ": " + pathErr.Msg
		}
		if f.code == CodeNotJSON {
			// Only a template given as a string can be "not JSON" here.
			f.message = "The " + member + " is not JSON"
		}
		return nil, f
	}
	return d, nil
}

// designMember names the request member that holds the design.
func designMember(coll designcheck.Collection) string {
	if coll == designcheck.Row {
		return "row"
	}
	return "template"
}

// runChecks runs the checks, turning a panic into a failure for the log,
// so that no design can take the server down.
func (s *service) runChecks(ctx context.Context, d *design.Design, coll designcheck.Collection, specs []designcheck.Spec, langs []string) (res []designcheck.LanguageResult, failure *renderFailure) {
	defer func() {
		if v := recover(); v != nil {
			res = nil
			failure = &renderFailure{status: http.StatusInternalServerError,
				internal: fmt.Sprintf("panic: %v", v), stack: string(debug.Stack())}
		}
	}()
	opt := designcheck.Options{MaxImages: s.fetch.maxImages, Limits: s.output}
	if s.weigher != nil {
		opt.Weigher = s.weigher
	}
	return designcheck.Run(ctx, d, coll, specs, langs, opt), nil
}
