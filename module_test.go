package designbridge

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

func TestUnmarshalCaddyfile(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  Bridge
	}{
		{"empty block", `design_bridge`, Bridge{}},
		{"empty braces", "design_bridge {\n}", Bridge{}},
		{"content_service", "design_bridge {\n content_service http://127.0.0.1:8080\n}", Bridge{ContentService: "http://127.0.0.1:8080"}},
		{"content_service placeholder", "design_bridge {\n content_service {env.CS_URL}\n}", Bridge{ContentService: "{env.CS_URL}"}},
		{"token", "design_bridge {\n token abc\n}", Bridge{Token: "abc"}},
		{"token with prefix quoted", "design_bridge {\n token \"Bearer abc\"\n}", Bridge{Token: "Bearer abc"}},
		{"token as two words", "design_bridge {\n token Bearer abc\n}", Bridge{Token: "Bearer abc"}},
		{"token env", "design_bridge {\n token {env.CS_API_TOKEN}\n}", Bridge{Token: "{env.CS_API_TOKEN}"}},
		{"client_id", "design_bridge {\n client_id {env.CLIENT_ID}\n}", Bridge{ClientID: "{env.CLIENT_ID}"}},
		{"client_secret", "design_bridge {\n client_secret s3cr3t\n}", Bridge{ClientSecret: "s3cr3t"}},
		{"auth_url", "design_bridge {\n auth_url http://localhost:8080/loginV2\n}", Bridge{AuthURL: "http://localhost:8080/loginV2"}},
		{"uid placeholder", "design_bridge {\n uid {http.auth.user.id}\n}", Bridge{UID: "{http.auth.user.id}"}},
		{"uid literal", "design_bridge {\n uid customer-42\n}", Bridge{UID: "customer-42"}},
		{"export_paths", "design_bridge {\n export_paths /a /b/c\n}", Bridge{ExportPaths: []string{"/a", "/b/c"}}},
		{"auth_path", "design_bridge {\n auth_path /auth\n}", Bridge{AuthPath: "/auth"}},
		{"max_body MiB", "design_bridge {\n max_body 10MiB\n}", Bridge{MaxBody: 10 << 20}},
		{"max_body MB", "design_bridge {\n max_body 10MB\n}", Bridge{MaxBody: 10_000_000}},
		{"max_body bytes", "design_bridge {\n max_body 1234\n}", Bridge{MaxBody: 1234}},
		{"large_body_memory size", "design_bridge {\n large_body_memory 16MiB\n}", Bridge{LargeBodyMemory: 16 << 20}},
		{"large_body_memory off", "design_bridge {\n large_body_memory off\n}", Bridge{LargeBodyMemory: -1}},
		{"large_body_memory 0", "design_bridge {\n large_body_memory 0\n}", Bridge{LargeBodyMemory: -1}},
		{"answer_memory", "design_bridge {\n answer_memory 1GiB\n}", Bridge{AnswerMemory: 1 << 30}},
		{"timeout", "design_bridge {\n timeout 1m30s\n}", Bridge{Timeout: caddy.Duration(90 * time.Second)}},
		{"timeout days", "design_bridge {\n timeout 1d\n}", Bridge{Timeout: caddy.Duration(24 * time.Hour)}},
		{"unwrap_html", "design_bridge {\n unwrap_html\n}", Bridge{UnwrapHTML: true}},
		{"allowed_origins", "design_bridge {\n allowed_origins http://localhost:3000 https://app.example.com\n}", Bridge{AllowedOrigins: []string{"http://localhost:3000", "https://app.example.com"}}},
		{"insecure_http", "design_bridge {\n insecure_http\n}", Bridge{InsecureHTTP: true}},
		{"forward_headers", "design_bridge {\n forward_headers traceparent X-Request-Id\n}", Bridge{ForwardHeaders: []string{"traceparent", "X-Request-Id"}}},
		{"insecure_caller_uid", "design_bridge {\n insecure_caller_uid\n}", Bridge{InsecureCallerUID: true}},
		{"all", `design_bridge {
			content_service https://cs.example.com/api
			token           {env.TOK}
			client_id       id
			client_secret   secret
			auth_url        https://auth.example.com/loginV2
			uid             {http.auth.user.id}
			export_paths    /v1/message/html
			auth_path       /proxy/auth
			max_body        1MiB
			timeout         5s
			unwrap_html
			allowed_origins http://localhost:3000
			insecure_http
		}`, Bridge{
			ContentService: "https://cs.example.com/api", Token: "{env.TOK}", ClientID: "id", ClientSecret: "secret",
			AuthURL: "https://auth.example.com/loginV2", UID: "{http.auth.user.id}", ExportPaths: []string{"/v1/message/html"},
			AuthPath: "/proxy/auth", MaxBody: 1 << 20, Timeout: caddy.Duration(5 * time.Second), UnwrapHTML: true,
			AllowedOrigins: []string{"http://localhost:3000"}, InsecureHTTP: true,
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got Bridge
			if err := got.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tc.input)); err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestUnmarshalCaddyfileErrors(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		wantErr string
	}{
		{"argument on directive", "design_bridge http://x", `design_bridge takes no argument (got "http://x"); its settings go in its block, such as content_service <base URL>`},
		{"unknown subdirective", "design_bridge {\n contentservice http://x\n}", `unrecognized subdirective "contentservice"`},
		{"duplicate", "design_bridge {\n token a\n token b\n}", "token specified more than once"},
		{"cache ttl twice", "design_bridge {\n cache {\n  ttl 1m\n  ttl 2m\n }\n}", "cache: ttl given twice"},
		{"cache max_size on the line and in the block", "design_bridge {\n cache 1MiB {\n  max_size 2MiB\n }\n}", "cache: max_size given twice"},
		{"content_service no arg", "design_bridge {\n content_service\n}", "content_service: no value (is a {$VAR} in it unset or empty?)"},
		{"content_service two args", "design_bridge {\n content_service a b\n}", `content_service: one value, got extra "b"`},
		{"token no arg", "design_bridge {\n token\n}", "token: no value (is a {$VAR} in it unset or empty?)"},
		{"token two words without Bearer", "design_bridge {\n token Basic abc\n}", `token: one value, got extra "abc"`},
		{"token three words", "design_bridge {\n token Bearer a b\n}", `token: one value, got extra "a"`},
		{"token empty", "design_bridge {\n token \"\"\n}", "token: empty value"},
		{"client_id no arg", "design_bridge {\n client_id\n}", "client_id: no value (is a {$VAR} in it unset or empty?)"},
		{"client_secret no arg", "design_bridge {\n client_secret\n}", "client_secret: no value (is a {$VAR} in it unset or empty?)"},
		{"auth_url no arg", "design_bridge {\n auth_url\n}", "auth_url: no value (is a {$VAR} in it unset or empty?)"},
		{"uid no arg", "design_bridge {\n uid\n}", "uid: no value (is a {$VAR} in it unset or empty?)"},
		{"uid empty", "design_bridge {\n uid \"\"\n}", "uid: empty value"},
		{"auth_path relative", "design_bridge {\n auth_path proxy\n}", `auth_path "proxy" must start with /`},
		{"auth_path no arg", "design_bridge {\n auth_path\n}", "auth_path: no value (is a {$VAR} in it unset or empty?)"},
		{"export_paths none", "design_bridge {\n export_paths\n}", "export_paths: no value (is a {$VAR} in it unset or empty?)"},
		{"export_paths relative", "design_bridge {\n export_paths /a b\n}", `export_paths: "b" must start with /`},
		{"allowed_origins none", "design_bridge {\n allowed_origins\n}", "allowed_origins: no value (is a {$VAR} in it unset or empty?)"},
		{"forward_headers none", "design_bridge {\n forward_headers\n}", "forward_headers: no value (is a {$VAR} in it unset or empty?)"},
		{"forward_headers a credential", "design_bridge {\n forward_headers Traceparent cookie\n}", `forward_headers: "cookie" carries credentials`},
		{"forward_headers hop-by-hop", "design_bridge {\n forward_headers Keep-Alive\n}", `forward_headers: "Keep-Alive" is a hop-by-hop header`},
		{"max_body bad", "design_bridge {\n max_body lots\n}", `max_body: "lots" is not a size`},
		{"max_body zero", "design_bridge {\n max_body 0\n}", `max_body: "0": size must be between 1 byte and 1 TiB`},
		{"max_body no arg", "design_bridge {\n max_body\n}", "max_body: no value (is a {$VAR} in it unset or empty?)"},
		{"max_body two args", "design_bridge {\n max_body 10 MiB\n}", `max_body: one value, got extra "MiB"`},
		{"answer_memory no arg", "design_bridge {\n answer_memory\n}", "answer_memory: no value (is a {$VAR} in it unset or empty?)"},
		{"large_body_memory bad", "design_bridge {\n large_body_memory plenty\n}", `large_body_memory: "plenty" is not a size`},
		{"large_body_memory no arg", "design_bridge {\n large_body_memory\n}", "large_body_memory: no value (is a {$VAR} in it unset or empty?)"},
		{"answer_memory below the largest answer", "design_bridge {\n answer_memory 32MiB\n}", `answer_memory: "32MiB" is less than 64MiB`},
		{"answer_memory off", "design_bridge {\n answer_memory off\n}", `answer_memory: "off" is not a size`},
		{"timeout bad", "design_bridge {\n timeout soon\n}", `timeout: parsing "soon"`},
		{"timeout negative", "design_bridge {\n timeout -1s\n}", `timeout: "-1s" must be positive`},
		{"timeout two args", "design_bridge {\n timeout 1s 2s\n}", `timeout: one value, got extra "2s"`},
		{"timeout no arg", "design_bridge {\n timeout\n}", "timeout: no value (is a {$VAR} in it unset or empty?)"},
		{"cache three args", "design_bridge {\n cache 1MiB 5m 10\n}", `cache: at most <max_size> and <ttl>, got extra "10"`},
		{"cache unknown setting without value", "design_bridge {\n cache {\n  size\n }\n}", `cache: unrecognized subdirective "size"`},
		{"cache setting without value", "design_bridge {\n cache {\n  ttl\n }\n}", "cache ttl: no value (is a {$VAR} in it unset or empty?)"},
		{"cache setting with two values", "design_bridge {\n cache {\n  ttl 1 m\n }\n}", `cache ttl: one value, got extra "m"`},
		{"unwrap_html arg", "design_bridge {\n unwrap_html yes\n}", `unwrap_html takes no value, got "yes"`},
		{"insecure_http arg", "design_bridge {\n insecure_http yes\n}", `insecure_http takes no value, got "yes"`},
		{"insecure_caller_uid arg", "design_bridge {\n insecure_caller_uid yes\n}", `insecure_caller_uid takes no value, got "yes"`},
		{"block instead of value", "design_bridge {\n token {\n}\n}", "token: no value"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var b Bridge
			err := b.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tc.input))
			if err == nil {
				t.Fatalf("expected an error containing %q", tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not contain %q", err, tc.wantErr)
			}
			// Every parse error points at the Caddyfile position.
			if !strings.Contains(err.Error(), "Testfile:") {
				t.Errorf("error %q does not name the file and line", err)
			}
		})
	}
}

