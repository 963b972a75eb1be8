package authtest

import (
	"crypto"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// Grant types and token types the token endpoint knows beyond the
// authorization code and refresh token.
const (
	grantClientCredentials = "client_credentials"
	grantJWTBearer         = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	grantTokenExchange     = "urn:ietf:params:oauth:grant-type:token-exchange"
	clientAssertionType    = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
	tokenTypeIDToken       = "urn:ietf:params:oauth:token-type:id_token"
	tokenTypeIDJAG         = "urn:ietf:params:oauth:token-type:id-jag"
	typIDJAG               = "oauth-id-jag+jwt"
)

// assertionAlgs are the algorithms client assertions, JWT bearer
// assertions and DPoP proofs may be signed with.
var assertionAlgs = []jose.SignatureAlgorithm{jose.ES256, jose.ES384, jose.ES512, jose.RS256, jose.PS256, jose.EdDSA}

func algNames(algs []jose.SignatureAlgorithm) []string {
	out := make([]string, len(algs))
	for i, a := range algs {
		out[i] = string(a)
	}
	return out
}

// assertionLifetime bounds how far in the future an assertion's exp may
// be, and idJAGTTL is the lifetime of the ID-JAGs the server issues.
const (
	assertionLifetime = time.Hour
	idJAGTTL          = 5 * time.Minute
	idTokenTTL        = time.Hour
	// proofWindow is how far a DPoP proof's iat may be from the
	// server's clock, either way.
	proofWindow = 5 * time.Minute
)

// TrustIssuer makes the JWT bearer grant accept assertions that issuer
// signed with key: a workload platform's tokens (workload identity
// federation), or an enterprise identity provider's ID-JAGs (another
// Server's [Server.Issuer] and [Server.PublicKey]). It may be called
// again with more keys of the same issuer.
func (s *Server) TrustIssuer(issuer string, key crypto.PublicKey) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.trusted[issuer] = append(s.trusted[issuer], key)
}

// PublicKey returns the public half of the key the server signs with now.
func (s *Server) PublicKey() crypto.PublicKey {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.keys[len(s.keys)-1].signer.Public()
}

// IssueIDToken signs an OpenID Connect ID token for subject, issued to the
// client audience, as the server would at single sign-on: the identity
// assertion a client exchanges for an ID-JAG.
func (s *Server) IssueIDToken(subject, audience string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	tok, err := s.signLocked("JWT", map[string]any{
		"iss": s.srv.URL, "sub": subject, "aud": audience,
		"iat": now.Unix(), "exp": now.Add(idTokenTTL).Unix(), "jti": randomString(16),
	})
	if err != nil {
		panic("authtest: signing an ID token: " + err.Error())
	}
	return tok
}

// SetJAGClient sets the client_id the server, as an identity provider,
// names in the ID-JAGs it issues for audience (an authorization server's
// issuer): the client's id there, which the identity provider is told out
// of band. Without it the ID-JAG names the client that asked.
func (s *Server) SetJAGClient(audience, clientID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.jagClients[audience] = clientID
}

// DPoPNonce returns the nonce DPoP proofs must carry with
// Options.RequireDPoPNonce.
func (s *Server) DPoPNonce() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dpopNonce
}

// RotateDPoPNonce replaces the DPoP nonce: proofs with the old one are
// answered use_dpop_nonce from now on.
func (s *Server) RotateDPoPNonce() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dpopNonce = randomString(16)
}

// useJTILocked records jti (of issuer's JWTs) as used until expires, and
// reports whether it was new.
func (s *Server) useJTILocked(issuer, jti string, expires time.Time) bool {
	now := s.now()
	for k, until := range s.usedJTIs {
		if !now.Before(until) {
			delete(s.usedJTIs, k)
		}
	}
	key := issuer + "\x00" + jti
	if _, seen := s.usedJTIs[key]; seen {
		return false
	}
	s.usedJTIs[key] = expires
	return true
}

