package client_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

// trivialServer has one tool that returns a fixed text, so that a call
// measures the SDK and nothing else.
func trivialServer() *server.Server {
	s := server.New(mcp.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return mcp.TextResult("ok"), nil
	})
	return s
}

func connectInMemory(tb testing.TB, s *server.Server, opts *client.Options) *client.Session {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	clientEnd, serverEnd := transport.NewMemoryPipe()
	done := make(chan struct{})
	go func() { s.ServeConn(ctx, serverEnd); close(done) }()
	c := client.New(mcp.Implementation{Name: "bench-client", Version: "1.0.0"}, opts)
	sess, err := c.Connect(ctx, transport.NewMemoryTransport(clientEnd))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { sess.Close(); cancel(); <-done })
	return sess
}

var benchArgs = json.RawMessage(`{"x":1}`)

// BenchmarkCallToolInMemory is one tools/call round trip of a trivial tool
// over the in-memory transport: client encoding, server decoding and
// dispatch, the result's encoding and the client's decoding.
func BenchmarkCallToolInMemory(b *testing.B) {
	sess := connectInMemory(b, trivialServer(), nil)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sess.CallTool(ctx, "trivial", benchArgs); err != nil {
			b.Fatal(err)
		}
	}
}

// callToolAllocBudget is the budget of allocations per in-memory
// tools/call round trip; the test allows 25% over it before failing.
const callToolAllocBudget = 40

func TestCallToolAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race; make test checks the budget in a separate run without it")
	}
	sess := connectInMemory(t, trivialServer(), nil)
	ctx := context.Background()
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := sess.CallTool(ctx, "trivial", benchArgs); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%.1f allocations per tools/call round trip (budget %d)", allocs, callToolAllocBudget)
	if limit := float64(callToolAllocBudget) * 1.25; allocs > limit {
		t.Errorf("tools/call round trip allocates %.1f times, over the budget of %d by more than 25%%", allocs, callToolAllocBudget)
	}
}
