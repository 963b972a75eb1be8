package jsonrpc_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/transport"
)

// Two Conns over an in-memory pipe: the server answers "add", the client
// calls it.
func ExampleConn_Call() {
	clientEnd, serverEnd := transport.NewMemoryPipe()

	server := jsonrpc.NewConn(serverEnd, &jsonrpc.ConnOptions{
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			if req.Method != "add" {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "Method not found: " + req.Method}
			}
			var args struct{ A, B int }
			if err := json.Unmarshal(req.Params, &args); err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
			}
			return map[string]int{"sum": args.A + args.B}, nil
		}),
	})
	defer server.Close()
	client := jsonrpc.NewConn(clientEnd, nil)
	defer client.Close()

	var result struct{ Sum int }
	if err := client.Call(context.Background(), "add", map[string]int{"a": 2, "b": 3}, &result); err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println("sum:", result.Sum)

	err := client.Call(context.Background(), "subtract", nil, nil)
	fmt.Println("error:", err)
	// Output:
	// sum: 5
	// error: jsonrpc error -32601: Method not found: subtract
}
