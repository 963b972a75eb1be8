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
// Under protocol version 2026-07-28 there is no handshake: every request
// carries the protocol version, the client's capabilities and its info in
// _meta, and the session adds them for you. If the server answers a request
// with -32022 (unsupported protocol version), the session switches to a
// version both sides speak and retries once (unless Options.ProtocolVersion
// pins the version); when there is none, the error wraps
// ErrUnsupportedVersion.
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
// sampled answer, the client's roots) answers tools/call, prompts/get or
// resources/read with an input_required result. CallTool, GetPrompt and
// ReadResource then run the loop for you: they fulfil every request of a
// round at once with the callbacks in [Options] (Elicit, Sample,
// ListRoots), repeat the call with the answers and the echoed
// requestState, and return the final result. The callbacks also decide the
// capabilities every request declares.
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
package client
