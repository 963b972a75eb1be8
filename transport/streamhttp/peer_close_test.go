package streamhttp

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/leakcheck"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// A client that closes its session over Streamable HTTP ends its work on
// the server: a listen stream (2026-07-28) and a tool call in flight are
// cancelled, and once the HTTP server has closed too no goroutine of the
// session, the handler or the transport is left.
func TestSessionCloseEndsServerWork(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		name := "2026-07-28"
		if legacy {
			name = "legacy"
		}
		t.Run(name, func(t *testing.T) {
			leakcheck.Check(t)
			f := newFixture()
			listenEnded := make(chan error, 1)
			f.s.Use(func(next server.Handler) server.Handler {
				return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
					res, err := next(ctx, req)
					if req.Method == mcp.MethodSubscriptionsListen {
						listenEnded <- err
					}
					return res, err
				}
			})
			h := NewHandler(f.s, nil)
			ts := httptest.NewServer(h)
			t.Cleanup(func() { ts.Close(); EndSessions(h) })
			var opts *client.Options
			if legacy {
				opts = &client.Options{ProtocolVersion: mcp.Version20251125}
			}
			sess := connect(t, ts.URL, opts, nil)
			ctx := context.Background()
			sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true})
			if err != nil {
				t.Fatal(err)
			}
			call := make(chan error, 1)
			go func() { _, err := sess.CallTool(ctx, "slow", nil); call <- err }()
			srvRecv(t, f.slowStarted, "the start of the slow call")

			closed := make(chan error, 1)
			go func() { closed <- sess.Close() }()
			if err := srvRecv(t, closed, "Close's return with a call and a listen stream in flight"); err != nil {
				t.Errorf("Close: %v", err)
			}
			if err := srvRecv(t, f.slowEnded, "the end of the slow call's handler"); !errors.Is(err, context.Canceled) {
				t.Errorf("the tool call's context ended with %v, want context.Canceled", err)
			}
			if !legacy {
				if err := srvRecv(t, listenEnded, "the end of the listen handler"); !errors.Is(err, context.Canceled) {
					t.Errorf("the listen handler ended with %v, want context.Canceled", err)
				}
			}
			srvRecv(t, sub.Done(), "the end of the listen stream")
			if err := srvRecv(t, call, "the end of the call in flight"); err == nil {
				t.Error("the call in flight succeeded after Close")
			}
		})
	}
}
