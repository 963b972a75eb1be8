// Package resourceserver makes an MCP server an OAuth 2.1 resource server,
// as the MCP authorization specification asks of a protected HTTP server:
// it serves the protected resource metadata document (RFC 9728) and lets
// through only requests with a valid bearer token issued for it.
//
// # Setting up
//
// A [ResourceServer] is built from three things: the resource's
// [Metadata] (its identifier, the URL of the MCP endpoint, and the
// authorization servers that issue tokens for it), a [Verifier] that
// checks tokens, and the scopes every request needs:
//
//	v, err := jwtverify.New(&jwtverify.Options{
//		Issuer:   "https://auth.example.com",
//		Audience: "https://mcp.example.com/mcp",
//	})
//	rs, err := resourceserver.New(&resourceserver.Options{
//		Metadata: resourceserver.Metadata{
//			Resource:             "https://mcp.example.com/mcp",
//			AuthorizationServers: []string{"https://auth.example.com"},
//			ScopesSupported:      []string{"mcp:tools"},
//		},
//		Verifier: v,
//		Scopes:   []string{"mcp:tools"},
//	})
//	mux := http.NewServeMux()
//	rs.Mount(mux, mcpServer.HTTPHandler(nil))
//
// Mount serves the metadata at its well-known URL (for the resource
// above, https://mcp.example.com/.well-known/oauth-protected-resource/mcp,
// RFC 9728 §3.1) and the MCP endpoint behind [ResourceServer.Wrap]. To
// arrange the routes yourself, use [ResourceServer.MetadataHandler] at
// [ResourceServer.MetadataPath] and Wrap.
//
// # What a client is told
//
// A request without a token gets 401 with a challenge that names the
// metadata document and the scopes to ask for:
//
//	WWW-Authenticate: Bearer scope="mcp:tools", resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
//
// From there an MCP client finds the authorization server, obtains a
// token for the resource (its aud, RFC 8707) and retries. A token that
// is refused gets 401 with error="invalid_token"; a valid token without a
// required scope gets 403 with error="insufficient_scope" and the scopes
// needed, so that the client can ask for more (step-up). A malformed
// Authorization header gets 400 invalid_request. When the verifier cannot
// decide (the authorization server is down), the client gets 503 and the
// operator a log line: the token may be good, and the user must not be
// sent to log in again for an outage.
//
// The reason a token was refused goes to the log at debug level, never to
// the client.
//
// # Verifiers
//
// Two verifiers come with Parley:
//
//   - package [github.com/parley-mcp/parley/auth/jwtverify] checks JWT
//     access tokens offline, with the issuer's published keys. It is the
//     fast choice, and the only one that costs nothing per request; a
//     revoked token stays valid until it expires.
//   - [Introspector] asks the authorization server about every token
//     (RFC 7662). It works with opaque tokens and sees revocation at
//     once, for a round trip per request.
//
// Either checks the issuer, the audience (this resource: a token issued
// for another server is refused even if the same authorization server
// signed it), expiry and not-before, with [DefaultLeeway] of clock skew.
// A verifier of your own implements [Verifier] and reports refusals with
// the errors of this package: [ErrInvalidToken], [ErrInsufficientScope]
// (or an [*InsufficientScopeError] naming the scopes), [ErrUnavailable].
//
// # DPoP
//
// A token that leaks can be used by whoever has it, unless it is bound to a
// key its client holds (DPoP, RFC 9449). With [Options.DPoP] the
// middleware also takes DPoP-bound tokens, presented with the DPoP scheme
// and a proof of the key in the DPoP header:
//
//	dv, err := dpopverify.New(nil)
//	rs, err := resourceserver.New(&resourceserver.Options{..., DPoP: dv})
//
// The token is checked by the Verifier, which reads the key it is bound to
// (its cnf.jkt) into [auth.Info.KeyThumbprint]; the proof by the
// [DPoPVerifier] (package [github.com/parley-mcp/parley/auth/dpopverify]).
// Challenges then offer both schemes, one WWW-Authenticate field each:
//
//	WWW-Authenticate: Bearer resource_metadata="…"
//	WWW-Authenticate: DPoP algs="ES256 …", resource_metadata="…"
//
// A refused proof gets 401 with error="invalid_dpop_proof" in the DPoP
// challenge, a proof without the server's nonce error="use_dpop_nonce"
// and the nonce in DPoP-Nonce. A DPoP-bound token presented as a bearer
// token is refused (401 invalid_token) whether DPoP is configured or not:
// taking it would let a copied token work without its key.
// [Options.RequireDPoP] takes only DPoP.
//
// # The caller on the context
//
// A request that passes carries the token's [auth.Info] (client, issuer,
// subject, scopes, expiry) on its context. Everything below reads it from
// there: tool handlers with [auth.InfoFrom] (or mcpserver's Call.Auth),
// and the requestState boundary, which binds every sealed requestState to
// the client, issuer and subject. A state one user's call was given is
// refused when another user sends it, even through the same OAuth client,
// with no code of yours. Legacy (2025-11-25 and earlier) sessions are
// likewise bound to the caller who opened them.
package resourceserver
