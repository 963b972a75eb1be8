// Package oauthclient authorizes an MCP client's HTTP requests with OAuth
// 2.1, as the MCP authorization specification asks of clients.
//
// The hook is an [http.RoundTripper], [Transport]. Put it under the
// Streamable HTTP transport and every request carries the access token the
// client holds for the server; the first request, sent without one, is
// what starts the flow:
//
//	oc, err := oauthclient.New(&oauthclient.Config{Authorizer: authorizer})
//	...
//	tr := streamhttp.NewClientTransport(serverURL, &streamhttp.ClientOptions{HTTPClient: oc.Client()})
//
// # What happens on 401
//
// The server answers an unauthorized request with 401 and a
// WWW-Authenticate challenge. The transport then:
//
//  1. Finds the server's protected-resource metadata (RFC 9728): the URL in
//     the challenge's resource_metadata parameter, else
//     /.well-known/oauth-protected-resource with the server's path
//     appended, else the same at the root. Its resource must name the
//     server (same origin, and the server's path or an ancestor of it);
//     metadata for another resource is refused with a
//     [*ResourceMismatchError], since following it would hand a token
//     meant for one server to another.
//  2. Fetches the metadata of the first authorization server it lists
//     (RFC 8414, then OpenID Connect discovery, at the well-known URLs in
//     the order the MCP spec gives for issuers with and without a path).
//     The document's issuer must equal the issuer it was fetched for,
//     character for character, or it is refused with an
//     [*IssuerMismatchError]. A server that does not offer PKCE with S256
//     is refused too ([ErrPKCEUnsupported]).
//  3. Picks a client registration, in the spec's order of preference: one
//     given by Config.PreRegistered, one registered with this server
//     before (from the [Store]), a client ID metadata document
//     (Config.ClientIDMetadataURL, when the server advertises
//     client_id_metadata_document_supported), or dynamic client
//     registration (RFC 7591). None possible: a [*RegistrationError].
//  4. Picks the scopes: the challenge's scope parameter, else the
//     resource's scopes_supported, else none (no scope parameter at all);
//     united with the scopes requested before, plus offline_access when
//     the authorization server lists it, so a refresh token comes back.
//  5. Has the [Authorizer] send the user to the authorization endpoint,
//     with PKCE (S256), a random state and the resource parameter (RFC
//     8707), and checks the response before redeeming the code: its iss
//     must equal the issuer when present, and must be present when the
//     server advertises authorization_response_iss_parameter_supported
//     (RFC 9207; compared as plain strings, with no URL normalization);
//     its state must be the one sent ([ErrStateMismatch]).
//  6. Redeems the code at the token endpoint, authenticating as the
//     registration says (client_secret_basic, client_secret_post, or none
//     for a public client), with the resource parameter again, stores the
//     tokens and retries the request once.
//
// # Never plain HTTP
//
// Every authorization server URL the transport uses must be https: the
// issuer (the protected resource's authorization_servers entry), its
// metadata URLs, and the authorization, token and registration endpoints,
// and so must every redirect it follows while fetching them. Plain HTTP is
// allowed only to a loopback host (localhost, 127.0.0.0/8, ::1), as the
// MCP authorization spec allows, and, for the protected-resource metadata,
// from the MCP server's own origin, the URL the user chose. Anything else
// is refused with an [*InsecureURLError] naming the URL and its role,
// before the metadata, the authorization request or the code and its PKCE
// verifier could cross the network in the clear.
//
// A later 401 for a request that carried a token first tries the refresh
// token, then starts over. A 401 for a request that carried none, because
// the Transport is new and has not learnt the server's issuer, first
// tries the token the Store holds for the server (refreshed if it has
// expired): a client whose Store persists logs in once, not on every run; an expired token is refreshed before it is
// sent. Discovery runs again each time, so a server that moved to another
// authorization server is followed, and the client registers anew there:
// registrations and tokens are stored per authorization server issuer and
// are never presented to another.
//
// # Step-up on 403
//
// A 403 whose challenge says error="insufficient_scope" makes the
// transport authorize again with the union of the scopes requested so far
// and the challenge's scope, and retry. After Config.MaxStepUps such
// re-authorizations in a row without a success, the request fails with a
// [*StepUpLimitError], so a server that can never be satisfied does not
// keep the user in a loop of consent screens.
//
// # With no person present
//
// An agent that runs on its own, a workload, or a client whose company's
// identity provider decides for it, sets [Config.Grant] instead of an
// Authorizer. Discovery is the same (401, protected resource metadata,
// authorization server metadata; no authorization endpoint or PKCE is
// needed); then the grant's token request is sent, with the resource
// parameter, and its token used as any other:
//
//   - [ClientCredentials]: the client authenticates as itself, with a
//     secret or, as the MCP extension recommends, a private key
//     (private_key_jwt, RFC 7523 section 2.2: [ClientInfo.Key], any
//     crypto.Signer). The client is registered out of band and given by
//     Config.PreRegistered.
//   - [WorkloadIdentity]: the platform's token (a Kubernetes service
//     account token, a SPIFFE JWT-SVID) in the JWT bearer grant, read from
//     its file or a function at every token request, so that rotation is
//     followed.
//   - [EnterpriseManaged]: token exchange at the enterprise identity
//     provider (the user's ID token for an ID-JAG), then the JWT bearer
//     grant with the ID-JAG; either step can be the host's own.
//   - [JWTBearer]: any other assertion.
//
// An expired token is replaced by presenting the grant again before the
// request is sent. A grant the server refuses fails the request with its
// error (an [*oauth2.RetrieveError]); it is not retried, and no other flow
// is tried.
//
// # DPoP
//
// With [Config.DPoP] every token request carries a DPoP proof (RFC 9449)
// and the token comes back bound to the client's key (token_type DPoP).
// Each request to the MCP server then carries the token with the DPoP
// scheme and a proof of its own, for its method and URL and the token's
// hash, with a fresh jti: a token that leaks is useless without the key.
// A bound token is never sent as a bearer token. When the authorization
// server (400) or the MCP server (401) answers use_dpop_nonce, the nonce it
// gives goes into a new proof and the request is sent again, once; later
// proofs carry the nonce from the start. The key is the caller's
// ([DPoP.Key], any crypto.Signer) or one generated for the Transport.
//
// # The interactive step
//
// An [Authorizer] is given the authorization URL and returns the query of
// the redirect. [LoopbackAuthorizer] is the one for desktop and command
// line applications: it listens on a loopback port, prints the URL (and
// opens a browser, if told how) and takes the redirect whose state is the
// one of the authorization URL: a stray request to its callback is
// answered 400 and does not end the user's login. [HeadlessAuthorizer]
// requests the URL itself and reads the redirect from the Location header,
// for tests and for authorization servers that approve without a user.
//
// # Errors
//
// Every refusal is typed and matches a sentinel with [errors.Is]:
// [ErrNoAuthorizer], [ErrIssuerMismatch], [ErrResourceMismatch],
// [ErrStepUpLimit], [ErrRegistrationFailed], [ErrStateMismatch],
// [ErrPKCEUnsupported], [ErrDiscovery], [ErrInsecureURL],
// [ErrDPoPUnsupported]. Errors of the token endpoint (and of an identity
// provider's token exchange) are
// x/oauth2's [*oauth2.RetrieveError]. A request that fails this way returns
// the error from RoundTrip, so an [http.Client] reports it wrapped in a
// [*url.Error].
package oauthclient
