// Package authtest runs an OAuth 2.1 authorization server in-process, for
// tests and examples only: it keeps everything in memory, approves every
// authorization request at once, and signs with keys it makes at start-up.
// Never use it to protect anything.
//
// What it implements, each as its RFC says, so that a client or resource
// server tested against it is tested against the standards:
//
//   - authorization server metadata (RFC 8414) at
//     /.well-known/oauth-authorization-server, and the same document at
//     /.well-known/openid-configuration;
//   - a JSON Web Key Set (RFC 7517) at /jwks;
//   - an authorization endpoint (/authorize) for the authorization code
//     grant with PKCE (S256 only), which approves at once for the
//     configured subject (or denies, see [Server.SetSubject]) and
//     redirects with code, state and iss (RFC 9207);
//   - a token endpoint (/token) for the authorization_code and
//     refresh_token grants, with client_secret_basic, client_secret_post,
//     private_key_jwt (RFC 7523 section 2.2) and none (public clients), and
//     resource indicators (RFC 8707): the access token is a JWT (RFC 9068)
//     whose aud is the requested resource; refresh tokens are rotated on
//     use;
//   - the grants with no person present: client_credentials (OAuth 2.1
//     section 4.2), the JWT bearer grant (RFC 7523 section 2.1) for
//     assertions of the issuers it trusts ([Server.TrustIssuer]): a
//     workload's platform token, or an identity assertion JWT
//     authorization grant (ID-JAG) of an enterprise identity provider,
//     whose client_id and resource it checks; and, in the identity
//     provider's role, token exchange (RFC 8693) of an ID token it issued
//     ([Server.IssueIDToken]) for an ID-JAG;
//   - DPoP (RFC 9449) at the token endpoint: a token request with a valid
//     proof gets a token bound to the proof's key (cnf.jkt, token_type
//     DPoP), a public client's refresh token is bound too, and with
//     [Options.RequireDPoPNonce] a proof without this server's nonce is
//     answered use_dpop_nonce;
//   - dynamic client registration (RFC 7591) at /register;
//   - token introspection (RFC 7662) at /introspect, for any registered
//     confidential client.
//
// A test can also mint a token directly with [Server.Issue], move the
// server's clock with [Server.SetClock], rotate its signing key with
// [Server.RotateKey] and revoke a token with [Server.Revoke].
package authtest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Token endpoint authentication methods (RFC 7591 §2).
const (
	AuthSecretBasic = "client_secret_basic"
	AuthSecretPost  = "client_secret_post"
	AuthNone        = "none"
	// AuthPrivateKeyJWT is client authentication with an assertion signed
	// by the client's key (RFC 7523 section 2.2).
	AuthPrivateKeyJWT = "private_key_jwt"
)

// Options configure a [Server]. The zero value is usable.
type Options struct {
	// Subject is the user the authorization endpoint approves requests
	// for. Empty means "user". [Server.SetSubject] changes it.
	Subject string
	// ScopesSupported are the scopes the server advertises and grants.
	// Empty means any scope is granted (and none advertised).
	ScopesSupported []string
	// TokenTTL is the lifetime of the access tokens the token endpoint
	// issues. Zero means one hour.
	TokenTTL time.Duration
	// Algorithm signs the access tokens: "RS256" (the default) or
	// "ES256".
	Algorithm string
	// Now is the server's clock. Nil means time.Now. [Server.SetClock]
	// changes it.
	Now func() time.Time
	// RequireDPoPNonce has the token endpoint answer a DPoP proof without
	// the server's current nonce with 400 use_dpop_nonce and the nonce in
	// DPoP-Nonce (RFC 9449 section 8). [Server.RotateDPoPNonce] changes it.
	RequireDPoPNonce bool
}

