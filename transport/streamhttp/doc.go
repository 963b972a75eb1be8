// Package streamhttp implements the Streamable HTTP transport of MCP: an
// [http.Handler] that serves a [server.Server] at one endpoint, and a client
// transport for [github.com/parley-mcp/parley/client.Client].
//
// One endpoint serves both generations of the protocol. 2026-07-28 is
// stateless; the legacy versions (2025-11-25, 2025-06-18, 2025-03-26) open
// a session with initialize. The handler tells them apart per POST: a
// request that carries the 2026-07-28 _meta envelope
// (io.modelcontextprotocol/protocolVersion), or names a 2026-07-28 version
// in its MCP-Protocol-Version header, is a 2026-07-28 request, whatever its
// method and whatever other headers it has; everything else is legacy.
//
// # The shape of the transport (2026-07-28)
//
// There is one endpoint URL and 2026-07-28 uses only POST. Every JSON-RPC
// message from the client is a POST of its own; the body is exactly one
// request or notification (no batches, and never a response). There is no
// session, no GET stream and no resumption: every request carries its
// protocol version and client capabilities in its _meta, so any server
// process can answer any POST, and a server can run behind a plain
// round-robin load balancer.
//
// A notification is answered with 202 Accepted and no body. A request is
// answered with 200 and either
//
//   - application/json: the JSON-RPC response alone, or
//   - text/event-stream: an event stream scoped to that request, carrying
//     the notifications the request causes (progress, log messages, the
//     changes of a subscriptions/listen stream) and then the response,
//     after which the stream ends.
//
// Closing a request's stream (or, for a JSON response, its connection) is
// how a client cancels it; there is no cancellation message on HTTP.
//
// # Serving
//
//	s := server.New(mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
//	// ... register handlers ...
//	h := streamhttp.NewHandler(s, nil)
//	srv := &http.Server{Addr: "127.0.0.1:8080", Handler: h,
//		ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
//	go srv.ListenAndServe()
//	...
//	// On SIGTERM: the handler first, then the server.
//	err := errors.Join(h.Shutdown(ctx), srv.Shutdown(ctx))
//
// The order matters for graceful shutdown: http.Server.Shutdown waits for
// requests in progress, and a subscriptions/listen stream is a request that
// lasts until the client leaves, as is the GET stream of a legacy session.
// Handler.Shutdown ends every listen stream with its final result and every
// legacy session (which dies with the process anyway), so the server's
// Shutdown can complete. Keep the *Handler that NewHandler returns even when
// middleware wraps it for serving: Shutdown is its method.
//
// The handler picks the response shape per request. A request that sends no
// notification before its result is answered with JSON; the first
// notification starts an event stream, if the client's Accept header allows
// text/event-stream (clients must send "Accept: application/json,
// text/event-stream"). Deciding late keeps the cheap JSON shape for the
// common case and lets errors keep their HTTP status: the specification pins
// 400 for -32020 (header mismatch), -32021 (missing client capability),
// -32022 (unsupported protocol version) and for -32602 when _meta lacks a
// required key, and 404 for -32601 (unknown method, with the request's id).
// Any other JSON-RPC error, such as -32602 for an unknown tool, is sent
// in-band with 200, and so is any error that happens after a stream has
// started. subscriptions/listen always streams: a client that does not
// accept event streams gets 406 for it. An open stream that has been quiet for
// HandlerOptions.KeepAlive (15 s by default) gets a ": keep-alive" comment;
// so do the streams of legacy sessions.
//
// Other answers: GET and DELETE without an Mcp-Session-Id, and every other
// method, get 405 with "Allow: POST"; a body over HandlerOptions.MaxBodyBytes
// (4 MiB) gets 413; a body that has not arrived within
// HandlerOptions.BodyTimeout (30 s) gets 408; a POST without Content-Type,
// or with one other than application/json, gets 415; a POST whose Accept
// header allows neither application/json nor text/event-stream gets 406
// (no Accept header allows both); bad JSON gets 400 with -32700, and a batch, or a response outside a
// legacy session, gets 400 with -32600. A 2026-07-28 request's
// Mcp-Session-Id and Last-Event-ID headers are ignored, and its answer
// never carries an Mcp-Session-Id. Error bodies are JSON-RPC error
// responses, with the request's id when it could be read. An error message
// that repeats a header's value repeats at most its first 128 bytes,
// quoted, with an ellipsis when it was cut.
//
// # Slow peers and server timeouts
//
// The timeouts of http.Server are meant for whole requests and responses,
// and a Streamable HTTP endpoint has responses that last: a
// subscriptions/listen stream, a request that streams its progress, the
// GET stream of a legacy session. ReadTimeout (which, in net/http, ends the
// request when it passes, even after the body has arrived) and
// WriteTimeout (a deadline for the whole response) would cut them. Set
// instead
//
//	srv := &http.Server{
//		Addr:              "127.0.0.1:8080",
//		Handler:           h,
//		ReadHeaderTimeout: 10 * time.Second,  // a peer that trickles its headers
//		IdleTimeout:       120 * time.Second, // a kept-alive connection left unused
//	}
//
// and leave ReadTimeout and WriteTimeout zero: the handler bounds the rest
// per request. HandlerOptions.BodyTimeout (30 s) bounds the time a POST's
// body takes to arrive, with a read deadline set when the handler starts
// reading the body and lifted once it is in; HandlerOptions.WriteTimeout
// (30 s) bounds each write, with a write deadline renewed before every
// event, keep-alive and JSON answer, so that a stream lasts as long as its
// client reads it, and a client that stops reading makes the next write
// that cannot go through fail, which ends the request. Both use
// [http.ResponseController] and so work over HTTP/1 and HTTP/2.
//
// # Headers must agree with the body
//
// 2026-07-28 (SEP-2243) copies parts of the body into headers so that load
// balancers and gateways can route without parsing JSON, and the server
// must refuse a request whose headers disagree with its body, since
// different components would otherwise act on different truths. The
// handler checks, answering 400 with -32020 on any failure:
//
//   - MCP-Protocol-Version is present and equals the _meta protocolVersion
//     (this is checked before the version itself, so a mismatch is -32020
//     even when the version is unsupported);
//   - Mcp-Method is present and equals the method;
//   - Mcp-Name is present and equals params.name for tools/call and
//     prompts/get, and params.uri for resources/read;
//   - for tools/call, each argument annotated with "x-mcp-header" in the
//     tool's inputSchema is mirrored by its Mcp-Param-{Name} header when it
//     is present and not null, the header says the same value, and no such
//     header comes without its argument.
//
// Header names are case-insensitive and values are trimmed of surrounding
// whitespace. Mcp-Name and Mcp-Param-* values may be Base64-encoded as
// "=?base64?...?=" and are decoded (strictly: bad padding or characters are
// a mismatch) before they are compared; integers compare numerically (42.0
// equals 42) and booleans are true or false. [EncodeHeaderValue] and
// [DecodeHeaderValue] implement this encoding for anyone else who needs it.
//
// To check Mcp-Param-* headers the handler must know the called tool's
// annotations. By default it asks the server: it serves tools/list to
// itself, with the call's context and _meta, through the server's
// middleware, until it finds the tool. So the annotations are always those
// the client was shown, including tool lists that differ per caller, and
// nothing is cached between requests. It only does this for calls that have
// arguments or Mcp-Param-* headers. A server whose tool definitions are
// fixed can set HandlerOptions.FindTool to answer from memory instead.
//
// # DNS rebinding protection
//
// A web page can point a DNS name it controls at 127.0.0.1 and so reach a
// server that listens on the loopback interface through the user's browser.
// The handler refuses such requests with 403: when a request arrived on a
// loopback address, its Host must be localhost, 127.0.0.1 or [::1] (any
// port), and an Origin header, when present, must be a loopback origin too.
// On other addresses an Origin must match the request's Host. This is on by
// default; AllowedHosts and AllowedOrigins widen it, for example behind a
// reverse proxy on the same machine (whose requests arrive on loopback with
// the public Host), and DisableHostCheck turns it off.
//
// # Who is the caller
//
// Limits per caller (legacy sessions here; listen streams, single-use
// states and tasks in the server) count against [auth.CallerKey] of the
// request: its authenticated principal, else its client's address. The
// handler puts that address in the context ([auth.WithRemoteAddrPrefixes])
// with the addresses of one host grouped: an IPv6 /64 is one caller, as is
// every loopback address, and an IPv4-mapped address is its IPv4 address
// (HandlerOptions.Callers.Prefixes widens or narrows this). The address is
// the connection's peer: forwarding headers (X-Forwarded-For, Forwarded)
// are not believed, since a client can write any address there, unless
// HandlerOptions.Callers.TrustedProxies names the proxies that write them;
// from those, the rightmost address that is not a trusted proxy is the
// client. An address a middleware in front of the handler already put in
// the context is kept.
//
// # Legacy sessions (2025-11-25 and earlier)
//
// A legacy client POSTs initialize without the envelope (and without
// MCP-Protocol-Version, or with a legacy one). The handler opens a session
// and answers with the InitializeResult and an Mcp-Session-Id header: 128
// random bits, in visible ASCII. The client sends that id on every later
// request, and these are served with the session's version and the
// capabilities it declared in initialize, by the same handlers and
// middleware as 2026-07-28 requests. Besides initialize, a session serves
// ping, logging/setLevel and resources/subscribe and unsubscribe, and a
// handler can ask the client with [server.Request.Ask] (elicitation,
// sampling, roots) in the middle of a request:
//
//   - A POST with the session's id carries a request, a notification
//     (answered with 202; notifications/cancelled cancels the request it
//     names), or the client's answer to a server-to-client request (202,
//     and the waiting handler resumes; 400 for an id the session never
//     sent).
//   - A request is answered with JSON, or with an event stream from its
//     first notification or server-to-client request on. Such requests go
//     on the stream of the request they serve, never elsewhere. JSON-RPC
//     errors travel in-band with 200: a legacy client takes 404 to mean
//     that its session is gone.
//   - A GET with the session's id (and Accept: text/event-stream) opens the
//     session's standalone stream, where the changes that belong to no
//     request arrive: list changes and updates of subscribed resources. A
//     session has at most one; a second GET gets 409.
//   - A DELETE with the session's id ends the session: its requests in
//     progress are cancelled, its streams end, and what it kept is
//     dropped. It is answered with 200.
//   - An id the handler does not know (never issued, deleted, expired)
//     gets 404 with a JSON-RPC error, on every method: the client must
//     initialize again. A legacy request with no session id gets 400. A
//     session request whose MCP-Protocol-Version is not the session's
//     version gets 400; one without the header is accepted.
//   - A session opened by an authenticated caller ([auth.InfoFrom] of the
//     request's context) serves only that caller; anyone else gets 404, so
//     that a leaked session id is not enough to use the session.
//
// Sessions live in the handler's memory: a load balancer must send all of a
// session's requests to the instance that opened it. An initialize over
// SessionOptions.MaxSessions (1000) gets 503 with a JSON-RPC error; once
// three quarters of the pool are open, one caller (see "Who is the
// caller") holds at most SessionOptions.MaxSessionsPerCaller (100), and in
// the pool's last eighth only callers holding no session open one; a
// caller over its limit has its least recently used idle session give way
// to the new one, else gets 429. A session with no request in
// progress and no open stream for SessionOptions.IdleTimeout (10 minutes)
// is closed, as legacy clients often leave without a DELETE. A GET stream
// opened with a bearer token ends when the token expires.
//
// # Resumable streams
//
// Every event on a session's streams has an id, "<stream>-<seq>": stream 0
// is the standalone stream, and each request that streams gets a number of
// its own. Each stream starts with a priming event, an id, a retry field
// (SessionOptions.Retry, 1 s) and empty data, so that a client holds an id
// to resume from before the first message. The session keeps its recent
// events (SessionOptions.ReplayBytes, 1 MiB; the oldest go first). A GET
// with Last-Event-ID resumes the stream that id belongs to: it gets that
// stream's kept events after the id, never another stream's, then the live
// ones; a request's stream ends with its response, the standalone stream
// goes on. A GET that resumes a stream replaces the connection that carried
// it. An id whose stream is no longer kept gets 400.
//
// The specification asks servers not to take a dropped connection for a
// cancellation (legacy clients cancel with notifications/cancelled). A
// request whose stream loses its connection therefore keeps running for
// SessionOptions.ResumeWindow (30 s), waiting for the client to resume
// the stream; if no GET resumes it by then, its context is cancelled. A
// request that has sent no event yet has no id to resume from, and is
// cancelled as soon as its connection drops. A handler that runs long can
// close its stream's connection itself with [CloseEventStream], so that no
// connection stays open for the whole request: the client reconnects after
// the retry delay and polls the stream (SEP-1699).
//
// # Stateless legacy serving
//
// With SessionOptions.Stateless, legacy clients are served without
// sessions, so that any instance can answer any POST: initialize is
// answered without Mcp-Session-Id, and each legacy request is served on
// its own, with the version of its MCP-Protocol-Version header (2025-03-26
// without one; 400 for a version the server does not serve). Nothing is
// resumable, GET and DELETE get 405, and a handler that asks the client
// gets a -32600 error saying there is no back-channel: such handlers need
// 2026-07-28 (where they return an InputRequiredResult instead) or
// sessions.
//
// # Connecting
//
//	c := client.New(mcp.Implementation{Name: "my-client", Version: "1.0.0"}, nil)
//	sess, err := c.Connect(ctx, streamhttp.NewClientTransport("http://127.0.0.1:8080/mcp", nil))
//
// The client transport sends each request as a POST with the headers above,
// taken from the request's own body; it reads JSON and event-stream
// responses alike, cancels a request by closing its POST, and turns HTTP
// failures into JSON-RPC error responses so that every call ends with an
// answer. It mirrors x-mcp-header arguments by learning the annotations
// from the tools/list results it carries, drops from those results the
// tools whose annotations are invalid, and, when a tools/call is refused
// with -32020, lists the tools again and retries the call once. See
// [NewClientTransport] for the details.
package streamhttp
