package fsp

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/color"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

// The contract's worked example of a custom error.
var uploadError = fspBody{3901, "Upload error", `File names may not contain any of: \ / ? |`}

// forbiddenNameRule is the forbidden-character rule as the README shows it
// for a site of its own, in front of the FSP at upstreamURL; reverse_proxy
// is written first on purpose: the directive order, not the text, decides.
func forbiddenNameRule(port int, upstreamURL string) string {
	return fmt.Sprintf(`:%d {
	@forbiddenName {
		method POST
		vars_regexp {http.request.orig_uri} `+"`"+`^[^?]*/[^/?]*(%%5[Cc]|%%2[Ff]|%%3[Ff]|%%7[Cc]|[\\|])[^/?]*(\?.*)?$`+"`"+`
	}
	reverse_proxy %s
	fsp_error @forbiddenName 3901 {
		status 400
		message "Upload error"
		details `+"`"+`File names may not contain any of: \ / ? |`+"`"+`
	}
	handle_errors {
		fsp_error
	}
}
`, port, upstreamURL)
}

// nameCase is one request to an FSP; forbidden ones must be answered by
// Caddy with the upload error, the others must reach the upstream.
type nameCase struct {
	requestLine string // method and target, as sent on the wire
	forbidden   bool
}

// nameCases lists requests under prefix (the FSP's base path on the site).
func nameCases(prefix string) []nameCase {
	return []nameCase{
		{"POST " + prefix + "/photos/what%3F.png", true},
		{"POST " + prefix + "/photos/what%3f.png", true},
		{"POST " + prefix + "/photos/what%3F.png?conflict=1", true},
		{"POST " + prefix + "/photos/a%2Fb.png", true},
		{"POST " + prefix + "/photos/a%2fb.png", true},
		{"POST " + prefix + "/photos/back%5Cslash.png", true},
		{"POST " + prefix + "/photos/pipe%7Cname.png", true},
		{"POST " + prefix + "/photos/pipe%7cname.png", true},
		{"POST " + prefix + "/photos/raw|pipe.png", true},
		{"POST " + prefix + `/photos/raw\back.png`, true},
		{"POST " + prefix + "/what%3F.png", true},
		{"POST " + prefix + "/editor_images/x%2F..%2Fetc.png", true},
		{"POST " + prefix + "/photos/%2F", true},
		// not an upload of a forbidden name: these reach the FSP
		{"POST " + prefix + "/photos/cat.png", false},
		{"POST " + prefix + "/photos/new%20dir/", false},
		{"POST " + prefix + "/a%7Cdir/cat.png", false},
		{"POST " + prefix + "/photos/cat.png?a=b%7Cc", false},
		{"POST " + prefix + "/photos/100%25.png", false},
		{"POST " + prefix + "/photos/a%252F.png", false},
		{"GET " + prefix + "/photos/what%3F.png", false},
		{"DELETE " + prefix + "/photos/pipe%7Cname.png", false},
		{"PATCH " + prefix + "/photos/a%2Fb.png", false},
	}
}

// checkNameCases sends every case to port and checks the answer and what
// reached the upstream.
func checkNameCases(t *testing.T, port int, up *upstream, cases []nameCase) {
	t.Helper()
	const upload = `{"source":"https://example.invalid/cat.png","conflict_strategy":"ask"}`
	for _, c := range cases {
		up.reset()
		res := rawRequest(t, port, c.requestLine+" HTTP/1.1",
			[]string{"Content-Type: application/json", "Authorization: Basic dTpw", "X-BEE-Uid: u1"}, upload)
		seen := up.requests()
		if c.forbidden {
			checkFSP(t, c.requestLine, res, 400, uploadError)
			if len(seen) != 0 {
				t.Errorf("%s: the upload reached the FSP: %+v", c.requestLine, seen)
			}
			continue
		}
		if res.Status != 200 || string(res.Body) != `{"status":"success","data":null}` {
			t.Errorf("%s: got %d %s, want the FSP's answer", c.requestLine, res.Status, res.Body)
		}
		method, _, _ := strings.Cut(c.requestLine, " ")
		if len(seen) != 1 || seen[0].Method != method {
			t.Errorf("%s: the FSP saw %+v, want exactly this request", c.requestLine, seen)
		}
	}
}

// TestForbiddenNameRule runs the rule as a site of its own, with fsp_error
// and reverse_proxy side by side in the site block (no route, no order
// option): the guarded fsp_error must answer before proxying.
func TestForbiddenNameRule(t *testing.T) {
	up := newUpstream(t)
	load(t, forbiddenNameRule(9201, up.URL))
	checkNameCases(t, 9201, up, nameCases(""))
}

