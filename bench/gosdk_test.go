package bench_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	gomcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// gosdkRegionSchema is the two-round flow's form on go-sdk: the same
// fields Parley's form has.
var gosdkRegionSchema = &jsonschema.Schema{
	Type: "object",
	Properties: map[string]*jsonschema.Schema{
		"region": {Type: "string", Description: "where the database lives, such as eu-west-1"},
	},
	Required: []string{"region"},
}

// gosdkText is the result of a tool that answers text: Out is any, so
// go-sdk adds no output schema and no structuredContent, as Parley's string
// result has none.
func gosdkText(s string) *gomcp.CallToolResult {
	return &gomcp.CallToolResult{Content: []gomcp.Content{&gomcp.TextContent{Text: s}}}
}

// gosdkServer is go-sdk's server with the same typed tools as
// parleyServer, each through gomcp.AddTool (input schema inferred from
// echoArgs, arguments validated and decoded):
//
//   - "echo" answers the name;
//   - "provision" is the two-round flow the 2026-07-28 way (SEP-2322, which
//     go-sdk v1.8.0 implements): the first call answers with inputRequests
//     and a constant requestState, the retry carries the answer. go-sdk
//     does not seal the state: that is left to the tool author.
//   - "provision-backchannel" is the same flow the 2025-11-25 way: within
//     one call the tool sends elicitation/create to the client over the
//     session (ServerSession.Elicit) and waits for the answer.
func gosdkServer() *gomcp.Server {
	s := gomcp.NewServer(&gomcp.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	gomcp.AddTool(s, &gomcp.Tool{Name: "echo"}, func(ctx context.Context, req *gomcp.CallToolRequest, a echoArgs) (*gomcp.CallToolResult, any, error) {
		return gosdkText(a.Name), nil, nil
	})
	gomcp.AddTool(s, &gomcp.Tool{Name: "provision"}, func(ctx context.Context, req *gomcp.CallToolRequest, a echoArgs) (*gomcp.CallToolResult, any, error) {
		resp, ok := req.Params.InputResponses["region"]
		if !ok {
			return &gomcp.CallToolResult{
				InputRequests: gomcp.InputRequestMap{"region": &gomcp.ElicitParams{Message: question(a), RequestedSchema: gosdkRegionSchema}},
				RequestState:  plainState,
			}, nil, nil
		}
		ans, ok := resp.(*gomcp.ElicitResult)
		if !ok || req.Params.RequestState != plainState {
			return nil, nil, fmt.Errorf("unexpected answer %T or state %q", resp, req.Params.RequestState)
		}
		return gosdkProvisioned(a, ans)
	})
	gomcp.AddTool(s, &gomcp.Tool{Name: "provision-backchannel"}, func(ctx context.Context, req *gomcp.CallToolRequest, a echoArgs) (*gomcp.CallToolResult, any, error) {
		ans, err := req.Session.Elicit(ctx, &gomcp.ElicitParams{Message: question(a), RequestedSchema: gosdkRegionSchema})
		if err != nil {
			return nil, nil, err
		}
		return gosdkProvisioned(a, ans)
	})
	return s
}

// gosdkProvisioned is the two-round tools' final answer, from the
// accepted form.
func gosdkProvisioned(a echoArgs, ans *gomcp.ElicitResult) (*gomcp.CallToolResult, any, error) {
	r, ok := ans.Content["region"].(string)
	if ans.Action != "accept" || !ok {
		return nil, nil, fmt.Errorf("unexpected elicitation answer %+v", ans)
	}
	return gosdkText("Provisioned " + a.Name + " in " + r + "."), nil, nil
}

// gosdkClient is go-sdk's client; its elicitation handler accepts every
// form with the same region, and its automatic multi-round-trip loop is on
// (the default).
func gosdkClient() *gomcp.Client {
	answer := &gomcp.ElicitResult{Action: "accept", Content: map[string]any{"region": region}}
	return gomcp.NewClient(&gomcp.Implementation{Name: "bench-client", Version: "1.0.0"}, &gomcp.ClientOptions{
		ElicitationHandler: func(ctx context.Context, req *gomcp.ElicitRequest) (*gomcp.ElicitResult, error) {
			return answer, nil
		},
	})
}

// gosdkConnect connects a client at version ("": go-sdk's latest,
// 2026-07-28, opened with server/discover) over t and closes the session
// when the benchmark ends.
func gosdkConnect(tb testing.TB, t gomcp.Transport, version string) *gomcp.ClientSession {
	tb.Helper()
	var opts *gomcp.ClientSessionOptions
	if version != "" {
		opts = &gomcp.ClientSessionOptions{ProtocolVersion: version}
	}
	sess, err := gosdkClient().Connect(context.Background(), t, opts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { sess.Close() })
	return sess
}

// gosdkInMemory is a session with gosdkServer over go-sdk's in-memory
// transports.
func gosdkInMemory(tb testing.TB, version string) *gomcp.ClientSession {
	tb.Helper()
	ct, st := gomcp.NewInMemoryTransports()
	ss, err := gosdkServer().Connect(context.Background(), st, nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { ss.Close() })
	return gosdkConnect(tb, ct, version)
}

// gosdkHTTP is a session with gosdkServer's StreamableHTTPHandler on a
// loopback httptest server. stateless is StreamableHTTPOptions.Stateless;
// a stateful handler answers with event streams, which a server-to-client
// request needs, and a stateless one with JSON, as Parley's does for a
// plain call.
func gosdkHTTP(tb testing.TB, stateless bool, version string) *gomcp.ClientSession {
	tb.Helper()
	s := gosdkServer()
	h := gomcp.NewStreamableHTTPHandler(func(*http.Request) *gomcp.Server { return s },
		&gomcp.StreamableHTTPOptions{Stateless: stateless, JSONResponse: stateless})
	ts := httptest.NewServer(h)
	tb.Cleanup(ts.Close)
	return gosdkConnect(tb, &gomcp.StreamableClientTransport{Endpoint: ts.URL}, version)
}

// gosdkCall makes one call of tool and checks the text of its result.
func gosdkCall(tb testing.TB, ctx context.Context, sess *gomcp.ClientSession, tool, want string) {
	res, err := sess.CallTool(ctx, &gomcp.CallToolParams{Name: tool, Arguments: toolArgs})
	if err != nil {
		tb.Fatal(err)
	}
	if res.IsError || len(res.Content) != 1 {
		tb.Fatalf("%s: unexpected result %+v", tool, res)
	}
	tc, ok := res.Content[0].(*gomcp.TextContent)
	if !ok {
		tb.Fatalf("%s: unexpected content %+v", tool, res.Content[0])
	}
	checkText(tb, tc.Text, want)
}

// gosdkSession is a go-sdk client session.
type gosdkSession = *gomcp.ClientSession
