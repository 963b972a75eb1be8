package bench_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// parleyRegionQ is the sealed flow's one question, declared the mcpserver
// way: a form whose fields are those of regionAnswer.
var parleyRegionQ = mcpserver.Elicit[regionAnswer]("region", func(a echoArgs, _ *mcpserver.Call) string {
	return question(a)
})

// parleyServer is the high-level server with the two typed tools: "echo"
// (answers the name) and "provision" (one form elicitation, the
// requestState sealed, as mcpserver always does).
func parleyServer(tb testing.TB) *mcpserver.Server {
	tb.Helper()
	s := mcpserver.MustNew(mcp.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	err := mcpserver.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, c *mcpserver.Call, a echoArgs) (string, error) {
		return a.Name, nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	err = mcpserver.AddTool(s, &mcp.Tool{Name: "provision"}, func(ctx context.Context, c *mcpserver.Call, a echoArgs) (string, error) {
		return "Provisioned " + a.Name + " in " + parleyRegionQ.Get(c).Region + ".", nil
	}, parleyRegionQ)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// parleyRegionSchema is the unsealed flow's form, written by hand: the
// schema mcpserver infers from regionAnswer.
var parleyRegionSchema = mcp.ElicitRequestedSchema{
	Properties: map[string]mcp.PrimitiveSchemaDefinition{
		"region": &mcp.StringSchema{Description: "where the database lives, such as eu-west-1"},
	},
	Required: []string{"region"},
}

// parleyUnsealedServer is the low-level server with the two-round tool
// written by hand, as go-sdk's is: the arguments decoded into echoArgs, an
// InputRequiredResult with a constant requestState on the first round, the
// answer decoded into regionAnswer on the second. Nothing is sealed and
// nothing validates the arguments against a schema (go-sdk does validate
// them: the difference is in Parley's favour here, and small, see
// BENCHMARKS.md).
func parleyUnsealedServer() *server.Server {
	s := server.New(mcp.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		var a echoArgs
		if err := p.DecodeArguments(&a); err != nil {
			return nil, wire.InvalidParams("Invalid params: %v", err)
		}
		if !p.InputResponses.Has("region") {
			return &mcp.InputRequiredResult{
				InputRequests: mcp.InputRequests{"region": mcp.NewElicitFormRequest(question(a), parleyRegionSchema)},
				RequestState:  plainState,
			}, nil
		}
		ans, err := p.InputResponses.Elicit("region")
		if err != nil || p.RequestState != plainState {
			return nil, wire.InvalidParams("Invalid params: %v", err)
		}
		var r regionAnswer
		if err := ans.DecodeContent(&r); err != nil {
			return nil, wire.InvalidParams("Invalid params: %v", err)
		}
		return mcp.TextResult("Provisioned " + a.Name + " in " + r.Region + "."), nil
	})
	return s
}

// parleyClient is the real client; its Elicit callback accepts every form
// with the same region. version "" negotiates, which lands on 2026-07-28.
func parleyClient(version mcp.ProtocolVersion) *client.Client {
	answer := &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": region}}
	return client.New(mcp.Implementation{Name: "bench-client", Version: "1.0.0"}, &client.Options{
		ProtocolVersion: version,
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			return answer, nil
		},
	})
}

// parleyConnect connects a client at version over t and closes the session
// when the benchmark ends.
func parleyConnect(tb testing.TB, t transport.Transport, version mcp.ProtocolVersion) *client.Session {
	tb.Helper()
	sess, err := parleyClient(version).Connect(context.Background(), t)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { sess.Close() })
	return sess
}

// parleyInMemory is a session with parleyServer over its in-memory
// transport.
func parleyInMemory(tb testing.TB, version mcp.ProtocolVersion) parleySession {
	return parleyConnect(tb, parleyServer(tb).InMemoryTransport(), version)
}

// parleyUnsealedInMemory is a session with parleyUnsealedServer over a
// memory pipe.
func parleyUnsealedInMemory(tb testing.TB) parleySession {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	clientEnd, serverEnd := transport.NewMemoryPipe()
	done := make(chan struct{})
	go func() { parleyUnsealedServer().ServeConn(ctx, serverEnd); close(done) }()
	tb.Cleanup(func() { cancel(); <-done })
	return parleyConnect(tb, transport.NewMemoryTransport(clientEnd), "")
}

// parleyHTTP is a session with parleyServer's Streamable HTTP handler on a
// loopback httptest server.
func parleyHTTP(tb testing.TB, version mcp.ProtocolVersion) parleySession {
	tb.Helper()
	ts := httptest.NewServer(parleyServer(tb).HTTPHandler(nil))
	tb.Cleanup(ts.Close)
	return parleyConnect(tb, streamhttp.NewClientTransport(ts.URL, nil), version)
}

// parleyCall makes one call of tool and checks the text of its result.
func parleyCall(tb testing.TB, ctx context.Context, sess *client.Session, tool, want string) {
	res, err := sess.CallTool(ctx, tool, toolArgs)
	if err != nil {
		tb.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 {
		tb.Fatalf("%s: unexpected result %+v", tool, res)
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		tb.Fatalf("%s: unexpected content %+v", tool, res.Content[0])
	}
	checkText(tb, tc.Text, want)
}

// parleyJSONRPC is a bare jsonrpc.Conn pair over a memory pipe whose
// handler answers a small raw result: jsonrpc.BenchmarkCallRoundTrip's
// setup, the floor under every in-memory call.
func parleyJSONRPC(tb testing.TB) *jsonrpc.Conn {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	result := json.RawMessage(`{"ok":true}`)
	ct, st := transport.NewMemoryPipe()
	srv := jsonrpc.NewConn(st, &jsonrpc.ConnOptions{
		Logger: quiet,
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			return result, nil
		}),
	})
	cli := jsonrpc.NewConn(ct, &jsonrpc.ConnOptions{Logger: quiet})
	tb.Cleanup(func() { cli.Close(); srv.Close() })
	return cli
}

// parleySession is a Parley client session.
type parleySession = *client.Session
