package oauthclient

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/oauth2"
)

// Token endpoint client authentication methods (RFC 7591 section 2).
const (
	AuthMethodBasic = "client_secret_basic"
	AuthMethodPost  = "client_secret_post"
	AuthMethodNone  = "none"
	// AuthMethodPrivateKeyJWT: a client assertion signed with the
	// client's private key (RFC 7523 section 2.2), ClientInfo.Key.
	AuthMethodPrivateKeyJWT = "private_key_jwt"
)

// offlineAccess is the scope that asks for a refresh token (OpenID Connect
// Core section 11; SEP-2207).
const offlineAccess = "offline_access"

// selectScopes picks the scopes of an authorization request, in the order
// of the MCP scope selection strategy: the challenge's scope parameter,
// else the protected resource's scopes_supported, else none (the scope
// parameter is then omitted). Scopes requested before for the same
// resource are kept (the union, SEP-2350), so a step-up does not lose what
// the first authorization was for. offline_access is added when the
// authorization server lists it and some scope is requested anyway: asking
// for offline_access alone would replace the server's default scope.
func selectScopes(challengeScope string, prm *ResourceMetadata, prev []string, asm *ServerMetadata) []string {
	var want []string
	if fs := strings.Fields(challengeScope); len(fs) > 0 {
		want = fs
	} else if prm != nil {
		want = prm.ScopesSupported
	}
	out := slices.Clone(prev)
	for _, s := range want {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	if len(out) > 0 && asm != nil && slices.Contains(asm.ScopesSupported, offlineAccess) && !slices.Contains(out, offlineAccess) {
		out = append(out, offlineAccess)
	}
	return out
}

// registrationAuthMethod is the token endpoint auth method to ask for at
// dynamic registration: "none" when the server takes it (a native client
// cannot keep a secret anyway), else what it supports.
func registrationAuthMethod(asm *ServerMetadata) string {
	supported := asm.TokenEndpointAuthMethodsSupported
	if len(supported) == 0 {
		return AuthMethodBasic // RFC 8414's default
	}
	for _, m := range []string{AuthMethodNone, AuthMethodBasic, AuthMethodPost} {
		if slices.Contains(supported, m) {
			return m
		}
	}
	return AuthMethodBasic
}

// tokenAuthMethod is how client authenticates at asm's token endpoint:
// what its registration says, else private_key_jwt for a client with a
// key, else "none" for a client without a secret,
// else client_secret_basic or client_secret_post, whichever the server
// supports (basic first, as RFC 6749 section 2.3.1 requires servers to
// support it).
func tokenAuthMethod(c *ClientInfo, asm *ServerMetadata) string {
	if c == nil {
		return "" // no client: no client authentication, no client_id
	}
	if c.TokenEndpointAuthMethod != "" {
		return c.TokenEndpointAuthMethod
	}
	if c.Key != nil {
		return AuthMethodPrivateKeyJWT
	}
	if c.ClientSecret == "" {
		return AuthMethodNone
	}
	if asm == nil {
		return AuthMethodBasic
	}
	supported := asm.TokenEndpointAuthMethodsSupported
	if len(supported) == 0 || slices.Contains(supported, AuthMethodBasic) {
		return AuthMethodBasic
	}
	if slices.Contains(supported, AuthMethodPost) {
		return AuthMethodPost
	}
	return AuthMethodBasic
}

// register performs dynamic client registration (RFC 7591) at asm.
func (t *Transport) register(ctx context.Context, asm *ServerMetadata) (*ClientInfo, error) {
	method := registrationAuthMethod(asm)
	md := map[string]any{
		"client_name":                t.cfg.ClientName,
		"redirect_uris":              []string{t.cfg.Authorizer.RedirectURI()},
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
		"token_endpoint_auth_method": method,
		"application_type":           t.cfg.ApplicationType,
	}
	body, err := json.Marshal(md)
	if err != nil {
		return nil, err
	}
	fail := func(reason string, err error) error {
		return &RegistrationError{Issuer: asm.Issuer, Reason: reason, Err: err}
	}
	if err := requireSecure(asm.RegistrationEndpoint, "registration_endpoint"); err != nil {
		return nil, fail("", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, asm.RegistrationEndpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fail("", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	resp, err := guardRedirects(t.cfg.HTTPClient, "registration_endpoint", secureURL).Do(req)
	if err != nil {
		return nil, fail("", err)
	}
	defer resp.Body.Close()
	rb, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataSize))
	if err != nil {
		return nil, fail("", err)
	}
	if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
		return nil, fail("", &HTTPError{URL: asm.RegistrationEndpoint, StatusCode: resp.StatusCode, Body: snippet(rb)})
	}
	var ci ClientInfo
	if err := json.Unmarshal(rb, &ci); err != nil {
		return nil, fail("the response is not client information", err)
	}
	if ci.ClientID == "" {
		return nil, fail("the response has no client_id", nil)
	}
	if ci.TokenEndpointAuthMethod == "" && ci.ClientSecret == "" {
		ci.TokenEndpointAuthMethod = AuthMethodNone
	}
	ci.RedirectURI = t.cfg.Authorizer.RedirectURI()
	return &ci, nil
}

// clientFor returns the client registration to use with asm, in the order
// the MCP authorization spec prefers: a pre-registered client, the one
// registered before (creds), a client ID metadata document, dynamic
// registration.
func (t *Transport) clientFor(ctx context.Context, asm *ServerMetadata, creds *Credentials) (*ClientInfo, error) {
	if t.cfg.PreRegistered != nil {
		if c := t.cfg.PreRegistered(asm.Issuer); c != nil && c.ClientID != "" {
			cc := *c
			return &cc, nil
		}
	}
	if creds.Client != nil && creds.Client.ClientID != "" {
		return creds.Client, nil
	}
	if asm.ClientIDMetadataDocumentSupported && t.cfg.ClientIDMetadataURL != "" {
		return &ClientInfo{ClientID: t.cfg.ClientIDMetadataURL, TokenEndpointAuthMethod: AuthMethodNone}, nil
	}
	if asm.RegistrationEndpoint != "" {
		return t.register(ctx, asm)
	}
	return nil, &RegistrationError{Issuer: asm.Issuer, Reason: "it supports neither client ID metadata documents (or Config.ClientIDMetadataURL is empty) nor dynamic registration, and Config.PreRegistered has no client for it"}
}

// authorizeCode runs the authorization code flow with PKCE and redeems the
// code. It checks the authorization response (iss, then state) before it
// sends the code anywhere.
func (t *Transport) authorizeCode(ctx context.Context, asm *ServerMetadata, client *ClientInfo, resource string, scopes []string) (*oauth2.Token, error) {
	verifier := oauth2.GenerateVerifier()
	state := rand.Text()
	conf := oauth2.Config{
		ClientID:    client.ClientID,
		Endpoint:    oauth2.Endpoint{AuthURL: asm.AuthorizationEndpoint},
		RedirectURL: t.cfg.Authorizer.RedirectURI(),
		Scopes:      scopes,
	}
	authURL := conf.AuthCodeURL(state, oauth2.S256ChallengeOption(verifier), oauth2.SetAuthURLParam("resource", resource))
	q, err := t.cfg.Authorizer.Authorize(ctx, authURL)
	if err != nil {
		return nil, err
	}
	code, err := checkAuthorizationResponse(q, state, asm)
	if err != nil {
		return nil, err
	}
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {code},
		"redirect_uri":  {conf.RedirectURL},
		"code_verifier": {verifier},
		"resource":      {resource},
	}
	return t.tokenRequest(ctx, asm, client, form, nil)
}

