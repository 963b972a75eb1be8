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

// newRoundTrip returns a call over a memory pipe to a handler returning a
// small json.RawMessage: the bare JSON-RPC round trip, MCP's floor.
func newRoundTrip(tb testing.TB) func() {
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
	tb.Cleanup(func() {
		client.Close()
		server.Close()
	})
	ctx := context.Background()
	params := json.RawMessage(`{"name":"echo","arguments":{"x":1}}`)
	return func() {
		var got json.RawMessage
		if err := client.Call(ctx, "tools/call", params, &got); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkCallRoundTrip measures one Call over a memory pipe to a handler
// returning a small json.RawMessage.
func BenchmarkCallRoundTrip(b *testing.B) {
	call := newRoundTrip(b)
	b.ReportAllocs()
	for b.Loop() {
		call()
	}
}

// callRoundTripAllocBudget is the allocations of one bare round trip, client
// and server together: 12 since requests are served on reused goroutines
// (BENCHMARKS.md, "Profile-driven changes").
const callRoundTripAllocBudget = 12

func TestCallRoundTripAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	call := newRoundTrip(t)
	allocs := testing.AllocsPerRun(200, call)
	t.Logf("%.1f allocations per round trip (budget %d)", allocs, callRoundTripAllocBudget)
	if allocs > callRoundTripAllocBudget {
		t.Errorf("a round trip allocates %.1f times, over the budget of %d", allocs, callRoundTripAllocBudget)
	}
}