// audienceIsUs reports whether aud names this server: its issuer or its
// token endpoint (RFC 7523 section 3).
func (s *Server) audienceIsUs(aud jwt.Audience) bool {
	return aud.Contains(s.srv.URL) || aud.Contains(s.srv.URL+"/") || aud.Contains(s.TokenEndpoint())
}

// authenticateAssertion authenticates a client by private_key_jwt (RFC 7523
// section 2.2 and 3): the assertion's iss and sub are the client, its aud
// this server, it has not expired and has not been used before, and its
// signature verifies with the client's registered key.
func (s *Server) authenticateAssertion(w http.ResponseWriter, r *http.Request) (*Client, bool) {
	fail := func(desc string) (*Client, bool) {
		oauthError(w, http.StatusUnauthorized, "invalid_client", desc)
		return nil, false
	}
	f := r.PostForm
	if f.Get("client_assertion_type") != clientAssertionType {
		return fail("client_assertion_type must be " + clientAssertionType)
	}
	tok, err := jwt.ParseSigned(f.Get("client_assertion"), assertionAlgs)
	if err != nil {
		return fail("the client assertion is not a signed JWT: " + err.Error())
	}
	var unverified jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&unverified); err != nil {
		return fail("the client assertion's claims: " + err.Error())
	}
	c, ok := s.clients[unverified.Subject]
	if !ok || c.AuthMethod != AuthPrivateKeyJWT {
		return fail("unknown client, or one that does not authenticate with private_key_jwt")
	}
	var cl jwt.Claims
	if err := tok.Claims(c.PublicKey, &cl); err != nil {
		return fail("the client assertion's signature does not verify")
	}
	now := s.now()
	switch {
	case cl.Issuer != c.ID || cl.Subject != c.ID:
		return fail("the client assertion's iss and sub must be the client_id")
	case !s.audienceIsUs(cl.Audience):
		return fail("the client assertion's aud does not name this server")
	case cl.Expiry == nil || !now.Before(cl.Expiry.Time()) || cl.Expiry.Time().After(now.Add(assertionLifetime)):
		return fail("the client assertion has expired, or has no exp, or lives too long")
	case cl.ID == "" || !s.useJTILocked(c.ID, cl.ID, cl.Expiry.Time()):
		return fail("the client assertion has no jti, or was used before")
	}
	if id := f.Get("client_id"); id != "" && id != c.ID {
		oauthError(w, http.StatusBadRequest, "invalid_request", "client_id differs from the authenticated client")
		return nil, false
	}
	return c, true
}

// assertionClaims are the claims of a JWT bearer assertion the server
// reads: the registered ones, and an ID-JAG's resource and client_id.
type assertionClaims struct {
	jwt.Claims
	Resource string `json:"resource"`
	ClientID string `json:"client_id"`
	Scope    string `json:"scope"`
}

// verifyTrustedLocked verifies a JWT signed by an issuer the server trusts
// and returns its claims and typ.
func (s *Server) verifyTrustedLocked(assertion string) (*assertionClaims, string, string) {
	tok, err := jwt.ParseSigned(assertion, assertionAlgs)
	if err != nil || len(tok.Headers) != 1 {
		return nil, "", "the assertion is not a signed JWT"
	}
	var unverified jwt.Claims
	if err := tok.UnsafeClaimsWithoutVerification(&unverified); err != nil {
		return nil, "", "the assertion's claims are malformed"
	}
	var c assertionClaims
	verified := false
	for _, k := range s.trusted[unverified.Issuer] {
		if tok.Claims(k, &c) == nil {
			verified = true
			break
		}
	}
	if !verified {
		return nil, "", "the assertion is not signed by an issuer this server trusts"
	}
	typ, _ := tok.Headers[0].ExtraHeaders[jose.HeaderType].(string)
	return &c, typ, ""
}