// TestHandleErrorsMapping raises real errors with standard handlers and
// checks that handle_errors { fsp_error } maps each to the contract's code
// and status without leaking the error's text.
func TestHandleErrorsMapping(t *testing.T) {
	up := newUpstream(t)
	files := filepath.Join(tmpDir, "files")
	if err := os.MkdirAll(files, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(files, "present.txt"), []byte("here"), 0o644); err != nil {
		t.Fatal(err)
	}
	hash, err := bcrypt.GenerateFromPassword([]byte("right-password"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	const internals = "dial tcp 10.9.8.7:5432: open /var/lib/fsp/store.db"
	load(t, fmt.Sprintf(`:9202 {
	route /auth/* {
		basic_auth {
			fspuser %s
		}
		respond "inside"
	}
	handle /files/* {
		root * %s
		uri strip_prefix /files
		file_server
	}
	handle /dead/* {
		reverse_proxy 127.0.0.1:%d
	}
	handle /upload/* {
		request_body {
			max_size 16
		}
		reverse_proxy %s
	}
	handle /status/* {
		error "%s" {http.request.uri.path.1}
	}
	handle /chosen/* {
		vars {
			fsp_code 3901
			fsp_status 400
			fsp_message "Upload error"
			fsp_details "chosen by a rule"
		}
		error 404
	}
	handle /mapped/* {
		map {path} {fsp_code} {fsp_status} {fsp_message} {
			~\.exe$ 3902 415 "Upload error"
			default "" "" ""
		}
		error 415
	}
	handle /pcode/* {
		fsp_error {http.request.uri.query.code}
	}
	handle_errors {
		fsp_error
	}
}
`, hash, files, deadPort, up.URL, internals))

	basic := func(user, pass string) string {
		return "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	}
	row := map[int]fspBody{
		3001: {3001, "FSP Error", "The file service failed; please try again later"},
		3100: {3100, "Something went wrong accessing backend filesystem", "The storage behind the file service could not be reached; please try again later"},
		3200: {3200, "Resource not found", "File or directory not found"},
		3300: {3300, "Permission denied", "You are not allowed to change this file or directory"},
		3400: {3400, "Resource Already Exists", "A file or directory with this name already exists"},
		3450: {3450, "File Not Uploaded", "The file could not be uploaded"},
		3500: {3500, "Request Error", "The request could not be understood"},
		3650: {3650, "Wrong Username or Password", "The file service credentials are missing or wrong"},
	}
	tests := []struct {
		name        string
		requestLine string
		headers     []string
		body        string
		wantStatus  int
		want        fspBody
	}{
		{"basic_auth wrong password", "GET /auth/x", []string{basic("fspuser", "wrong")}, "", 401, row[3650]},
		{"basic_auth unknown user", "GET /auth/x", []string{basic("nobody", "right-password")}, "", 401, row[3650]},
		{"basic_auth no credentials", "GET /auth/x", nil, "", 401, row[3650]},
		{"file_server missing file", "GET /files/missing.png", nil, "", 404, row[3200]},
		{"file_server missing directory", "GET /files/no/such/dir/", nil, "", 404, row[3200]},
		{"reverse_proxy dead upstream", "GET /dead/x", nil, "", 503, row[3001]},
		{"reverse_proxy dead upstream upload", "POST /dead/x.png", nil, `{"source":"x"}`, 503, row[3001]},
		{"request_body max_size (Content-Length)", "POST /upload/big.png", nil, strings.Repeat("x", 100), 422, row[3450]},
		{"error 400", "GET /status/400", nil, "", 400, row[3500]},
		{"error 401", "GET /status/401", nil, "", 401, row[3650]},
		{"error 403", "GET /status/403", nil, "", 403, row[3300]},
		{"error 404", "GET /status/404", nil, "", 404, row[3200]},
		{"error 405", "GET /status/405", nil, "", 400, row[3500]},
		{"error 409", "GET /status/409", nil, "", 409, row[3400]},
		{"error 413", "GET /status/413", nil, "", 422, row[3450]},
		{"error 422", "GET /status/422", nil, "", 422, row[3450]},
		{"error 429", "GET /status/429", nil, "", 400, row[3500]},
		{"error 500", "GET /status/500", nil, "", 503, row[3100]},
		{"error 501", "GET /status/501", nil, "", 503, row[3001]},
		{"error 502", "GET /status/502", nil, "", 503, row[3001]},
		{"error 503", "GET /status/503", nil, "", 503, row[3001]},
		{"error 504", "GET /status/504", nil, "", 503, row[3001]},
		{"code chosen by vars wins over the mapping", "GET /chosen/x", nil, "", 400, fspBody{3901, "Upload error", "chosen by a rule"}},
		{"code chosen by map wins over the mapping", "GET /mapped/setup.exe", nil, "", 415, fspBody{3902, "Upload error", ""}},
		{"map without a code leaves the mapping", "GET /mapped/setup.png", nil, "", 400, row[3500]},
		{"placeholder code from the table", "GET /pcode/x?code=3300", nil, "", 403, row[3300]},
		{"placeholder code invalid", "GET /pcode/x?code=39105", nil, "", 503, row[3001]},
		{"placeholder code not a number", "GET /pcode/x?code=3999x", nil, "", 503, row[3001]},
		{"placeholder code custom without status", "GET /pcode/x?code=3950", nil, "", 503, row[3001]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			up.reset()
			res := rawRequest(t, 9202, tt.requestLine+" HTTP/1.1", tt.headers, tt.body)
			checkFSP(t, tt.requestLine, res, tt.wantStatus, tt.want)
			for _, secret := range []string{"10.9.8.7", "/var/lib", "127.0.0.1", "dial", files} {
				if strings.Contains(string(res.Body), secret) {
					t.Errorf("body leaks %q: %s", secret, res.Body)
				}
			}
			if strings.HasPrefix(tt.requestLine, "POST /upload/") && len(up.requests()) != 0 {
				t.Errorf("the oversized upload reached the upstream: %+v", up.requests())
			}
		})
	}

	t.Run("HEAD answers without a body", func(t *testing.T) {
		res := rawRequest(t, 9202, "HEAD /files/missing.png HTTP/1.1", nil, "")
		if res.Status != 404 || len(res.Body) != 0 {
			t.Errorf("got %d with body %q", res.Status, res.Body)
		}
		if res.Header.Get("Content-Type") != "application/json" || res.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("headers %v", res.Header)
		}
	})
	t.Run("successes pass through", func(t *testing.T) {
		if res := rawRequest(t, 9202, "GET /files/present.txt HTTP/1.1", nil, ""); res.Status != 200 || string(res.Body) != "here" {
			t.Errorf("file_server: %d %q", res.Status, res.Body)
		}
		if res := rawRequest(t, 9202, "GET /auth/x HTTP/1.1", []string{basic("fspuser", "right-password")}, ""); res.Status != 200 || string(res.Body) != "inside" {
			t.Errorf("basic_auth: %d %q", res.Status, res.Body)
		}
		up.reset()
		if res := rawRequest(t, 9202, "POST /upload/small.png HTTP/1.1", nil, "tiny"); res.Status != 200 || len(up.requests()) != 1 {
			t.Errorf("small upload: %d %q, upstream saw %+v", res.Status, res.Body, up.requests())
		}
	})
	t.Run("request_body max_size with a chunked body", func(t *testing.T) {
		up.reset()
		chunked := "40\r\n" + strings.Repeat("y", 64) + "\r\n0\r\n\r\n"
		res := rawRequest(t, 9202, "POST /upload/chunked.png HTTP/1.1", []string{"Transfer-Encoding: chunked"}, chunked)
		checkFSP(t, "chunked oversized upload", res, 422, row[3450])
	})
}

// TestDecodedPathMatcherMissesEncodedSlash records why the rule reads the
// raw request target: a path_regexp on the (decoded) path sees a%2Fb.png as
// the directory a and the file b.png, so a "/" in a name slips through (and
// putting "/" in its character class would refuse every upload into a
// subdirectory instead).
func TestDecodedPathMatcherMissesEncodedSlash(t *testing.T) {
	up := newUpstream(t)
	load(t, fmt.Sprintf(`:9204 {
	@forbiddenName {
		method POST
		path_regexp `+"`"+`/[^/]*[\\?|][^/]*$`+"`"+`
	}
	fsp_error @forbiddenName 3901 {
		status 400
		message "Upload error"
	}
	reverse_proxy %s
}
`, up.URL))
	res := rawRequest(t, 9204, "POST /photos/a%2Fb.png HTTP/1.1", nil, "x")
	if res.Status != 200 || len(up.requests()) != 1 {
		t.Fatalf("Caddy's path_regexp now sees %%2F (got %d, upstream saw %d): the docs' note on it can go", res.Status, len(up.requests()))
	}
	up.reset()
	res = rawRequest(t, 9204, "POST /photos/what%3F.png HTTP/1.1", nil, "x")
	if res.Status != 400 || len(up.requests()) != 0 {
		t.Errorf("path_regexp should see the decoded ?: got %d, upstream saw %d", res.Status, len(up.requests()))
	}
}

// exampleBlock returns the FSP block of Caddyfile.example, between its
// markers.
func exampleBlock(t *testing.T) string {
	t.Helper()
	const (
		startMarker = "# --- FSP example (fsp_error) ---"
		endMarker   = "# --- end FSP example ---"
	)
	raw, err := os.ReadFile(filepath.Join("..", "..", "Caddyfile.example"))
	if err != nil {
		t.Fatalf("Caddyfile.example: %v", err)
	}
	text := string(raw)
	start := strings.Index(text, startMarker)
	end := strings.Index(text, endMarker)
	if start < 0 || end < start {
		t.Fatalf("Caddyfile.example lacks the FSP markers %q … %q", startMarker, endMarker)
	}
	block := text[start+len(startMarker) : end]
	if !strings.Contains(block, "fsp_error") {
		t.Fatalf("the FSP block of Caddyfile.example holds no fsp_error:\n%s", block)
	}
	return block
}

// TestExampleBlock runs the FSP block of Caddyfile.example as it stands,
// inside a host site like the example's (file_server for the page): the
// fsp handler on a local folder behind basic_auth and the forbidden-name
// rule.
func TestExampleBlock(t *testing.T) {
	block := exampleBlock(t)
	www := filepath.Join(tmpDir, "www")
	if err := os.MkdirAll(www, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(www, "index.html"), []byte("<p>editor</p>"), 0o644); err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	hash, err := bcrypt.GenerateFromPassword([]byte("p"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("FSP_FOLDER", store)
	t.Setenv("FSP_USER", "u")
	t.Setenv("FSP_PASSWORD_HASH", string(hash))
	t.Setenv("FSP_PUBLIC_URL", "http://localhost:9203/fsp-files")
	load(t, fmt.Sprintf(":9203 {\n\troot * %s\n\tfile_server\n%s}\n", www, block))
	vendor := []string{"Authorization: Basic dTpw", "X-BEE-ClientId: c1", "X-BEE-Uid: u1"} // u:p
	stored := func() []string {
		var names []string
		_ = filepath.Walk(store, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				names = append(names, p)
			}
			return nil
		})
		return names
	}

	t.Run("forbidden names never reach the FSP", func(t *testing.T) {
		const upload = `{"source":"https://example.invalid/cat.png","conflict_strategy":"ask"}`
		for _, c := range nameCases("/fsp") {
			before := stored()
			res := rawRequest(t, 9203, c.requestLine+" HTTP/1.1", append([]string{"Content-Type: application/json"}, vendor...), upload)
			got := decodeFSP(res.Body)
			if c.forbidden {
				checkFSP(t, c.requestLine, res, 400, uploadError)
			} else if got.Code == uploadError.Code || got.Code == 0 && res.Status != 200 {
				t.Errorf("%s: got %d %s, want the FSP's own answer", c.requestLine, res.Status, res.Body)
			}
			if after := stored(); len(after) != len(before) {
				t.Errorf("%s: storage changed: %v", c.requestLine, after)
			}
		}
	})
	t.Run("an encoded traversal out of /fsp changes nothing", func(t *testing.T) {
		res := rawRequest(t, 9203, "POST /fsp/editor_images/..%2F..%2Fetc.png HTTP/1.1", vendor, `{"source":"https://example.invalid/x.png"}`)
		if res.Status < 400 || len(stored()) != 0 {
			t.Errorf("got %d, storage %v", res.Status, stored())
		}
	})
	t.Run("missing or wrong credentials are 3650", func(t *testing.T) {
		for _, auth := range [][]string{nil, {"Authorization: Basic dTpx"}} {
			res := rawRequest(t, 9203, "GET /fsp/ HTTP/1.1", append(auth, "X-BEE-ClientId: c1", "X-BEE-Uid: u1"), "")
			checkFSP(t, "credentials "+strings.Join(auth, ""), res, 401, fspBody{3650, "Wrong Username or Password", "The file service credentials are missing or wrong"})
		}
	})
	t.Run("upload, list and the public URL", func(t *testing.T) {
		png := string(testPNG(3, 2, color.Black))
		body := "--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"dot.png\"\r\n\r\n" + png + "\r\n--B--\r\n"
		res := rawRequest(t, 9203, "POST /fsp/dot.png HTTP/1.1", append([]string{"Content-Type: multipart/form-data; boundary=B"}, vendor...), body)
		var ok struct {
			Data struct {
				Meta struct {
					PublicURL string `json:"public-url"`
					Thumbnail string `json:"thumbnail"`
				} `json:"meta"`
			} `json:"data"`
		}
		if res.Status != 200 || json.Unmarshal(res.Body, &ok) != nil || ok.Data.Meta.Thumbnail == "" {
			t.Fatalf("upload: %d %s", res.Status, res.Body)
		}
		public := strings.TrimPrefix(ok.Data.Meta.PublicURL, "http://localhost:9203")
		if got := rawRequest(t, 9203, "GET "+public+" HTTP/1.1", nil, ""); got.Status != 200 || string(got.Body) != png {
			t.Errorf("public URL %s: %d, %d bytes", public, got.Status, len(got.Body))
		}
		list := rawRequest(t, 9203, "GET /fsp/ HTTP/1.1", vendor, "")
		if list.Status != 200 || !strings.Contains(string(list.Body), `"path":"/dot.png"`) {
			t.Errorf("list: %d %s", list.Status, list.Body)
		}
	})
	t.Run("sources on this host are refused", func(t *testing.T) {
		up := newUpstream(t)
		res := rawRequest(t, 9203, "POST /fsp/x.png HTTP/1.1", append([]string{"Content-Type: application/json"}, vendor...), `{"source":"`+up.URL+`/x.png"}`)
		if got := decodeFSP(res.Body); res.Status != 422 || got.Code != 3450 || len(up.requests()) != 0 {
			t.Errorf("loopback source: %d %s, upstream saw %d", res.Status, res.Body, len(up.requests()))
		}
	})
	t.Run("too large an upload is 3450", func(t *testing.T) {
		res := rawRequest(t, 9203, "POST /fsp/photos/huge.png HTTP/1.1", append([]string{"Content-Length: 30000000"}, vendor...), "")
		checkFSP(t, "30 MB upload", res, 422, fspBody{3450, "File Not Uploaded", "The file could not be uploaded"})
	})
	t.Run("the editor page's own errors stay as they are", func(t *testing.T) {
		if res := rawRequest(t, 9203, "GET /index.html HTTP/1.1", nil, ""); res.Status != 200 || string(res.Body) != "<p>editor</p>" {
			t.Errorf("page: %d %q", res.Status, res.Body)
		}
		res := rawRequest(t, 9203, "GET /missing.html HTTP/1.1", nil, "")
		if res.Status != 404 || strings.Contains(string(res.Body), "code") || res.Header.Get("Content-Type") == "application/json" {
			t.Errorf("a missing page became %d %s %q", res.Status, res.Header.Get("Content-Type"), res.Body)
		}
	})
}

// TestLoadErrors checks that Caddy refuses to load invalid fsp_error
// configurations and that the error names the offending token.
func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name, directive, wantInError string
	}{
		{"code with a letter", "fsp_error 3999x", `"3999x"`},
		{"five-digit code", "fsp_error 39105", `"39105"`},
		{"code 3000", "fsp_error 3000", `"3000"`},
		{"code 4001", "fsp_error 4001", `"4001"`},
		{"code 3899", "fsp_error 3899 {\n\t\tstatus 400\n\t\tmessage m\n\t}", `"3899"`},
		{"status on a table code", "fsp_error 3200 {\n\t\tstatus 410\n\t}", `status "410"`},
		{"custom code without status", "fsp_error 3901 {\n\t\tmessage m\n\t}", `custom code "3901" needs a status`},
		{"custom code without message", "fsp_error 3901 {\n\t\tstatus 400\n\t}", `custom code "3901" needs a message`},
		{"custom status out of range", "fsp_error 3901 {\n\t\tstatus 302\n\t\tmessage m\n\t}", `status "302"`},
		{"JSON-only field typo", "fsp_error 3200 {\n\t\tcode 3300\n\t}", `unrecognized subdirective "code"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := loadError(t, fmt.Sprintf(":9205 {\n\t%s\n}\n", tt.directive))
			if !strings.Contains(got, tt.wantInError) {
				t.Errorf("load error %s does not name %s", got, tt.wantInError)
			}
		})
	}
}
