package contentservice

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"go.uber.org/zap"

	"github.com/designbridge/caddy-designbridge/internal/contract"
	"github.com/designbridge/caddy-designbridge/internal/ratelimit"
)

// LoginV2 error codes (docs/contracts.md); internal/contract holds the
// table.
const (
	CodeLoginMediaType     = contract.CodeLoginMediaType
	CodeLoginCredentials   = contract.CodeLoginCredentials
	CodeLoginDisabled      = contract.CodeLoginDisabled
	CodeLoginUID           = contract.CodeLoginUID
	CodeRefreshExpired     = contract.CodeRefreshExpired
	maxLoginBody           = 64 << 10
	tokenIssuer            = "content_service"
	tokenAudience          = "editor"
	loginTokenTypeResponse = "Bearer"
)

// loginRequest is the LoginV2 request body; the members stay raw so that
// a uid that is a JSON number can be told from a missing one.
type loginRequest struct {
	ClientID, ClientSecret, UID json.RawMessage
}

// loginResponse is the LoginV2 (and refresh) 200 body, exactly the
// contract's fields in the contract's order.
type loginResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	RefreshUntil int64  `json:"refresh_until"`
	UID          string `json:"uid"`
	V2           bool   `json:"v2"`
}

// editorClaims are the claims of an editor access token: the user (sub),
// the application (app: a keyed reference, never the client ID, since the
// browser can read the claims) and the end of the refresh window (rfu,
// Unix s).
type editorClaims struct {
	AppRef       string `json:"app"`
	RefreshUntil int64  `json:"rfu"`
	jwt.RegisteredClaims
}

// serveLogin answers POST /loginV2.
func (s *service) serveLogin(w http.ResponseWriter, r *http.Request) {
	client := ratelimit.ClientKeys(r)
	if s.failures != nil {
		if blocked, wait := s.failures.BlockedKeys(client, time.Now()); blocked {
			s.refuseLogin(w, r, wait)
			return
		}
	}
	if !contract.IsJSON(r.Header.Get("Content-Type")) {
		writeLoginError(w, http.StatusUnsupportedMediaType, CodeLoginMediaType, "Content-Type must be application/json")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxLoginBody))
	if err != nil {
		writeLoginError(w, http.StatusBadRequest, http.StatusBadRequest, "Request body unreadable or over 64 KiB")
		return
	}
	members, err := loginMembers(body)
	if err != nil {
		writeLoginError(w, http.StatusBadRequest, http.StatusBadRequest, "Request body must be a JSON object that names each member once")
		return
	}
	req := loginRequest{ClientID: members["client_id"], ClientSecret: members["client_secret"], UID: members["uid"]}
	// A missing or non-string client_id or secret simply does not match.
	var clientID, secret string
	_ = json.Unmarshal(req.ClientID, &clientID)
	_ = json.Unmarshal(req.ClientSecret, &secret)
	app := s.lookupApp(clientID, secret)
	// Judged, then settled with the limit: the check above may have let
	// many logins of this address through at once.
	if s.failures != nil {
		if ok, wait := s.failures.ChargeKeys(client, time.Now(), app < 0); !ok {
			s.refuseLogin(w, r, wait)
			return
		}
	}
	if app < 0 {
		s.logRefusal(w, r, "login refused", "unknown client_id or client_secret")
		writeLoginError(w, http.StatusUnauthorized, CodeLoginCredentials, "Unknown client_id or client_secret")
		return
	}
	if s.apps[app].disabled {
		s.logRefusal(w, r, "login refused", "application disabled", zap.String("client_id", s.apps[app].clientID))
		writeLoginError(w, http.StatusForbidden, CodeLoginDisabled, "Application disabled")
		return
	}
	uid, ok := parseUID(req.UID)
	if !ok {
		writeLoginError(w, http.StatusBadRequest, CodeLoginUID, "uid must be a string of letters, digits, _ and - (1 to 256 characters)")
		return
	}
	s.issueToken(w, s.apps[app].ref, uid, time.Now().Add(RefreshWindow).Unix())
}

// refuseLogin answers a login from an address past its failure limit,
// which may try again after wait.
func (s *service) refuseLogin(w http.ResponseWriter, r *http.Request, wait time.Duration) {
	secs := ratelimit.RetryAfter(wait)
	s.logRefusal(w, r, "login refused", "too many failed logins from this address", zap.Int("retry_after_s", secs))
	w.Header().Set("Retry-After", strconv.Itoa(secs))
	writeLoginError(w, http.StatusTooManyRequests, http.StatusTooManyRequests,
		fmt.Sprintf("Too many failed logins from this address: retry after %d s", secs))
}