// jwtBearerLocked runs the JWT bearer grant (RFC 7523 section 2.1): the
// assertion is signed by a trusted issuer, names this server in aud and
// has not expired. An ID-JAG (typ oauth-id-jag+jwt) must also name the
// authenticated client in client_id and the requested resource in
// resource. It returns the token's subject, scopes and resource.
func (s *Server) jwtBearerLocked(w http.ResponseWriter, f url.Values, c *Client, resource string) (string, []string, string, bool) {
	fail := func(desc string) (string, []string, string, bool) {
		oauthError(w, http.StatusBadRequest, "invalid_grant", desc)
		return "", nil, "", false
	}
	a := f.Get("assertion")
	if a == "" {
		oauthError(w, http.StatusBadRequest, "invalid_request", "the JWT bearer grant needs an assertion")
		return "", nil, "", false
	}
	cl, typ, why := s.verifyTrustedLocked(a)
	if cl == nil {
		return fail(why)
	}
	now := s.now()
	switch {
	case !s.audienceIsUs(cl.Audience):
		return fail("the assertion's aud does not name this server")
	case cl.Expiry == nil || !now.Before(cl.Expiry.Time()):
		return fail("the assertion has expired, or has no exp")
	case cl.NotBefore != nil && now.Before(cl.NotBefore.Time()):
		return fail("the assertion is not valid yet")
	case cl.Subject == "":
		return fail("the assertion has no sub")
	}
	if strings.EqualFold(typ, typIDJAG) {
		switch {
		case c == nil || cl.ClientID != c.ID:
			// The ID-JAG was issued to one client; only that one may
			// present it (enterprise-managed authorization section 5.1).
			return fail("the ID-JAG's client_id is not the authenticated client")
		case resource != "" && cl.Resource != resource:
			return fail("the ID-JAG is for another resource")
		}
		resource = cl.Resource
	}
	scopes, ok := s.requestedScopes(w, f)
	if !ok {
		return "", nil, "", false
	}
	return cl.Subject, scopes, resource, true
}

// tokenExchangeLocked is the identity provider's side of enterprise-managed
// authorization: an ID token this server issued to the requesting client is
// exchanged (RFC 8693) for an ID-JAG for the audience and resource asked.
func (s *Server) tokenExchangeLocked(w http.ResponseWriter, f url.Values, c *Client, resource string) {
	bad := func(desc string) { oauthError(w, http.StatusBadRequest, "invalid_request", desc) }
	switch {
	case f.Get("requested_token_type") != tokenTypeIDJAG:
		bad("requested_token_type must be " + tokenTypeIDJAG)
		return
	case f.Get("subject_token_type") != tokenTypeIDToken:
		bad("subject_token_type must be " + tokenTypeIDToken)
		return
	case f.Get("audience") == "" || resource == "":
		bad("audience and resource are required")
		return
	case c == nil:
		oauthError(w, http.StatusUnauthorized, "invalid_client", "the token exchange needs the client (at least its client_id)")
		return
	}
	idt := s.verifyOwnLocked(f.Get("subject_token"), "JWT")
	if idt == nil {
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the subject token is not a valid ID token of this server")
		return
	}
	if aud, _ := idt["aud"].(string); aud != c.ID {
		// Enterprise-managed authorization section 4.1: the ID token
		// must have been issued to the client that exchanges it.
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the ID token was issued to another client")
		return
	}
	audience := f.Get("audience")
	clientID := s.jagClients[audience]
	if clientID == "" {
		clientID = c.ID
	}
	now := s.now()
	claims := map[string]any{
		"iss": s.srv.URL, "sub": idt["sub"], "aud": audience, "resource": resource, "client_id": clientID,
		"jti": randomString(16), "iat": now.Unix(), "exp": now.Add(idJAGTTL).Unix(),
	}
	if sc := f.Get("scope"); sc != "" {
		claims["scope"] = sc
	}
	jag, err := s.signLocked(typIDJAG, claims)
	if err != nil {
		oauthError(w, http.StatusInternalServerError, "server_error", err.Error())
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token":      jag,
		"issued_token_type": tokenTypeIDJAG,
		"token_type":        "N_A",
		"expires_in":        int64(idJAGTTL / time.Second),
	})
}

