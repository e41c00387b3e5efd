package bridge

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/designbridge/caddy-designbridge/testutil/conntest"
)

// TestLoginUpstreamConnections: the LoginV2 answer's body is read to its
// end and closed on every path, so many logins in a row travel over one
// kept-alive upstream connection, whatever the answer (a token, a
// refusal, a body of unknown length, none, one that echoes the client
// secret and is masked); an answer refused for its size (502) leaves no
// connection open behind it.
func TestLoginUpstreamConnections(t *testing.T) {
	const logins = 40
	token := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"editor-token","token_type":"Bearer","expires_in":300,"refresh_until":1764000000,"uid":"test-user","v2":true}`)
	}
	for _, tt := range []struct {
		name    string
		respond func(w http.ResponseWriter)
		status  int
		// reused: the logins share one connection; else each closes its
		// own.
		reused bool
	}{
		{"token", token, 200, true},
		{"refused", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			io.WriteString(w, `{"code":5002,"message":"bad client","status_code":401}`)
		}, 401, true},
		{"unknown length", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"access_token":"`)
			w.(http.Flusher).Flush()
			io.WriteString(w, strings.Repeat("a", 100<<10)+`"}`)
		}, 200, true},
		{"no body", func(w http.ResponseWriter) { w.WriteHeader(204) }, 204, true},
		{"secret masked", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(401)
			fmt.Fprintf(w, `{"message":"bad secret %s"}`, clientSecret)
		}, 401, true},
		{"over the limit", func(w http.ResponseWriter) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"access_token":"`+strings.Repeat("a", 2<<20)+`"}`)
		}, 502, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			up := conntest.New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				tt.respond(w)
			}))
			defer up.Close()
			load(t, site(fmt.Sprintf("\t\tauth_url %s/loginV2\n\t\tclient_id {env.DB_TEST_CLIENT_ID}\n\t\tclient_secret {env.DB_TEST_CLIENT_SECRET}\n\t\tcontent_service %s\n\t\tuid test-user\n\t\tauth_rate_limit off", up.URL, up.URL)))
			client := &http.Client{Timeout: 10 * time.Second}
			defer client.CloseIdleConnections()
			for i := range logins {
				if res := loginFrom(t, client, nil); res.Status != tt.status {
					t.Fatalf("login %d: %d %.200s, want %d", i+1, res.Status, res.Body, tt.status)
				}
			}
			if tt.reused {
				if n := up.Opened(); n != 1 {
					t.Errorf("%d logins opened %d upstream connections, want 1 (kept alive)", logins, n)
				}
				return
			}
			if n := up.WaitClosed(5 * time.Second); n > 0 {
				t.Errorf("%d logins left %d upstream connections open (of %d opened)", logins, n, up.Opened())
			}
		})
	}
}
