package mcpserver_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

// benchEchoArgs is the smallest typed argument struct: one required string.
type benchEchoArgs struct {
	Name string `json:"name" jsonschema:"who to greet"`
}

// benchRegion is the form of the Provisioner flow's one question.
type benchRegion struct {
	Region string `json:"region" jsonschema:"where the database lives, such as eu-west-1"`
}

var benchRegionQ = mcpserver.Elicit[benchRegion]("region", func(a benchEchoArgs, _ *mcpserver.Call) string {
	return "Which region should " + a.Name + " live in?"
})

// benchToolArgs are the arguments both benchmarks send, pre-encoded as the
// client benchmarks' are, so that the client's own encoding of a map does
// not count against the server.
var benchToolArgs = json.RawMessage(`{"name":"orders"}`)

// benchServer has the two tools the benchmarks call: "echo", a typed
// trivial tool, and "provision", the Provisioner flow (a typed tool with
// one form elicitation, sealing on by default).
func benchServer(tb testing.TB) *mcpserver.Server {
	tb.Helper()
	s := mcpserver.MustNew(mcp.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	err := mcpserver.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, c *mcpserver.Call, a benchEchoArgs) (string, error) {
		return a.Name, nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	err = mcpserver.AddTool(s, &mcp.Tool{Name: "provision"}, func(ctx context.Context, c *mcpserver.Call, a benchEchoArgs) (string, error) {
		return "Provisioned " + a.Name + " in " + benchRegionQ.Get(c).Region + ".", nil
	}, benchRegionQ)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// benchSession connects the real client to benchServer over the in-memory
// transport. Its Elicit callback accepts the form with a fixed region.
func benchSession(tb testing.TB) *client.Session { return benchSessionAt(tb, "") }

// benchSessionAt is benchSession with the client pinned to version ("":
// negotiated, which lands on 2026-07-28).
func benchSessionAt(tb testing.TB, version mcp.ProtocolVersion) *client.Session {
	tb.Helper()
	answer := &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "eu-west-1"}}
	c := client.New(mcp.Implementation{Name: "bench-client", Version: "1.0.0"}, &client.Options{
		ProtocolVersion: version,
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			return answer, nil
		},
	})
	sess, err := c.Connect(context.Background(), benchServer(tb).InMemoryTransport())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { sess.Close() })
	return sess
}

// callEcho makes one typed trivial call and checks its answer.
func callEcho(tb testing.TB, ctx context.Context, sess *client.Session) {
	res, err := sess.CallTool(ctx, "echo", benchToolArgs)
	if err != nil {
		tb.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 {
		tb.Fatalf("echo: unexpected result %+v", res)
	}
}

// callProvision runs the whole Provisioner flow (two rounds through the
// client's automatic loop) and checks its answer.
func callProvision(tb testing.TB, ctx context.Context, sess *client.Session) {
	res, err := sess.CallTool(ctx, "provision", benchToolArgs)
	if err != nil {
		tb.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 {
		tb.Fatalf("provision: unexpected result %+v", res)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "Provisioned orders in eu-west-1." {
		tb.Fatalf("provision: unexpected content %+v", res.Content[0])
	}
}

// BenchmarkTypedCall is one tools/call round trip of a typed trivial tool
// (In a struct with one string field, Out a string) over the in-memory
// transport with the real client: the client's encoding, the low-level
// server, the requestState boundary, mcpserver's argument validation and
// decoding, the body, the result, and the client's decoding. Compare
// client.BenchmarkCallToolInMemory, the same round trip with an untyped
// low-level handler.
func BenchmarkTypedCall(b *testing.B) {
	sess := benchSession(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		callEcho(b, ctx, sess)
	}
}

// BenchmarkProvisioner is the whole Provisioner flow: a typed tool with one
// form elicitation, sealing on (the default). The client's automatic loop
// makes two rounds: the first call gets an InputRequiredResult with the
// sealed state, the Elicit callback answers, and the retry runs the body.
// Compare client.BenchmarkCallToolTwoRounds, the same two rounds with a
// hand-written low-level handler and no seal.
func BenchmarkProvisioner(b *testing.B) {
	sess := benchSession(b)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		callProvision(b, ctx, sess)
	}
}

// BenchmarkLegacyTypedCall is BenchmarkTypedCall on a 2025-11-25 session:
// the same tool and client, with the initialize handshake done once and
// each request's _meta made from the session.
func BenchmarkLegacyTypedCall(b *testing.B) {
	sess := benchSessionAt(b, mcp.Version20251125)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		callEcho(b, ctx, sess)
	}
}

// BenchmarkLegacyProvisioner is the Provisioner flow on a 2025-11-25
// session: one tools/call, within which the server sends elicitation/create
// over the back-channel and the same Elicit callback answers. No state is
// sealed: the answer never leaves the request.
func BenchmarkLegacyProvisioner(b *testing.B) {
	sess := benchSessionAt(b, mcp.Version20251125)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		callProvision(b, ctx, sess)
	}
}
