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
package client
