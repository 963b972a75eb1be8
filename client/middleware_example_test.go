package client_test

import (
	"context"
	"fmt"
	"log"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
)

// A middleware that logs the logical call, each of its rounds, and the
// input requests answered between them, and adds a header-like value to
// every outgoing request's _meta. The same middleware sees a legacy
// server's requests, and works over any transport.
func ExampleMiddleware() {
	logCalls := func(next client.Handler) client.Handler {
		return func(ctx context.Context, req *client.Request) (any, error) {
			switch req.Kind {
			case client.KindCall:
				fmt.Println("call", req.Method, req.Call.Name)
			case client.KindRequest:
				if req.Call != nil {
					fmt.Println("  round", req.Round)
				}
				req.Meta().Extra = mcp.MetaExtra{"example.com/tenant": []byte(`"acme"`)}
			case client.KindInput:
				fmt.Println("  answering", req.Method, "for round", req.Round)
			}
			return next(ctx, req)
		}
	}
	c := client.New(mcp.Implementation{Name: "example-host", Version: "1.0.0"}, &client.Options{
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "eu-west-1"}}, nil
		},
		Middleware: []client.Middleware{logCalls},
	})
	sess := connectExample(c)
	defer sess.Close()

	res, err := sess.CallTool(context.Background(), "one", map[string]string{"name": "orders"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("result:", res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// call tools/call one
	//   round 1
	//   answering elicitation/create for round 1
	//   round 2
	// result: orders in eu-west-1
}
