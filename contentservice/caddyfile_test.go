package contentservice

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

func TestUnmarshalCaddyfile(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  Handler
		err   string // substring; "" means success
	}{
		{
			name: "full",
			input: `content_service {
				signing_key {env.SIGNING_KEY}
				app my-client {
					secret {env.CLIENT_SECRET}
					token token-01 token-02
					token {env.CS_TOKEN}
					disabled
					editor_tokens
				}
				app other {
					secret secret-o
				}
				max_body 1MiB
				max_output 16MiB
				rate_limit 60 1m
				pass_thru
			}`,
			want: Handler{
				SigningKey: "{env.SIGNING_KEY}",
				Apps: []App{
					{ClientID: "my-client", ClientSecret: "{env.CLIENT_SECRET}", Tokens: []string{"token-01", "token-02", "{env.CS_TOKEN}"}, Disabled: true, EditorTokens: true},
					{ClientID: "other", ClientSecret: "secret-o"},
				},
				MaxBody:   1 << 20,
				MaxOutput: 16 << 20,
				RateLimit: &RateLimit{Requests: 60, Window: caddy.Duration(time.Minute)},
				PassThru:  true,
			},
		},
		{
			name:  "rate_limit with per",
			input: "content_service {\n rate_limit 5 per 10s\n}",
			want:  Handler{RateLimit: &RateLimit{Requests: 5, Window: caddy.Duration(10 * time.Second)}},
		},
		{
			name:  "login_failure_limit",
			input: "content_service {\n login_failure_limit 5 per 10m\n}",
			want:  Handler{LoginFailureLimit: &RateLimit{Requests: 5, Window: caddy.Duration(10 * time.Minute)}},
		},
		{
			name:  "login_failure_limit off",
			input: "content_service {\n login_failure_limit off\n}",
			want:  Handler{NoLoginFailureLimit: true},
		},
		{
			name:  "login_failure_limit bad count",
			input: "content_service {\n login_failure_limit 0 1m\n}",
			err:   "login_failure_limit",
		},
		{
			name:  "login_failure_limit missing window",
			input: "content_service {\n login_failure_limit 5\n}",
			err:   "login_failure_limit: want",
		},
		{
			name:  "literal key of 32 bytes",
			input: "content_service {\n signing_key " + strings.Repeat("k", 32) + "\n}",
			want:  Handler{SigningKey: strings.Repeat("k", 32)},
		},
		{name: "empty", input: "content_service", want: Handler{}},
		{name: "argument", input: "content_service foo", err: `takes no arguments (got "foo")`},
		{name: "unknown subdirective", input: "content_service {\n colour blue\n}", err: `unrecognized content_service subdirective "colour"`},
		{name: "signing_key without value", input: "content_service {\n signing_key\n}", err: "signing_key"},
		{name: "signing_key two values", input: "content_service {\n signing_key " + strings.Repeat("k", 32) + " x\n}", err: "x"},
		{name: "short literal key", input: "content_service {\n signing_key abc\n}", err: "signing_key: 3 bytes; at least 32"},
		{name: "signing_key twice", input: "content_service {\n signing_key {env.A}\n signing_key {env.B}\n}", err: "signing_key given twice"},
		{name: "app without id", input: "content_service {\n app {\n secret secret-s\n }\n}", err: "app: missing client ID"},
		{name: "app with two args", input: "content_service {\n app a s {\n secret secret-s\n }\n}", err: `app "a": unexpected argument "s"`},
		{name: "app without secret", input: "content_service {\n app a {\n token token-t1\n }\n}", err: `app "a": secret is required`},
		{name: "app without block", input: "content_service {\n app a\n}", err: `app "a": secret is required`},
		{name: "secret without value", input: "content_service {\n app a {\n secret\n }\n}", err: "secret"},
		{name: "secret two values", input: "content_service {\n app a {\n secret s t\n }\n}", err: "t"},
		{name: "short literal secret", input: "content_service {\n app a {\n secret abc\n }\n}", err: `app "a": secret: 3 bytes; at least 8 are required (design_bridge refuses a shorter client_secret, which it could not mask)`},
		{name: "short literal token", input: "content_service {\n app a {\n secret secret-s\n token token-t1 abc\n }\n}", err: `app "a": token #2: 3 bytes; at least 8 are required (design_bridge refuses a shorter token`},
		{name: "short literal token after Bearer", input: "content_service {\n app a {\n secret secret-s\n token \"Bearer abcdefg\"\n }\n}", err: `app "a": token #1: 7 bytes`},
		{name: "literal token holding whitespace", input: "content_service {\n app a {\n secret secret-s\n token token-t1 \"tok-one tok-two\"\n }\n}", err: `app "a": token #2: holds whitespace; each token is a value of its own, at Testfile:4`},
		{name: "literal Bearer without a token", input: "content_service {\n app a {\n secret secret-s\n token Bearer\n }\n}", err: `app "a": token #1: is empty, at Testfile:4`},
		{name: "same literal client ID twice", input: "content_service {\n app a {\n secret secret-s\n }\n app a {\n secret secret-t\n }\n}", err: `app "a" given twice, at Testfile:5`},
		{name: "same literal token in two apps", input: "content_service {\n app a {\n secret secret-s\n token token-t1\n }\n app b {\n secret secret-t\n token \"Bearer token-t1\"\n }\n}", err: `app "b": token #1 is also configured for app "a", at Testfile:8`},
		{name: "same literal token twice in one app", input: "content_service {\n app a {\n secret secret-s\n token token-t1\n token token-t1\n }\n}", err: `app "a": token #2 is also configured for app "a", at Testfile:5`},
		{name: "same token from a placeholder is the load's", input: "content_service {\n app a {\n secret secret-s\n token {env.T}\n }\n app b {\n secret secret-t\n token {env.T}\n }\n}",
			want: Handler{Apps: []App{{ClientID: "a", ClientSecret: "secret-s", Tokens: []string{"{env.T}"}}, {ClientID: "b", ClientSecret: "secret-t", Tokens: []string{"{env.T}"}}}}},
		{name: "secret twice", input: "content_service {\n app a {\n secret secret-s\n secret secret-t\n }\n}", err: `app "a": secret given twice`},
		{name: "token without value", input: "content_service {\n app a {\n secret secret-s\n token\n }\n}", err: "token"},
		{name: "disabled with value", input: "content_service {\n app a {\n secret secret-s\n disabled yes\n }\n}", err: "yes"},
		{name: "editor_tokens with value", input: "content_service {\n app a {\n secret secret-s\n editor_tokens on\n }\n}", err: "on"},
		{name: "unknown app subdirective", input: "content_service {\n app a {\n secret secret-s\n role admin\n }\n}", err: `app "a": unrecognized subdirective "role"`},
		{name: "max_body without value", input: "content_service {\n max_body\n}", err: "max_body"},
		{name: "max_body bad", input: "content_service {\n max_body huge\n}", err: `max_body: "huge" is not a size from 1 byte to 1TiB: write a number of bytes with an optional unit, such as 4MiB, 1.5MB or 1048576`},
		{name: "max_body with a fraction", input: "content_service {\n max_body 1.5MiB\n}", want: Handler{MaxBody: 3 << 19}},
		{name: "max_body over 1TiB", input: "content_service {\n max_body 2TiB\n}", err: `max_body: "2TiB" is not a size from 1 byte to 1TiB`},
		{name: "max_body zero", input: "content_service {\n max_body 0\n}", err: "max_body"},
		{name: "max_body placeholder", input: "content_service {\n max_body {env.MAX}\n}", err: `max_body: "{env.MAX}" is not a size`},
		{name: "max_body two values", input: "content_service {\n max_body 1MiB 2MiB\n}", err: "2MiB"},
		{name: "max_body twice", input: "content_service {\n max_body 1MiB\n max_body 2MiB\n}", err: "max_body given twice"},
		{name: "max_output without value", input: "content_service {\n max_output\n}", err: "max_output"},
		{name: "max_output bad", input: "content_service {\n max_output lots\n}", err: `max_output: "lots" is not a size`},
		{name: "max_output zero", input: "content_service {\n max_output 0\n}", err: "max_output"},
		{name: "max_output two values", input: "content_service {\n max_output 1MiB 2MiB\n}", err: "2MiB"},
		{name: "max_output over the largest", input: "content_service {\n max_output 3GiB\n}", err: "max_output: 3221225472 bytes, more than the largest accepted (2147483647 bytes, 2GiB less one byte)"},
		{name: "max_output the largest", input: "content_service {\n max_output 2147483647\n}", want: Handler{MaxOutput: 2147483647}},
		{name: "max_output twice", input: "content_service {\n max_output 1MiB\n max_output 2MiB\n}", err: "max_output given twice"},
		{name: "rate_limit one arg", input: "content_service {\n rate_limit 5\n}", err: "want <requests> [per] <duration>, got 1"},
		{name: "rate_limit four args", input: "content_service {\n rate_limit 5 per 1m x\n}", err: "got 4"},
		{name: "rate_limit bad count", input: "content_service {\n rate_limit many 1m\n}", err: `"many" is not a positive number`},
		{name: "rate_limit zero count", input: "content_service {\n rate_limit 0 1m\n}", err: `"0" is not a positive number`},
		{name: "rate_limit bad window", input: "content_service {\n rate_limit 5 fortnight\n}", err: `"fortnight" is not a duration`},
		{name: "rate_limit negative window", input: "content_service {\n rate_limit 5 -1m\n}", err: "must be positive"},
		{name: "rate_limit placeholder", input: "content_service {\n rate_limit {env.N} 1m\n}", err: `rate_limit: "{env.N}": a runtime placeholder cannot give a number here; use {$VAR}`},
		{name: "rate_limit twice", input: "content_service {\n rate_limit 5 1m\n rate_limit 6 1m\n}", err: "rate_limit given twice"},
		{
			name:  "fetch block",
			input: "content_service {\n fetch {\n allow_private all\n timeout 3s\n total_timeout 20s\n max_size 2MiB\n cache_ttl 1m\n max_images 50\n max_concurrent 8\n }\n}",
			want: Handler{Fetch: &FetchConfig{AllowPrivate: true, Timeout: caddy.Duration(3 * time.Second), TotalTimeout: caddy.Duration(20 * time.Second),
				MaxSize: 2 << 20, CacheTTL: caddy.Duration(time.Minute), MaxImages: 50, MaxConcurrent: 8}},
		},
		{name: "fetch allow_private ranges", input: "content_service {\n fetch {\n allow_private 10.0.0.0/8 fd00::/8 192.168.1.7\n }\n}",
			want: Handler{Fetch: &FetchConfig{PrivateRanges: []string{"10.0.0.0/8", "fd00::/8", "192.168.1.7"}}}},
		{name: "fetch allow_private one address", input: "content_service {\n fetch {\n allow_private 127.0.0.2\n }\n}",
			want: Handler{Fetch: &FetchConfig{PrivateRanges: []string{"127.0.0.2"}}}},
		{name: "fetch allow_private bad range", input: "content_service {\n fetch {\n allow_private 10.0.0.0/8 10.0.0.0/33\n }\n}",
			err: `fetch: allow_private: "10.0.0.0/33" is not a CIDR range: write one such as 10.0.0.0/8 or fd00::/8, or one address such as 192.168.1.7, at Testfile:3`},
		{name: "fetch allow_private host name", input: "content_service {\n fetch {\n allow_private intranet.local\n }\n}",
			err: `fetch: allow_private: "intranet.local" is not an IP address`},
		{name: "fetch allow_private mapped range", input: "content_service {\n fetch {\n allow_private ::ffff:10.0.0.0/104\n }\n}",
			err: `fetch: allow_private: "::ffff:10.0.0.0/104" is an IPv4-mapped IPv6 range: write it in IPv4`},
		{name: "fetch allow_private bare", input: "content_service {\n fetch {\n allow_private\n }\n}",
			err: `fetch: allow_private: name the ranges to allow, such as 10.0.0.0/8 fd00::/8, or write "all" for every private, loopback and link-local address, at Testfile:3`},
		{name: "fetch allow_private all and ranges", input: "content_service {\n fetch {\n allow_private all 10.0.0.0/8\n }\n}",
			err: `fetch: allow_private: "all" already allows every address: give either "all" or ranges`},
		{name: "fetch allow_private twice", input: "content_service {\n fetch {\n allow_private 10.0.0.0/8\n allow_private all\n }\n}",
			err: "fetch: allow_private given twice"},
		{name: "fetch off", input: "content_service {\n fetch off\n}", want: Handler{Fetch: &FetchConfig{Off: true}}},
		{name: "fetch bad argument", input: "content_service {\n fetch on\n}", err: `fetch: the only argument is off (got "on")`},
		{name: "fetch bad timeout", input: "content_service {\n fetch {\n timeout soon\n }\n}", err: `fetch: timeout "soon"`},
		{name: "fetch zero max_size", input: "content_service {\n fetch {\n max_size 0\n }\n}", err: `fetch: max_size "0"`},
		{name: "fetch bad max_images", input: "content_service {\n fetch {\n max_images lots\n }\n}", err: `fetch: max_images "lots"`},
		{name: "fetch zero max_concurrent", input: "content_service {\n fetch {\n max_concurrent 0\n }\n}", err: `fetch: max_concurrent "0": a positive number`},
		{name: "fetch negative max_concurrent", input: "content_service {\n fetch {\n max_concurrent -2\n }\n}", err: `fetch: max_concurrent "-2": a positive number`},
		{name: "fetch bad max_concurrent", input: "content_service {\n fetch {\n max_concurrent many\n }\n}", err: `fetch: max_concurrent "many": a positive number`},
		{name: "fetch max_concurrent twice", input: "content_service {\n fetch {\n max_concurrent 2\n max_concurrent 3\n }\n}", err: "fetch: max_concurrent given twice"},
		{name: "fetch max_concurrent without value", input: "content_service {\n fetch {\n max_concurrent\n }\n}", err: "fetch: max_concurrent: no value"},
		{name: "fetch unknown", input: "content_service {\n fetch {\n proxy x\n }\n}", err: `fetch: unrecognized subdirective "proxy"`},
		{name: "fetch unknown without value", input: "content_service {\n fetch {\n proxy\n }\n}", err: `fetch: unrecognized subdirective "proxy"`},
		{name: "fetch unknown with two values", input: "content_service {\n fetch {\n proxy a b\n }\n}", err: `fetch: unrecognized subdirective "proxy"`},
		{name: "fetch allow_private value", input: "content_service {\n fetch {\n allow_private yes\n }\n}", err: `fetch: allow_private: "yes" is not an IP address`},
		{name: "fetch twice", input: "content_service {\n fetch off\n fetch off\n}", err: "fetch given twice"},
		{name: "browser off", input: "content_service {\n browser off\n}", want: Handler{Browser: &BrowserConfig{Off: true}}},
		{name: "browser bad argument", input: "content_service {\n browser on\n}", err: `browser: the only argument is off (got "on")`},
		{name: "browser bad tabs", input: "content_service {\n browser {\n tabs none\n }\n}", err: `browser: tabs "none": a positive number`},
		{name: "browser bad files_ttl", input: "content_service {\n browser {\n files_ttl -1h\n }\n}", err: `browser: files_ttl "-1h": a positive duration`},
		{name: "browser setting twice", input: "content_service {\n browser {\n tabs 2\n tabs 3\n }\n}", err: "browser: tabs given twice"},
		{name: "browser unknown", input: "content_service {\n browser {\n headless no\n }\n}", err: `browser: unrecognized subdirective "headless"`},
		{name: "browser unknown without value", input: "content_service {\n browser {\n headless\n }\n}", err: `browser: unrecognized subdirective "headless"`},
		{name: "browser missing value names it", input: "content_service {\n browser {\n timeout\n }\n}", err: "browser: timeout: no value (is a {$VAR} in it unset or empty?)"},
		{name: "browser extra value names it", input: "content_service {\n browser {\n tabs 2 3\n }\n}", err: `browser: tabs: one value, got extra "3"`},
		{name: "browser missing value", input: "content_service {\n browser {\n path\n }\n}", err: "browser: path: no value"},
		{name: "signing_key without value", input: "content_service {\n signing_key\n}", err: "signing_key: no value (is a {$VAR} in it unset or empty?)"},
		{name: "signing_key with two values", input: "content_service {\n signing_key a b\n}", err: `signing_key: one value, got extra "b"`},
		{name: "max_body without value", input: "content_service {\n max_body\n}", err: "max_body: no value (is a {$VAR} in it unset or empty?)"},
		{name: "max_output with two values", input: "content_service {\n max_output 8 MiB\n}", err: `max_output: one value, got extra "MiB"`},
		{name: "pass_thru with a value names it", input: "content_service {\n pass_thru yes\n}", err: `pass_thru takes no value, got "yes"`},
		{name: "app secret without value", input: "content_service {\n app a {\n secret\n }\n}", err: `app "a": secret: no value (is a {$VAR} in it unset or empty?)`},
		{name: "app token without value", input: "content_service {\n app a {\n secret secret-s\n token\n }\n}", err: `app "a": token: no value (is a {$VAR} in it unset or empty?)`},
		{name: "app disabled with a value", input: "content_service {\n app a {\n secret secret-s\n disabled yes\n }\n}", err: `app "a": disabled takes no value, got "yes"`},
		{name: "app editor_tokens with a value", input: "content_service {\n app a {\n secret secret-s\n editor_tokens on\n }\n}", err: `app "a": editor_tokens takes no value, got "on"`},
		{name: "pass_thru with value", input: "content_service {\n pass_thru yes\n}", err: "yes"},
		{name: "pass_thru twice", input: "content_service {\n pass_thru\n pass_thru\n}", err: "pass_thru given twice"},
		{name: "fetch off with a block", input: "content_service {\n fetch off {\n timeout 3s\n }\n}", err: "fetch off takes no block, at Testfile:2"},
		{name: "browser off with a block", input: "content_service {\n browser off {\n tabs 2\n }\n}", err: "browser off takes no block"},
		{name: "browser off with an empty block", input: "content_service {\n browser off {\n }\n}", err: "browser off takes no block"},
		{name: "login_failure_limit off with a block", input: "content_service {\n login_failure_limit off {\n }\n}", err: "login_failure_limit off takes no block"},
		{name: "pass_thru with a block", input: "content_service {\n pass_thru {\n x\n }\n}", err: "pass_thru takes no block"},
		{name: "max_body with a block", input: "content_service {\n max_body 1MiB {\n x\n }\n}", err: "max_body takes no block"},
		{name: "rate_limit with a block", input: "content_service {\n rate_limit 5 1m {\n x\n }\n}", err: "rate_limit takes no block"},
		{name: "fetch allow_private with a block", input: "content_service {\n fetch {\n allow_private all {\n x\n }\n }\n}", err: "fetch: allow_private takes no block"},
		{name: "fetch allow_private ranges with a block", input: "content_service {\n fetch {\n allow_private 10.0.0.0/8 {\n x\n }\n }\n}", err: "fetch: allow_private takes no block"},
		{name: "browser setting with a block", input: "content_service {\n browser {\n tabs 2 {\n x\n }\n }\n}", err: "browser: tabs takes no block"},
		{name: "app disabled with a block", input: "content_service {\n app a {\n secret secret-s\n disabled {\n x\n }\n }\n}", err: `app "a": disabled takes no block, at Testfile:4`},
		{name: "app token with a block", input: "content_service {\n app a {\n secret secret-s\n token token-t1 {\n x\n }\n }\n}", err: `app "a": token takes no block`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var h Handler
			err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tt.input))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want it to contain %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !reflect.DeepEqual(h, tt.want) {
				got, _ := json.Marshal(h)
				want, _ := json.Marshal(tt.want)
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
}

