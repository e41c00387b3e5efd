package jsonerror

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

type body struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func TestWrite(t *testing.T) {
	for _, method := range []string{http.MethodPost, http.MethodHead} {
		w := httptest.NewRecorder()
		w.Header().Set("Content-Encoding", "gzip") // an earlier handler's
		r := httptest.NewRequest(method, "/x", nil)
		if err := Write(w, r, 418, body{4180, "a <b> & c"}); err != nil {
			t.Fatal(err)
		}
		want := `{"code":4180,"message":"a <b> & c"}`
		h := w.Header()
		if w.Code != 418 || h.Get("Content-Type") != "application/json" || h.Get("X-Content-Type-Options") != "nosniff" ||
			h.Get("Content-Length") != "35" || h.Get("Content-Encoding") != "" {
			t.Errorf("%s: %d %v", method, w.Code, h)
		}
		if got := w.Body.String(); (method == http.MethodHead && got != "") || (method != http.MethodHead && got != want) {
			t.Errorf("%s: body %q", method, got)
		}
	}
}

// TestRespondWithoutServer: outside a Caddy server (or with no error
// routes) Respond writes the body and returns nil.
func TestRespondWithoutServer(t *testing.T) {
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodPost, "/x", nil)
	if err := Respond(w, r, 502, body{5020, "down"}, errors.New("cause")); err != nil {
		t.Fatal(err)
	}
	if w.Code != 502 || w.Body.String() != `{"code":5020,"message":"down"}` {
		t.Errorf("%d %q", w.Code, w.Body)
	}
}

func TestRoutesMatch(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/v1/x", nil)
	r = caddyhttp.PrepareRequest(r, caddy.NewReplacer(), httptest.NewRecorder(), nil)
	path := func(p string) caddyhttp.MatcherSets {
		return caddyhttp.MatcherSets{{caddyhttp.MatchPath{p}}}
	}
	handler := caddyhttp.StaticResponse{}
	sub := func(routes ...caddyhttp.Route) caddyhttp.MiddlewareHandler {
		return &caddyhttp.Subroute{Routes: routes}
	}
	tests := []struct {
		name   string
		routes caddyhttp.RouteList
		want   bool
	}{
		{"none", nil, false},
		{"unconditional handler", caddyhttp.RouteList{{Handlers: []caddyhttp.MiddlewareHandler{handler}}}, true},
		{"other path", caddyhttp.RouteList{{MatcherSets: path("/fsp/*"), Handlers: []caddyhttp.MiddlewareHandler{handler}}}, false},
		{"same path", caddyhttp.RouteList{{MatcherSets: path("/v1/*"), Handlers: []caddyhttp.MiddlewareHandler{handler}}}, true},
		{"subroute, inner route for another path", caddyhttp.RouteList{{Handlers: []caddyhttp.MiddlewareHandler{
			sub(caddyhttp.Route{MatcherSets: path("/fsp/*"), Handlers: []caddyhttp.MiddlewareHandler{handler}})}}}, false},
		{"subroute, inner route matches", caddyhttp.RouteList{{Handlers: []caddyhttp.MiddlewareHandler{
			sub(caddyhttp.Route{MatcherSets: path("/v1/*"), Handlers: []caddyhttp.MiddlewareHandler{handler}})}}}, true},
		{"terminal route without a match inside stops", caddyhttp.RouteList{
			{Terminal: true, Handlers: []caddyhttp.MiddlewareHandler{sub()}},
			{Handlers: []caddyhttp.MiddlewareHandler{handler}},
		}, false},
	}
	for _, tc := range tests {
		if got := routesMatch(tc.routes, r); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
