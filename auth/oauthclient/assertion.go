package oauthclient

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"slices"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/cryptosigner"
	"github.com/go-jose/go-jose/v4/jwt"
)

// ClientAssertionType is the client_assertion_type of private_key_jwt
// client authentication (RFC 7523 section 2.2).
const ClientAssertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

// assertionLifetime is how long a client assertion is valid: long enough
// for the request to arrive, short enough that a copy is soon useless.
const assertionLifetime = time.Minute

// keyAlgorithm returns the JWS algorithm to sign with key: want when it is
// given (and fits the key), else the one the key's type implies, preferring
// one the peer lists in allowed when the key fits several (RSA). It fails
// for keys of other types and for a want that does not fit.
func keyAlgorithm(key crypto.PublicKey, want string, allowed []string) (jose.SignatureAlgorithm, error) {
	var fits []jose.SignatureAlgorithm
	switch k := key.(type) {
	case *ecdsa.PublicKey:
		switch k.Curve {
		case elliptic.P256():
			fits = []jose.SignatureAlgorithm{jose.ES256}
		case elliptic.P384():
			fits = []jose.SignatureAlgorithm{jose.ES384}
		case elliptic.P521():
			fits = []jose.SignatureAlgorithm{jose.ES512}
		}
	case ed25519.PublicKey:
		fits = []jose.SignatureAlgorithm{jose.EdDSA}
	case *rsa.PublicKey:
		fits = []jose.SignatureAlgorithm{jose.PS256, jose.RS256, jose.PS384, jose.RS384, jose.PS512, jose.RS512}
	}
	if len(fits) == 0 {
		return "", fmt.Errorf("oauthclient: a key of type %T cannot sign JWTs (want an ECDSA P-256, P-384 or P-521, Ed25519 or RSA key)", key)
	}
	if want != "" {
		if !slices.Contains(fits, jose.SignatureAlgorithm(want)) {
			return "", fmt.Errorf("oauthclient: algorithm %s does not fit a key of type %T", want, key)
		}
		return jose.SignatureAlgorithm(want), nil
	}
	for _, a := range fits {
		if slices.Contains(allowed, string(a)) {
			return a, nil
		}
	}
	if _, isRSA := key.(*rsa.PublicKey); isRSA {
		return jose.RS256, nil // the one every server implements (RFC 7518 section 3.1)
	}
	return fits[0], nil
}

// clientAssertion returns a signed client assertion for c (RFC 7523
// section 3): issuer and subject are the client id, the audience is the
// authorization server's issuer identifier (which the MCP client
// credentials extension and RFC 7523's successor prefer to the token
// endpoint URL), with a fresh jti and a lifetime of a minute. allowed is
// the server's token_endpoint_auth_signing_alg_values_supported.
func clientAssertion(c *ClientInfo, audience string, now time.Time, allowed []string) (string, error) {
	alg, err := keyAlgorithm(c.Key.Public(), c.SigningAlgorithm, allowed)
	if err != nil {
		return "", err
	}
	if len(allowed) > 0 && !slices.Contains(allowed, string(alg)) {
		return "", fmt.Errorf("oauthclient: the authorization server accepts client assertions signed with %q, not %s", allowed, alg)
	}
	signer, err := jose.NewSigner(
		jose.SigningKey{Algorithm: alg, Key: jose.JSONWebKey{Key: cryptosigner.Opaque(c.Key), KeyID: c.KeyID}},
		(&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		return "", fmt.Errorf("oauthclient: client assertion: %w", err)
	}
	claims := jwt.Claims{
		Issuer:   c.ClientID,
		Subject:  c.ClientID,
		Audience: jwt.Audience{audience},
		ID:       rand.Text(),
		IssuedAt: jwt.NewNumericDate(now),
		Expiry:   jwt.NewNumericDate(now.Add(assertionLifetime)),
	}
	s, err := jwt.Signed(signer).Claims(claims).Serialize()
	if err != nil {
		return "", fmt.Errorf("oauthclient: signing the client assertion: %w", err)
	}
	return s, nil
}
