package designbridge

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/designbridge/caddy-designbridge/internal/confvalue"
	"github.com/designbridge/caddy-designbridge/internal/fsperr"
)

func init() {
	caddy.RegisterModule(FSPError{})
	httpcaddyfile.RegisterHandlerDirective("fsp_error", parseFSPErrorCaddyfile)
	// Before respond, hence also before reverse_proxy and file_server: a
	// matcher-guarded fsp_error in the same block as reverse_proxy must
	// answer before the request is proxied. It stays after handle/route so
	// it sorts like respond and error, which users already know.
	httpcaddyfile.RegisterDirectiveOrder("fsp_error", httpcaddyfile.Before, "respond")
}

// The range of codes the contract leaves to the provider's own rules.
const (
	fspCustomCodeMin = 3900
	fspCustomCodeMax = 3999
)

func fspIsCustomCode(code int) bool {
	return code >= fspCustomCodeMin && code <= fspCustomCodeMax
}

// fspCodeForStatus maps the HTTP status of a handled error to an FSP code,
// as the contract prescribes for handle_errors.
func fspCodeForStatus(status int) int {
	switch {
	case status == http.StatusBadRequest:
		return 3500
	case status == http.StatusUnauthorized:
		return 3650
	case status == http.StatusForbidden:
		return 3300
	case status == http.StatusNotFound:
		return 3200
	case status == http.StatusConflict:
		return 3400
	case status == http.StatusRequestEntityTooLarge, status == http.StatusUnprocessableEntity:
		return 3450
	case status >= 400 && status <= 499:
		return 3500
	case status == http.StatusInternalServerError:
		return 3100
	default:
		// 502, 503, 504, any other 5xx, and anything that is not an error
		// status at all: a generic failure of the FSP.
		return 3001
	}
}

// fspParseCode parses an FSP code written as exactly four decimal digits
// and checks that it is in the table or in the custom range.
func fspParseCode(text string) (int, error) {
	if !fspAllDigits(text) {
		return 0, fmt.Errorf("code %q is not a number", text)
	}
	if len(text) != 4 || text[0] == '0' {
		return 0, fmt.Errorf("code %q is out of range: FSP codes have four digits; custom codes are %d–%d",
			text, fspCustomCodeMin, fspCustomCodeMax)
	}
	code, _ := strconv.Atoi(text) // cannot fail: four digits
	if _, ok := fsperr.Lookup(code); ok || fspIsCustomCode(code) {
		return code, nil
	}
	return 0, fmt.Errorf("code %q is neither in the FSP table (%s) nor a custom code %d–%d",
		text, fspTableCodeList(), fspCustomCodeMin, fspCustomCodeMax)
}

// fspParseStatus parses the HTTP status of a custom code: 400–599.
// field names it in the error: status in the Caddyfile and at request
// time, status_code in JSON.
func fspParseStatus(field, text string) (int, error) {
	if !fspAllDigits(text) {
		return 0, fmt.Errorf("%s %q is not a number", field, text)
	}
	status, err := strconv.Atoi(text)
	if err != nil || len(text) != 3 || status < 400 || status > 599 {
		return 0, fmt.Errorf("%s %q is out of range: custom codes answer with 400–599", field, text)
	}
	return status, nil
}

func fspAllDigits(text string) bool {
	if text == "" {
		return false
	}
	for i := 0; i < len(text); i++ {
		if text[i] < '0' || text[i] > '9' {
			return false
		}
	}
	return true
}

func fspTableCodeList() string {
	var codes []string
	for _, row := range fsperr.Table() {
		codes = append(codes, strconv.Itoa(row.Code))
	}
	return strings.Join(codes, ", ")
}

// FSPError (http.handlers.fsp_error) answers a request with a
// file-system-provider (FSP) error body,
// `{"code": …, "message": "…", "details": "…"}`, with the HTTP status of the
// FSP contract's error table. It always ends the handler chain.
//
// With a code, it answers that code's row of the table (message and details
// may be overridden) or, for a custom code 3900–3999, the configured status
// and message. Without a code, it uses the code chosen earlier in the
// request through the variable `fsp_code` (with `fsp_status`, `fsp_message`
// and `fsp_details` beside it) or, inside handle_errors, maps the status of
// the error being handled to a code of the table.
//
// A code, status or message that can only be known at request time (a
// placeholder) and turns out invalid is answered with 3001 and logged; the
// response then never carries the configured texts.
type FSPError struct {
	// The FSP code: one of the table (3001, 3100, 3200, 3300, 3400, 3450,
	// 3500, 3600, 3650) or a custom code 3900–3999. May be a placeholder.
	// If empty (or a placeholder that resolves to empty), the code comes
	// from fsp_code (a variable, or a placeholder as map sets) or, in
	// handle_errors, from the status of the handled error.
	Code caddyhttp.WeakString `json:"code,omitempty"`

	// The HTTP status (400–599) for a custom code 3900–3999; required
	// for those and refused for codes of the table, whose status is fixed.
	// May be a placeholder.
	StatusCode caddyhttp.WeakString `json:"status_code,omitempty"`

	// The short title the file manager shows. Defaults to the table's
	// message; required for custom codes. Placeholders are replaced.
	Message string `json:"message,omitempty"`

	// The text (or link) the file manager shows under the title. Defaults
	// to the table's details text, never to the handled error's message,
	// which may hold internal paths or addresses. Placeholders are
	// replaced, so `details {err.message}` exposes it deliberately.
	Details string `json:"details,omitempty"`

	logger *zap.Logger
}

