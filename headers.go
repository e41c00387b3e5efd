package designbridge

// Which headers cross the bridge: what an export sends of the browser's
// request (an allowlist, since the content service may be a third party),
// what forward_headers may add, and what the auth path passes back of the
// LoginV2 answer.

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"
)

// authAnswerHeaders are the headers of a LoginV2 answer that the browser
// gets: what the page's fetch of its token reads (the JSON's type and
// length), Pragma (the bridge sends its own Cache-Control: no-store) and
// Retry-After of a 429 or 503. Everything else would act on the host's
// origin, not the upstream's: its cookies (Set-Cookie, Clear-Site-Data), a
// redirect (Location, Refresh), CORS grants, HSTS and other policies, and
// the upstream's own details (Server, Via, internal names).
var authAnswerHeaders = map[string]bool{"Content-Type": true, "Content-Length": true,
	"Pragma": true, "Retry-After": true}

// actsOnOrigin reports whether an answer header, by its canonical name,
// would act on the origin it reaches: an export's answer reaches the
// browser on the host's origin, where the content service (which may be
// a third party) has no say over cookies, stored site data, HSTS, CORS
// grants, refreshes, alternative services, service workers' scopes,
// reporting (NEL would have the browser report every later request of
// the origin, its URL included, to the upstream's collector), the login
// status or device-bound sessions; nor over the origin's credentials: a
// challenge (WWW-Authenticate) on a 401 has the browser ask the user for
// a name and password in the host's name, and keep them for its origin.
// Nor may it send the page's request on: the page's fetch follows a
// redirect (Location), and a 307 to the host's own auth path would post
// the design there again and hand the page the user's editor token as
// its export.
func actsOnOrigin(c string) bool {
	switch c {
	case "Set-Cookie", "Set-Cookie2", "Clear-Site-Data", "Strict-Transport-Security", "Refresh",
		"Alt-Svc", "Service-Worker-Allowed", "Public-Key-Pins", "Public-Key-Pins-Report-Only",
		"Nel", "Report-To", "Reporting-Endpoints", "Set-Login", "Www-Authenticate", "Location":
		return true
	}
	return strings.HasPrefix(c, "Access-Control-") || strings.HasPrefix(c, "Sec-Session-")
}

// passedHeaders are the request headers every export passes on: Accept
// picks the answer's form (and is in the key); X-Forwarded-For, -Proto
// and -Host are for Caddy's reverse proxy, which keeps them from a
// trusted proxy (trusted_proxies) and replaces them otherwise. Beside
// them the bridge sends its own: Authorization, Content-Type,
// Content-Length, Accept-Encoding: identity (and Caddy's Via).
var passedHeaders = []string{"Accept", "X-Forwarded-For", "X-Forwarded-Proto", "X-Forwarded-Host"}

// exportHeader is what an export sends of the request's headers: the
// passed ones, those forward_headers names, and Content-Type. Nothing
// else the browser or a proxy in front of Caddy sent reaches the content
// service: credentials and identities (Cookie, X-Api-Key, an access
// proxy's tokens), the page's URL (Referer), and conditional and range
// headers, whose 304 or 206 would be shared with identical exports.
func (b *Bridge) exportHeader(in http.Header) http.Header {
	out := make(http.Header, len(passedHeaders)+len(b.forwardHeaders)+1)
	for _, names := range [][]string{passedHeaders, b.forwardHeaders} {
		for _, name := range names {
			if vs, ok := in[name]; ok {
				out[name] = slices.Clone(vs)
			}
		}
	}
	out["Content-Type"] = []string{"application/json"}
	return out
}

// forwardedKey is the forward_headers part of an export's key: every line
// of each named header, quoted, so that two exports share an answer (in
// flight or from the cache) only when they sent the same values, as the
// content service may answer by them.
func (b *Bridge) forwardedKey(h http.Header) string {
	if len(b.forwardHeaders) == 0 {
		return ""
	}
	var k []byte
	for _, name := range b.forwardHeaders {
		for _, v := range h[name] {
			k = strconv.AppendQuote(k, v)
		}
		k = append(k, ';')
	}
	return string(k)
}

