package designbridge

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	_ "github.com/caddyserver/caddy/v2/modules/standard"

	"github.com/designbridge/caddy-designbridge/internal/fsperr"
)

// fspDocPath is the user documentation that holds the FSP error table.
const fspDocPath = "README.md"

// fspWant is what the contract (and, for details, this package's chosen
// defaults) says one table code answers.
type fspWant struct {
	code    int
	status  int
	message string
	details string
}

// fspWantTable is written out here on purpose, independent of fspTable:
// codes, statuses and messages are the contract's; details are the
// defaults this package promises (3200's is fixed by the issue).
var fspWantTable = []fspWant{
	{3001, 503, "FSP Error", "The file service failed; please try again later"},
	{3100, 503, "Something went wrong accessing backend filesystem", "The storage behind the file service could not be reached; please try again later"},
	{3200, 404, "Resource not found", "File or directory not found"},
	{3300, 403, "Permission denied", "You are not allowed to change this file or directory"},
	{3400, 409, "Resource Already Exists", "A file or directory with this name already exists"},
	{3450, 422, "File Not Uploaded", "The file could not be uploaded"},
	{3500, 400, "Request Error", "The request could not be understood"},
	{3600, 403, "User Error", "The storage configured for this user is not valid"},
	{3650, 401, "Wrong Username or Password", "The file service credentials are missing or wrong"},
}

// fspRequest builds a request as Caddy would hand it to a handler: with a
// replacer and a variable table in its context.
func fspRequest(t testing.TB, method, target string, vars map[string]any, handled error) *http.Request {
	t.Helper()
	return fspRequestWith(t, method, target, vars, nil, handled)
}

// fspRequestWith is fspRequest with placeholders set as map sets them.
func fspRequestWith(t testing.TB, method, target string, vars, placeholders map[string]any, handled error) *http.Request {
	t.Helper()
	r := httptest.NewRequest(method, target, nil)
	table := map[string]any{}
	for k, v := range vars {
		table[k] = v
	}
	ctx := context.WithValue(r.Context(), caddyhttp.VarsCtxKey, table)
	r = r.WithContext(ctx)
	repl := caddyhttp.NewTestReplacer(r)
	for k, v := range placeholders {
		repl.Set(k, v)
	}
	if handled != nil {
		r = (&caddyhttp.HTTPErrorConfig{}).WithError(r, handled)
	}
	return r
}

// fspServe runs the handler on r and returns the recorded response; the
// handler must never call next.
func fspServe(t testing.TB, fe FSPError, r *http.Request) *httptest.ResponseRecorder {
	t.Helper()
	w := httptest.NewRecorder()
	next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error {
		t.Error("fsp_error called the next handler")
		return nil
	})
	if err := fe.ServeHTTP(w, r, next); err != nil {
		t.Fatalf("ServeHTTP returned error: %v", err)
	}
	return w
}

// fspDecode checks the response form every FSP error shares and returns
// the decoded body.
func fspDecode(t testing.TB, w *httptest.ResponseRecorder) fsperr.Body {
	t.Helper()
	if got := w.Header().Get("Content-Type"); got != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", got)
	}
	if got := w.Header().Get("Cache-Control"); got != "no-store" {
		t.Errorf("Cache-Control = %q, want no-store", got)
	}
	if got, want := w.Header().Get("Content-Length"), strconv.Itoa(w.Body.Len()); got != want {
		t.Errorf("Content-Length = %q, body has %s bytes", got, want)
	}
	return fspDecodeBytes(t, w.Body.Bytes())
}

// fspDecodeBytes decodes an FSP error body, insisting on exactly the three
// members with their JSON types.
func fspDecodeBytes(t testing.TB, raw []byte) fsperr.Body {
	t.Helper()
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		t.Fatalf("body is not a JSON object: %v: %s", err, raw)
	}
	if len(members) != 3 {
		t.Errorf("body has %d members, want exactly code, message, details: %s", len(members), raw)
	}
	var body fsperr.Body
	for name, dst := range map[string]any{"code": &body.Code, "message": &body.Message, "details": &body.Details} {
		value, ok := members[name]
		if !ok {
			t.Errorf("body lacks %q: %s", name, raw)
			continue
		}
		if err := json.Unmarshal(value, dst); err != nil {
			t.Errorf("member %q has the wrong type: %v: %s", name, err, raw)
		}
	}
	return body
}

