package contentservice

import (
	"testing"

	"github.com/designbridge/caddy-designbridge/testutil/configtest"
)

// TestJSONErrorsNameField: a JSON config value the handler cannot read is
// a load error naming its full path and what to write there, in the
// config's words rather than Go's, inside the rate limits (which read
// themselves) too. before is the message each row's replaced.
func TestJSONErrorsNameField(t *testing.T) {
	for _, c := range []struct {
		name, json, want, before string // want "" means it loads
	}{
		{"bad fetch timeout", `{"fetch":{"timeout":"x"}}`, `fetch.timeout: "x" is not a duration: write a number with a unit, such as 500ms, 10s, 5m, 2h or 1d`, `fetch.timeout: time: invalid duration "x"`},
		{"bad browser timeout", `{"browser":{"timeout":"1y"}}`, `browser.timeout: "1y" is not a duration`, `browser.timeout: time: unknown unit "y" in duration "1y"`},
		{"bad login_failure_limit window", `{"login_failure_limit":{"requests":5,"window":"soon"}}`, `login_failure_limit.window: "soon" is not a duration`, `login_failure_limit: time: invalid duration "soon"`},
		{"rate_limit window a bool", `{"rate_limit":{"requests":5,"window":true}}`, `rate_limit.window: expected a duration such as "10s", got true`, `rate_limit: json: cannot unmarshal bool into Go struct field .window of type time.Duration`},
		{"rate_limit not an object", `{"rate_limit":"10 per 1m"}`, `rate_limit: expected an object such as {"requests": 60, "window": "1m"}, got a string`, `rate_limit: "10 per 1m" is not a limit`},
		{"rate_limit a secret", `{"rate_limit":"s3cr3t-token-value"}`, `rate_limit: expected an object such as {"requests": 60, "window": "1m"}, got a string`, `rate_limit: "s3cr3t-token-value" is not a limit`},
		{"rate_limit an unquoted secret", `{"rate_limit":12345678}`, `rate_limit: expected an object such as {"requests": 60, "window": "1m"}, got a number`, `rate_limit: 12345678 is not a limit`},
		{"rate_limit a list", `{"rate_limit":["s3cr3t-token-value"]}`, `rate_limit: expected an object such as {"requests": 60, "window": "1m"}, got a list`, `rate_limit: ["s3cr3t-token-value"] is not a limit`},
		{"login_failure_limit off", `{"login_failure_limit":"off"}`, `login_failure_limit: expected an object such as {"requests": 60, "window": "1m"}, got a string; to turn it off, set "no_login_failure_limit": true`, `login_failure_limit: "off" is not a limit: write an object such as {"requests": 60, "window": "1m"}; to turn it off, set "no_login_failure_limit": true`},
		{"login_failure_limit false", `{"login_failure_limit":false}`, `login_failure_limit: expected an object such as {"requests": 60, "window": "1m"}, got false; to turn it off`, `login_failure_limit: false is not a limit`},
		{"rate_limit requests not a number", `{"rate_limit":{"requests":[5]}}`, `rate_limit.requests: expected a whole number such as 60, got a list`, `rate_limit: requests: [5] is not a number of requests`},
		{"rate_limit requests a secret", `{"rate_limit":{"requests":"s3cr3t-token-value"}}`, `rate_limit.requests: expected a whole number such as 60, got a string of other text`, `rate_limit.requests: "s3cr3t-token-value" is not a number of requests`},
		{"rate_limit requests an object", `{"rate_limit":{"requests":{"token":"s3cr3t-token-value"}}}`, `rate_limit.requests: expected a whole number such as 60, got an object`, `rate_limit.requests: {"token":"s3cr3t-token-value"} is not a number of requests`},
		{"rate_limit requests not whole", `{"rate_limit":{"requests":1.5}}`, `rate_limit.requests: expected a whole number such as 60, got 1.5`, `rate_limit.requests: 1.5 is not a number of requests`},
		{"rate_limit requests a string of digits", `{"rate_limit":{"requests":" 60 ","window":"1m"}}`, "", ""},
		{"rate_limit requests null", `{"rate_limit":{"requests":null,"window":"1m"}}`, "", `rate_limit: requests: "" is not a number of requests`},
		{"unknown field in a limit", `{"rate_limit":{"requests":1,"burst":5}}`, `rate_limit.burst: unknown field (known here: requests, window)`, `rate_limit: json: unknown field "burst"`},
		{"unknown nested field", `{"fetch":{"proxy":1}}`, `fetch.proxy: unknown field (known here: allow_private, cache_ttl, max_concurrent, max_images, max_size, off, private_ranges, timeout, total_timeout)`, `json: unknown field "proxy"`},
		{"unknown browser field", `{"browser":{"limits":{"x":1}}}`, `browser.limits: unknown field (known here: files_dir, files_ttl, off, path, public_url, tabs, timeout)`, `json: unknown field "limits"`},
		{"unknown app field", `{"apps":[{"client_id":"a"},{"client_id":"b","secret":"s3cr3t-value"}]}`, `apps[1].secret: unknown field (known here: client_id, client_secret, disabled, editor_tokens, tokens)`, `json: unknown field "secret"`},
		{"tokens a string", `{"apps":[{"client_id":"a","tokens":"s3cr3t-token"}]}`, `apps[0].tokens: expected a list of strings, got a string`, `apps.tokens: json: cannot unmarshal string into Go struct field App.apps.tokens of type []string`},
		{"apps an object", `{"apps":{"client_id":"a"}}`, `apps: expected a list of objects, got an object`, `apps: json: cannot unmarshal object into Go struct field plain.apps of type []contentservice.App`},
		{"tabs not whole", `{"browser":{"tabs":2.5}}`, `browser.tabs: expected a whole number, got 2.5`, `browser.tabs: json: cannot unmarshal number 2.5 into Go struct field BrowserConfig.browser.tabs of type int`},
		{"max_output out of range", `{"max_output":1e19}`, `max_output: expected a whole number up to 9223372036854775807, got 1e19`, `max_output: json: cannot unmarshal number 1e19 into Go struct field plain.max_output of type int64`},
		{"browser off a string", `{"browser":{"off":"true"}}`, `browser.off: expected true or false, got a string`, `browser.off: json: cannot unmarshal string into Go struct field BrowserConfig.browser.off of type bool`},
		{"fetch private_ranges a string", `{"fetch":{"private_ranges":"10.0.0.0/8"}}`, `fetch.private_ranges: expected a list of strings, got a string`, `fetch.private_ranges: json: cannot unmarshal string into Go struct field FetchConfig.fetch.private_ranges of type []string`},
		{"fetch private_ranges a number", `{"fetch":{"private_ranges":["10.0.0.0/8",10]}}`, `fetch.private_ranges[1]: expected a string, got a number`, `fetch.private_ranges: json: cannot unmarshal number into Go struct field FetchConfig.fetch.private_ranges of type string`},
		{"max_concurrent not whole", `{"fetch":{"max_concurrent":2.5}}`, `fetch.max_concurrent: expected a whole number, got 2.5`, `fetch.max_concurrent: json: cannot unmarshal number 2.5 into Go struct field FetchConfig.fetch.max_concurrent of type int`},
		{"max_concurrent a string", `{"fetch":{"max_concurrent":"many"}}`, `fetch.max_concurrent: expected a whole number, got a string`, `fetch.max_concurrent: json: cannot unmarshal string into Go struct field FetchConfig.fetch.max_concurrent of type int`},
		{"good config", `{"signing_key":"k","fetch":{"timeout":"3s","private_ranges":["10.0.0.0/8"],"max_concurrent":8},"browser":{"off":true}}`, "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			configtest.Decode(t, c.json, &Handler{}, c.want)
		})
	}
}
