package otel_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// TestSessionDurations: a legacy session is timed on both sides, from its
// first request until it ends, and recorded once it has ended.
func TestSessionDurations(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	tel := newTelemetry(t)
	s := server.New(mcp.Implementation{Name: "legacy", Version: "1"}, &server.Options{SupportedVersions: []mcp.ProtocolVersion{mcp.Version20251125}})
	s.Use(tel.ServerMiddleware)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		req.Route = p.Name
		return mcp.TextResult("ok"), nil
	})
	opts := accepting(tel)
	opts.ProtocolVersion = mcp.Version20251125
	sess := connect(t, serve(t, s), opts)
	if _, err := sess.CallTool(ctx, "t", nil); err != nil {
		t.Fatal(err)
	}
	if m := tel.metrics(t); m["mcp.client.session.duration"] != nil || m["mcp.server.session.duration"] != nil {
		t.Fatal("a session duration was recorded before the session ended")
	}
	sess.Close()
	want := map[string]string{"mcp.protocol.version": string(mcp.Version20251125)}
	for {
		m := tel.metrics(t)
		c, s := m["mcp.client.session.duration"], m["mcp.server.session.duration"]
		if c != nil && s != nil {
			if n := floatHistCount(t, c, want); n != 1 {
				t.Errorf("client sessions recorded: %d, want 1", n)
			}
			if n := floatHistCount(t, s, want); n != 1 {
				t.Errorf("server sessions recorded: %d, want 1", n)
			}
			return
		}
		if ctx.Err() != nil {
			t.Fatalf("session durations not recorded after the session ended (client %v, server %v)", c != nil, s != nil)
		}
		runtime.Gosched()
	}
}