func fspProvisioned(t testing.TB, fe FSPError) FSPError {
	t.Helper()
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	if err := fe.Provision(ctx); err != nil {
		t.Fatalf("Provision: %v", err)
	}
	if err := fe.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	return fe
}

// TestFSPTableMatchesDocs reads the error table of the user documentation
// and checks that fspTable holds exactly its rows (codes, messages,
// statuses and, where the table gives them, default details), so the
// documentation and the code cannot drift apart.
func TestFSPTableMatchesDocs(t *testing.T) {
	file, err := os.Open(fspDocPath)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	row := regexp.MustCompile(`^\|\s*(\d{4})\s*\|\s*([^|]+?)\s*\|\s*(\d{3})\s*\|(?:\s*([^|]*?)\s*\|)?`)
	contract := map[int]fsperr.Row{}
	scanner := bufio.NewScanner(file)
	for scanner.Scan() {
		m := row.FindStringSubmatch(scanner.Text())
		if m == nil {
			continue
		}
		code, _ := strconv.Atoi(m[1])
		status, _ := strconv.Atoi(m[3])
		contract[code] = fsperr.Row{Code: code, Message: m[2], Status: status, Details: m[4]}
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	if len(contract) == 0 {
		t.Fatalf("no error table rows found in %s", fspDocPath)
	}
	ours := fsperr.Table()
	if len(ours) != len(contract) {
		t.Errorf("fspTable has %d rows, %s %d", len(ours), fspDocPath, len(contract))
	}
	for _, got := range ours {
		want, ok := contract[got.Code]
		if !ok {
			t.Errorf("code %d is not in %s", got.Code, fspDocPath)
			continue
		}
		if got.Message != want.Message || got.Status != want.Status {
			t.Errorf("code %d: have %q/%d, %s says %q/%d", got.Code, got.Message, got.Status, fspDocPath, want.Message, want.Status)
		}
		if want.Details != "" && got.Details != want.Details {
			t.Errorf("code %d: default details %q, %s says %q", got.Code, got.Details, fspDocPath, want.Details)
		}
		if got.Details == "" {
			t.Errorf("code %d has no default details", got.Code)
		}
	}
}

func TestFSPEveryTableCode(t *testing.T) {
	if len(fspWantTable) != len(fsperr.Table()) {
		t.Fatalf("test covers %d codes, table has %d", len(fspWantTable), len(fsperr.Table()))
	}
	for _, want := range fspWantTable {
		t.Run(strconv.Itoa(want.code), func(t *testing.T) {
			fe := fspProvisioned(t, FSPError{Code: caddyhttp.WeakString(strconv.Itoa(want.code))})
			w := fspServe(t, fe, fspRequest(t, http.MethodGet, "/dir/file.png", nil, nil))
			if w.Code != want.status {
				t.Errorf("status = %d, want %d", w.Code, want.status)
			}
			got := fspDecode(t, w)
			if got != (fsperr.Body{Code: want.code, Message: want.message, Details: want.details}) {
				t.Errorf("body = %+v, want %+v", got, want)
			}
		})
	}
}

func TestFSPOverridesAndPlaceholders(t *testing.T) {
	tests := []struct {
		name       string
		fe         FSPError
		vars       map[string]any
		repl       map[string]any // placeholders, as map sets them
		handled    error
		wantStatus int
		wantBody   fsperr.Body
	}{
		{
			name:       "message and details override a table code",
			fe:         FSPError{Code: "3200", Message: "Nope", Details: "Nothing at {http.request.uri.path}"},
			wantStatus: 404,
			wantBody:   fsperr.Body{Code: 3200, Message: "Nope", Details: "Nothing at /dir/file.png"},
		},
		{
			name:       "only details overridden keeps the table message",
			fe:         FSPError{Code: "3400", Details: "try keep"},
			wantStatus: 409,
			wantBody:   fsperr.Body{Code: 3400, Message: "Resource Already Exists", Details: "try keep"},
		},
		{
			name:       "custom code with status and message",
			fe:         FSPError{Code: "3901", StatusCode: "400", Message: "Upload error", Details: `File names may not contain any of: \ / ? |`},
			wantStatus: 400,
			wantBody:   fsperr.Body{Code: 3901, Message: "Upload error", Details: `File names may not contain any of: \ / ? |`},
		},
		{
			name:       "lowest custom code",
			fe:         FSPError{Code: "3900", StatusCode: "599", Message: "m"},
			wantStatus: 599,
			wantBody:   fsperr.Body{Code: 3900, Message: "m", Details: ""},
		},
		{
			name:       "highest custom code",
			fe:         FSPError{Code: "3999", StatusCode: "400", Message: "m", Details: "d"},
			wantStatus: 400,
			wantBody:   fsperr.Body{Code: 3999, Message: "m", Details: "d"},
		},
		{
			name:       "code, status and message from placeholders",
			fe:         FSPError{Code: "{http.vars.c}", StatusCode: "{http.vars.s}", Message: "{http.vars.m}", Details: "{http.request.method} refused"},
			vars:       map[string]any{"c": "3950", "s": "418", "m": "Teapot"},
			wantStatus: 418,
			wantBody:   fsperr.Body{Code: 3950, Message: "Teapot", Details: "GET refused"},
		},
		{
			name:       "table code from a placeholder",
			fe:         FSPError{Code: "{http.vars.c}"},
			vars:       map[string]any{"c": "3300"},
			wantStatus: 403,
			wantBody:   fsperr.Body{Code: 3300, Message: "Permission denied", Details: "You are not allowed to change this file or directory"},
		},
		{
			name:       "unknown placeholder in details stays as written",
			fe:         FSPError{Code: "3500", Details: "use {name}"},
			wantStatus: 400,
			wantBody:   fsperr.Body{Code: 3500, Message: "Request Error", Details: "use {name}"},
		},
		{
			name:       "variable fsp_code with its companions",
			fe:         FSPError{},
			vars:       map[string]any{"fsp_code": "3901", "fsp_status": "400", "fsp_message": "Upload error", "fsp_details": "bad name"},
			wantStatus: 400,
			wantBody:   fsperr.Body{Code: 3901, Message: "Upload error", Details: "bad name"},
		},
		{
			name:       "variable fsp_code wins over the mapping",
			fe:         FSPError{},
			vars:       map[string]any{"fsp_code": 3300},
			handled:    caddyhttp.Error(http.StatusNotFound, errors.New("open /srv/x: no such file")),
			wantStatus: 403,
			wantBody:   fsperr.Body{Code: 3300, Message: "Permission denied", Details: "You are not allowed to change this file or directory"},
		},
		{
			name:       "placeholder fsp_code (set by map) with its companions",
			fe:         FSPError{},
			repl:       map[string]any{"fsp_code": "3902", "fsp_status": "415", "fsp_message": "Upload error"},
			handled:    caddyhttp.Error(http.StatusUnsupportedMediaType, errors.New("refused")),
			wantStatus: 415,
			wantBody:   fsperr.Body{Code: 3902, Message: "Upload error", Details: ""},
		},
		{
			name:       "variable fsp_code wins over placeholder fsp_code",
			fe:         FSPError{},
			vars:       map[string]any{"fsp_code": "3300"},
			repl:       map[string]any{"fsp_code": "3200"},
			wantStatus: 403,
			wantBody:   fsperr.Body{Code: 3300, Message: "Permission denied", Details: "You are not allowed to change this file or directory"},
		},
		{
			name:       "directive's message wins over fsp_message",
			fe:         FSPError{Message: "Configured"},
			vars:       map[string]any{"fsp_code": "3920", "fsp_status": "409", "fsp_message": "From var"},
			wantStatus: 409,
			wantBody:   fsperr.Body{Code: 3920, Message: "Configured", Details: ""},
		},
		{
			name:       "placeholder code that is empty falls back to the mapping",
			fe:         FSPError{Code: "{http.vars.unset}"},
			handled:    caddyhttp.Error(http.StatusUnauthorized, errors.New("user not found")),
			wantStatus: 401,
			wantBody:   fsperr.Body{Code: 3650, Message: "Wrong Username or Password", Details: "The file service credentials are missing or wrong"},
		},
		{
			name:       "details may expose the error message when configured to",
			fe:         FSPError{Details: "{http.error.message}"},
			handled:    caddyhttp.Error(http.StatusConflict, errors.New("exists")),
			wantStatus: 409,
			wantBody:   fsperr.Body{Code: 3400, Message: "Resource Already Exists", Details: "exists"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fe := fspProvisioned(t, tt.fe)
			w := fspServe(t, fe, fspRequestWith(t, http.MethodGet, "/dir/file.png", tt.vars, tt.repl, tt.handled))
			if w.Code != tt.wantStatus {
				t.Errorf("status = %d, want %d", w.Code, tt.wantStatus)
			}
			if got := fspDecode(t, w); got != tt.wantBody {
				t.Errorf("body = %+v, want %+v", got, tt.wantBody)
			}
		})
	}
}

// TestFSPHandleErrorsMapping covers the mapping of a handled error's HTTP
// status to a code, and that the error's own message never leaks.
func TestFSPHandleErrorsMapping(t *testing.T) {
	const secret = "dial tcp 10.1.2.3:8090: open /var/lib/fsp/secret.db: goroutine 7 [running]"
	tests := []struct {
		status   int
		wantCode int
	}{
		{400, 3500}, {401, 3650}, {403, 3300}, {404, 3200}, {405, 3500}, {409, 3400},
		{410, 3500}, {413, 3450}, {422, 3450}, {429, 3500}, {499, 3500},
		{500, 3100}, {501, 3001}, {502, 3001}, {503, 3001}, {504, 3001}, {599, 3001},
	}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.status), func(t *testing.T) {
			fe := fspProvisioned(t, FSPError{})
			handled := caddyhttp.Error(tt.status, errors.New(secret))
			w := fspServe(t, fe, fspRequest(t, http.MethodGet, "/x", nil, handled))
			want := fspWantFor(t, tt.wantCode)
			if w.Code != want.status {
				t.Errorf("status = %d, want %d (the table's for %d)", w.Code, want.status, tt.wantCode)
			}
			if got := fspDecode(t, w); got != (fsperr.Body{Code: want.code, Message: want.message, Details: want.details}) {
				t.Errorf("body = %+v, want %+v", got, want)
			}
			if strings.Contains(w.Body.String(), "10.1.2.3") || strings.Contains(w.Body.String(), "/var/lib") {
				t.Errorf("body leaks the handled error: %s", w.Body.String())
			}
		})
	}
	t.Run("handler error without a status is a 500", func(t *testing.T) {
		fe := fspProvisioned(t, FSPError{})
		w := fspServe(t, fe, fspRequest(t, http.MethodGet, "/x", nil, caddyhttp.HandlerError{Err: errors.New(secret)}))
		if got := fspDecode(t, w); got.Code != 3100 || w.Code != 503 {
			t.Errorf("got %d/%+v, want 503/3100", w.Code, got)
		}
	})
	t.Run("plain error is a 500", func(t *testing.T) {
		fe := fspProvisioned(t, FSPError{})
		w := fspServe(t, fe, fspRequest(t, http.MethodGet, "/x", nil, errors.New(secret)))
		if got := fspDecode(t, w); got.Code != 3100 || w.Code != 503 {
			t.Errorf("got %d/%+v, want 503/3100", w.Code, got)
		}
	})
}