// The directive needs no global order option and lands before respond.
func TestCaddyfileAdapt(t *testing.T) {
	input := `:8080 {
		respond "fallback"
		content_service {
			signing_key {env.SIGNING_KEY}
			app c {
				secret secret-c
				token token-c1
			}
		}
	}`
	adapter := caddyconfig.GetAdapter("caddyfile")
	out, warnings, err := adapter.Adapt([]byte(input), nil)
	if err != nil {
		t.Fatalf("adapt: %v", err)
	}
	if len(warnings) > 0 {
		t.Logf("warnings: %v", warnings)
	}
	js := string(out)
	cs := strings.Index(js, `"handler":"content_service"`)
	respond := strings.Index(js, `"handler":"static_response"`)
	if cs < 0 || respond < 0 || cs > respond {
		t.Fatalf("content_service must come before respond: %s", js)
	}
	for _, want := range []string{`"signing_key":"{env.SIGNING_KEY}"`, `"client_id":"c"`, `"tokens":["token-c1"]`} {
		if !strings.Contains(js, want) {
			t.Errorf("adapted JSON lacks %s: %s", want, js)
		}
	}
}

func FuzzUnmarshalCaddyfile(f *testing.F) {
	seeds := []string{
		"content_service",
		"content_service {\n signing_key {env.K}\n app a {\n secret secret-s\n token token-t1 token-u1\n disabled\n editor_tokens\n }\n max_body 1MiB\n rate_limit 5 per 1m\n pass_thru\n}",
		"content_service {\n app {\n}\n}",
		"content_service {\n rate_limit 5\n}",
		"content_service {\n max_body 99999999999999999999999\n}",
		"content_service {\n app a {\n app b {\n secret secret-s\n }\n }\n}",
		"content_service x {",
		"content_service {\n signing_key \"" + strings.Repeat("k", 40) + "\"\n}",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		tokens, err := caddyfile.Tokenize([]byte(input), "fuzz")
		if err != nil {
			return
		}
		var h Handler
		if err := h.UnmarshalCaddyfile(caddyfile.NewDispenser(tokens)); err != nil {
			return
		}
		// What parsed must survive a JSON round trip unchanged (it is the
		// module's config).
		js, err := json.Marshal(h)
		if err != nil {
			t.Fatalf("marshal: %v", err)
		}
		var back Handler
		if err := json.Unmarshal(js, &back); err != nil {
			t.Fatalf("unmarshal: %v", err)
		}
		if !reflect.DeepEqual(h, back) {
			t.Fatalf("round trip changed the config: %s", js)
		}
		for _, app := range h.Apps {
			if app.ClientID == "" || app.ClientSecret == "" {
				t.Fatalf("accepted an app without id or secret: %s", js)
			}
		}
	})
}

