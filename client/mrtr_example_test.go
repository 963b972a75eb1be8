package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
)

// connectExample connects c to the multi-round-trip test server.
func connectExample(c *client.Client) *client.Session {
	clientEnd, serverEnd := transport.NewMemoryPipe()
	go mrtrServer().ServeConn(context.Background(), serverEnd)
	sess, err := c.Connect(context.Background(), transport.NewMemoryTransport(clientEnd))
	if err != nil {
		log.Fatal(err)
	}
	return sess
}

// A tool that needs an answer from the user first: the client's Elicit
// callback answers, and CallTool returns only the final result.
func ExampleSession_CallTool_inputRequired() {
	c := client.New(mcp.Implementation{Name: "example-host", Version: "1.0.0"}, &client.Options{
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			fmt.Println("asked:", p.(*mcp.ElicitRequestFormParams).Message)
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "eu-west-1"}}, nil
		},
		Loop: &client.LoopOptions{OnRound: func(ctx context.Context, p *client.Pending) error {
			fmt.Println("round", p.Round, "asks for", p.InputRequests.Keys())
			return nil
		}},
	})
	sess := connectExample(c)
	defer sess.Close()

	res, err := sess.CallTool(context.Background(), "one", map[string]string{"name": "orders"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("result:", res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// round 1 asks for [region]
	// asked: Which region should orders live in?
	// result: orders in eu-west-1
}

// Driving the loop yourself: Begin returns a Pending, which is plain data
// that can be stored and continued later, by another session or process.
func ExampleSession_Begin() {
	ctx := context.Background()
	sess := connectExample(client.New(mcp.Implementation{Name: "caller", Version: "1.0.0"}, &client.Options{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}},
	}))
	call, err := client.ToolCall("one", map[string]string{"name": "orders"})
	if err != nil {
		log.Fatal(err)
	}
	_, p, err := sess.Begin(ctx, call)
	if err != nil {
		log.Fatal(err)
	}
	saved, _ := json.Marshal(p) // to a file, a queue, a database...
	sess.Close()

	// Later, elsewhere: a fresh session answers and continues.
	var pending client.Pending
	if err := json.Unmarshal(saved, &pending); err != nil {
		log.Fatal(err)
	}
	worker := connectExample(client.New(mcp.Implementation{Name: "worker", Version: "1.0.0"}, nil))
	defer worker.Close()
	var answers mcp.InputResponses
	answers.Set("region", &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"region": "ap-south-1"}})
	res, next, err := worker.Continue(ctx, &pending, answers)
	if err != nil || next != nil {
		log.Fatal(err, next)
	}
	fmt.Println("state echoed:", pending.RequestState)
	fmt.Println("result:", res.(*mcp.CallToolResult).Content[0].(*mcp.TextContent).Text)
	// Output:
	// state echoed: one-v1
	// result: orders in ap-south-1
}