// TestResolveAndValidate covers defaults, placeholder resolution and every
// Validate error.
func TestResolveAndValidate(t *testing.T) {
	t.Setenv("DB_TEST_TOKEN", "Bearer env-token-123456")
	t.Setenv("DB_TEST_URL", "http://127.0.0.1:9")
	t.Setenv("DB_TEST_SPACE", " ")
	tests := []struct {
		name    string
		b       Bridge
		wantErr string
		check   func(t *testing.T, b *Bridge)
	}{
		{name: "defaults", b: Bridge{}, check: func(t *testing.T, b *Bridge) {
			if b.contentURL.String() != DefaultContentService || b.authURL.String() != DefaultAuthURL {
				t.Errorf("urls %s %s", b.contentURL, b.authURL)
			}
			if b.AuthPath != DefaultAuthPath || b.MaxBody != DefaultMaxBody || time.Duration(b.Timeout) != DefaultTimeout {
				t.Errorf("defaults not applied: %+v", b)
			}
			if len(b.exportPaths) != len(DefaultExportPaths) {
				t.Errorf("export paths %v", b.exportPaths)
			}
		}},
		{name: "token without prefix", b: Bridge{Token: "abc12345"}, check: wantBearer("Bearer abc12345")},
		{name: "token with prefix", b: Bridge{Token: "Bearer abc12345"}, check: wantBearer("Bearer abc12345")},
		{name: "token with lowercase prefix", b: Bridge{Token: "bearer abc12345"}, check: wantBearer("Bearer abc12345")},
		{name: "token from env with prefix", b: Bridge{Token: "{env.DB_TEST_TOKEN}"}, check: wantBearer("Bearer env-token-123456")},
		{name: "token placeholder empty", b: Bridge{Token: "{env.DB_TEST_TOKN}"}, wantErr: "token: evaluated placeholder {env.DB_TEST_TOKN} is empty"},
		{name: "client_id placeholder empty", b: Bridge{ClientID: "{env.DB_TEST_UNSET}"}, wantErr: "client_id: evaluated placeholder {env.DB_TEST_UNSET} is empty"},
		{name: "client_secret placeholder empty", b: Bridge{ClientSecret: "{env.DB_TEST_UNSET}"}, wantErr: "client_secret: evaluated placeholder {env.DB_TEST_UNSET} is empty"},
		{name: "content_service placeholder empty", b: Bridge{ContentService: "{env.DB_TEST_UNSET}"}, wantErr: "content_service: evaluated placeholder {env.DB_TEST_UNSET} is empty"},
		{name: "token only the prefix", b: Bridge{Token: "Bearer {env.DB_TEST_SPACE}"}, wantErr: `token: is empty`},
		{name: "content_service from env", b: Bridge{ContentService: "{env.DB_TEST_URL}", Token: "token-x1"}, check: func(t *testing.T, b *Bridge) {
			if b.contentURL.String() != "http://127.0.0.1:9" {
				t.Errorf("content url %s", b.contentURL)
			}
		}},
		{name: "trailing slash trimmed", b: Bridge{ContentService: "http://localhost:1/api/"}, check: func(t *testing.T, b *Bridge) {
			if b.contentURL.Path != "/api" {
				t.Errorf("path %q", b.contentURL.Path)
			}
		}},
		{name: "plain http to loopback allowed", b: Bridge{ContentService: "http://localhost:8080", AuthURL: "http://[::1]:8080/loginV2", Token: "token-t1", ClientID: "i", ClientSecret: "secret-s", UID: "u"}},
		{name: "LoginV2 without uid refused", b: Bridge{ClientID: "i", ClientSecret: "secret-s"}, wantErr: "uid: not set, so LoginV2 would mint an editor token for whatever uid the caller sends; take it from the host's authentication, e.g. uid {http.auth.user.id}"},
		{name: "LoginV2 with uid placeholder", b: Bridge{ClientID: "i", ClientSecret: "secret-s", UID: "{http.auth.user.id}"}},
		{name: "uid an e-mail address", b: Bridge{UID: "alice@example.com"}, wantErr: `uid: "alice@example.com" is not 1-256 letters, digits, _ or -`},
		{name: "uid with a dot", b: Bridge{UID: "alice.smith"}, wantErr: `uid: "alice.smith" is not`},
		{name: "uid of an unset variable", b: Bridge{UID: "{env.DB_TEST_UNSET_UID}"}, wantErr: "uid: evaluated placeholder {env.DB_TEST_UNSET_UID} is empty"},
		{name: "uid literal", b: Bridge{UID: "demo-user_7"}},
		{name: "placeholder without its end", b: Bridge{Token: "{env.CS_API_TOKEN"}, wantErr: `token: the "{" at byte 0 starts no placeholder`},
		{name: "uid of request placeholders", b: Bridge{UID: "{http.request.header.X-Team}-{http.auth.user.id}"}},
		{name: "LoginV2 with caller uid opt-in", b: Bridge{ClientID: "i", ClientSecret: "secret-s", InsecureCallerUID: true}},
		{name: "caller uid opt-in beside uid", b: Bridge{ClientID: "i", ClientSecret: "secret-s", UID: "u", InsecureCallerUID: true}, wantErr: "insecure_caller_uid: set together with uid"},
		{name: "no LoginV2 needs no uid", b: Bridge{Token: "token-t1"}},
		{name: "forward_headers canonical, each once", b: Bridge{ForwardHeaders: []string{"traceparent", "X-Request-Id", "TraceParent"}}, check: func(t *testing.T, b *Bridge) {
			if !reflect.DeepEqual(b.forwardHeaders, []string{"Traceparent", "X-Request-Id"}) || !b.keyHeaders["Traceparent"] || !b.keyHeaders["Accept"] || keyHeaders["Traceparent"] {
				t.Errorf("forward headers %q, key headers %v", b.forwardHeaders, b.keyHeaders)
			}
		}},
		{name: "answer_memory default", b: Bridge{}, check: func(t *testing.T, b *Bridge) {
			if b.AnswerMemory != DefaultAnswerMemory {
				t.Errorf("answer_memory %d", b.AnswerMemory)
			}
		}},
		{name: "answer_memory below the largest answer", b: Bridge{AnswerMemory: 1 << 20}, wantErr: "answer_memory: 1048576 bytes; it must be at least 67108864 (64 MiB)"},
		{name: "forward_headers credential", b: Bridge{ForwardHeaders: []string{"Authorization"}}, wantErr: `forward_headers[0] carries credentials`},
		{name: "forward_headers identity", b: Bridge{ForwardHeaders: []string{"X-Custom", "X-Forwarded-Email"}}, wantErr: `forward_headers[1] carries credentials`},
		{name: "forward_headers not a name", b: Bridge{ForwardHeaders: []string{"two words"}}, wantErr: `forward_headers[0] is not a header name`},
		{name: "plain http to LOCALHOST allowed", b: Bridge{ContentService: "http://LocalHost:8080", Token: "token-t1"}},
		{name: "plain http to 127.0.0.2 allowed", b: Bridge{ContentService: "http://127.0.0.2:8080", Token: "token-t1"}},
		// Names under .localhost are looked up like any other name.
		{name: "plain http to *.localhost refused", b: Bridge{ContentService: "http://app.localhost:8080", Token: "token-t1"}, wantErr: "content_service http://app.localhost:8080 would receive the token over plain HTTP"},
		{name: "plain http auth to *.localhost refused", b: Bridge{AuthURL: "http://auth.localhost/loginV2", ClientSecret: "secret-s"}, wantErr: "auth_url http://auth.localhost/loginV2 would receive the client secret over plain HTTP"},
		{name: "plain http to localhost. refused", b: Bridge{ContentService: "http://localhost.:8080", Token: "token-t1"}, wantErr: "would receive the token over plain HTTP"},
		{name: "plain http to localhost.example refused", b: Bridge{ContentService: "http://localhost.example.com", Token: "token-t1"}, wantErr: "would receive the token over plain HTTP"},
		{name: "plain http to remote refused", b: Bridge{ContentService: "http://cs.example.com", Token: "token-t1"}, wantErr: "content_service http://cs.example.com would receive the token over plain HTTP"},
		{name: "plain http to remote without token passes", b: Bridge{ContentService: "http://cs.example.com"}},
		{name: "plain http auth refused", b: Bridge{AuthURL: "http://10.0.0.1/loginV2", ClientSecret: "secret-s"}, wantErr: "auth_url http://10.0.0.1/loginV2 would receive the client secret over plain HTTP"},
		{name: "insecure_http allows", b: Bridge{ContentService: "http://cs.example.com", AuthURL: "http://a.example.com", Token: "token-t1", ClientSecret: "secret-s", InsecureHTTP: true}},
		{name: "bad scheme", b: Bridge{ContentService: "ftp://x"}, wantErr: `content_service: scheme must be http or https`},
		{name: "no host", b: Bridge{AuthURL: "http://"}, wantErr: `auth_url: missing host`},
		{name: "user info", b: Bridge{ContentService: "https://u:p@x"}, wantErr: "user info, query and fragment are not allowed"},
		{name: "query", b: Bridge{ContentService: "https://x/?a=1"}, wantErr: "user info, query and fragment are not allowed"},
		{name: "bad port", b: Bridge{ContentService: "https://x:99999"}, wantErr: "bad port"},
		{name: "unparsable url", b: Bridge{ContentService: "http://[::1"}, wantErr: `content_service: not a URL`},
		{name: "query holding a key", b: Bridge{ContentService: "https://cs.example.com/?key=s3cr3t"}, wantErr: `content_service: user info, query and fragment are not allowed`},
		{name: "unparsable url with user info", b: Bridge{ContentService: "http://u:s3cr3t@[::1"}, wantErr: `content_service: not a URL: write an http(s) URL such as https://cs.example.com`},
		{name: "bad scheme with user info", b: Bridge{AuthURL: "ftp://u:s3cr3t@x/loginV2"}, wantErr: `auth_url: user info, query and fragment are not allowed`},
		{name: "bad port with user info", b: Bridge{ContentService: "https://u:s3cr3t@x:99999"}, wantErr: `content_service: user info, query and fragment are not allowed`},
		{name: "no host with user info", b: Bridge{ContentService: "https://u:s3cr3t@"}, wantErr: `content_service: user info, query and fragment are not allowed`},
		{name: "auth path collides", b: Bridge{AuthPath: "/v1/message/html"}, wantErr: `auth_path: the same as one of the default export_paths`},
		{name: "auth path collides with a configured export path", b: Bridge{AuthPath: "/v1/b", ExportPaths: []string{"/v1/a", "/v1/b"}}, wantErr: `auth_path: the same as export_paths[1]`},
		{name: "auth path relative (JSON)", b: Bridge{AuthPath: "auth"}, wantErr: `auth_path must start with /`},
		{name: "export path relative (JSON)", b: Bridge{ExportPaths: []string{"/v1/a", "x"}}, wantErr: `export_paths[1] must start with /`},
		{name: "negative max_body (JSON)", b: Bridge{MaxBody: -1}, wantErr: "max_body must not be negative"},
		{name: "negative timeout (JSON)", b: Bridge{Timeout: -1}, wantErr: "timeout must not be negative"},
		{name: "negative cache size (JSON)", b: Bridge{Cache: &ExportCache{MaxSize: -1}}, wantErr: "cache.max_size must not be negative"},
		{name: "negative cache ttl (JSON)", b: Bridge{Cache: &ExportCache{TTL: -1}}, wantErr: "cache.ttl must not be negative"},
		{name: "auth_rate_limit without requests (JSON)", b: Bridge{AuthRateLimit: &AuthRateLimit{Window: caddy.Duration(time.Minute)}}, wantErr: `auth_rate_limit.requests: 0 is not a positive number of requests (or set "off": true)`},
		{name: "auth_rate_limit without window (JSON)", b: Bridge{AuthRateLimit: &AuthRateLimit{Requests: 5}}, wantErr: `auth_rate_limit.window: 0s must be positive (or set "off": true)`},
		{name: "origin with path", b: Bridge{AllowedOrigins: []string{"http://localhost:3000/app"}}, wantErr: `allowed_origins[0] is not an origin: write scheme://host[:port]`},
		{name: "origin without scheme", b: Bridge{AllowedOrigins: []string{"https://a.example", "localhost:3000"}}, wantErr: `allowed_origins[1] is not an origin`},
		// Every sandboxed frame and data: URL sends it.
		{name: "null origin", b: Bridge{AllowedOrigins: []string{"null"}}, wantErr: `allowed_origins[0] is not an origin`},
		{name: "origin normalized", b: Bridge{AllowedOrigins: []string{"HTTP://LocalHost:3000/"}}, check: func(t *testing.T, b *Bridge) {
			if _, ok := b.allowed["http://localhost:3000"]; !ok {
				t.Errorf("allowed %v", b.allowed)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.b
			err := b.resolve()
			if err == nil {
				err = b.Validate()
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want it to contain %q", err, tc.wantErr)
				}
				if strings.Contains(err.Error(), "s3cr3t") {
					t.Errorf("error %v names a secret", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if tc.check != nil {
				tc.check(t, &b)
			}
		})
	}
}

func wantBearer(want string) func(t *testing.T, b *Bridge) {
	return func(t *testing.T, b *Bridge) {
		t.Helper()
		if b.bearer != want {
			t.Errorf("bearer %q, want %q", b.bearer, want)
		}
	}
}

// TestJSONFieldNames pins the JSON config names (they are the module's
// public interface, documented in the README).
func TestJSONFieldNames(t *testing.T) {
	b := Bridge{ContentService: "a", Token: "b", ClientID: "c", ClientSecret: "d", AuthURL: "e", UID: "f",
		ExportPaths: []string{"/g"}, AuthPath: "/h", MaxBody: 1, LargeBodyMemory: 3, Timeout: 2, UnwrapHTML: true,
		AllowedOrigins: []string{"i"}, InsecureHTTP: true, InsecureCallerUID: true}
	raw, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"content_service":"a","token":"b","client_id":"c","client_secret":"d","auth_url":"e","uid":"f","insecure_caller_uid":true,"export_paths":["/g"],"auth_path":"/h","max_body":1,"large_body_memory":3,"timeout":2,"unwrap_html":true,"allowed_origins":["i"],"insecure_http":true}`
	if string(raw) != want {
		t.Errorf("got  %s\nwant %s", raw, want)
	}
	if raw, _ := json.Marshal(Bridge{}); string(raw) != "{}" {
		t.Errorf("zero config marshals to %s", raw)
	}
}

func FuzzUnmarshalCaddyfile(f *testing.F) {
	for _, s := range []string{
		"design_bridge",
		"design_bridge {\n content_service http://127.0.0.1:8080\n token abc\n}",
		"design_bridge {\n max_body 10MiB\n timeout 30s\n unwrap_html\n}",
		"design_bridge {\n export_paths /a /b\n allowed_origins http://localhost:3000\n}",
		"design_bridge {\n uid {http.auth.user.id}\n insecure_http\n auth_path /x\n}",
		"design_bridge {\n token {\n}\n}",
		"design_bridge {\n max_body 99999999999999999999PB\n}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, input string) {
		var b Bridge
		// NewTestDispenser exits the process on input the lexer refuses,
		// so tokenize first: such input is not the unmarshaler's to judge.
		tokens, err := caddyfile.Tokenize([]byte(input), "fuzz")
		if err != nil {
			return
		}
		if err := b.UnmarshalCaddyfile(caddyfile.NewDispenser(tokens)); err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		// Whatever parses must keep the invariants the parser promises.
		if b.MaxBody < 0 || b.MaxBody > 1<<40 || b.Timeout < 0 {
			t.Fatalf("out of range: %+v", b)
		}
		if b.AuthPath != "" && !strings.HasPrefix(b.AuthPath, "/") {
			t.Fatalf("auth_path %q", b.AuthPath)
		}
		for _, p := range b.ExportPaths {
			if !strings.HasPrefix(p, "/") {
				t.Fatalf("export path %q", p)
			}
		}
		// The JSON form round-trips.
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		var back Bridge
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatalf("JSON %s: %v", raw, err)
		}
		if !reflect.DeepEqual(b, back) {
			t.Fatalf("JSON round trip changed the config: %+v vs %+v", b, back)
		}
		// resolve and Validate must not panic on anything that parses.
		_ = back.resolve()
		_ = back.Validate()
	})
}

// TestDialAddress: localhost is dialled as 127.0.0.1, never looked up.
func TestDialAddress(t *testing.T) {
	for in, want := range map[string]string{
		"http://localhost:8080":       "127.0.0.1:8080",
		"http://LOCALHOST":            "127.0.0.1:80",
		"https://localhost/api":       "127.0.0.1:443",
		"http://[::1]:9000":           "[::1]:9000",
		"http://127.0.0.1:1":          "127.0.0.1:1",
		"https://cs.example.com":      "cs.example.com:443",
		"http://app.localhost:8080":   "app.localhost:8080",
		"https://localhost.example:8": "localhost.example:8",
	} {
		u, err := parseUpstreamURL(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := dialAddress(u); got != want {
			t.Errorf("dialAddress(%s) = %s, want %s", in, got, want)
		}
	}
}