// checkAuthorizationResponse validates the redirect's parameters q and
// returns the authorization code. RFC 9207: when the server advertises
// authorization_response_iss_parameter_supported, iss must be present; when
// present (advertised or not) it must equal the issuer exactly, by simple
// string comparison with no URL normalization. Then state must be the one
// sent. Only then is an error response reported as such, or the code
// returned.
func checkAuthorizationResponse(q url.Values, state string, asm *ServerMetadata) (string, error) {
	iss, hasIss := q["iss"]
	switch {
	case hasIss && (len(iss) != 1 || iss[0] != asm.Issuer):
		return "", &IssuerMismatchError{Where: "authorization response", Expected: asm.Issuer, Got: strings.Join(iss, ",")}
	case !hasIss && asm.AuthorizationResponseIssParameterSupported:
		return "", &IssuerMismatchError{Where: "authorization response", Expected: asm.Issuer, Missing: true}
	}
	if got := q.Get("state"); subtle.ConstantTimeCompare([]byte(got), []byte(state)) != 1 {
		return "", ErrStateMismatch
	}
	if e := q.Get("error"); e != "" {
		return "", &AuthorizationError{Code: e, Description: q.Get("error_description"), URI: q.Get("error_uri")}
	}
	code := q.Get("code")
	if code == "" {
		return "", fmt.Errorf("oauthclient: the authorization response has neither code nor error")
	}
	return code, nil
}