// Secrets written into the config itself are shown by the admin API,
// autosave.json and debug logs: each is named in a load warning, and a
// placeholder is not.
func TestLiteralSecretsWarned(t *testing.T) {
	t.Setenv("CS_TEST_LITERAL_KEY", testKey)
	_, logs := newTestService(t, func(h *Handler) {
		h.SigningKey = "{env.CS_TEST_LITERAL_KEY}"
	})
	var fields []string
	for _, e := range logs.FilterMessage("secret configured as a literal").All() {
		fields = append(fields, e.ContextMap()["field"].(string))
		for _, v := range e.ContextMap() {
			if s, ok := v.(string); ok && (s == testSecret || strings.Contains(s, testAPIToken)) {
				t.Errorf("a warning holds the secret itself: %v", e.ContextMap())
			}
		}
	}
	want := []string{"app alpha secret", "app alpha token #1", "app alpha token #2",
		"app disabled-app secret", "app disabled-app token #1", "app editor-app secret", "app editor-app token #1"}
	if strings.Join(fields, "|") != strings.Join(want, "|") {
		t.Errorf("warned fields = %q; want %q (signing_key is a placeholder here)", fields, want)
	}
}

func TestLiteralSigningKeyWarned(t *testing.T) {
	_, logs := newTestService(t, nil)
	n := 0
	for _, e := range logs.FilterMessage("secret configured as a literal").All() {
		if e.ContextMap()["field"] == "signing_key" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("literal signing_key warned %d times; want once", n)
	}
}
