package bridge

import (
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"testing"
)

// TestJSONConfigLoadErrors: a JSON config that Caddy's /load refuses
// because of a value of one of the plugin's handlers names the value's
// full path and what to write there, in the config's words: no Go type,
// no panic, no secret; the running config stays. before is the message
// each row's replaced.
func TestJSONConfigLoadErrors(t *testing.T) {
	load(t, site("")) // a running config that must survive
	base := adapt(t, site(""))
	for _, c := range []struct {
		name, handler, want, before string
	}{
		{"unknown cache field", `{"handler":"design_bridge","cache":{"size":1}}`,
			`loading module 'design_bridge': decoding module config: http.handlers.design_bridge: cache.size: unknown field (known here: max_size, ttl)`,
			`loading module 'design_bridge': decoding module config: http.handlers.design_bridge: json: unknown field "size"`},
		{"duration a bool", `{"handler":"design_bridge","timeout":true}`,
			`http.handlers.design_bridge: timeout: expected a duration such as "10s", got true`,
			`http.handlers.design_bridge: timeout: json: cannot unmarshal bool into Go struct field plain.timeout of type time.Duration`},
		{"size with a unit", `{"handler":"design_bridge","max_body":"10MiB"}`,
			`http.handlers.design_bridge: max_body: expected a whole number, got a string`,
			`http.handlers.design_bridge: max_body: json: cannot unmarshal string into Go struct field plain.max_body of type int64`},
		{"shared key a number", `{"handler":"fsp","shared":[{"name":"Team","key":2}]}`,
			`http.handlers.fsp: shared[0].key: expected a string, got a number`,
			`http.handlers.fsp: shared.key: json: cannot unmarshal number into Go struct field SharedFolder.shared.key of type string`},
		{"bad s3 timeout", `{"handler":"fsp","s3":{"timeout":"1x"}}`,
			`http.handlers.fsp: s3.timeout: "1x" is not a duration: write a number with a unit, such as 500ms, 10s, 5m, 2h or 1d`,
			`http.handlers.fsp: s3.timeout: time: unknown unit "x" in duration "1x"`},
		{"s3 endpoint holding keys", `{"handler":"fsp","s3":{"endpoint":"https://AKIA:s3cr3t@h:9000","bucket":"fsp-files"},"public_url":"http://x"}`,
			`http.handlers.fsp: fsp: s3.endpoint: write host:port only, without scheme or path`,
			`http.handlers.fsp: fsp: s3: endpoint "https://AKIA:s3cr3t@h:9000" must be host:port`},
		{"second shared folder over the users", `{"handler":"fsp","local":{"folder":"/tmp/fsp-jsonerrors"},"public_url":"http://x","root":"users/{http.request.header.X-BEE-Uid}","shared":[{"name":"Logos","key":"logos"},{"name":"All","key":"users"}]}`,
			`http.handlers.fsp: fsp: shared[1].key and the users' folders (root) lie one inside the other`,
			`http.handlers.fsp: fsp: shared folder "All": path "users" and the users' folders (root "users/{http.request.header.X-BEE-Uid}") lie one inside the other`},
		{"fsp_error message a number", `{"handler":"fsp_error","message":5}`,
			`http.handlers.fsp_error: message: expected a string, got a number`,
			`http.handlers.fsp_error: json: cannot unmarshal number into Go struct field FSPError.message of type string`},
		{"fsp_error status_code on a table code", `{"handler":"fsp_error","code":3200,"status_code":410}`,
			`http.handlers.fsp_error: invalid configuration: status_code "410": code 3200 is in the FSP table with status 404; only custom codes 3900–3999 take a status_code`,
			`http.handlers.fsp_error: invalid configuration: status "410": code 3200 is in the FSP table with status 404; only custom codes 3900–3999 take a status`},
		{"unknown browser field", `{"handler":"content_service","browser":{"limits":{"x":1}}}`,
			`http.handlers.content_service: browser.limits: unknown field (known here: files_dir, files_ttl, off, path, public_url, tabs, timeout)`,
			`http.handlers.content_service: json: unknown field "limits"`},
		{"bad rate_limit window", `{"handler":"content_service","rate_limit":{"requests":5,"window":"soon"}}`,
			`http.handlers.content_service: rate_limit.window: "soon" is not a duration`,
			`http.handlers.content_service: rate_limit: time: invalid duration "soon"`},
		{"tokens a string", `{"handler":"content_service","apps":[{"client_id":"a","tokens":"s3cr3t-token-value"}]}`,
			`http.handlers.content_service: apps[0].tokens: expected a list of strings, got a string`,
			`http.handlers.content_service: apps.tokens: json: cannot unmarshal string into Go struct field App.apps.tokens of type []string`},
		{"size out of range", `{"handler":"content_service","max_output":1e19}`,
			// Caddy writes the handler's JSON again before decoding it.
			`http.handlers.content_service: max_output: expected a whole number up to 9223372036854775807, got 10000000000000000000`,
			`http.handlers.content_service: max_output: json: cannot unmarshal number 10000000000000000000 into Go struct field plain.max_output of type int64`},
		{"content_service URL holding a password", `{"handler":"design_bridge","content_service":"ftp://user:s3cr3t@cs.example.com"}`,
			`http.handlers.design_bridge: content_service: user info, query and fragment are not allowed`,
			`http.handlers.design_bridge: content_service: "ftp://user:s3cr3t@cs.example.com": scheme must be http or https`},
		{"negative cache max_size", `{"handler":"design_bridge","cache":{"max_size":-1}}`,
			`http.handlers.design_bridge: invalid configuration: cache.max_size must not be negative`,
			`http.handlers.design_bridge: invalid configuration: cache: max_size must not be negative`},
		{"auth_rate_limit without window", `{"handler":"design_bridge","auth_rate_limit":{"requests":5}}`,
			`http.handlers.design_bridge: auth_rate_limit.window: 0s must be positive (or set "off": true)`,
			`http.handlers.design_bridge: auth_rate_limit: requests and window must be positive (or off)`},
		{"export path relative", `{"handler":"design_bridge","export_paths":["/v1/message/html","v1/s3cr3t"]}`,
			`http.handlers.design_bridge: invalid configuration: export_paths[1] must start with /`,
			`http.handlers.design_bridge: invalid configuration: export path "v1/s3cr3t" must start with /`},
		// Provision's errors name the value by its JSON path too, never
		// by the Caddyfile's words ("app #2", "token #1") or the value.
		{"client_id missing", `{"handler":"content_service","signing_key":"` + csKey + `","apps":[{"client_id":"a","client_secret":"s3cr3t-secret"},{"client_secret":"s3cr3t-secret-b"}],"browser":{"off":true}}`,
			`http.handlers.content_service: apps[1].client_id: value is missing`,
			`http.handlers.content_service: app #2: client_id: value is missing`},
		{"client_id twice", `{"handler":"content_service","signing_key":"` + csKey + `","apps":[{"client_id":"a","client_secret":"s3cr3t-secret"},{"client_id":"a","client_secret":"s3cr3t-secret-b"}],"browser":{"off":true}}`,
			`http.handlers.content_service: apps[1].client_id: the same as apps[0].client_id; each app has its own`,
			`http.handlers.content_service: app "a": client_id configured twice`},
		{"short client_secret", `{"handler":"content_service","signing_key":"` + csKey + `","apps":[{"client_id":"a","client_secret":"s3cr3t"}],"browser":{"off":true}}`,
			`http.handlers.content_service: apps[0].client_secret: 6 bytes; at least 8 are required`,
			`http.handlers.content_service: app "a": secret: 6 bytes; at least 8 are required`},
		{"short token", `{"handler":"content_service","signing_key":"` + csKey + `","apps":[{"client_id":"a","client_secret":"s3cr3t-secret","tokens":["s3cr3t-token-1","s3cr3t"]}],"browser":{"off":true}}`,
			`http.handlers.content_service: apps[0].tokens[1]: 6 bytes; at least 8 are required`,
			`http.handlers.content_service: app "a": token #2: 6 bytes; at least 8 are required`},
		{"token of two apps", `{"handler":"content_service","signing_key":"` + csKey + `","apps":[{"client_id":"a","client_secret":"s3cr3t-secret","tokens":["s3cr3t-token-1"]},{"client_id":"b","client_secret":"s3cr3t-secret","tokens":["Bearer s3cr3t-token-1"]}],"browser":{"off":true}}`,
			`http.handlers.content_service: apps[1].tokens[0]: the same token as apps[0].tokens[0]; a token belongs to one app`,
			`http.handlers.content_service: app "b": token #1 is also configured for app "a"`},
		{"rate_limit without requests", `{"handler":"content_service","signing_key":"` + csKey + `","apps":[{"client_id":"a","client_secret":"s3cr3t-secret"}],"rate_limit":{"window":"1m"},"browser":{"off":true}}`,
			`http.handlers.content_service: rate_limit.requests: 0 is not a positive number of requests`,
			`http.handlers.content_service: rate_limit: requests: 0 is not a positive number of requests`},
		{"negative fetch timeout", `{"handler":"content_service","signing_key":"` + csKey + `","apps":[{"client_id":"a","client_secret":"s3cr3t-secret"}],"fetch":{"timeout":-1},"browser":{"off":true}}`,
			`http.handlers.content_service: fetch.timeout must be positive`,
			`http.handlers.content_service: fetch: timeout must be positive`},
	} {
		t.Run(c.name, func(t *testing.T) {
			var cfg any
			if err := json.Unmarshal(base, &cfg); err != nil {
				t.Fatal(err)
			}
			h := findHandler(cfg, "design_bridge")
			var handler map[string]any
			if err := json.Unmarshal([]byte(c.handler), &handler); err != nil {
				t.Fatal(err)
			}
			clear(h)
			maps.Copy(h, handler)
			js, _ := json.Marshal(cfg)
			status, body, err := loadRaw(js, "application/json", false)
			if err != nil {
				t.Fatal(err)
			}
			if status == http.StatusOK || !strings.Contains(string(body), jsonText(c.want)) {
				t.Fatalf("load: %d %s\nwant an error containing %s", status, body, c.want)
			}
			for _, bad := range []string{"json:", "Go ", "time.", "s3cr3t", "panic"} {
				if strings.Contains(string(body), bad) {
					t.Errorf("the error names %q: %s", bad, body)
				}
			}
		})
	}
	if res, err := http.Get(siteURL + "/"); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("the running config after the refused loads: %v %v", res, err)
	} else {
		res.Body.Close()
	}
}

// csKey is a content_service signing_key long enough to load.
const csKey = "0123456789abcdef0123456789abcdef-jsonerrors"

// jsonText is s as it reads inside a JSON string (the /load answer).
func jsonText(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}
