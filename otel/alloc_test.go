package otel_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	parleyotel "github.com/parley-mcp/parley/otel"
	"github.com/parley-mcp/parley/server"
)

// TestNoProviderAllocBudget: with no tracer or meter provider (none given,
// none installed globally) the middleware is the next handler itself, so
// a call costs exactly what it costs without it.
func TestNoProviderAllocBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are meaningless under -race; the allocs stage checks the budget without it")
	}
	tel, err := parleyotel.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	next := server.Handler(func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) { return nil, nil })
	if reflect.ValueOf(tel.ServerMiddleware(next)).Pointer() != reflect.ValueOf(next).Pointer() {
		t.Error("the server middleware wraps its handler with no provider")
	}
	cnext := client.Handler(func(ctx context.Context, req *client.Request) (any, error) { return nil, nil })
	if reflect.ValueOf(tel.ClientMiddleware(cnext)).Pointer() != reflect.ValueOf(cnext).Pointer() {
		t.Error("the client middleware wraps its handler with no provider")
	}

	ctx := context.Background()
	tool := func() *server.Server {
		s := server.New(mcp.Implementation{Name: "alloc", Version: "1"}, nil)
		s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
			return mcp.TextResult("ok"), nil
		})
		return s
	}
	plainSess := connect(t, serve(t, tool()), nil)
	withSrv := tool()
	withSrv.Use(tel.ServerMiddleware)
	withSess := connect(t, serve(t, withSrv), &client.Options{Middleware: []client.Middleware{tel.ClientMiddleware}})
	measure := func(sess *client.Session) float64 {
		return testing.AllocsPerRun(200, func() {
			if _, err := sess.CallTool(ctx, "t", nil); err != nil {
				t.Fatal(err)
			}
		})
	}
	plain, with := measure(plainSess), measure(withSess)
	t.Logf("a tools/call round trip: %.1f allocations without the middleware, %.1f with it and no provider", plain, with)
	if with > plain {
		t.Errorf("with no provider the middleware adds %.1f allocations per call, want 0", with-plain)
	}
}
