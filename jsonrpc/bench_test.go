package jsonrpc_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/transport"
)

// BenchmarkCallRoundTrip measures one Call over a memory pipe to a handler
// returning a small json.RawMessage.
func BenchmarkCallRoundTrip(b *testing.B) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	result := json.RawMessage(`{"ok":true}`)
	ct, st := transport.NewMemoryPipe()
	server := jsonrpc.NewConn(st, &jsonrpc.ConnOptions{
		Logger: quiet,
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			return result, nil
		}),
	})
	client := jsonrpc.NewConn(ct, &jsonrpc.ConnOptions{Logger: quiet})
	defer server.Close()
	defer client.Close()
	ctx := context.Background()
	params := json.RawMessage(`{"name":"echo","arguments":{"x":1}}`)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		var got json.RawMessage
		if err := client.Call(ctx, "tools/call", params, &got); err != nil {
			b.Fatal(err)
		}
	}
}
