// Package server is Parley's low-level MCP server.
//
// Most servers are better written on package mcpserver, the high-level
// server built on this one: typed tools with inferred schemas, declared
// questions instead of hand-built rounds, and requestState sealed by
// default. This package is for full control of every method.
//
// A [Server] has one handler slot per method of protocol version 2026-07-28.
// You fill the slots you need; the server does everything the protocol asks
// of every server around them:
//
//   - it answers server/discover from what is registered (supported
//     versions, capabilities, instructions, caching hints, serverInfo);
//   - it checks every request's _meta: a missing protocol version or client
//     capabilities is -32602, an unsupported version is -32022 with the
//     versions it does support;
//   - it refuses removed and unknown methods (initialize, ping,
//     logging/setLevel, resources/subscribe, ...) with -32601;
//   - it stamps every result with resultType and serverInfo, and every
//     cacheable result with ttlMs and cacheScope (a legacy session's
//     results carry none of these: see mcp.LegacyResult);
//   - it runs subscriptions/listen streams and delivers the changes you
//     publish to the streams that asked for them.
//
// A handler receives a [*Request]: the request's protocol version, client
// capabilities and client info, and ways to report progress and send log
// messages for that request. Cancellation arrives through the context.
//
//	s := server.New(mcp.Implementation{Name: "weather", Version: "1.0.0"}, nil)
//	s.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
//		return &mcp.ListToolsResult{Tools: tools}, nil
//	})
//	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
//		return mcp.TextResult("sunny"), nil
//	})
//	err := s.ServeConn(ctx, stdio.ServerConn(nil))
//
// # Asking the user: multi-round-trip requests
//
// The tools/call, prompts/get and resources/read handlers may return an
// *mcp.InputRequiredResult instead of their result: requests for the client
// to fulfil (an elicitation, a sampling, the roots) and a requestState. The
// client answers and repeats the call; the handler finds the answers in
// the params' InputResponses (decode one with Elicit, Sample or Roots, as
// what was asked) and its state in RequestState (LookupRequestState tells
// an empty state, which is a state, from none). A handler must handle
// every answer a client can give: none yet (ask), declined or cancelled
// (stop with an error result; asking again would loop until the client's
// round limit), and accepted (decode the content with a validating
// accessor such as ElicitResult.DecodeContent, never a bare type
// assertion on client data). The server checks what
// leaves: only those three methods may return one, only on 2026-07-28
// requests, never empty, and never asking for more than the client declared
// on that very request (else -32021 with requiredCapabilities).
//
// # Extensions
//
// A method the SDK does not define (an extension's) is served with
// HandleMethod: typed params that embed mcp.RequestParams, a typed result
// that embeds mcp.Result, and everything a core method gets (the _meta
// checks, the middleware, the error mapping). MethodOptions says which
// extension the method belongs to, so that a client that did not declare
// it gets -32021, and which params member is its target, which Streamable
// HTTP holds the Mcp-Name header to. DeclareExtension announces the
// extension in the server's capabilities:
//
//	type GetJobParams struct {
//		mcp.RequestParams
//		JobID string `json:"jobId"`
//	}
//	type Job struct {
//		mcp.Result
//		State string `json:"state"`
//	}
//	s.DeclareExtension("com.example/jobs", nil)
//	server.HandleMethod(s, "jobs/get", &server.MethodOptions{Extension: "com.example/jobs", Target: "jobId"},
//		func(ctx context.Context, req *server.Request, p *GetJobParams) (*Job, error) {
//			return &Job{State: "running"}, nil
//		})
//
// # What it does not do for you
//
// The low-level server has no batteries: nothing is sealed or inferred for
// you. Tools, prompts and resources are whatever your handlers say they are.
// requestState in particular crosses the wire as your handler wrote it and
// comes back as whatever the client sends; one line seals and verifies it:
//
//	requeststate.MustProtect(s, nil) // see package requeststate
package server