// refresh redeems a refresh token. The resource parameter goes along (RFC
// 8707 section 2.2), which x/oauth2's TokenSource cannot send: hence the
// package's own token request.
func (t *Transport) refresh(ctx context.Context, asm *ServerMetadata, client *ClientInfo, resource string, old *oauth2.Token) (*oauth2.Token, error) {
	form := url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {old.RefreshToken},
		"resource":      {resource},
	}
	return t.tokenRequest(ctx, asm, client, form, old)
}

// maxLifetime caps the expires_in of a token response.
const maxLifetime = 10 * 365 * 24 * time.Hour

// tokenResponse is a successful token response (RFC 6749 section 5.1).
type tokenResponse struct {
	AccessToken  string          `json:"access_token"`
	TokenType    string          `json:"token_type"`
	RefreshToken string          `json:"refresh_token"`
	ExpiresIn    json.RawMessage `json:"expires_in"`
	Scope        string          `json:"scope"`
}

// tokenRequest posts form to asm's token endpoint, authenticated as client
// (nil: no client authentication), with a DPoP proof when the transport
// has a key the server takes. A refresh that returns no new refresh token
// keeps old's.
func (t *Transport) tokenRequest(ctx context.Context, asm *ServerMetadata, client *ClientInfo, form url.Values, old *oauth2.Token) (*oauth2.Token, error) {
	var alg jose.SignatureAlgorithm
	if p := t.dpop; p != nil {
		var ok bool
		if alg, ok = p.algorithmFor(asm); !ok && p.required {
			return nil, fmt.Errorf("%w: %s takes DPoP proofs signed with %q, which the key cannot make", ErrDPoPUnsupported, asm.Issuer, asm.DPoPSigningAlgValuesSupported)
		}
	}
	endpoint, _ := url.Parse(asm.TokenEndpoint) // checked by discoverServer
	target := htu(endpoint)
	// Tried twice at most: once more when the server asks for a DPoP
	// nonce (RFC 9449 section 8). Each attempt is authenticated and
	// proven anew: a client assertion or proof is for one request.
	for attempt := 0; ; attempt++ {
		req, err := t.newTokenRequest(ctx, asm, client, form)
		if err != nil {
			return nil, err
		}
		proven := false
		if alg != "" {
			proof, err := t.dpop.proof(alg, http.MethodPost, target, "")
			if err != nil {
				return nil, err
			}
			req.Header.Set("DPoP", proof)
			proven = true
		}
		resp, err := guardRedirects(t.cfg.HTTPClient, "token_endpoint", secureURL).Do(req)
		if err != nil {
			return nil, fmt.Errorf("oauthclient: token request: %w", err)
		}
		body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataSize))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("oauthclient: token response: %w", err)
		}
		nonce := proven && t.dpop.remember(target, resp.Header)
		if resp.StatusCode != http.StatusOK {
			re := retrieveError(resp, body)
			if re.ErrorCode == "use_dpop_nonce" && nonce && attempt == 0 {
				continue
			}
			return nil, re
		}
		return t.readToken(resp, body, proven, old)
	}
}

// newTokenRequest builds a token request of form to asm, authenticated as
// client.
func (t *Transport) newTokenRequest(ctx context.Context, asm *ServerMetadata, client *ClientInfo, form url.Values) (*http.Request, error) {
	return clientRequest(ctx, asm.TokenEndpoint, form, client, asm.Issuer, t.cfg.Now(), asm)
}

