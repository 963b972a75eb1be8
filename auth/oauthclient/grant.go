package oauthclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
)

// Grant types of the flows with no person present.
const (
	// GrantClientCredentials is the client credentials grant (OAuth 2.1
	// section 4.2).
	GrantClientCredentials = "client_credentials"
	// GrantJWTBearer is the JWT bearer grant (RFC 7523 section 2.1).
	GrantJWTBearer = "urn:ietf:params:oauth:grant-type:jwt-bearer"
	// GrantTokenExchange is the token exchange grant (RFC 8693).
	GrantTokenExchange = "urn:ietf:params:oauth:grant-type:token-exchange"
)

// Token types of token exchange (RFC 8693 section 3) that enterprise-managed
// authorization uses.
const (
	// TokenTypeIDToken is an OpenID Connect ID token.
	TokenTypeIDToken = "urn:ietf:params:oauth:token-type:id_token"
	// TokenTypeSAML2 is a SAML 2.0 assertion, base64url-encoded.
	TokenTypeSAML2 = "urn:ietf:params:oauth:token-type:saml2"
	// TokenTypeIDJAG is an identity assertion JWT authorization grant
	// (draft-ietf-oauth-identity-assertion-authz-grant).
	TokenTypeIDJAG = "urn:ietf:params:oauth:token-type:id-jag"
)

// A Grant obtains access tokens with no person present: an agent that runs
// on its own (the client credentials grant), a workload that proves who it
// is with its platform's token, a client whose enterprise identity provider
// vouches for its user. Set it as [Config.Grant]; the transport then runs
// discovery as for the authorization code flow (the 401, the protected
// resource metadata, the authorization server metadata) and asks the grant
// for the parameters of the token request instead of sending a user to the
// authorization endpoint. No Authorizer is needed.
//
// The transport adds the resource and scope parameters, authenticates the
// client as its registration says (see [ClientInfo]), attaches a DPoP proof
// when [Config.DPoP] is set, and sends the request. A grant that fails is
// not retried with another grant: its error ends the request.
//
// [ClientCredentials], [JWTBearer], [WorkloadIdentity] and
// [EnterpriseManaged] are the grants of the MCP authorization extensions.
type Grant interface {
	// TokenParams returns the grant's parameters of a token request:
	// grant_type and whatever the grant needs (an assertion, say).
	TokenParams(ctx context.Context, r *GrantRequest) (url.Values, error)
}

// GrantRequest is what a [Grant] is told about the token request it is for.
type GrantRequest struct {
	// Server is the metadata of the MCP server's authorization server;
	// its Issuer is the audience of assertions meant for it.
	Server *ServerMetadata
	// Resource is the MCP server's resource identifier, as its protected
	// resource metadata names it.
	Resource string
	// Scopes are the scopes the transport will request.
	Scopes []string
	// Client is the client's registration with Server: what
	// Config.PreRegistered returned for its issuer, or nil.
	Client *ClientInfo
	// HTTPClient is the client the transport sends its own requests with,
	// for a grant that makes requests of its own.
	HTTPClient *http.Client
}

// ClientCredentials is the client credentials grant (OAuth 2.1 section 4.2,
// the MCP extension io.modelcontextprotocol/oauth-client-credentials): the
// client authenticates as itself and gets a token for itself, for agents
// that run with no person.
//
// The client must be registered with the authorization server out of band:
// [Config.PreRegistered] returns it, with a ClientSecret (sent as
// client_secret_basic, or client_secret_post when the server supports only
// that) or a Key (private_key_jwt: a signed client assertion, RFC 7523
// section 2.2, which the extension recommends).
type ClientCredentials struct{}

