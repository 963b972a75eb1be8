package jsonrpc_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"log/slog"
	"testing"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/transport"
)

// spin does about 90 ns of CPU work per round on the machines of
// BENCHMARKS.md: a stand-in for decoding and handling, with no allocation.
func spin(rounds int) {
	var x [32]byte
	for range rounds {
		x = sha256.Sum256(x[:])
	}
	spinSink = x[0]
}

var spinSink byte

// BenchmarkCallParallel is concurrent calls on one Conn over a memory pipe,
// GOMAXPROCS callers (run it with -cpu 1,2): bare, and with about 3.5 µs of
// work in the handler and as much in each caller around the call, the shape
// and size of a typed tools/call. Whether the second kind runs faster with
// two processors than with one says whether the Conn lets a call's work
// spread over them (BENCHMARKS.md, issue 24).
func BenchmarkCallParallel(b *testing.B) {
	for _, bc := range []struct {
		name              string
		server, perCaller int
	}{{"bare", 0, 0}, {"work", 40, 20}} {
		b.Run(bc.name, func(b *testing.B) {
			quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
			result := json.RawMessage(`{"ok":true}`)
			ct, st := transport.NewMemoryPipe()
			server := jsonrpc.NewConn(st, &jsonrpc.ConnOptions{Logger: quiet, Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
				spin(bc.server)
				return result, nil
			})})
			client := jsonrpc.NewConn(ct, &jsonrpc.ConnOptions{Logger: quiet})
			b.Cleanup(func() {
				client.Close()
				server.Close()
			})
			params := json.RawMessage(`{"name":"echo","arguments":{"x":1}}`)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					spin(bc.perCaller / 2)
					var got json.RawMessage
					if err := client.Call(context.Background(), "tools/call", params, &got); err != nil {
						b.Error(err)
						return
					}
					spin(bc.perCaller / 2)
				}
			})
		})
	}
}
