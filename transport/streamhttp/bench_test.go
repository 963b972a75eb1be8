package streamhttp

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// BenchmarkCallToolHTTP is one tools/call round trip of a trivial tool
// through the real client and handler over loopback HTTP, answered with
// JSON: the client's encoding and POST, the handler's checks (headers
// included: the call has arguments, so the handler looks the tool up in its
// own tools/list), the tool, and the way back.
func BenchmarkCallToolHTTP(b *testing.B) {
	call := newCallToolHTTP(b)
	b.ReportAllocs()
	for b.Loop() {
		call()
	}
}

// callToolHTTPAllocBudget is the allocations of one tools/call over loopback
// HTTP, client, net/http and handler together: 145 since POSTs reuse the
// parsed endpoint URL and caller goroutines (BENCHMARKS.md, "Profile-driven
// changes (issue 13)"); net/http's own header parsing and copying is about
// half of it. AllocsPerRun rounds its average down, so the odd background
// allocation of the runtime or net/http, which it also counts, does not move it.
// 148 since a POST's context is unlinked from the caller's once an event
// stream's response is read (beginCall: context.WithoutCancel and
// context.AfterFunc, 3 allocations), without which a streamed call often
// lost its connection, a new TCP (and TLS) handshake for the next POST.
// 150 since the client's address rides in the request's context
// (auth.WithRemoteAddr: the context and the boxed string, 2 allocations),
// so that limits per caller can tell unauthenticated clients apart (issue 23).
// 148 since a response is encoded into a pooled buffer and copied once
// (it was encoded, copied, and copied into its message) and the request
// body is closed once read, so that net/http does not drain it through an
// io.LimitReader when the response starts (issue 35).
const callToolHTTPAllocBudget = 148

func TestCallToolHTTPAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race")
	}
	call := newCallToolHTTP(t)
	allocs := testing.AllocsPerRun(200, call)
	t.Logf("%.1f allocations per tools/call (budget %d)", allocs, callToolHTTPAllocBudget)
	if allocs > callToolHTTPAllocBudget {
		t.Errorf("a tools/call over HTTP allocates %.1f times, over the budget of %d", allocs, callToolHTTPAllocBudget)
	}
}

// newCallToolHTTP connects a client to a handler serving one trivial tool
// and returns a function that calls it once; cleanup closes both.
func newCallToolHTTP(tb testing.TB) func() {
	s := server.New(mcp.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	tools := []mcp.Tool{{Name: "trivial", InputSchema: []byte(`{"type":"object","properties":{"x":{"type":"integer"}}}`)}}
	s.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		return &mcp.ListToolsResult{Tools: tools}, nil
	})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return mcp.TextResult("ok"), nil
	})
	ts := httptest.NewServer(NewHandler(s, nil))
	tb.Cleanup(ts.Close)
	c := client.New(mcp.Implementation{Name: "bench-client", Version: "1.0.0"}, nil)
	ctx := context.Background()
	sess, err := c.Connect(ctx, NewClientTransport(ts.URL, nil))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { sess.Close() })
	args := map[string]int{"x": 1}
	return func() {
		if _, err := sess.CallTool(ctx, "trivial", args); err != nil {
			tb.Fatal(err)
		}
	}
}
