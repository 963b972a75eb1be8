// Package jwtverify verifies JWT access tokens (RFC 9068) against the
// issuer's JSON Web Key Set, for the bearer middleware of package
// [github.com/parley-mcp/parley/auth/resourceserver]. It lives in a
// package of its own so that servers that only introspect do not link a
// JOSE library.
//
// A [Verifier] needs the issuer and the resource's identifier (the
// audience tokens must name); it finds the key set through the issuer's
// authorization server metadata, or at Options.JWKSURL:
//
//	v, err := jwtverify.New(&jwtverify.Options{
//		Issuer:   "https://auth.example.com",
//		Audience: "https://mcp.example.com/mcp",
//	})
//
// What it checks, in order: the token is a compact JWS with one signature
// under an algorithm the caller allows (RS256 and ES256 by default; HMAC
// and "none" are never allowed, whatever the token says); its typ header
// is at+jwt (RFC 9068), or it has no type of its own (no typ, or "JWT")
// and none of the claims of an ID token or a logout token (nonce,
// at_hash, c_hash, s_hash, events) — Options.RequireAccessTokenType
// refuses untyped tokens altogether; it verifies with a public key of the
// issuer's set with its kid (any key, when the token names none); iss is
// the issuer; aud contains the resource; exp is present and, with the
// leeway, not reached; nbf, if present, is reached.
//
// Keys are fetched on first use and cached. A token whose kid is unknown
// makes the verifier fetch the set again (the issuer may have rotated
// its keys), at most once per RefreshInterval, so that tokens with
// made-up kids cannot turn the server into a fetching machine; the set is
// also refetched once it is older than MaxKeyAge. A fetch never holds up
// tokens whose key is in the cached set, and tokens that need a newer
// set share one fetch. When the set cannot be fetched and none is
// cached, Verify fails with [resourceserver.ErrUnavailable] (503 at the
// middleware), not with an invalid token.
package jwtverify
