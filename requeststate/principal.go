package requeststate

import (
	"context"
	"crypto/rand"
	"crypto/subtle"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/server"
)

// AuthPrincipal is the default principal binding: the OAuth client, issuer
// and subject of the access token the transport validated, as [auth.InfoFrom]
// reports them, or "" (nothing to bind) when the request is not
// authenticated. Two people sharing one OAuth client are told apart by the
// subject; a verifier that supplies no subject binds state to the client
// alone.
//
// A [Policy.Principal] hook replaces it. A hook that wants to bind more
// (a tenant, say) may call AuthPrincipal and add to its result.
func AuthPrincipal(ctx context.Context, req *server.Request) (string, error) {
	info := auth.InfoFrom(ctx)
	if info == nil {
		return "", nil
	}
	return auth.PrincipalKey(info), nil
}

// newPrincipalClaim returns salt || tag for a principal. The salt is fresh
// for every token, so two tokens of one principal do not show that they
// share it, and the claim reveals the principal to nobody who cannot guess
// it (the codec, if it encrypts, hides even that).
func newPrincipalClaim(principal string) (claim [principalLen]byte) {
	rand.Read(claim[:saltLen])
	tag := principalTag(claim[:saltLen], principal)
	copy(claim[saltLen:], tag[:])
	return claim
}

// principalMatches reports, in constant time, whether a claim was made for
// principal.
func principalMatches(claim []byte, principal string) bool {
	tag := principalTag(claim[:saltLen], principal)
	return subtle.ConstantTimeCompare(tag[:], claim[saltLen:]) == 1
}

func principalTag(salt []byte, principal string) (tag [principalTagLen]byte) {
	c := getCanon(domainPrincipal)
	defer putCanon(c)
	c.escapeZeros(salt)
	c.textString(principal)
	sum := c.sum()
	copy(tag[:], sum[:])
	return tag
}