// resolveForwardHeaders checks forward_headers and keeps each name once,
// in canonical form (how net/http keys a request's headers).
func (b *Bridge) resolveForwardHeaders() error {
	b.forwardHeaders, b.keyHeaders = nil, keyHeaders
	if len(b.ForwardHeaders) == 0 {
		return nil
	}
	b.keyHeaders = maps.Clone(keyHeaders)
	for i, name := range b.ForwardHeaders {
		if why := forwardRefusal(name); why != "" {
			return fmt.Errorf("forward_headers[%d] %s", i, why)
		}
		c := http.CanonicalHeaderKey(name)
		if !b.keyHeaders[c] {
			b.forwardHeaders = append(b.forwardHeaders, c)
			b.keyHeaders[c] = true
		}
	}
	return nil
}

// forwardRefusal says why a header cannot be named in forward_headers, or
// "" when it can.
func forwardRefusal(name string) string {
	if !httpguts.ValidHeaderFieldName(name) {
		return "is not a header name"
	}
	c := http.CanonicalHeaderKey(name)
	switch {
	case credentialHeader(c):
		return "carries credentials or a user's identity, which design_bridge never passes on: " +
			"the content service, which may be a third party, gets the server's token only"
	case slices.Contains(hopHeaders, c):
		return "is a hop-by-hop header: it concerns one connection, not the export"
	case strings.HasPrefix(c, "If-") || c == "Range":
		return "is a conditional or range header: an export's answer is recorded whole " +
			"and shared with identical exports, so a 304 or 206 for one request must not be asked for"
	case c == "Host" || c == "Content-Length" || c == "Content-Type" || c == "Accept" || c == "Accept-Encoding":
		return "is one design_bridge sets or passes itself for every export"
	case c == "X-Forwarded-For" || c == "X-Forwarded-Proto" || c == "X-Forwarded-Host" || c == "Via":
		return "is one Caddy's reverse proxy sets (keeping a trusted proxy's, see trusted_proxies)"
	}
	return ""
}

// hopHeaders are the hop-by-hop headers (RFC 9110, 7.6.1), as Caddy's
// reverse proxy removes them, and Proxy-Connection, which clients still
// send.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate",
	"Te", "Trailer", "Transfer-Encoding", "Upgrade", "Alt-Svc"}

// credentialHeader reports whether a request header, by its canonical
// name, carries credentials or a user's identity: the standard ones (From
// is the user's email address), and by the words in the names of those
// that access proxies, mTLS proxies and API gateways add
// (Cf-Access-Jwt-Assertion, X-Auth-Request-Access-Token,
// X-Forwarded-Email, X-Api-Key, Ocp-Apim-Subscription-Key,
// X-Forwarded-Client-Cert, X-Ssl-Client-S-Dn, Tailscale-User-Login,
// X-Amzn-Oidc-Data, Remote-User). User-Agent names a browser, not a user.
func credentialHeader(c string) bool {
	switch c {
	case "Authorization", "Proxy-Authorization", "Cookie", "Cookie2", "Set-Cookie", "From",
		"Remote-User", "Remote-Email", "Remote-Groups", "Remote-Name",
		"X-Forwarded-User", "X-Forwarded-Email", "X-Forwarded-Groups", "X-Forwarded-Preferred-Username",
		"X-Remote-User", "X-User", "X-Email":
		return true
	}
	lower := strings.ToLower(c)
	if strings.HasSuffix(lower, "-dn") {
		return true // a client certificate's distinguished name
	}
	lower = strings.ReplaceAll(lower, "user-agent", "")
	for _, word := range []string{"auth", "token", "secret", "passw", "cookie", "session", "jwt",
		"key", "credential", "assertion", "oidc", "principal", "signature", "identity",
		"cert", "user", "email", "login"} {
		if strings.Contains(lower, word) {
			return true
		}
	}
	return false
}

// bodyDigests are the headers that describe an answer's body by its
// bytes: validators and digests.
var bodyDigests = []string{"Etag", "Content-Md5", "Digest", "Content-Digest", "Repr-Digest"}

// dropDigests removes them from an answer whose body was changed (masked,
// unwrapped): they would describe bytes the client never gets, and for a
// masked body a hash of the bytes as sent would let whoever reads it
// test guesses of the secret offline.
func dropDigests(h http.Header) {
	for _, k := range bodyDigests {
		delete(h, k)
	}
}
