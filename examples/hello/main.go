// Command hello starts a Parley server and client in one process, connected
// by an in-memory pipe, and prints the result of one tool call.
//
//	go run ./examples/hello
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

func main() {
	ctx := context.Background()
	s := newServer()

	// Connect the two ends of an in-memory pipe.
	clientEnd, serverEnd := transport.NewMemoryPipe()
	go s.ServeConn(ctx, serverEnd)

	c := client.New(mcp.Implementation{Name: "hello-client", Version: "1.0.0"}, nil)
	sess, err := c.Connect(ctx, transport.NewMemoryTransport(clientEnd))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()

	res, err := sess.CallTool(ctx, "greet", map[string]any{"name": "Parley"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("protocol %s\n", sess.ProtocolVersion())
	for _, block := range res.Content {
		if text, ok := block.(*mcp.TextContent); ok {
			fmt.Println(text.Text)
		}
	}
}

// newServer returns the server: one tool, "greet", that says hello to
// whoever it is told. main_test.go tests it with package mcptest.
func newServer() *server.Server {
	s := server.New(mcp.Implementation{Name: "hello-server", Version: "1.0.0"}, nil)
	greet := &mcp.Tool{
		Name:        "greet",
		Description: "Say hello to someone.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}
	s.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		return &mcp.ListToolsResult{Tools: []mcp.Tool{*greet}}, nil
	})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if p.Name != greet.Name {
			return nil, wire.InvalidParams("unknown tool %q", p.Name)
		}
		var args struct {
			Name string `json:"name"`
		}
		if err := p.DecodeArguments(&args); err != nil {
			return nil, wire.InvalidParams("bad arguments: %v", err)
		}
		return mcp.TextResult("Hello, " + args.Name + "!"), nil
	})
	return s
}
