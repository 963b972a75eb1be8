package oauthclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// EnterpriseManaged is enterprise-managed authorization (the MCP extension
// io.modelcontextprotocol/enterprise-managed-authorization, an application
// of the identity assertion authorization grant): the company's identity
// provider decides which MCP servers an employee's client may use, and no
// consent screen is shown.
//
// It takes two steps for every token:
//
//  1. Token exchange (RFC 8693) at the identity provider: the user's
//     identity assertion (the ID token the host got when the user signed in
//     to it, single sign-on) is exchanged for an identity assertion JWT
//     authorization grant (ID-JAG) whose audience is the MCP server's
//     authorization server and whose resource is the MCP server. The
//     identity provider applies the company's policy here and may refuse.
//  2. The JWT bearer grant (RFC 7523) at the MCP server's authorization
//     server, presenting the ID-JAG, authenticated as the client registered
//     there (Config.PreRegistered: enterprise deployments register clients
//     out of band).
//
// A host that talks to its identity provider in its own way sets Exchange
// and does step 1 itself; IdentityToken then brings the user's assertion
// and the rest is left alone.
type EnterpriseManaged struct {
	// IdentityToken returns the signed-in user's identity assertion, an
	// OpenID Connect ID token (or a SAML assertion, with
	// IdentityTokenType). It is called for every token, so it may refresh
	// the user's sign-in first. Required unless Exchange is set.
	IdentityToken func(ctx context.Context) (string, error)
	// IdentityTokenType is the subject_token_type of the exchange:
	// [TokenTypeIDToken] (the default) or [TokenTypeSAML2].
	IdentityTokenType string
	// IdPTokenEndpoint is the identity provider's token endpoint, where the
	// exchange is sent: https, or http to a loopback host. Required unless
	// Exchange is set.
	IdPTokenEndpoint string
	// IdPIssuer is the identity provider's issuer identifier: the audience
	// of a client assertion when IdPClient has a Key. Empty: the token
	// endpoint's URL (RFC 7523 section 3 allows either).
	IdPIssuer string
	// IdPClient is the client's registration with the identity provider
	// (the one it signs users in with), which authenticates the exchange
	// as the ClientInfo says: a secret (client_secret_basic or _post), a
	// Key (private_key_jwt), or only a client_id. Nil: the exchange is
	// sent without client authentication.
	IdPClient *ClientInfo
	// Exchange, when set, replaces step 1: it returns the ID-JAG for r (for
	// the authorization server r.Server.Issuer and the resource
	// r.Resource, with r.Scopes).
	Exchange func(ctx context.Context, r *GrantRequest) (string, error)
	// Now is the clock of client assertions. Default: time.Now.
	Now func() time.Time
}

// TokenParams implements [Grant]: the token exchange, then the JWT bearer
// grant's parameters with the ID-JAG.
func (g *EnterpriseManaged) TokenParams(ctx context.Context, r *GrantRequest) (url.Values, error) {
	if r.Client == nil || r.Client.ClientID == "" {
		// The ID-JAG names the client it was issued to, and the
		// authorization server compares that with the client that
		// presents it: a client of its own is needed.
		return nil, &RegistrationError{Issuer: r.Server.Issuer, Reason: "enterprise-managed authorization needs the client registered with the MCP server's authorization server (Config.PreRegistered)"}
	}
	jag, err := g.exchange(ctx, r)
	if err != nil {
		return nil, err
	}
	return (&JWTBearer{Assertion: func(context.Context, *GrantRequest) (string, error) { return jag, nil }}).TokenParams(ctx, r)
}

// exchangeResponse is an RFC 8693 section 2.2.1 token exchange response.
type exchangeResponse struct {
	AccessToken     string `json:"access_token"`
	IssuedTokenType string `json:"issued_token_type"`
	TokenType       string `json:"token_type"`
}

// exchange runs step 1: the ID-JAG for r.
func (g *EnterpriseManaged) exchange(ctx context.Context, r *GrantRequest) (string, error) {
	if g.Exchange != nil {
		return g.Exchange(ctx, r)
	}
	if g.IdentityToken == nil || g.IdPTokenEndpoint == "" {
		return "", errors.New("oauthclient: EnterpriseManaged needs IdentityToken and IdPTokenEndpoint, or Exchange")
	}
	if err := requireSecure(g.IdPTokenEndpoint, "identity provider token_endpoint"); err != nil {
		return "", err
	}
	subject, err := g.IdentityToken(ctx)
	if err != nil {
		return "", fmt.Errorf("oauthclient: the user's identity assertion: %w", err)
	}
	if subject == "" {
		return "", errors.New("oauthclient: the user's identity assertion is empty")
	}
	subjectType := g.IdentityTokenType
	if subjectType == "" {
		subjectType = TokenTypeIDToken
	}
	form := url.Values{
		"grant_type":           {GrantTokenExchange},
		"requested_token_type": {TokenTypeIDJAG},
		"audience":             {r.Server.Issuer},
		"resource":             {r.Resource},
		"subject_token":        {subject},
		"subject_token_type":   {subjectType},
	}
	if len(r.Scopes) > 0 {
		form.Set("scope", strings.Join(r.Scopes, " "))
	}
	now := time.Now
	if g.Now != nil {
		now = g.Now
	}
	audience := g.IdPIssuer
	if audience == "" {
		audience = g.IdPTokenEndpoint
	}
	req, err := clientRequest(ctx, g.IdPTokenEndpoint, form, g.IdPClient, audience, now(), nil)
	if err != nil {
		return "", err
	}
	hc := r.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := guardRedirects(hc, "identity provider token_endpoint", secureURL).Do(req)
	if err != nil {
		return "", fmt.Errorf("oauthclient: token exchange: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxMetadataSize))
	if err != nil {
		return "", fmt.Errorf("oauthclient: token exchange response: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return "", retrieveError(resp, body)
	}
	var er exchangeResponse
	if err := json.Unmarshal(body, &er); err != nil {
		return "", fmt.Errorf("oauthclient: token exchange response: %w", err)
	}
	if er.IssuedTokenType != TokenTypeIDJAG {
		return "", fmt.Errorf("oauthclient: the identity provider issued a token of type %q, not an ID-JAG (%s)", er.IssuedTokenType, TokenTypeIDJAG)
	}
	if er.AccessToken == "" {
		return "", errors.New("oauthclient: the token exchange response has no access_token (the ID-JAG)")
	}
	return er.AccessToken, nil
}
