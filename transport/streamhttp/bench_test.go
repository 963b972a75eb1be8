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
	s := server.New(mcp.Implementation{Name: "bench", Version: "1.0.0"}, nil)
	tools := []mcp.Tool{{Name: "trivial", InputSchema: []byte(`{"type":"object","properties":{"x":{"type":"integer"}}}`)}}
	s.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		return &mcp.ListToolsResult{Tools: tools}, nil
	})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return mcp.TextResult("ok"), nil
	})
	ts := httptest.NewServer(NewHandler(s, nil))
	defer ts.Close()
	c := client.New(mcp.Implementation{Name: "bench-client", Version: "1.0.0"}, nil)
	ctx := context.Background()
	sess, err := c.Connect(ctx, NewClientTransport(ts.URL, nil))
	if err != nil {
		b.Fatal(err)
	}
	defer sess.Close()
	args := map[string]int{"x": 1}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := sess.CallTool(ctx, "trivial", args); err != nil {
			b.Fatal(err)
		}
	}
}