// Client is a registered OAuth client.
type Client struct {
	// ID is the client_id. Empty in [Server.RegisterClient] means one is
	// made up.
	ID string
	// Secret is the client_secret; empty for a public client. Empty in
	// RegisterClient, for a confidential client, means one is made up.
	Secret string
	// RedirectURIs are the registered redirection URIs. A loopback one
	// (http://127.0.0.1 or http://[::1]) matches any port (RFC 8252 §7.3).
	RedirectURIs []string
	// AuthMethod is the token endpoint authentication method:
	// [AuthSecretBasic] (the default), [AuthSecretPost],
	// [AuthPrivateKeyJWT] or [AuthNone].
	AuthMethod string
	// Name is the client_name, if any.
	Name string
	// PublicKey verifies the client's assertions, for
	// [AuthPrivateKeyJWT].
	PublicKey crypto.PublicKey
}

// Grant describes a token for [Server.Issue].
type Grant struct {
	// Subject is the sub claim.
	Subject string
	// ClientID is the client_id claim.
	ClientID string
	// Resource is the audience (RFC 8707): the protected resource the
	// token is for.
	Resource string
	// Scopes are the granted scopes.
	Scopes []string
	// TTL is the token's lifetime. Zero means the server's TokenTTL.
	TTL time.Duration
	// Claims are added to the token, replacing the standard ones of the
	// same name: a test sets "iss" to another issuer, say, or "nbf".
	Claims map[string]any
	// KeyThumbprint binds the token to a DPoP key (RFC 9449 section 6.1):
	// its cnf.jkt, the key's JWK SHA-256 thumbprint.
	KeyThumbprint string
}

// Server is an in-process authorization server; see the package
// documentation. Create one with [NewServer] and Close it when done.
type Server struct {
	srv      *httptest.Server
	alg      jose.SignatureAlgorithm
	ttl      time.Duration
	supports []string

	mu      sync.Mutex
	now     func() time.Time
	subject string
	keys    []signingKey // the last one signs
	clients map[string]*Client
	codes   map[string]*authCode
	refresh map[string]*refreshGrant
	revoked map[string]bool // by jti

	trusted    map[string][]crypto.PublicKey // issuer -> keys its assertions verify with
	jagClients map[string]string             // audience -> client_id to name in ID-JAGs
	usedJTIs   map[string]time.Time          // client assertions and DPoP proofs seen, until when
	dpopNonce  string                        // the nonce proofs must carry, with RequireDPoPNonce
	needNonce  bool
}

type signingKey struct {
	kid    string
	signer crypto.Signer
}

// authCode is an authorization code waiting to be exchanged.
type authCode struct {
	clientID, redirectURI, challenge, resource, subject string
	scopes                                              []string
	expires                                             time.Time
}

// refreshGrant is what a refresh token stands for.
type refreshGrant struct {
	clientID, resource, subject string
	scopes                      []string
	jkt                         string // the DPoP key a public client's refresh token is bound to
}

// codeTTL is the lifetime of an authorization code.
const codeTTL = time.Minute

// NewServer starts a server on a loopback address.
func NewServer(opts *Options) *Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	s := &Server{
		alg:      jose.RS256,
		ttl:      o.TokenTTL,
		supports: slices.Clone(o.ScopesSupported),
		now:      o.Now,
		subject:  o.Subject,
		clients:  make(map[string]*Client),
		codes:    make(map[string]*authCode),
		refresh:  make(map[string]*refreshGrant),
		revoked:  make(map[string]bool),

		trusted:    make(map[string][]crypto.PublicKey),
		jagClients: make(map[string]string),
		usedJTIs:   make(map[string]time.Time),
		dpopNonce:  randomString(16),
		needNonce:  o.RequireDPoPNonce,
	}
	switch o.Algorithm {
	case "", "RS256":
	case "ES256":
		s.alg = jose.ES256
	default:
		panic("authtest: Options.Algorithm must be RS256 or ES256, not " + o.Algorithm)
	}
	if s.ttl <= 0 {
		s.ttl = time.Hour
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.subject == "" {
		s.subject = "user"
	}
	s.RotateKey()
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", s.serveMetadata)
	mux.HandleFunc("GET /.well-known/openid-configuration", s.serveMetadata)
	mux.HandleFunc("GET /jwks", s.serveJWKS)
	mux.HandleFunc("GET /authorize", s.serveAuthorize)
	mux.HandleFunc("POST /token", s.serveToken)
	mux.HandleFunc("POST /register", s.serveRegister)
	mux.HandleFunc("POST /introspect", s.serveIntrospect)
	s.srv = httptest.NewServer(mux)
	return s
}