// clientRequest builds a POST of form to a token endpoint, authenticated as
// client (nil: not at all) by the method tokenAuthMethod picks; audience is
// the server's identifier, for a client assertion. asm, the server's
// metadata, may be nil when it is not known.
func clientRequest(ctx context.Context, endpoint string, form url.Values, client *ClientInfo, audience string, now time.Time, asm *ServerMetadata) (*http.Request, error) {
	f := url.Values{}
	for k, v := range form {
		f[k] = v
	}
	method := tokenAuthMethod(client, asm)
	switch method {
	case "":
	case AuthMethodPost:
		f.Set("client_id", client.ClientID)
		f.Set("client_secret", client.ClientSecret)
	case AuthMethodNone:
		f.Set("client_id", client.ClientID)
	case AuthMethodBasic:
	case AuthMethodPrivateKeyJWT:
		if client.Key == nil {
			return nil, fmt.Errorf("oauthclient: client %s authenticates with private_key_jwt but has no ClientInfo.Key", client.ClientID)
		}
		var algs []string
		if asm != nil {
			algs = asm.TokenEndpointAuthSigningAlgValuesSupported
		}
		a, err := clientAssertion(client, audience, now, algs)
		if err != nil {
			return nil, err
		}
		// RFC 7523 section 3: the client is the assertion's subject; no
		// client_id is needed, and none is sent.
		f.Set("client_assertion_type", ClientAssertionType)
		f.Set("client_assertion", a)
	default:
		return nil, fmt.Errorf("oauthclient: token endpoint auth method %q is not supported", method)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, strings.NewReader(f.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if method == AuthMethodBasic {
		// RFC 6749 section 2.3.1: both are form-encoded before Basic.
		req.SetBasicAuth(url.QueryEscape(client.ClientID), url.QueryEscape(client.ClientSecret))
	}
	return req, nil
}

// retrieveError is the *oauth2.RetrieveError of an error response (RFC 6749
// section 5.2).
func retrieveError(resp *http.Response, body []byte) *oauth2.RetrieveError {
	re := &oauth2.RetrieveError{Response: resp, Body: body}
	var e struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
		URI         string `json:"error_uri"`
	}
	if json.Unmarshal(body, &e) == nil {
		re.ErrorCode, re.ErrorDescription, re.ErrorURI = e.Error, e.Description, e.URI
	}
	return re
}

// readToken reads a successful token response. proven: the request
// carried a DPoP proof, so a DPoP-bound token may come back (and, with
// DPoP.Required, must).
func (t *Transport) readToken(resp *http.Response, body []byte, proven bool, old *oauth2.Token) (*oauth2.Token, error) {
	if ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); ct != "" && ct != "application/json" {
		return nil, fmt.Errorf("oauthclient: token response is %s, not JSON", ct)
	}
	var tr tokenResponse
	if err := json.Unmarshal(body, &tr); err != nil {
		return nil, fmt.Errorf("oauthclient: token response: %w", err)
	}
	if tr.AccessToken == "" {
		return nil, fmt.Errorf("oauthclient: token response has no access_token")
	}
	tokenType := "Bearer"
	switch {
	case tr.TokenType == "" || strings.EqualFold(tr.TokenType, "Bearer"):
		if proven && t.dpop.required {
			return nil, fmt.Errorf("%w: the authorization server answered a token request with a DPoP proof with a bearer token", ErrDPoPUnsupported)
		}
	case strings.EqualFold(tr.TokenType, "DPoP") && proven:
		tokenType = "DPoP"
	case strings.EqualFold(tr.TokenType, "DPoP"):
		return nil, fmt.Errorf("oauthclient: token type DPoP for a request that carried no DPoP proof (set Config.DPoP)")
	default:
		return nil, fmt.Errorf("oauthclient: token type %q is not supported (only Bearer and DPoP)", tr.TokenType)
	}
	tok := &oauth2.Token{AccessToken: tr.AccessToken, TokenType: tokenType, RefreshToken: tr.RefreshToken}
	// A lifetime beyond maxLifetime is taken as maxLifetime: the
	// Duration arithmetic must not overflow into the past.
	if secs, ok := expiresIn(tr.ExpiresIn); ok && secs > 0 {
		secs = min(secs, int64(maxLifetime/time.Second))
		tok.Expiry = t.cfg.Now().Add(time.Duration(secs) * time.Second)
		tok.ExpiresIn = secs
	}
	if tok.RefreshToken == "" && old != nil {
		tok.RefreshToken = old.RefreshToken
	}
	if tr.Scope != "" {
		tok = tok.WithExtra(map[string]any{"scope": tr.Scope})
	}
	return tok, nil
}

// expiresIn reads expires_in, which some servers send as a string.
func expiresIn(raw json.RawMessage) (int64, bool) {
	if len(raw) == 0 {
		return 0, false
	}
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0, false
		}
		n = json.Number(s)
	}
	v, err := n.Int64()
	return v, err == nil
}