// verifyOwnLocked checks a JWT of type typ this server signed and returns
// its claims, or nil when it is not valid (another type, bad signature,
// expired, revoked).
func (s *Server) verifyOwnLocked(token, typ string) map[string]any {
	parsed, err := jwt.ParseSigned(token, []jose.SignatureAlgorithm{s.alg})
	if err != nil || len(parsed.Headers) != 1 {
		return nil
	}
	if got, _ := parsed.Headers[0].ExtraHeaders[jose.HeaderType].(string); !strings.EqualFold(got, typ) {
		return nil
	}
	return s.verifyLocked(token)
}

// dpopClaims are the claims of a DPoP proof the token endpoint checks.
type dpopClaims struct {
	JTI   string  `json:"jti"`
	HTM   string  `json:"htm"`
	HTU   string  `json:"htu"`
	IAT   float64 `json:"iat"`
	Nonce string  `json:"nonce"`
}

// checkDPoPLocked checks the DPoP proof of a token request (RFC 9449
// section 4.3, for the token endpoint) and returns the thumbprint of its
// key, "" when the request has none. It writes the error response itself:
// 400 invalid_dpop_proof, or use_dpop_nonce with the nonce.
func (s *Server) checkDPoPLocked(w http.ResponseWriter, r *http.Request) (string, bool) {
	proofs := r.Header.Values("DPoP")
	if len(proofs) == 0 {
		return "", true
	}
	fail := func(desc string) (string, bool) {
		oauthError(w, http.StatusBadRequest, "invalid_dpop_proof", desc)
		return "", false
	}
	if len(proofs) > 1 {
		return fail("more than one DPoP header")
	}
	jws, err := jose.ParseSignedCompact(proofs[0], assertionAlgs)
	if err != nil || len(jws.Signatures) != 1 {
		return fail("the DPoP proof is not a JWS signed with an asymmetric algorithm")
	}
	h := jws.Signatures[0].Protected
	if typ, _ := h.ExtraHeaders[jose.HeaderType].(string); !strings.EqualFold(typ, "dpop+jwt") {
		return fail("the DPoP proof's typ is not dpop+jwt")
	}
	if h.JSONWebKey == nil || !h.JSONWebKey.IsPublic() || !h.JSONWebKey.Valid() {
		return fail("the DPoP proof has no public jwk")
	}
	payload, err := jws.Verify(h.JSONWebKey)
	if err != nil {
		return fail("the DPoP proof's signature does not verify with its jwk")
	}
	var c dpopClaims
	if err := json.Unmarshal(payload, &c); err != nil {
		return fail("the DPoP proof's claims are malformed")
	}
	now := s.now()
	iat := time.Unix(int64(c.IAT), 0)
	switch {
	case c.JTI == "" || c.HTM == "" || c.HTU == "" || c.IAT == 0:
		return fail("the DPoP proof lacks jti, htm, htu or iat")
	case c.HTM != http.MethodPost:
		return fail("the DPoP proof's htm is not POST")
	case strings.TrimSuffix(c.HTU, "/") != s.TokenEndpoint():
		return fail("the DPoP proof's htu is not the token endpoint")
	case iat.Before(now.Add(-proofWindow)) || iat.After(now.Add(proofWindow)):
		return fail("the DPoP proof's iat is outside the window")
	}
	if s.needNonce && subtle.ConstantTimeCompare([]byte(c.Nonce), []byte(s.dpopNonce)) != 1 {
		w.Header().Set("DPoP-Nonce", s.dpopNonce)
		oauthError(w, http.StatusBadRequest, "use_dpop_nonce", "the authorization server requires its nonce in the DPoP proof")
		return "", false
	}
	tp, err := h.JSONWebKey.Thumbprint(crypto.SHA256)
	if err != nil {
		return fail("the DPoP proof's jwk has no thumbprint")
	}
	jkt := base64.RawURLEncoding.EncodeToString(tp)
	if !s.useJTILocked("dpop:"+jkt, c.JTI, iat.Add(proofWindow)) {
		return fail("the DPoP proof was used before")
	}
	return jkt, true
}
