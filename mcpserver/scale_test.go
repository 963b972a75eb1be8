package mcpserver_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/transport"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// TestToolCallFlatInToolsAllocBudget: a tools/call costs as much among ten
// thousand registered tools as among ten (issue 35: within 1.2×; it is
// exact), in memory and over HTTP, where the handler checks the called
// tool's header annotations through the registry (FindTool) rather than
// by listing tools page by page. The tool called is registered last, so
// that a scan would pay for every one.
func TestToolCallFlatInToolsAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race; make test checks the budget in a separate run without it")
	}
	type in struct {
		Name string `json:"name"`
	}
	perCall := func(tools int, overHTTP bool) float64 {
		s := mcpserver.MustNew(mcp.Implementation{Name: "scale", Version: "1"}, &mcpserver.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		echo := func(ctx context.Context, c *mcpserver.Call, a in) (string, error) { return a.Name, nil }
		for i := range tools {
			if err := mcpserver.AddTool(s, &mcp.Tool{Name: fmt.Sprintf("tool%05d", i)}, echo); err != nil {
				t.Fatal(err)
			}
		}
		var tr transport.Transport = s.InMemoryTransport()
		if overHTTP {
			ts := httptest.NewServer(s.HTTPHandler(nil))
			t.Cleanup(ts.Close)
			tr = streamhttp.NewClientTransport(ts.URL, nil)
		}
		sess, err := client.New(mcp.Implementation{Name: "c", Version: "1"}, nil).Connect(context.Background(), tr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sess.Close() })
		last := fmt.Sprintf("tool%05d", tools-1)
		return testing.AllocsPerRun(100, func() {
			if _, err := sess.CallTool(context.Background(), last, benchToolArgs); err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, overHTTP := range []bool{false, true} {
		few, many := perCall(10, overHTTP), perCall(10_000, overHTTP)
		t.Logf("over HTTP %v: %.1f allocations per call among 10 tools, %.1f among 10,000", overHTTP, few, many)
		if many > few*1.2 {
			t.Errorf("over HTTP %v: a tools/call allocates %.1f times among 10,000 tools, %.1f among 10: more than 1.2×", overHTTP, many, few)
		}
	}
}