// Close shuts the server down.
func (s *Server) Close() { s.srv.Close() }

// Issuer returns the issuer identifier: the server's base URL.
func (s *Server) Issuer() string { return s.srv.URL }

// MetadataURL returns the URL of the RFC 8414 metadata document.
func (s *Server) MetadataURL() string {
	return s.srv.URL + "/.well-known/oauth-authorization-server"
}

// JWKSURL returns the URL of the key set.
func (s *Server) JWKSURL() string { return s.srv.URL + "/jwks" }

// AuthorizationEndpoint, TokenEndpoint, RegistrationEndpoint and
// IntrospectionEndpoint return the URLs of the endpoints.
func (s *Server) AuthorizationEndpoint() string { return s.srv.URL + "/authorize" }

// TokenEndpoint returns the URL of the token endpoint.
func (s *Server) TokenEndpoint() string { return s.srv.URL + "/token" }

// RegistrationEndpoint returns the URL of dynamic client registration.
func (s *Server) RegistrationEndpoint() string { return s.srv.URL + "/register" }

// IntrospectionEndpoint returns the URL of token introspection.
func (s *Server) IntrospectionEndpoint() string { return s.srv.URL + "/introspect" }

// Client returns an HTTP client for the server (the test server's).
func (s *Server) Client() *http.Client { return s.srv.Client() }

// SetSubject sets the user the authorization endpoint approves from now
// on. The empty subject makes it deny every request instead, redirecting
// with error=access_denied, as when the user clicks "deny".
func (s *Server) SetSubject(subject string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.subject = subject
}

// SetClock replaces the server's clock: it dates tokens and codes and
// decides whether they have expired.
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// RotateKey makes a new signing key, publishes it in the key set next to
// the old ones, signs with it from now on, and returns its kid.
func (s *Server) RotateKey() string {
	var signer crypto.Signer
	var err error
	if s.alg == jose.ES256 {
		signer, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	} else {
		signer, err = rsa.GenerateKey(rand.Reader, 2048)
	}
	if err != nil {
		panic("authtest: generating a key: " + err.Error())
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	kid := "key-" + strconv.Itoa(len(s.keys)+1)
	s.keys = append(s.keys, signingKey{kid: kid, signer: signer})
	return kid
}

// RegisterClient registers c as if an administrator had (no dynamic
// registration) and returns it with its ID and secret filled in.
func (s *Server) RegisterClient(c Client) Client {
	if c.AuthMethod == "" {
		c.AuthMethod = AuthSecretBasic
	}
	if c.ID == "" {
		c.ID = "client-" + randomString(8)
	}
	if c.AuthMethod == AuthPrivateKeyJWT && c.PublicKey == nil {
		panic("authtest: a private_key_jwt client needs a PublicKey")
	}
	if c.AuthMethod != AuthNone && c.AuthMethod != AuthPrivateKeyJWT && c.Secret == "" {
		c.Secret = randomString(24)
	}
	if c.AuthMethod == AuthNone || c.AuthMethod == AuthPrivateKeyJWT {
		c.Secret = ""
	}
	c.RedirectURIs = slices.Clone(c.RedirectURIs)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clients[c.ID] = &c
	return c
}

// Issue signs an access token for g, as the token endpoint would, and
// returns it.
func (s *Server) Issue(g Grant) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	tok, err := s.issueLocked(g)
	if err != nil {
		panic("authtest: signing a token: " + err.Error())
	}
	return tok
}