// serveRefresh answers POST /loginV2/refresh: any token this service (or
// a replica with the same key) signed, expired or not, buys a new one
// until its refresh_until.
func (s *service) serveRefresh(w http.ResponseWriter, r *http.Request) {
	raw, err := bearerToken(r)
	if err != nil {
		writeLoginError(w, http.StatusUnauthorized, http.StatusUnauthorized, "Authorization must be \"Bearer <access_token>\"")
		return
	}
	claims, err := s.parseEditorToken(raw)
	if err != nil {
		s.logRefusal(w, r, "token refresh refused", "invalid access token")
		writeLoginError(w, http.StatusUnauthorized, http.StatusUnauthorized, "Invalid access token")
		return
	}
	app := s.appByRef(claims.AppRef)
	if app < 0 {
		s.logRefusal(w, r, "token refresh refused", "token of an application no longer configured")
		writeLoginError(w, http.StatusUnauthorized, http.StatusUnauthorized, "Invalid access token")
		return
	}
	if s.apps[app].disabled {
		s.logRefusal(w, r, "token refresh refused", "application disabled", zap.String("client_id", s.apps[app].clientID))
		writeLoginError(w, http.StatusForbidden, CodeLoginDisabled, "Application disabled")
		return
	}
	// Refused once refresh_until has passed: in its own second it holds.
	if time.Now().Unix() > claims.RefreshUntil {
		s.logRefusal(w, r, "token refresh refused", "past refresh_until", zap.String("client_id", s.apps[app].clientID))
		writeLoginError(w, http.StatusUnauthorized, CodeRefreshExpired, "expired token cannot be refreshed")
		return
	}
	s.issueToken(w, claims.AppRef, claims.Subject, claims.RefreshUntil)
}

// issueToken signs a new access token and answers with the LoginV2 body.
func (s *service) issueToken(w http.ResponseWriter, appRef, uid string, refreshUntil int64) {
	signed, err := signEditorToken(s.signingKey, appRef, uid, time.Now(), refreshUntil)
	if err != nil {
		// HMAC signing of a marshalable struct does not fail; answer in
		// the contract's shape all the same.
		writeLoginError(w, http.StatusInternalServerError, http.StatusInternalServerError, "Token signing failed")
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, loginResponse{
		AccessToken:  signed,
		TokenType:    loginTokenTypeResponse,
		ExpiresIn:    int(AccessTokenTTL / time.Second),
		RefreshUntil: refreshUntil,
		UID:          uid,
		V2:           true,
	})
}

// signEditorToken returns an editor access token for the user uid of the
// application appRef, issued at issued and valid for AccessTokenTTL,
// signed with key (HS256). parseEditorToken reads it back.
func signEditorToken(key []byte, appRef, uid string, issued time.Time, refreshUntil int64) (string, error) {
	var jti [12]byte
	_, _ = rand.Read(jti[:])
	claims := editorClaims{
		AppRef:       appRef,
		RefreshUntil: refreshUntil,
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    tokenIssuer,
			Subject:   uid,
			Audience:  jwt.ClaimStrings{tokenAudience},
			IssuedAt:  jwt.NewNumericDate(issued),
			ExpiresAt: jwt.NewNumericDate(issued.Add(AccessTokenTTL)),
			ID:        hex.EncodeToString(jti[:]),
		},
	}
	return jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(key)
}

// errTokenClaims means a well-signed token whose claims are not ours.
var errTokenClaims = errors.New("token claims are not an editor token's")

// parseEditorToken verifies the signature (HS256 only) and the fixed
// claims of an editor token. Expiry is not checked here: refresh accepts
// expired tokens, and the export path checks it itself to answer 4010.
func (s *service) parseEditorToken(raw string) (*editorClaims, error) {
	var claims editorClaims
	parser := jwt.NewParser(
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithoutClaimsValidation(),
	)
	_, err := parser.ParseWithClaims(raw, &claims, func(*jwt.Token) (any, error) {
		return s.signingKey, nil
	})
	if err != nil {
		return nil, err
	}
	if claims.Issuer != tokenIssuer || len(claims.Audience) != 1 || claims.Audience[0] != tokenAudience ||
		claims.ExpiresAt == nil || claims.RefreshUntil == 0 || claims.AppRef == "" || !contract.ValidUID(claims.Subject) {
		return nil, errTokenClaims
	}
	return &claims, nil
}

// tokenExpired reports whether an editor token's exp has passed.
func tokenExpired(c *editorClaims) bool {
	return !time.Now().Before(c.ExpiresAt.Time)
}

// errDuplicateMember means a LoginV2 body that names a member twice.
var errDuplicateMember = errors.New("a member is named twice")

// loginMembers reads a LoginV2 body's members into a map, not a struct:
// names are matched exactly, where encoding/json would take "UID" or
// "Client_ID" for them. A name given twice is refused rather than
// resolved (encoding/json keeps the last, other parsers the first): a
// host that checked one uid and forwarded the body, or pasted a user's
// input into it, would otherwise log in another user.
func loginMembers(body []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	members := make(map[string]json.RawMessage)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := tok.(string) // an object's keys are strings
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		if _, dup := members[name]; dup {
			return nil, errDuplicateMember
		}
		members[name] = value
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the JSON object")
	}
	return members, nil
}

// parseUID reads the uid member: a JSON string of letters, digits, _ and -.
func parseUID(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var uid string
	if err := json.Unmarshal(raw, &uid); err != nil {
		return "", false
	}
	return uid, contract.ValidUID(uid)
}