// TokenParams implements [Grant].
func (ClientCredentials) TokenParams(_ context.Context, r *GrantRequest) (url.Values, error) {
	if r.Client == nil || r.Client.ClientID == "" {
		return nil, &RegistrationError{Issuer: r.Server.Issuer, Reason: "the client credentials grant needs a client registered out of band (Config.PreRegistered)"}
	}
	if r.Client.ClientSecret == "" && r.Client.Key == nil {
		return nil, &RegistrationError{Issuer: r.Server.Issuer, Reason: "the client credentials grant needs the client's secret or private key (ClientInfo.ClientSecret or ClientInfo.Key)"}
	}
	return url.Values{"grant_type": {GrantClientCredentials}}, nil
}

// JWTBearer is the JWT bearer authorization grant (RFC 7523 section 2.1):
// the client presents a JWT that someone the authorization server trusts
// issued, and gets a token for its subject. [WorkloadIdentity] and
// [EnterpriseManaged] are the two uses MCP defines; JWTBearer is for an
// assertion from anywhere else.
type JWTBearer struct {
	// Assertion returns the JWT to present. It is called for every token
	// request, so it may return a fresh one each time. Required.
	Assertion func(ctx context.Context, r *GrantRequest) (string, error)
}

// TokenParams implements [Grant].
func (g *JWTBearer) TokenParams(ctx context.Context, r *GrantRequest) (url.Values, error) {
	if g.Assertion == nil {
		return nil, errors.New("oauthclient: JWTBearer.Assertion is nil")
	}
	a, err := g.Assertion(ctx, r)
	if err != nil {
		return nil, err
	}
	if a == "" {
		return nil, errors.New("oauthclient: the JWT bearer grant's assertion is empty")
	}
	return url.Values{"grant_type": {GrantJWTBearer}, "assertion": {a}}, nil
}

// maxPlatformToken bounds what is read of a workload's token file.
const maxPlatformToken = 64 << 10

// WorkloadIdentity is workload identity federation (SEP-1933, the MCP
// extension io.modelcontextprotocol/auth/wif): a workload proves who it is
// with the token its platform issues it (a Kubernetes service account
// token, a SPIFFE JWT-SVID, a cloud provider's identity token), presented
// in the JWT bearer grant (RFC 7523). The authorization server trusts the
// platform's issuer; no client is registered and no secret is kept.
//
// The token is read anew for every token request, so a platform that
// rotates the file (Kubernetes projects a new token before the old one
// expires) is followed; an access token the authorization server issued
// lasts as long as it says, and the next is asked for with the token of the
// moment. Set one of TokenFile and Token. The token must name the
// authorization server in its aud, which is how the platform is told to
// issue it (the audience of a projected service account token, say).
type WorkloadIdentity struct {
	// TokenFile is the file the platform writes the token to.
	TokenFile string
	// Token returns the token, for platforms that hand it out otherwise
	// (a metadata server). It is called for every token request.
	Token func(ctx context.Context) (string, error)
}

// TokenParams implements [Grant].
func (g *WorkloadIdentity) TokenParams(ctx context.Context, r *GrantRequest) (url.Values, error) {
	var tok string
	switch {
	case g.Token != nil:
		t, err := g.Token(ctx)
		if err != nil {
			return nil, fmt.Errorf("oauthclient: the workload's token: %w", err)
		}
		tok = t
	case g.TokenFile != "":
		t, err := readSecretFile(g.TokenFile, maxPlatformToken)
		if err != nil {
			return nil, fmt.Errorf("oauthclient: the workload's token: %w", err)
		}
		tok = t
	default:
		return nil, errors.New("oauthclient: WorkloadIdentity needs TokenFile or Token")
	}
	return (&JWTBearer{Assertion: func(context.Context, *GrantRequest) (string, error) { return tok, nil }}).TokenParams(ctx, r)
}

// readSecretFile reads a token or secret from a file, without the
// surrounding white space a file written by hand ends with, refusing one
// larger than limit.
func readSecretFile(name string, limit int) (string, error) {
	f, err := os.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		return "", err
	}
	if len(b) > limit {
		return "", fmt.Errorf("%s is larger than %d bytes", name, limit)
	}
	return string(bytes.TrimSpace(b)), nil
}
