package bench_test

import (
	"context"
	"encoding/json"
	"testing"

	mgclient "github.com/mark3labs/mcp-go/client"

	"github.com/parley-mcp/parley/mcp"
)

// Every benchmark here has sub-benchmarks named parley… and gosdk… that
// run one workload on each SDK; cmd/ratio pairs them by those names. Each
// iteration checks its answer.

// loop runs call as the sub-benchmark name, after setup has made it.
func loop(b *testing.B, name string, setup func(b *testing.B) func(ctx context.Context)) {
	b.Run(name, func(b *testing.B) {
		call := setup(b)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			call(ctx)
		}
	})
}

// loopParallel is loop with the calls made from GOMAXPROCS goroutines at
// once, on the one session setup made (run it with -cpu 1,2).
func loopParallel(b *testing.B, name string, setup func(b *testing.B) func(ctx context.Context)) {
	b.Run(name, func(b *testing.B) {
		call := setup(b)
		ctx := context.Background()
		b.ReportAllocs()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				call(ctx)
			}
		})
	})
}

// parleyTool is a setup that calls tool on the session open returns and
// expects want.
func parleyTool(open func(b *testing.B) parleySession, tool, want string) func(b *testing.B) func(context.Context) {
	return func(b *testing.B) func(context.Context) {
		sess := open(b)
		return func(ctx context.Context) { parleyCall(b, ctx, sess, tool, want) }
	}
}

// gosdkTool is parleyTool for go-sdk.
func gosdkTool(open func(b *testing.B) gosdkSession, tool, want string) func(b *testing.B) func(context.Context) {
	return func(b *testing.B) func(context.Context) {
		sess := open(b)
		return func(ctx context.Context) { gosdkCall(b, ctx, sess, tool, want) }
	}
}

// BenchmarkToolCall is one tools/call round trip of a typed trivial tool
// (input a struct with one string, answer that string as text) over each
// SDK's in-memory transport, 2026-07-28: the client's encoding, the
// server's decoding, the arguments validated against the inferred schema
// and decoded into the struct, the tool, the result, the client's decoding.
// The Parley side is mcpserver.BenchmarkTypedCall.
func BenchmarkToolCall(b *testing.B) {
	loop(b, "parley", parleyTool(func(b *testing.B) parleySession { return parleyInMemory(b, "") }, "echo", echoText))
	loop(b, "gosdk", gosdkTool(func(b *testing.B) gosdkSession { return gosdkInMemory(b, "") }, "echo", echoText))
	loop(b, "mcpgo", mcpgoTool(func(b *testing.B) *mgclient.Client { return mcpgoInMemory(b, "") }, "echo", echoText))
}

// BenchmarkToolCallParallel is BenchmarkToolCall from GOMAXPROCS goroutines
// on one session. ns/op is wall time per call, so the ratio of the -cpu 1
// and -cpu 2 figures is the throughput gained by the second core.
func BenchmarkToolCallParallel(b *testing.B) {
	loopParallel(b, "parley", parleyTool(func(b *testing.B) parleySession { return parleyInMemory(b, "") }, "echo", echoText))
	loopParallel(b, "gosdk", gosdkTool(func(b *testing.B) gosdkSession { return gosdkInMemory(b, "") }, "echo", echoText))
	loopParallel(b, "mcpgo", mcpgoTool(func(b *testing.B) *mgclient.Client { return mcpgoInMemory(b, "") }, "echo", echoText))
}

// BenchmarkTwoRounds is a tools/call that needs one form elicitation,
// finished by each client's automatic loop, in memory, 2026-07-28: the
// first call answers with an input-required result, the client's
// elicitation callback answers, the retry carries the answer and the
// state, the tool answers.
//
//   - parley-sealed: mcpserver's typed tool with a declared question, the
//     requestState sealed (mcpserver.BenchmarkProvisioner);
//   - parley-unsealed: the low-level server with the flow written by hand
//     and a constant requestState, like client.BenchmarkCallToolTwoRounds
//     (which does not decode typed arguments);
//   - gosdk: go-sdk's typed tool with the flow written by hand (SEP-2322
//     inputRequests, go-sdk's automatic client loop) and a constant
//     requestState: go-sdk does not seal.
func BenchmarkTwoRounds(b *testing.B) {
	loop(b, "parley-sealed", parleyTool(func(b *testing.B) parleySession { return parleyInMemory(b, "") }, "provision", provisioned))
	loop(b, "parley-unsealed", parleyTool(func(b *testing.B) parleySession { return parleyUnsealedInMemory(b) }, "provision", provisioned))
	loop(b, "gosdk", gosdkTool(func(b *testing.B) gosdkSession { return gosdkInMemory(b, "") }, "provision", provisioned))
	loop(b, "mcpgo", mcpgoTool(func(b *testing.B) *mgclient.Client { return mcpgoInMemory(b, "") }, "provision", provisioned))
}

