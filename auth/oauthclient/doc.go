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
// [ErrPKCEUnsupported], [ErrDiscovery], [ErrInsecureURL]. Errors of the token endpoint are
// x/oauth2's [*oauth2.RetrieveError]. A request that fails this way returns
// the error from RoundTrip, so an [http.Client] reports it wrapped in a
// [*url.Error].
package oauthclient