// Revoke marks an access token inactive: introspection reports
// active=false for it from now on. (A JWT stays verifiable offline until
// it expires: that is what JWTs are.)
func (s *Server) Revoke(token string) {
	var c struct {
		ID string `json:"jti"`
	}
	if parsed, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{s.alg}); err == nil && parsed.UnsafeClaimsWithoutVerification(&c) == nil {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.revoked[c.ID] = true
	}
}

// issueLocked signs an access token; s.mu is held.
func (s *Server) issueLocked(g Grant) (string, error) {
	now := s.now()
	ttl := g.TTL
	if ttl <= 0 {
		ttl = s.ttl
	}
	claims := map[string]any{
		"iss":       s.srv.URL,
		"sub":       g.Subject,
		"client_id": g.ClientID,
		"iat":       now.Unix(),
		"exp":       now.Add(ttl).Unix(),
		"jti":       randomString(16),
	}
	if g.Resource != "" {
		claims["aud"] = g.Resource
	}
	if len(g.Scopes) > 0 {
		claims["scope"] = strings.Join(g.Scopes, " ")
	}
	if g.KeyThumbprint != "" {
		claims["cnf"] = map[string]string{"jkt": g.KeyThumbprint}
	}
	for k, v := range g.Claims {
		claims[k] = v
	}
	return s.signLocked("at+jwt", claims)
}

// signLocked signs claims as a JWT of type typ with the current key; s.mu
// is held.
func (s *Server) signLocked(typ string, claims map[string]any) (string, error) {
	key := s.keys[len(s.keys)-1]
	signer, err := jose.NewSigner(
		jose.SigningKey{Algorithm: s.alg, Key: jose.JSONWebKey{Key: key.signer, KeyID: key.kid, Algorithm: string(s.alg)}},
		(&jose.SignerOptions{}).WithType(jose.ContentType(typ)))
	if err != nil {
		return "", err
	}
	return jwt.Signed(signer).Claims(claims).Serialize()
}

// verifyLocked checks a token this server issued and returns its claims,
// or nil when it is not active (bad signature, expired, revoked).
func (s *Server) verifyLocked(token string) map[string]any {
	parsed, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{s.alg})
	if err != nil || len(parsed.Headers) != 1 {
		return nil
	}
	for _, k := range s.keys {
		if k.kid != parsed.Headers[0].KeyID {
			continue
		}
		var claims map[string]any
		if parsed.Claims(k.signer.Public(), &claims) != nil {
			return nil
		}
		exp, _ := claims["exp"].(float64)
		jti, _ := claims["jti"].(string)
		if float64(s.now().Unix()) >= exp || s.revoked[jti] {
			return nil
		}
		return claims
	}
	return nil
}

func (s *Server) serveMetadata(w http.ResponseWriter, r *http.Request) {
	md := map[string]any{
		"issuer":                                           s.srv.URL,
		"authorization_endpoint":                           s.AuthorizationEndpoint(),
		"token_endpoint":                                   s.TokenEndpoint(),
		"registration_endpoint":                            s.RegistrationEndpoint(),
		"introspection_endpoint":                           s.IntrospectionEndpoint(),
		"jwks_uri":                                         s.JWKSURL(),
		"response_types_supported":                         []string{"code"},
		"response_modes_supported":                         []string{"query"},
		"grant_types_supported":                            []string{"authorization_code", "refresh_token", grantClientCredentials, grantJWTBearer, grantTokenExchange},
		"code_challenge_methods_supported":                 []string{"S256"},
		"token_endpoint_auth_methods_supported":            []string{AuthSecretBasic, AuthSecretPost, AuthPrivateKeyJWT, AuthNone},
		"token_endpoint_auth_signing_alg_values_supported": algNames(assertionAlgs),
		"dpop_signing_alg_values_supported":                algNames(assertionAlgs),
		"introspection_endpoint_auth_methods_supported":    []string{AuthSecretBasic, AuthSecretPost},
		"authorization_response_iss_parameter_supported":   true,
	}
	if len(s.supports) > 0 {
		md["scopes_supported"] = s.supports
	}
	writeJSON(w, http.StatusOK, md)
}

