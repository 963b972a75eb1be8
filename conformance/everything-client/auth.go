package main

import (
	"context"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"

	"github.com/parley-mcp/parley/auth/oauthclient"
)

// preRegistered returns the Config.PreRegistered of the scenario's client,
// nil when the context names none; key, when set, is the client's private
// key (private_key_jwt).
func (cfg *config) preRegistered(key crypto.Signer) func(string) *oauthclient.ClientInfo {
	if cfg.ClientID == "" {
		return nil
	}
	return func(string) *oauthclient.ClientInfo {
		return &oauthclient.ClientInfo{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, Key: key, SigningAlgorithm: cfg.SigningAlgorithm}
	}
}

// clientCredentials is an agent with no person (the client credentials
// extension): with the secret of auth/client-credentials-basic, or the
// private key of auth/client-credentials-jwt.
func clientCredentials(ctx context.Context, url string, cfg *config) error {
	var key crypto.Signer
	if cfg.PrivateKeyPEM != "" {
		k, err := parsePrivateKey(cfg.PrivateKeyPEM)
		if err != nil {
			return err
		}
		key = k
	}
	return authorizedWith(ctx, url, &oauthclient.Config{
		Grant:         oauthclient.ClientCredentials{},
		PreRegistered: cfg.preRegistered(key),
	})
}

// parsePrivateKey reads a PKCS #8 private key in PEM.
func parsePrivateKey(s string) (crypto.Signer, error) {
	b, _ := pem.Decode([]byte(s))
	if b == nil {
		return nil, errors.New("private_key_pem holds no PEM block")
	}
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("private_key_pem: %w", err)
	}
	signer, ok := k.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("private_key_pem: a %T cannot sign", k)
	}
	return signer, nil
}

// enterpriseManaged is enterprise-managed authorization: the ID token of
// the user's single sign-on is exchanged at the identity provider for an
// ID-JAG, which the client, registered with the MCP server's authorization
// server, presents there.
func enterpriseManaged(ctx context.Context, url string, cfg *config) error {
	return authorizedWith(ctx, url, &oauthclient.Config{
		Grant: &oauthclient.EnterpriseManaged{
			IdentityToken:    func(context.Context) (string, error) { return cfg.IdPIDToken, nil },
			IdPTokenEndpoint: cfg.IdPTokenEndpoint,
			IdPClient:        &oauthclient.ClientInfo{ClientID: cfg.IdPClientID},
		},
		PreRegistered: cfg.preRegistered(nil),
	})
}

// workloadIdentity is workload identity federation: the platform's token
// in the JWT bearer grant.
func workloadIdentity(ctx context.Context, url string, cfg *config) error {
	return authorizedWith(ctx, url, &oauthclient.Config{
		Grant:         &oauthclient.WorkloadIdentity{Token: func(context.Context) (string, error) { return cfg.ValidJWT, nil }},
		PreRegistered: cfg.preRegistered(nil),
	})
}

// dpop is the authorization code flow of the other auth/* scenarios with
// DPoP-bound tokens; the nonce scenario's servers ask for nonces, which the
// transport answers.
func dpop(ctx context.Context, url string, cfg *config) error {
	return authorizedWith(ctx, url, &oauthclient.Config{
		Authorizer:          &oauthclient.HeadlessAuthorizer{},
		ClientName:          "parley-everything-client",
		ClientIDMetadataURL: cimdURL,
		PreRegistered:       cfg.preRegistered(nil),
		DPoP:                &oauthclient.DPoP{Required: true},
	})
}
