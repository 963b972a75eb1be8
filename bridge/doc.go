// Package bridge lets a host that launches stdio servers, of either
// protocol generation, use a remote MCP server over Streamable HTTP, of
// either generation: the bridge is a stdio server to the host and a client
// to the remote server. `parley bridge URL` is this package on stdin and
// stdout:
//
//	err := bridge.ServeURL(ctx, stdio.ServerConn(nil), "https://mcp.example.com/mcp", &bridge.Options{
//		HTTPClient: &http.Client{Transport: oauthRoundTripper}, // auth/oauthclient, for a protected server
//		Logger:     slog.New(slog.NewTextHandler(os.Stderr, nil)),
//	})
//
// The host speaks whichever version it chooses (2025-06-18, 2025-11-25 with
// initialize, or 2026-07-28), and the bridge answers it with the remote
// server's identity, capabilities and instructions. Requests, the host's
// progress tokens, log levels and cancellations go to the remote server;
// progress, log messages, list changes and resource updates come back.
//
// # Questions across generations
//
// A 2026-07-28 server asks for input by answering a call with
// input_required; a legacy server sends requests of its own while the
// call is in flight. The bridge turns one into the other:
//
//   - A legacy host and a 2026-07-28 server: each input_required result
//     becomes real requests to the host (elicitation/create,
//     sampling/createMessage, roots/list), and the call is sent again with
//     the host's answers and the server's requestState exactly as it came
//     (sealed state stays sealed: the bridge never reads it).
//   - A 2026-07-28 host and a legacy server: each request the server sends
//     becomes one round of input_required toward the host; the host's next
//     round carries the answer back to the waiting server. The bridge holds
//     the call meanwhile, for Options.AnswerTimeout at most.
//   - Same generation on both sides: questions pass through as they are.
//
// The host's declared capabilities are what the remote server sees, so a
// server never asks the bridge what the host cannot answer.
package bridge