func (s *Server) serveJWKS(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	set := jose.JSONWebKeySet{}
	for _, k := range s.keys {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.signer.Public(), KeyID: k.kid, Algorithm: string(s.alg), Use: "sig"})
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, set)
}

// serveAuthorize approves at once. Errors the client must not be sent back
// for (an unknown client, a redirect URI that is not registered) are
// shown here; others go to the redirect URI (RFC 6749 §4.1.2.1).
func (s *Server) serveAuthorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.clients[q.Get("client_id")]
	if !ok {
		http.Error(w, "unknown client_id", http.StatusBadRequest)
		return
	}
	redirect := q.Get("redirect_uri")
	if redirect == "" && len(c.RedirectURIs) == 1 {
		redirect = c.RedirectURIs[0]
	}
	if !redirectRegistered(c.RedirectURIs, redirect) {
		http.Error(w, "redirect_uri is not registered for this client", http.StatusBadRequest)
		return
	}
	fail := func(code, desc string) {
		redirectTo(w, r, redirect, url.Values{"error": {code}, "error_description": {desc}, "state": {q.Get("state")}, "iss": {s.srv.URL}})
	}
	if q.Get("response_type") != "code" {
		fail("unsupported_response_type", "only response_type=code is supported")
		return
	}
	challenge := q.Get("code_challenge")
	if challenge == "" || q.Get("code_challenge_method") != "S256" {
		fail("invalid_request", "PKCE with code_challenge_method=S256 is required")
		return
	}
	scopes := strings.Fields(q.Get("scope"))
	if !s.scopesSupported(scopes) {
		fail("invalid_scope", "a requested scope is not supported")
		return
	}
	resource, ok := oneResource(q["resource"])
	if !ok {
		fail("invalid_target", "resource must be one absolute URI without a fragment")
		return
	}
	if s.subject == "" {
		fail("access_denied", "the user denied the request")
		return
	}
	code := randomString(24)
	s.codes[code] = &authCode{
		clientID: c.ID, redirectURI: q.Get("redirect_uri"), challenge: challenge,
		resource: resource, subject: s.subject, scopes: scopes, expires: s.now().Add(codeTTL),
	}
	redirectTo(w, r, redirect, url.Values{"code": {code}, "state": {q.Get("state")}, "iss": {s.srv.URL}})
}

func redirectTo(w http.ResponseWriter, r *http.Request, base string, params url.Values) {
	u, _ := url.Parse(base) // registered, so parsed before
	q := u.Query()
	for k, v := range params {
		if len(v) == 1 && v[0] != "" {
			q.Set(k, v[0])
		}
	}
	u.RawQuery = q.Encode()
	http.Redirect(w, r, u.String(), http.StatusFound)
}

