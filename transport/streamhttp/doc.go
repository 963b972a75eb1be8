// Package streamhttp implements the Streamable HTTP transport of MCP
// 2026-07-28: an [http.Handler] that serves a [server.Server] at one
// endpoint, and a client transport for
// [github.com/parley-mcp/parley/client.Client].
//
// # The shape of the transport
//
// There is one endpoint URL and it takes only POST. Every JSON-RPC message
// from the client is a POST of its own; the body is exactly one request or
// notification (no batches, and never a response). There is no session, no
// GET stream and no resumption: every request carries its protocol version
// and client capabilities in its _meta, so any server process can answer
// any POST, and a server can run behind a plain round-robin load balancer.
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
//	srv := &http.Server{Addr: "127.0.0.1:8080", Handler: streamhttp.NewHandler(s, nil)}
//	srv.RegisterOnShutdown(s.EndSubscriptions)
//	err := srv.ListenAndServe()
//
// RegisterOnShutdown matters for graceful shutdown: http.Server.Shutdown
// waits for requests in progress, and a subscriptions/listen stream is a
// request that lasts until the client leaves. EndSubscriptions ends every
// stream with its final result, so Shutdown can complete.
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
// HandlerOptions.KeepAlive (15 s by default) gets a ": keep-alive" comment.
//
// Other answers: GET, DELETE and every other method get 405 with
// "Allow: POST"; a body over HandlerOptions.MaxBodyBytes (4 MiB) gets 413; a
// Content-Type other than application/json gets 415; bad JSON gets 400 with
// -32700, and a batch or a response gets 400 with -32600. Mcp-Session-Id and
// Last-Event-ID request headers are ignored, and no Mcp-Session-Id is ever
// sent. Error bodies are JSON-RPC error responses, with the request's id
// when it could be read.
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