// BenchmarkTwoRoundsBackChannel is the same flow on a 2025-11-25 session,
// in memory: one tools/call within which the server sends
// elicitation/create to the client and waits for its answer. Parley's is
// the same mcpserver tool (mcpserver.BenchmarkLegacyProvisioner); go-sdk's
// tool calls ServerSession.Elicit. Nothing is sealed on either side: the
// answer never leaves the request.
func BenchmarkTwoRoundsBackChannel(b *testing.B) {
	loop(b, "parley", parleyTool(func(b *testing.B) parleySession { return parleyInMemory(b, legacyVersion) }, "provision", provisioned))
	loop(b, "gosdk", gosdkTool(func(b *testing.B) gosdkSession { return gosdkInMemory(b, legacyVersion) }, "provision-backchannel", provisioned))
	loop(b, "mcpgo", mcpgoTool(func(b *testing.B) *mgclient.Client { return mcpgoInMemory(b, legacyVersion) }, "provision", provisioned))
}

// BenchmarkToolCallHTTP is BenchmarkToolCall over stateless Streamable
// HTTP (2026-07-28) on a loopback httptest server, answered with JSON:
// Parley's mcpserver handler and streamhttp client, go-sdk's
// StreamableHTTPHandler with Stateless and JSONResponse and its
// StreamableClientTransport.
func BenchmarkToolCallHTTP(b *testing.B) {
	loop(b, "parley", parleyTool(func(b *testing.B) parleySession { return parleyHTTP(b, "") }, "echo", echoText))
	loop(b, "gosdk", gosdkTool(func(b *testing.B) gosdkSession { return gosdkHTTP(b, true, "") }, "echo", echoText))
	loop(b, "mcpgo", mcpgoTool(func(b *testing.B) *mgclient.Client { return mcpgoHTTP(b, true, "") }, "echo", echoText))
}

// BenchmarkTwoRoundsHTTP is BenchmarkTwoRounds over stateless Streamable
// HTTP: two POSTs per call on each side, Parley's state sealed, go-sdk's
// not.
func BenchmarkTwoRoundsHTTP(b *testing.B) {
	loop(b, "parley-sealed", parleyTool(func(b *testing.B) parleySession { return parleyHTTP(b, "") }, "provision", provisioned))
	loop(b, "gosdk", gosdkTool(func(b *testing.B) gosdkSession { return gosdkHTTP(b, true, "") }, "provision", provisioned))
	loop(b, "mcpgo", mcpgoTool(func(b *testing.B) *mgclient.Client { return mcpgoHTTP(b, true, "") }, "provision", provisioned))
}

// BenchmarkTwoRoundsHTTPBackChannel is BenchmarkTwoRoundsBackChannel over
// Streamable HTTP: a 2025-11-25 session (a server-to-client request needs
// one, on both SDKs), the tools/call answered with an event stream that
// carries elicitation/create, whose answer the client POSTs.
func BenchmarkTwoRoundsHTTPBackChannel(b *testing.B) {
	loop(b, "parley", parleyTool(func(b *testing.B) parleySession { return parleyHTTP(b, legacyVersion) }, "provision", provisioned))
	loop(b, "gosdk", gosdkTool(func(b *testing.B) gosdkSession { return gosdkHTTP(b, false, legacyVersion) }, "provision-backchannel", provisioned))
	loop(b, "mcpgo", mcpgoTool(func(b *testing.B) *mgclient.Client { return mcpgoHTTP(b, false, legacyVersion) }, "provision", provisioned))
}

// BenchmarkSession20251125 is BenchmarkToolCall on a 2025-11-25 session
// opened with initialize, each client pinned to that version
// (mcpserver.BenchmarkLegacyTypedCall on the Parley side).
func BenchmarkSession20251125(b *testing.B) {
	loop(b, "parley", parleyTool(func(b *testing.B) parleySession { return parleyInMemory(b, legacyVersion) }, "echo", echoText))
	loop(b, "gosdk", gosdkTool(func(b *testing.B) gosdkSession { return gosdkInMemory(b, legacyVersion) }, "echo", echoText))
	loop(b, "mcpgo", mcpgoTool(func(b *testing.B) *mgclient.Client { return mcpgoInMemory(b, legacyVersion) }, "echo", echoText))
}

// BenchmarkJSONRPCRoundTrip is the floor under the in-memory calls: one
// call over Parley's bare jsonrpc.Conn and memory pipe to a handler that
// answers a small raw result, no MCP at all (jsonrpc.BenchmarkCallRoundTrip).
// go-sdk's JSON-RPC connection is internal, so it has no counterpart.
func BenchmarkJSONRPCRoundTrip(b *testing.B) {
	params := json.RawMessage(`{"name":"echo","arguments":{"x":1}}`)
	loop(b, "parley", func(b *testing.B) func(context.Context) {
		conn := parleyJSONRPC(b)
		return func(ctx context.Context) {
			var got json.RawMessage
			if err := conn.Call(ctx, "tools/call", params, &got); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// The version constants are strings on both sides; Parley's is a named
// type.
var _ mcp.ProtocolVersion = legacyVersion