// redirectRegistered compares exactly, except that a loopback redirect
// URI may use any port (RFC 8252 §7.3).
func redirectRegistered(registered []string, uri string) bool {
	if uri == "" {
		return false
	}
	if slices.Contains(registered, uri) {
		return true
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "http" || !isLoopback(u.Hostname()) {
		return false
	}
	for _, reg := range registered {
		ru, err := url.Parse(reg)
		if err != nil || ru.Scheme != "http" || ru.Hostname() != u.Hostname() {
			continue
		}
		if ru.Path == u.Path && ru.RawQuery == u.RawQuery {
			return true
		}
	}
	return false
}

func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// oneResource accepts no resource or one absolute URI without a fragment
// (RFC 8707 §2).
func oneResource(values []string) (string, bool) {
	switch len(values) {
	case 0:
		return "", true
	case 1:
		u, err := url.Parse(values[0])
		if err != nil || !u.IsAbs() || u.Fragment != "" || strings.Contains(values[0], "#") {
			return "", false
		}
		return values[0], true
	}
	return "", false
}

func (s *Server) scopesSupported(scopes []string) bool {
	if len(s.supports) == 0 {
		return true
	}
	for _, sc := range scopes {
		if !slices.Contains(s.supports, sc) {
			return false
		}
	}
	return true
}

// oauthError writes an RFC 6749 §5.2 error response.
func oauthError(w http.ResponseWriter, status int, code, desc string) {
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Basic realm="authtest"`)
	}
	writeJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

// authenticateClient finds the client of a token or introspection request
// and checks its credentials, by the one method it used, against the
// method it registered. It writes the error response itself. With
// anonymous, a request that names no client and presents no credentials
// is let through with a nil client (the JWT bearer grant needs none).
func (s *Server) authenticateClient(w http.ResponseWriter, r *http.Request, anonymous bool) (*Client, bool) {
	id, secret, basic := r.BasicAuth()
	f := r.PostForm
	if f.Has("client_assertion") || f.Has("client_assertion_type") {
		if basic || f.Has("client_secret") {
			oauthError(w, http.StatusBadRequest, "invalid_request", "more than one client authentication method")
			return nil, false
		}
		return s.authenticateAssertion(w, r)
	}
	if anonymous && !basic && !f.Has("client_id") && !f.Has("client_secret") {
		return nil, true
	}
	if basic {
		var err1, err2 error
		id, err1 = url.QueryUnescape(id)
		secret, err2 = url.QueryUnescape(secret)
		if err1 != nil || err2 != nil {
			oauthError(w, http.StatusUnauthorized, "invalid_client", "malformed Basic credentials")
			return nil, false
		}
		if f.Has("client_secret") {
			oauthError(w, http.StatusBadRequest, "invalid_request", "more than one client authentication method")
			return nil, false
		}
		if fid := f.Get("client_id"); fid != "" && fid != id {
			oauthError(w, http.StatusBadRequest, "invalid_request", "client_id differs from the authenticated client")
			return nil, false
		}
	} else {
		id, secret = f.Get("client_id"), f.Get("client_secret")
	}
	method := AuthNone
	switch {
	case basic:
		method = AuthSecretBasic
	case f.Has("client_secret"):
		method = AuthSecretPost
	}
	c, ok := s.clients[id]
	if !ok || c.AuthMethod != method ||
		(method != AuthNone && subtle.ConstantTimeCompare([]byte(secret), []byte(c.Secret)) != 1) {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "client authentication failed")
		return nil, false
	}
	return c, true
}

func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body is not a form")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	f := r.PostForm
	grantType := f.Get("grant_type")
	c, ok := s.authenticateClient(w, r, grantType == grantJWTBearer || grantType == grantTokenExchange)
	if !ok {
		return
	}
	jkt, ok := s.checkDPoPLocked(w, r)
	if !ok {
		return
	}
	resource, ok := oneResource(f["resource"])
	if !ok {
		oauthError(w, http.StatusBadRequest, "invalid_target", "resource must be one absolute URI without a fragment")
		return
	}
	var subject string
	var scopes []string
	var bindRefresh string // the key a public client's refresh token is bound to
	issueRefresh := true
	switch grantType {
	case "authorization_code":
		code, ok := s.codes[f.Get("code")]
		delete(s.codes, f.Get("code")) // single use, whatever happens next
		switch {
		case c == nil || !ok || code.clientID != c.ID || !s.now().Before(code.expires):
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown, used or expired code, or another client's")
			return
		case code.redirectURI != f.Get("redirect_uri"):
			oauthError(w, http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the authorization request's")
			return
		case !pkceMatches(f.Get("code_verifier"), code.challenge):
			oauthError(w, http.StatusBadRequest, "invalid_grant", "code_verifier does not match code_challenge")
			return
		case resource != "" && code.resource != "" && resource != code.resource:
			oauthError(w, http.StatusBadRequest, "invalid_target", "resource differs from the authorization request's")
			return
		}
		if resource == "" {
			resource = code.resource
		}
		subject, scopes = code.subject, code.scopes
		if c.AuthMethod == AuthNone {
			bindRefresh = jkt
		}
	case "refresh_token":
		g, ok := s.refresh[f.Get("refresh_token")]
		if c == nil || !ok || g.clientID != c.ID {
			oauthError(w, http.StatusBadRequest, "invalid_grant", "unknown refresh token, or another client's")
			return
		}
		if g.jkt != "" && g.jkt != jkt {
			// RFC 9449 section 5: a public client's refresh token is
			// bound to the key it was issued with.
			oauthError(w, http.StatusBadRequest, "invalid_grant", "the refresh token is bound to another DPoP key")
			return
		}
		if resource != "" && g.resource != "" && resource != g.resource {
			oauthError(w, http.StatusBadRequest, "invalid_target", "resource differs from the original grant's")
			return
		}
		scopes = g.scopes
		if f.Has("scope") {
			scopes = strings.Fields(f.Get("scope"))
			for _, sc := range scopes {
				if !slices.Contains(g.scopes, sc) {
					oauthError(w, http.StatusBadRequest, "invalid_scope", "scope "+sc+" was not granted originally")
					return
				}
			}
		}
		delete(s.refresh, f.Get("refresh_token")) // rotated
		resource, subject, bindRefresh = g.resource, g.subject, g.jkt
	case grantClientCredentials:
		if c == nil || c.AuthMethod == AuthNone {
			oauthError(w, http.StatusUnauthorized, "invalid_client", "the client credentials grant is for confidential clients")
			return
		}
		if scopes, ok = s.requestedScopes(w, f); !ok {
			return
		}
		subject, issueRefresh = c.ID, false // RFC 6749 section 4.4.3
	case grantJWTBearer:
		if subject, scopes, resource, ok = s.jwtBearerLocked(w, f, c, resource); !ok {
			return
		}
		issueRefresh = false
	case grantTokenExchange:
		s.tokenExchangeLocked(w, f, c, resource)
		return
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code, refresh_token, client_credentials, "+grantJWTBearer+" or "+grantTokenExchange)
		return
	}
	clientID := ""
	if c != nil {
		clientID = c.ID
	}
	access, err := s.issueLocked(Grant{Subject: subject, ClientID: clientID, Resource: resource, Scopes: scopes, KeyThumbprint: jkt})
	if err != nil {
		oauthError(w, http.StatusInternalServerError, "server_error", err.Error())
		return
	}
	resp := map[string]any{
		"access_token": access,
		"token_type":   "Bearer",
		"expires_in":   int64(s.ttl / time.Second),
	}
	if jkt != "" {
		resp["token_type"] = "DPoP"
	}
	if issueRefresh && c != nil {
		refresh := randomString(32)
		s.refresh[refresh] = &refreshGrant{clientID: c.ID, resource: resource, subject: subject, scopes: scopes, jkt: bindRefresh}
		resp["refresh_token"] = refresh
	}
	if len(scopes) > 0 {
		resp["scope"] = strings.Join(scopes, " ")
	}
	writeJSON(w, http.StatusOK, resp)
}

// requestedScopes reads the scope parameter of a grant without a prior
// authorization, refusing scopes the server does not support.
func (s *Server) requestedScopes(w http.ResponseWriter, f url.Values) ([]string, bool) {
	scopes := strings.Fields(f.Get("scope"))
	if !s.scopesSupported(scopes) {
		oauthError(w, http.StatusBadRequest, "invalid_scope", "a requested scope is not supported")
		return nil, false
	}
	return scopes, true
}

// pkceMatches checks a code_verifier (RFC 7636 §4.1: 43 to 128 unreserved
// characters) against an S256 challenge.
func pkceMatches(verifier, challenge string) bool {
	if len(verifier) < 43 || len(verifier) > 128 {
		return false
	}
	for i := 0; i < len(verifier); i++ {
		c := verifier[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("-._~", c) >= 0) {
			return false
		}
	}
	sum := sha256.Sum256([]byte(verifier))
	return subtle.ConstantTimeCompare([]byte(base64.RawURLEncoding.EncodeToString(sum[:])), []byte(challenge)) == 1
}

// registration is the client metadata of RFC 7591 §2 the server reads.
type registration struct {
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
	GrantTypes              []string `json:"grant_types"`
	ResponseTypes           []string `json:"response_types"`
	ClientName              string   `json:"client_name"`
	Scope                   string   `json:"scope"`
}

func (s *Server) serveRegister(w http.ResponseWriter, r *http.Request) {
	var reg registration
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10)).Decode(&reg); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "the body is not client metadata: "+err.Error())
		return
	}
	if reg.TokenEndpointAuthMethod == "" {
		reg.TokenEndpointAuthMethod = AuthSecretBasic // RFC 7591 §2
	}
	if len(reg.GrantTypes) == 0 {
		reg.GrantTypes = []string{"authorization_code"}
	}
	if len(reg.ResponseTypes) == 0 {
		reg.ResponseTypes = []string{"code"}
	}
	switch reg.TokenEndpointAuthMethod {
	case AuthSecretBasic, AuthSecretPost, AuthNone:
	default:
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "unsupported token_endpoint_auth_method")
		return
	}
	for _, g := range reg.GrantTypes {
		if g != "authorization_code" && g != "refresh_token" {
			oauthError(w, http.StatusBadRequest, "invalid_client_metadata", "unsupported grant type "+g)
			return
		}
	}
	if slices.Contains(reg.GrantTypes, "authorization_code") && len(reg.RedirectURIs) == 0 {
		oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", "redirect_uris is required for the authorization_code grant")
		return
	}
	for _, u := range reg.RedirectURIs {
		p, err := url.Parse(u)
		if err != nil || !p.IsAbs() || p.Fragment != "" || strings.Contains(u, "#") {
			oauthError(w, http.StatusBadRequest, "invalid_redirect_uri", "not an absolute URI without a fragment: "+u)
			return
		}
	}
	c := s.RegisterClient(Client{RedirectURIs: reg.RedirectURIs, AuthMethod: reg.TokenEndpointAuthMethod, Name: reg.ClientName})
	s.mu.Lock()
	issued := s.now().Unix()
	s.mu.Unlock()
	resp := map[string]any{
		"client_id":                  c.ID,
		"client_id_issued_at":        issued,
		"redirect_uris":              c.RedirectURIs,
		"token_endpoint_auth_method": c.AuthMethod,
		"grant_types":                reg.GrantTypes,
		"response_types":             reg.ResponseTypes,
	}
	if c.Secret != "" {
		resp["client_secret"] = c.Secret
		resp["client_secret_expires_at"] = 0
	}
	if reg.ClientName != "" {
		resp["client_name"] = reg.ClientName
	}
	if reg.Scope != "" {
		resp["scope"] = reg.Scope
	}
	writeJSON(w, http.StatusCreated, resp)
}

func (s *Server) serveIntrospect(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the body is not a form")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.authenticateClient(w, r, false)
	if !ok {
		return
	}
	if c.AuthMethod == AuthNone {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "public clients may not introspect")
		return
	}
	claims := s.verifyLocked(r.PostForm.Get("token"))
	if claims == nil {
		writeJSON(w, http.StatusOK, map[string]bool{"active": false})
		return
	}
	resp := map[string]any{"active": true, "token_type": "Bearer"}
	if _, bound := claims["cnf"]; bound {
		resp["token_type"] = "DPoP" // RFC 9449 section 6.2
	}
	for _, k := range []string{"iss", "sub", "aud", "client_id", "scope", "exp", "iat", "nbf", "jti", "cnf"} {
		if v, ok := claims[k]; ok {
			resp[k] = v
		}
	}
	writeJSON(w, http.StatusOK, resp)
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, fmt.Sprintf("authtest: %v", err), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(b)
}

func randomString(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}