func fspWantFor(t testing.TB, code int) fspWant {
	t.Helper()
	for _, want := range fspWantTable {
		if want.code == code {
			return want
		}
	}
	t.Fatalf("code %d not in fspWantTable", code)
	return fspWant{}
}

func TestFSPHead(t *testing.T) {
	for _, fe := range []FSPError{
		{Code: "3200"},
		{Code: "3901", StatusCode: "400", Message: "Upload error"},
	} {
		fe := fspProvisioned(t, fe)
		get := fspServe(t, fe, fspRequest(t, http.MethodGet, "/a", nil, nil))
		head := fspServe(t, fe, fspRequest(t, http.MethodHead, "/a", nil, nil))
		if head.Code != get.Code {
			t.Errorf("HEAD status %d, GET %d", head.Code, get.Code)
		}
		if head.Body.Len() != 0 {
			t.Errorf("HEAD wrote a body: %q", head.Body.String())
		}
		for _, field := range []string{"Content-Type", "Cache-Control", "Content-Length"} {
			if head.Header().Get(field) != get.Header().Get(field) {
				t.Errorf("HEAD %s = %q, GET %q", field, head.Header().Get(field), get.Header().Get(field))
			}
		}
	}
}

// TestFSPValidate covers the load-time rules on JSON configuration.
func TestFSPValidate(t *testing.T) {
	tests := []struct {
		name    string
		fe      FSPError
		wantErr string // empty: valid
	}{
		{"table code", FSPError{Code: "3200"}, ""},
		{"no code", FSPError{}, ""},
		{"custom 3900", FSPError{Code: "3900", StatusCode: "400", Message: "m"}, ""},
		{"custom 3999", FSPError{Code: "3999", StatusCode: "599", Message: "m"}, ""},
		{"placeholder code with status", FSPError{Code: "{http.vars.c}", StatusCode: "400"}, ""},
		{"placeholder status", FSPError{Code: "3901", StatusCode: "{http.vars.s}", Message: "m"}, ""},
		{"3899", FSPError{Code: "3899", StatusCode: "400", Message: "m"}, `"3899"`},
		{"4000", FSPError{Code: "4000", StatusCode: "400", Message: "m"}, `"4000"`},
		{"39105", FSPError{Code: "39105", StatusCode: "400", Message: "m"}, `"39105" is out of range`},
		{"3000", FSPError{Code: "3000"}, `"3000"`},
		{"4001", FSPError{Code: "4001"}, `"4001"`},
		{"3999x", FSPError{Code: "3999x", StatusCode: "400", Message: "m"}, `"3999x" is not a number`},
		{"signed", FSPError{Code: "+3901", StatusCode: "400", Message: "m"}, `"+3901" is not a number`},
		{"leading zero", FSPError{Code: "03200"}, `"03200"`},
		{"custom without status", FSPError{Code: "3901", Message: "m"}, "needs a status"},
		{"custom without message", FSPError{Code: "3901", StatusCode: "400"}, "needs a message"},
		{"custom status 399", FSPError{Code: "3901", StatusCode: "399", Message: "m"}, `status_code "399" is out of range`},
		{"custom status 600", FSPError{Code: "3901", StatusCode: "600", Message: "m"}, `status_code "600" is out of range`},
		{"custom status 0400", FSPError{Code: "3901", StatusCode: "0400", Message: "m"}, `status_code "0400" is out of range`},
		{"custom status not a number", FSPError{Code: "3901", StatusCode: "4xx", Message: "m"}, `status_code "4xx" is not a number`},
		{"status on table code", FSPError{Code: "3200", StatusCode: "410"}, `status_code "410": code 3200 is in the FSP table with status 404; only custom codes 3900–3999 take a status_code`},
		{"status without code", FSPError{StatusCode: "400"}, `status_code "400" needs a custom code`},
		{"custom without status_code", FSPError{Code: "3901", Message: "m"}, `custom code "3901" needs a status_code (400–599)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.fe.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("unexpected error: %v", err)
			case tt.wantErr != "" && err == nil:
				t.Errorf("accepted, want error containing %q", tt.wantErr)
			case tt.wantErr != "" && !strings.Contains(err.Error(), tt.wantErr):
				t.Errorf("error %q does not contain %q", err, tt.wantErr)
			}
		})
	}
}

// TestFSPUnmarshalCaddyfile covers the directive's syntax and its load-time
// errors, which must name the offending token.
func TestFSPUnmarshalCaddyfile(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		want    FSPError
		wantErr string
	}{
		{"bare", `fsp_error`, FSPError{}, ""},
		{"table code", `fsp_error 3200`, FSPError{Code: "3200"}, ""},
		{"table code overrides", "fsp_error 3200 {\n message Gone\n details \"not here\"\n}", FSPError{Code: "3200", Message: "Gone", Details: "not here"}, ""},
		{"custom", "fsp_error 3901 {\n status 400\n message \"Upload error\"\n details `File names may not contain any of: \\ / ? |`\n}",
			FSPError{Code: "3901", StatusCode: "400", Message: "Upload error", Details: `File names may not contain any of: \ / ? |`}, ""},
		{"placeholders everywhere", "fsp_error {vars.c} {\n status {vars.s}\n message {vars.m}\n details {vars.d}\n}",
			FSPError{Code: "{vars.c}", StatusCode: "{vars.s}", Message: "{vars.m}", Details: "{vars.d}"}, ""},
		{"mapping with details", "fsp_error {\n details \"see the log\"\n}", FSPError{Details: "see the log"}, ""},
		{"code 3000", `fsp_error 3000`, FSPError{}, `"3000"`},
		{"code 3999x", `fsp_error 3999x`, FSPError{}, `"3999x"`},
		{"code 39105", `fsp_error 39105`, FSPError{}, `"39105"`},
		{"code 4001", `fsp_error 4001`, FSPError{}, `"4001"`},
		{"two arguments", `fsp_error 3200 3300`, FSPError{}, `fsp_error: one code, got extra "3300"`},
		{"status on a table code", "fsp_error 3200 {\n status 404\n}", FSPError{}, `status "404": code 3200`},
		{"custom without status", "fsp_error 3901 {\n message m\n}", FSPError{}, `custom code "3901" needs a status`},
		{"custom without message", "fsp_error 3901 {\n status 400\n}", FSPError{}, `custom code "3901" needs a message`},
		{"custom bad status", "fsp_error 3901 {\n status 700\n message m\n}", FSPError{}, `status "700"`},
		{"unknown subdirective", "fsp_error 3200 {\n code 3300\n}", FSPError{}, `unrecognized subdirective "code"`},
		{"duplicate message", "fsp_error 3200 {\n message a\n message b\n}", FSPError{}, "message already specified"},
		{"message without text", "fsp_error 3200 {\n message\n}", FSPError{}, "fsp_error: message: no value (is a {$VAR} in it unset or empty?)"},
		{"message with two texts", "fsp_error 3200 {\n message a b\n}", FSPError{}, `fsp_error: message: one text, got extra "b"; put a text with spaces in quotes: "…" or ` + "`…`"},
		{"details with unquoted words", "fsp_error 3200 {\n details see the log\n}", FSPError{}, `fsp_error: details: one text, got extra "the"; put a text with spaces in quotes`},
		{"status with two values", "fsp_error 3901 {\n status 400 401\n message m\n}", FSPError{}, `fsp_error: status: one value, got extra "401"`},
		{"empty message", "fsp_error 3200 {\n message \"\"\n}", FSPError{}, "message must not be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got FSPError
			err := got.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.input))
			if tt.wantErr != "" {
				if err == nil {
					t.Fatalf("accepted %q, want error containing %q", tt.input, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %q does not contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

// FuzzFSPUnmarshalCaddyfile checks that the unmarshaler never panics, that
// whatever it accepts also passes Validate and survives a JSON round trip,
// and that the handler then answers with a well-formed FSP error.
func FuzzFSPUnmarshalCaddyfile(f *testing.F) {
	for _, seed := range []string{
		"fsp_error",
		"fsp_error 3200",
		"fsp_error 3901 {\n status 400\n message \"Upload error\"\n details `a \\ b`\n}",
		"fsp_error {vars.c} {\n status {vars.s}\n message {vars.m}\n}",
		"fsp_error 3200 {\n status 404\n}",
		"fsp_error 39105",
		"fsp_error 3999x {\n}",
		"fsp_error {\n message\n}",
		"fsp_error 3200 {\n details {\n}\n}",
		"fsp_error \"\" {\n status \"\"\n}",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, input string) {
		var fe FSPError
		// NewTestDispenser exits the process on input the lexer refuses,
		// so tokenize first: such input is not the unmarshaler's to judge.
		tokens, err := caddyfile.Tokenize([]byte(input), "fuzz")
		if err != nil {
			return
		}
		if err := fe.UnmarshalCaddyfile(caddyfile.NewDispenser(tokens)); err != nil {
			return
		}
		if err := fe.Validate(); err != nil {
			t.Fatalf("unmarshaler accepted %q but Validate refuses it: %v", input, err)
		}
		encoded, err := json.Marshal(fe)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		var back FSPError
		if err := json.Unmarshal(encoded, &back); err != nil {
			t.Fatalf("unmarshal %s: %v", encoded, err)
		}
		if back != fe {
			t.Fatalf("JSON round trip changed %+v into %+v", fe, back)
		}
		w := httptest.NewRecorder()
		r := fspRequest(t, http.MethodGet, "/d/f", nil, caddyhttp.Error(http.StatusNotFound, errors.New("x")))
		if err := fe.ServeHTTP(w, r, nil); err != nil {
			t.Fatalf("ServeHTTP: %v", err)
		}
		if w.Code < 400 || w.Code > 599 {
			t.Fatalf("status %d is not an error status", w.Code)
		}
		body := fspDecodeBytes(t, w.Body.Bytes())
		if _, inTable := fsperr.Lookup(body.Code); !inTable && !fspIsCustomCode(body.Code) {
			t.Fatalf("answered code %d", body.Code)
		}
	})
}

// TestFSPDirectiveOrder adapts a Caddyfile with fsp_error after
// reverse_proxy in the same blocks (site, route, handle, handle_errors):
// without a global order option it must load, and fsp_error must come
// before reverse_proxy in the resulting routes of the site block.
func TestFSPDirectiveOrder(t *testing.T) {
	input := `{
	admin off
}
:9299 {
	@bad path *.exe
	reverse_proxy 127.0.0.1:1
	fsp_error @bad 3300
	handle /h/* {
		respond "x"
		fsp_error 3200
	}
	route /r/* {
		fsp_error 3200
	}
	handle_errors {
		fsp_error
	}
}`
	adapter := caddyconfig.GetAdapter("caddyfile")
	if adapter == nil {
		t.Fatal("caddyfile adapter not registered")
	}
	out, _, err := adapter.Adapt([]byte(input), nil)
	if err != nil {
		t.Fatalf("adapt: %v", err)
	}
	got := fspHandlerSequence(t, out)
	want := []string{
		"subroute", "fsp_error", "static_response", // handle /h/*: fsp_error first
		"subroute", "fsp_error", // route /r/*
		"fsp_error", "reverse_proxy", // site block: the guarded fsp_error answers before proxying
		"subroute", "fsp_error", // handle_errors
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("handlers in order %v, want %v; config: %s", got, want, out)
	}
}

// fspHandlerSequence lists the "handler" values of a JSON config in
// document order.
func fspHandlerSequence(t testing.TB, config []byte) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(string(config)))
	var seq []string
	expectValue := false
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		s, isString := tok.(string)
		if expectValue && isString {
			seq = append(seq, s)
		}
		// a key is followed by its value; object keys and string values
		// alternate, so remember whether this string was the key "handler"
		expectValue = isString && s == "handler" && !expectValue
	}
	return seq
}

// TestFSPDocsExamplesAdapt adapts every Caddyfile example of the README's
// fsp_error section: ```caddy blocks as they are, ```caddy-d snippets
// inside a site block.
func TestFSPDocsExamplesAdapt(t *testing.T) {
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	section := regexp.MustCompile("(?s)\n## fsp_error\n(.*?)(\n## |$)").FindSubmatch(raw)
	if section == nil {
		t.Fatal("README.md has no \"## fsp_error\" section")
	}
	fence := regexp.MustCompile("(?s)```(caddy|caddy-d)\n(.*?)```")
	examples := fence.FindAllStringSubmatch(string(section[1]), -1)
	if len(examples) < 4 {
		t.Fatalf("found %d Caddyfile examples in the README's fsp_error section", len(examples))
	}
	adapter := caddyconfig.GetAdapter("caddyfile")
	for i, ex := range examples {
		kind, text := ex[1], ex[2]
		if strings.Contains(text, "[<matcher>]") {
			continue // the syntax block, with <placeholders> for arguments
		}
		if kind == "caddy-d" {
			text = ":9299 {\n" + text + "}\n"
		}
		out, _, err := adapter.Adapt([]byte(text), nil)
		if err != nil {
			t.Errorf("example %d does not adapt: %v\n%s", i, err, text)
			continue
		}
		if !strings.Contains(string(out), `"handler":"fsp_error"`) {
			t.Errorf("example %d has no fsp_error handler: %s", i, out)
		}
	}
}

// BenchmarkFSPServeHTTP measures one answer of each kind: a literal table
// code, a custom code from placeholders, and the handle_errors mapping.
func BenchmarkFSPServeHTTP(b *testing.B) {
	cases := []struct {
		name    string
		fe      FSPError
		vars    map[string]any
		handled error
	}{
		{"table code", FSPError{Code: "3200"}, nil, nil},
		{"placeholders", FSPError{Code: "{http.vars.c}", StatusCode: "400", Message: "Upload error", Details: "{http.request.uri.path.file}"}, map[string]any{"c": "3901"}, nil},
		{"mapping", FSPError{}, nil, caddyhttp.Error(http.StatusBadGateway, errors.New("dial"))},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			fe := fspProvisioned(b, c.fe)
			r := fspRequest(b, http.MethodPost, "/dir/what%3F.png", c.vars, c.handled)
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				if err := fe.ServeHTTP(w, r, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
