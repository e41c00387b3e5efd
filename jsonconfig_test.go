package designbridge

import (
	"testing"

	"github.com/designbridge/caddy-designbridge/testutil/configtest"
)

// TestJSONErrorsNameField: a JSON config value the handler cannot read is
// a load error naming its full path and what to write there, in the
// config's words rather than Go's; the fields are read as Caddy reads
// them otherwise. before is the message each row's replaced.
func TestJSONErrorsNameField(t *testing.T) {
	for _, c := range []struct {
		name, json, want, before string // want "" means it loads
	}{
		{"bad timeout", `{"timeout":"soon"}`, `timeout: "soon" is not a duration: write a number with a unit, such as 500ms, 10s, 5m, 2h or 1d`, `timeout: time: invalid duration "soon"`},
		{"bad cache ttl", `{"cache":{"ttl":"1x"}}`, `cache.ttl: "1x" is not a duration`, `cache.ttl: time: unknown unit "x" in duration "1x"`},
		{"bad auth_rate_limit window", `{"auth_rate_limit":{"requests":5,"window":"often"}}`, `auth_rate_limit.window: "often" is not a duration`, `auth_rate_limit.window: time: invalid duration "often"`},
		{"timeout a bool", `{"timeout":true}`, `timeout: expected a duration such as "10s", got true`, `timeout: json: cannot unmarshal bool into Go struct field plain.timeout of type time.Duration`},
		{"size with a unit", `{"max_body":"10MiB"}`, `max_body: expected a whole number, got a string`, `max_body: json: cannot unmarshal string into Go struct field plain.max_body of type int64`},
		{"size out of range", `{"answer_memory":1e30}`, `answer_memory: expected a whole number up to 9223372036854775807, got 1e30`, `answer_memory: json: cannot unmarshal number 1e+30 into Go struct field plain.answer_memory of type int64`},
		{"size not whole", `{"cache":{"max_size":1.5}}`, `cache.max_size: expected a whole number, got 1.5`, `cache.max_size: json: cannot unmarshal number 1.5 into Go struct field ExportCache.cache.max_size of type int64`},
		{"requests a string", `{"auth_rate_limit":{"requests":"5"}}`, `auth_rate_limit.requests: expected a whole number, got a string`, `auth_rate_limit.requests: json: cannot unmarshal string into Go struct field AuthRateLimit.auth_rate_limit.requests of type int`},
		{"flag a string", `{"unwrap_html":"yes"}`, `unwrap_html: expected true or false, got a string`, `unwrap_html: json: cannot unmarshal string into Go struct field plain.unwrap_html of type bool`},
		{"list a string", `{"export_paths":"/v1/message/html"}`, `export_paths: expected a list of strings, got a string`, `export_paths: json: cannot unmarshal string into Go struct field plain.export_paths of type []string`},
		{"list element a number", `{"forward_headers":["X-A",5]}`, `forward_headers[1]: expected a string, got a number`, `forward_headers: json: cannot unmarshal number into Go struct field plain.forward_headers of type string`},
		{"object a list", `{"cache":[]}`, `cache: expected an object, got a list`, `cache: json: cannot unmarshal array into Go struct field plain.cache of type designbridge.ExportCache`},
		{"secret a number", `{"token":12345678}`, `token: expected a string, got a number`, `token: json: cannot unmarshal number into Go struct field plain.token of type string`},
		{"unknown field", `{"bogus":1}`, `bogus: unknown field (known here: allowed_origins, answer_memory, auth_path, auth_rate_limit, auth_url, cache, client_id, client_secret, content_service, export_paths, forward_headers, insecure_caller_uid, insecure_http, large_body_memory, max_body, timeout, token, uid, unwrap_html)`, `json: unknown field "bogus"`},
		{"unknown cache field", `{"cache":{"size":1}}`, `cache.size: unknown field (known here: max_size, ttl)`, `json: unknown field "size"`},
		{"unknown auth_rate_limit field", `{"auth_rate_limit":{"requests":5,"burst":2}}`, `auth_rate_limit.burst: unknown field (known here: off, requests, window)`, `json: unknown field "burst"`},
		{"field names in any case", `{"Timeout":"2s","UID":"demo"}`, "", ""},
		{"null leaves a field unset", `{"uid":"demo","cache":null,"timeout":null,"export_paths":null}`, "", ""},
		{"good config", `{"uid":"demo","timeout":"2s","cache":{"max_size":1048576,"ttl":"1m"}}`, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			configtest.Decode(t, c.json, &Bridge{}, c.want)
		})
	}
}

// TestFSPErrorJSONErrorsNameField: fsp_error's JSON fields too.
func TestFSPErrorJSONErrorsNameField(t *testing.T) {
	for _, c := range []struct {
		name, json, want, before string // want "" means it loads
	}{
		{"message a number", `{"message":5}`, `message: expected a string, got a number`, `json: cannot unmarshal number into Go struct field FSPError.message of type string`},
		{"details an object", `{"details":{}}`, `details: expected a string, got an object`, `json: cannot unmarshal object into Go struct field FSPError.details of type string`},
		{"unknown field", `{"status":404}`, `status: unknown field (known here: code, details, message, status_code)`, `json: unknown field "status"`},
		{"numbers or strings", `{"code":3900,"status_code":"{http.error.status_code}","message":"m"}`, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			configtest.Decode(t, c.json, &FSPError{}, c.want)
		})
	}
}
