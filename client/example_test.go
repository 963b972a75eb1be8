package client_test

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

// greeter is a server with one tool, greet.
func greeter() *server.Server {
	s := server.New(mcp.Implementation{Name: "greeter", Version: "1.0.0"}, nil)
	tools := []mcp.Tool{{
		Name:        "greet",
		Description: "Say hello to someone.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}},"required":["name"]}`),
	}}
	s.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		return &mcp.ListToolsResult{Tools: tools}, nil
	})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		var args struct {
			Name string `json:"name"`
		}
		if err := p.DecodeArguments(&args); err != nil {
			return nil, wire.InvalidParams("Invalid params: %v", err)
		}
		return mcp.TextResult("Hello, " + args.Name + "!"), nil
	})
	return s
}

// Connect to a server over the in-memory pipe, list its tools and call one.
func Example() {
	ctx := context.Background()

	// The server serves one end of the pipe...
	clientEnd, serverEnd := transport.NewMemoryPipe()
	served := make(chan struct{})
	go func() {
		defer close(served)
		greeter().ServeConn(ctx, serverEnd)
	}()

	// ...and the client connects to the other.
	c := client.New(mcp.Implementation{Name: "example-host", Version: "1.0.0"}, nil)
	sess, err := c.Connect(ctx, transport.NewMemoryTransport(clientEnd))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("protocol version:", sess.ProtocolVersion())
	fmt.Println("server:", sess.ServerInfo().Name)

	for tool, err := range sess.Tools(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("tool: %s (%s)\n", tool.Name, tool.Description)
	}

	res, err := sess.CallTool(ctx, "greet", map[string]any{"name": "Ada"})
	if err != nil {
		log.Fatal(err)
	}
	for _, block := range res.Content {
		if t, ok := block.(*mcp.TextContent); ok {
			fmt.Println("result:", t.Text)
		}
	}

	sess.Close()
	<-served
	// Output:
	// protocol version: 2026-07-28
	// server: greeter
	// tool: greet (Say hello to someone.)
	// result: Hello, Ada!
}

// Watch a server's tool list with a subscriptions/listen stream.
func ExampleSession_Listen() {
	ctx := context.Background()
	s := greeter()
	clientEnd, serverEnd := transport.NewMemoryPipe()
	go s.ServeConn(ctx, serverEnd)
	sess, err := client.New(mcp.Implementation{Name: "example-host", Version: "1.0.0"}, nil).
		Connect(ctx, transport.NewMemoryTransport(clientEnd))
	if err != nil {
		log.Fatal(err)
	}
	defer sess.Close()

	sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("granted tools list changes:", sub.Granted.ToolsListChanged)

	s.NotifyToolListChanged() // say, a tool was added
	ev := <-sub.Events()
	fmt.Println("event:", ev.Method)

	sub.Close()
	fmt.Println("stream ended:", sub.Err())
	// Output:
	// granted tools list changes: true
	// event: notifications/tools/list_changed
	// stream ended: context canceled
}