// CaddyModule returns the Caddy module information.
func (FSPError) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.fsp_error",
		New: func() caddy.Module { return new(FSPError) },
	}
}

// UnmarshalJSON reads the handler's JSON config as Caddy does, with an
// error naming the field it is about in the config's words.
func (fe *FSPError) UnmarshalJSON(b []byte) error {
	type plain FSPError // the fields without this method
	return confvalue.DecodeStrict(b, (*plain)(fe))
}

// Provision sets up the logger.
func (fe *FSPError) Provision(ctx caddy.Context) error {
	fe.logger = ctx.Logger()
	return nil
}

// Validate checks every value that is known at load time, naming the
// status by its JSON field, which is what Caddy loads.
func (fe *FSPError) Validate() error {
	return fspCheckLiterals(string(fe.Code), string(fe.StatusCode), fe.Message, "status_code")
}

// fspCheckLiterals checks the parts of a configuration that hold no
// placeholder: the code, the status, and whether they fit together.
// statusField names the status in the errors (see fspParseStatus).
func fspCheckLiterals(codeText, statusText, message, statusField string) error {
	codeKnown := codeText != "" && !confvalue.HasPlaceholder(codeText)
	statusKnown := statusText != "" && !confvalue.HasPlaceholder(statusText)
	code := 0
	if codeKnown {
		var err error
		if code, err = fspParseCode(codeText); err != nil {
			return err
		}
	}
	if statusKnown {
		if _, err := fspParseStatus(statusField, statusText); err != nil {
			return err
		}
	}
	if codeText == "" && statusText != "" {
		// Without a code the answer is a table code (mapped) or whatever
		// the fsp_code variable chose with its own fsp_status.
		return fmt.Errorf("%s %q needs a custom code %d–%d (or a placeholder code)",
			statusField, statusText, fspCustomCodeMin, fspCustomCodeMax)
	}
	if !codeKnown {
		return nil
	}
	if row, ok := fsperr.Lookup(code); ok {
		if statusText != "" {
			return fmt.Errorf("%s %q: code %d is in the FSP table with status %d; only custom codes %d–%d take a %s",
				statusField, statusText, code, row.Status, fspCustomCodeMin, fspCustomCodeMax, statusField)
		}
		return nil
	}
	if statusText == "" {
		return fmt.Errorf("custom code %q needs a %s (400–599)", codeText, statusField)
	}
	if message == "" {
		return fmt.Errorf("custom code %q needs a message", codeText)
	}
	return nil
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens. Syntax:
//
//	fsp_error [<matcher>] [<code>] {
//	    status  <status>
//	    message <text>
//	    details <text>
//	}
//
// Every argument may hold placeholders; those parts are checked at request
// time instead of load time.
func (fe *FSPError) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // consume directive name
	if d.NextArg() {
		fe.Code = caddyhttp.WeakString(d.Val())
		if !confvalue.HasPlaceholder(d.Val()) {
			if _, err := fspParseCode(d.Val()); err != nil {
				return d.Errf("fsp_error: %v", err)
			}
		}
		if d.NextArg() {
			return d.Errf("fsp_error: one code, got extra %q", d.Val())
		}
	}
	for d.NextBlock(0) {
		subdirective := d.Val()
		var target *string
		switch subdirective {
		case "status":
			target = (*string)(&fe.StatusCode)
		case "message":
			target = &fe.Message
		case "details":
			target = &fe.Details
		default:
			return d.Errf("fsp_error: unrecognized subdirective %q", subdirective)
		}
		if *target != "" {
			return d.Errf("fsp_error: %s already specified", subdirective)
		}
		what := "fsp_error: " + subdirective
		args := d.RemainingArgs()
		switch {
		case len(args) == 0:
			return confvalue.NoValue(d, what)
		case len(args) > 1 && subdirective != "status":
			// message Upload error: the usual slip is an unquoted text.
			return d.Errf("%s: one text, got extra %q; put a text with spaces in quotes: \"…\" or `…`", what, args[1])
		case len(args) > 1:
			return d.Errf("%s: one value, got extra %q", what, args[1])
		}
		value := args[0]
		if value == "" {
			return d.Errf("fsp_error: %s must not be empty", subdirective)
		}
		if subdirective == "status" && !confvalue.HasPlaceholder(value) {
			if _, err := fspParseStatus("status", value); err != nil {
				return d.Errf("fsp_error: %v", err)
			}
		}
		*target = value
	}
	if err := fspCheckLiterals(string(fe.Code), string(fe.StatusCode), fe.Message, "status"); err != nil {
		return d.Errf("fsp_error: %v", err)
	}
	return nil
}

func parseFSPErrorCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	fe := new(FSPError)
	err := fe.UnmarshalCaddyfile(h.Dispenser)
	return fe, err
}

// ServeHTTP writes the FSP error response; it never calls next.
func (fe FSPError) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	if repl == nil {
		repl = caddy.NewReplacer()
	}
	body, status, err := fe.resolve(r, repl)
	if err != nil {
		// A misconfiguration that only the request revealed: the client
		// gets the generic FSP failure, the operator gets the reason.
		if fe.logger != nil {
			fe.logger.Error("invalid at request time; answered 3001",
				zap.Error(err),
				zap.String("method", r.Method),
				zap.String("uri", r.RequestURI))
		}
		row, _ := fsperr.Lookup(3001)
		body, status = fsperr.Body{Code: row.Code, Message: row.Message, Details: row.Details}, row.Status
	}
	return fsperr.Write(w, r, body, status)
}

// resolve decides code, status, message and details for this request.
func (fe FSPError) resolve(r *http.Request, repl *caddy.Replacer) (fsperr.Body, int, error) {
	codeText := strings.TrimSpace(repl.ReplaceAll(string(fe.Code), ""))
	statusText := strings.TrimSpace(repl.ReplaceAll(string(fe.StatusCode), ""))
	message := repl.ReplaceKnown(fe.Message, "")
	details := repl.ReplaceKnown(fe.Details, "")
	source := "code"

	if codeText == "" {
		if chosen, from := fspValue(r, repl, "fsp_code"); chosen != "" {
			// A code chosen earlier in the request wins over the mapping;
			// its companions fill in what the directive does not set.
			codeText, source = chosen, from
			if statusText == "" {
				statusText, _ = fspValue(r, repl, "fsp_status")
			}
			if message == "" {
				message, _ = fspValue(r, repl, "fsp_message")
			}
			if details == "" {
				details, _ = fspValue(r, repl, "fsp_details")
			}
		} else if handled, ok := r.Context().Value(caddyhttp.ErrorCtxKey).(error); ok && handled != nil {
			if statusText != "" {
				return fsperr.Body{}, 0, fmt.Errorf("status %q given, but the code is mapped from the handled error", statusText)
			}
			codeText, source = strconv.Itoa(fspCodeForStatus(fspHandledStatus(handled))), "handled error"
		} else {
			return fsperr.Body{}, 0, errors.New("no code: none configured, no variable fsp_code, and no error is being handled")
		}
	}

	code, err := fspParseCode(codeText)
	if err != nil {
		return fsperr.Body{}, 0, fmt.Errorf("%s: %w", source, err)
	}
	if row, ok := fsperr.Lookup(code); ok {
		if statusText != "" {
			return fsperr.Body{}, 0, fmt.Errorf("%s: status %q given for code %d, which is in the FSP table with status %d",
				source, statusText, code, row.Status)
		}
		if message == "" {
			message = row.Message
		}
		if details == "" {
			details = row.Details
		}
		return fsperr.Body{Code: code, Message: message, Details: details}, row.Status, nil
	}
	if statusText == "" {
		return fsperr.Body{}, 0, fmt.Errorf("%s: custom code %d has no status", source, code)
	}
	status, err := fspParseStatus("status", statusText)
	if err != nil {
		return fsperr.Body{}, 0, fmt.Errorf("%s: custom code %d: %w", source, code, err)
	}
	if message == "" {
		return fsperr.Body{}, 0, fmt.Errorf("%s: custom code %d has no message", source, code)
	}
	return fsperr.Body{Code: code, Message: message, Details: details}, status, nil
}

// fspHandledStatus is the HTTP status Caddy gives the handled error.
func fspHandledStatus(handled error) int {
	var handlerErr caddyhttp.HandlerError
	if errors.As(handled, &handlerErr) && handlerErr.StatusCode >= 400 && handlerErr.StatusCode <= 599 {
		return handlerErr.StatusCode
	}
	// Caddy answers any other error with 500.
	return http.StatusInternalServerError
}

// fspValue reads, as text, a value chosen earlier in the request: a
// request variable (vars, or a handler) or, when there is none, a
// placeholder of that name (map sets placeholders, not variables). from
// says which, for the log.
func fspValue(r *http.Request, repl *caddy.Replacer, name string) (text, from string) {
	value, from := caddyhttp.GetVar(r.Context(), name), "variable "+name
	if value == nil {
		value, _ = repl.Get(name)
		from = "placeholder {" + name + "}"
	}
	switch value := value.(type) {
	case nil:
		return "", from
	case string:
		return strings.TrimSpace(value), from
	default:
		return strings.TrimSpace(fmt.Sprint(value)), from
	}
}

// Interface guards
var (
	_ caddy.Provisioner           = (*FSPError)(nil)
	_ caddy.Validator             = (*FSPError)(nil)
	_ caddyhttp.MiddlewareHandler = (*FSPError)(nil)
	_ caddyfile.Unmarshaler       = (*FSPError)(nil)
)
