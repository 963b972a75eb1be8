package server_test

import (
	"context"
	"fmt"
	"log"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// A server with one tool, asked directly with a raw JSON-RPC request, as a
// transport would: Handle decodes the params once, checks _meta, runs the
// handler and returns the result to encode.
func ExampleServer_Handle() {
	s := server.New(mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		var args struct {
			Name string `json:"name"`
		}
		if err := p.DecodeArguments(&args); err != nil {
			return nil, wire.InvalidParams("Invalid params: %v", err)
		}
		return mcp.TextResult("Hello, " + args.Name + "!"), nil
	})

	msg, _, err := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},` +
		`"name":"greet","arguments":{"name":"Ada"}}}`))
	if err != nil {
		log.Fatal(err)
	}
	res, err := s.Handle(context.Background(), msg.(*jsonrpc.Request), nil)
	if err != nil {
		log.Fatal(err)
	}
	out, _ := mcp.Marshal(res)
	fmt.Println(string(out))
	// Output:
	// {"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"greeter","version":"1.0.0"}},"resultType":"complete","content":[{"type":"text","text":"Hello, Ada!"}]}
}

// A tool that needs the user's answer returns an InputRequiredResult on the
// first call, and finds the answer (and its own state) in the params of the
// retry. The server checks the result before it leaves: only the three
// carrier methods may return one, and only what the request's capabilities
// allow may be asked.
func ExampleCallToolHandler_inputRequired() {
	s := server.New(mcp.Implementation{Name: "provisioner", Version: "1.0.0"}, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if !p.InputResponses.Has("region") {
			return &mcp.InputRequiredResult{
				InputRequests: mcp.InputRequests{"region": mcp.NewElicitFormRequest("Which region?", mcp.ElicitRequestedSchema{
					Properties: map[string]mcp.PrimitiveSchemaDefinition{"region": &mcp.StringSchema{}},
				})},
				RequestState: "step-1",
			}, nil
		}
		answer, err := p.InputResponses.Elicit("region")
		if err != nil {
			return nil, wire.InvalidParams("Invalid params: %v", err)
		}
		return mcp.TextResult(fmt.Sprintf("%s in %v (state %s)", answer.Action, answer.Content["region"], p.RequestState)), nil
	})

	call := func(extra string) {
		msg, _, _ := jsonrpc.DecodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{` +
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}},` +
			`"name":"provision"` + extra + `}}`))
		res, err := s.Handle(context.Background(), msg.(*jsonrpc.Request), nil)
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		switch r := res.(type) {
		case *mcp.InputRequiredResult:
			fmt.Println("asks for", r.InputRequests.Keys(), "with state", r.RequestState)
		case *mcp.CallToolResult:
			fmt.Println(r.Content[0].(*mcp.TextContent).Text)
		}
	}
	call(``)
	call(`,"inputResponses":{"region":{"action":"accept","content":{"region":"eu-west-1"}}},"requestState":"step-1"`)
	// Output:
	// asks for [region] with state step-1
	// accept in eu-west-1 (state step-1)
}
