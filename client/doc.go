// Package client is Parley's MCP client.
//
// A [Client] holds what is the same for every connection: who the client is,
// which capabilities it declares, and the callbacks for what servers send
// back (progress, log messages). [Client.Connect] opens a [Session] over a
// transport, asks the server which protocol versions it speaks, and settles
// on one:
//
//	c := client.New(mcp.Implementation{Name: "my-host", Version: "1.0.0"}, nil)
//	sess, err := c.Connect(ctx, transport)
//	if err != nil { ... }
//	defer sess.Close()
//	res, err := sess.CallTool(ctx, "get_weather", map[string]any{"location": "Berlin"})
//
// # Two generations of the protocol
//
// The client speaks both generations of MCP, and a [Session] offers the
// same methods in each:
//
//   - 2026-07-28 has no handshake: every request carries the protocol
//     version, the client's capabilities and its info in _meta, and the
//     session adds them for you. If the server answers a request with
//     -32022 (unsupported protocol version), the session switches to a
//     version both sides speak and retries once (unless the version is
//     pinned); when there is none, the error wraps ErrUnsupportedVersion.
//   - The legacy generation (2025-11-25, 2025-06-18, 2025-03-26) opens a
//     session with initialize: the client declares its capabilities once,
//     requests carry no envelope, and the server sends requests of its own
//     (for input, and ping) while it serves a call.
//
// Options.ProtocolVersion chooses. Left empty, Connect probes
// server/discover with 2026-07-28 and falls back to initialize for a server
// that does not speak it: one that answers with any error but those only
// 2026-07-28 defines (in-band, or in an HTTP 400, 404, 405 or other 4xx,
// with an empty body too), or -32022 naming no version of that generation
// the client speaks, or whose connection closes before it answers
// (Connect then connects the transport again, as a stdio server that exits
// on an unknown request needs). An HTTP 401 or 403, a 5xx and a failed
// request are never taken for a legacy server: Connect fails with them. A
// 2026-07-28 version pins that generation; a legacy version pins the
// legacy one, and Connect initializes at once. [Session.ProtocolVersion]
// reports what was settled, and its Era which generation it is.
//
// What differs shows in a few places only. On a legacy session
// [Session.Discover] answers from initialize without a request;
// [Session.Listen] maps onto resources/subscribe and the list-change
// notifications the server declared; Options.LogLevel is sent once, with
// logging/setLevel; and there are no rounds to drive (see below).
//
// List methods come in two forms: one page at a time (ListTools) and as an
// iterator over every item of every page (Tools), for use with range:
//
//	for tool, err := range sess.Tools(ctx) {
//		if err != nil { ... }
//		fmt.Println(tool.Name)
//	}
//
// # When the server needs input
//
// A server that needs something only the host has (the user's choice, a
// sampled answer, the client's roots) asks in the way of its generation,
// and one set of callbacks in [Options] (Elicit, Sample, ListRoots)
// answers either way. Under 2026-07-28 it answers tools/call, prompts/get
// or resources/read with an input_required result; CallTool, GetPrompt and
// ReadResource then run the loop for you: they fulfil every request of a
// round at once with the callbacks, repeat the call with the answers and
// the echoed requestState, and return the final result. On a legacy
// session the server sends elicitation/create, sampling/createMessage or
// roots/list while the call is in flight, and the same callbacks answer
// them; the call returns the same final result.
//
// The callbacks also decide the capabilities the client declares (unless
// Options.Capabilities does), and the client holds servers to them in both
// generations, through one dispatch: a kind of input with no callback ends
// a 2026-07-28 call with a *MissingCallbackError and is answered -32601 on
// a legacy session; a request the declared capabilities do not allow (a
// URL-mode elicitation when only forms were declared) ends the call with
// an *UndeclaredCapabilityError, or is answered -32602.
//
//	c := client.New(info, &client.Options{
//		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
//			return showForm(ctx, p) // the host's UI
//		},
//		Loop: &client.LoopOptions{MaxRounds: 5},
//	})
//
// [LoopOptions] bounds the rounds, sets the backoff on rounds that carry
// only state, and has a hook that sees (and may refuse) every round. To
// drive the loop yourself — to audit each round, to ask the user elsewhere,
// to persist a call and resume it in another process — use [Session.Begin],
// [Session.Fulfil] and [Session.Continue] with the JSON-marshalable
// [Pending], or [Session.CallToolRound] and its siblings, which send exactly
// the params you build and return the union.
//
// A legacy session has no rounds: the server's questions are answered
// while its call is in flight, so Begin and CallToolRound return the final
// result, and Continue (or a round carrying input responses or state)
// fails with an error wrapping [ErrLegacySession].
//
// # When the server loses a legacy session
//
// A 2025-11-25 server over Streamable HTTP keeps its sessions in memory; a
// restart, an expiry or a load balancer without sticky routing loses one
// under the client (the server answers its id with 404). The Session then
// opens a new one with initialize, once however many requests found the
// loss, and sends the request that found it again when that is safe: a
// read (ping, a list, resources/read, prompts/get, completion/complete),
// or a tools/call of a tool the server annotated readOnlyHint or
// idempotentHint. Any other request fails with a [*SessionEndedError]
// (matching [ErrSessionEnded]) whose Reinitialized says a new session is
// open: the server did not act on it, and the caller decides whether to
// send it again. A request is repeated at most once. A safe request whose
// POST failed without an answer is sent once more too. Open Listen streams
// end with the error; the log level is set again. The loss and the new
// session go to Options.Logger, and middleware sees the requests sent for
// them ([Request].Reinitialization, [Request].Repeat).
// Options.DisableRecovery turns this off.
//
// # Timeouts
//
// A server that goes silent cannot hold a call for ever: each request
// waits at most [Options.RequestTimeout] ([DefaultRequestTimeout], 60 s,
// unless set; negative for none) and then fails with a
// [*RequestTimeoutError]. Each round of the loop above is a request of its
// own, and the callbacks between rounds are not counted; a
// subscriptions/listen stream ([Session.Listen]) is never cut. A call's
// context bounds it as well.
package client
