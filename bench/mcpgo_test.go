package bench_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	mgclient "github.com/mark3labs/mcp-go/client"
	mgtransport "github.com/mark3labs/mcp-go/client/transport"
	mgmcp "github.com/mark3labs/mcp-go/mcp"
	mgserver "github.com/mark3labs/mcp-go/server"
)

// mcpgoRegionSchema is the two-round flow's form on mcp-go: the same
// fields Parley's form has.
var mcpgoRegionSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"region": map[string]any{"type": "string", "description": "where the database lives, such as eu-west-1"},
	},
	"required": []string{"region"},
}

// mcpgoServer is mark3labs/mcp-go's server with the same typed tools as
// parleyServer, each through mgmcp.NewTypedToolHandler with the input
// schema inferred from echoArgs (mgmcp.WithInputSchema) and the arguments
// validated against it (WithInputSchemaValidation, off by default in
// mcp-go; on here because both other SDKs validate):
//
//   - "echo" answers the name;
//   - "provision" is the two-round flow the 2026-07-28 way (SEP-2322,
//     which mcp-go v1.2.1 implements): the first call answers with
//     inputRequests and a constant requestState, the retry carries the
//     answer. mcp-go does not seal the state. On a 2025-11-25 session
//     mcp-go runs the same handler by sending elicitation/create over the
//     session itself (its "legacy bridge"), which makes it the
//     back-channel tool too.
func mcpgoServer() *mgserver.MCPServer {
	s := mgserver.NewMCPServer("bench", "1.0.0", mgserver.WithInputSchemaValidation(), mgserver.WithElicitation())
	s.AddTool(mgmcp.NewTool("echo", mgmcp.WithInputSchema[echoArgs]()),
		mgmcp.NewTypedToolHandler(func(ctx context.Context, req mgmcp.CallToolRequest, a echoArgs) (*mgmcp.CallToolResult, error) {
			return mgmcp.NewToolResultText(a.Name), nil
		}))
	s.AddTool(mgmcp.NewTool("provision", mgmcp.WithInputSchema[echoArgs]()),
		mgmcp.NewTypedToolHandler(func(ctx context.Context, req mgmcp.CallToolRequest, a echoArgs) (*mgmcp.CallToolResult, error) {
			if _, ok := mgserver.InputResponse(req.Params.InputResponses, "region"); !ok {
				return mgserver.NewInputRequestBuilder(plainState).
					Elicit("region", mgmcp.ElicitationParams{Message: question(a), RequestedSchema: mcpgoRegionSchema}).
					ToolResult(), nil
			}
			ans := mgserver.ElicitationResponse(req.Params.InputResponses, "region")
			if ans == nil || req.Params.RequestState != plainState {
				return nil, fmt.Errorf("unexpected answer %+v or state %q", ans, req.Params.RequestState)
			}
			content, _ := ans.Content.(map[string]any)
			r, ok := content["region"].(string)
			if ans.Action != mgmcp.ElicitationResponseActionAccept || !ok {
				return nil, fmt.Errorf("unexpected elicitation answer %+v", ans)
			}
			return mgmcp.NewToolResultText("Provisioned " + a.Name + " in " + r + "."), nil
		}))
	return s
}

// quietLog keeps mcp-go's HTTP server from logging each back-channel
// answer at INFO during a benchmark.
var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// mcpgoElicit is mcp-go's client elicitation handler: it accepts every
// form with the same region.
type mcpgoElicit struct{}

func (mcpgoElicit) Elicit(ctx context.Context, req mgmcp.ElicitationRequest) (*mgmcp.ElicitationResult, error) {
	return &mgmcp.ElicitationResult{ElicitationResponse: mgmcp.ElicitationResponse{
		Action:  mgmcp.ElicitationResponseActionAccept,
		Content: map[string]any{"region": region},
	}}, nil
}

// mcpgoStart starts c at version ("": mcp-go's latest, 2026-07-28, opened
// with server/discover; "2025-11-25": initialize), checks the version it
// reached and closes it when the benchmark ends.
func mcpgoStart(tb testing.TB, c *mgclient.Client, version string) *mgclient.Client {
	tb.Helper()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { c.Close() })
	req := mgmcp.InitializeRequest{}
	req.Params.ClientInfo = mgmcp.Implementation{Name: "bench-client", Version: "1.0.0"}
	req.Params.ProtocolVersion = version
	res, err := c.Initialize(ctx, req)
	if err != nil {
		tb.Fatal(err)
	}
	want := version
	if want == "" {
		want = "2026-07-28"
	}
	if res.ProtocolVersion != want {
		tb.Fatalf("mcp-go negotiated %q, want %q", res.ProtocolVersion, want)
	}
	return c
}

// mcpgoOptions are the client options of every mcp-go client here.
func mcpgoOptions(version string) []mgclient.ClientOption {
	opts := []mgclient.ClientOption{mgclient.WithElicitationHandler(mcpgoElicit{})}
	if version != "" {
		opts = append(opts, mgclient.WithProtocolVersion(version))
	}
	return opts
}

// mcpgoInMemory is a client of mcpgoServer over mcp-go's in-process
// transport (which encodes each message to JSON and back, as the other
// SDKs' in-memory transports do).
func mcpgoInMemory(tb testing.TB, version string) *mgclient.Client {
	tb.Helper()
	c, err := mgclient.NewInProcessClientWithOptions(mcpgoServer(), mcpgoOptions(version)...)
	if err != nil {
		tb.Fatal(err)
	}
	return mcpgoStart(tb, c, version)
}

// mcpgoHTTP is a client of mcpgoServer's StreamableHTTPServer on a
// loopback httptest server. stateless is WithStateLess (a 2026-07-28
// request is sessionless whatever it is); otherwise the server keeps its
// default session manager and a 2025-11-25 client gets a session.
func mcpgoHTTP(tb testing.TB, stateless bool, version string) *mgclient.Client {
	tb.Helper()
	opts := []mgserver.StreamableHTTPOption{mgserver.WithStreamableHTTPLogger(quietLog)}
	if stateless {
		opts = append(opts, mgserver.WithStateLess(true))
	}
	ts := httptest.NewServer(mgserver.NewStreamableHTTPServer(mcpgoServer(), opts...))
	tb.Cleanup(ts.Close)
	t, err := mgtransport.NewStreamableHTTP(ts.URL)
	if err != nil {
		tb.Fatal(err)
	}
	return mcpgoStart(tb, mgclient.NewClient(t, mcpgoOptions(version)...), version)
}

// mcpgoCall makes one call of tool and checks the text of its result.
func mcpgoCall(tb testing.TB, ctx context.Context, c *mgclient.Client, tool, want string) {
	req := mgmcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.RawArguments = toolArgs
	res, err := c.CallTool(ctx, req)
	if err != nil {
		tb.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 {
		tb.Fatalf("%s: unexpected result %+v", tool, res)
	}
	tc, ok := res.Content[0].(mgmcp.TextContent)
	if !ok {
		tb.Fatalf("%s: unexpected content %#v", tool, res.Content[0])
	}
	checkText(tb, tc.Text, want)
}

// mcpgoTool is parleyTool for mcp-go.
func mcpgoTool(open func(b *testing.B) *mgclient.Client, tool, want string) func(b *testing.B) func(context.Context) {
	return func(b *testing.B) func(context.Context) {
		c := open(b)
		return func(ctx context.Context) { mcpgoCall(b, ctx, c, tool, want) }
	}
}
