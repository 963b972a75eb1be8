package client_test

import (
	"context"
	"sync"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

// seen is what a tools/call handler saw of one request's _meta.
type seen struct {
	caps  *mcp.ClientCapabilities
	level mcp.LoggingLevel
	token mcp.ProgressToken
}

// metaServer serves a tool that records the _meta of each call and reports
// progress once, over an in-memory pipe in the given protocol version.
func metaServer(t *testing.T, version mcp.ProtocolVersion, seenc chan<- seen, opts *client.Options) *client.Session {
	t.Helper()
	s := server.New(mcp.Implementation{Name: "meta", Version: "1"}, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		seenc <- seen{caps: req.ClientCapabilities(), level: req.LogLevel(), token: req.Meta.ProgressToken}
		_ = req.Progress(ctx, 1, 1, "")
		return mcp.TextResult("ok"), nil
	})
	a, b := transport.NewMemoryPipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { _ = s.ServeConn(ctx, b); close(served) }()
	o := *opts
	o.ProtocolVersion = version
	cctx, ccancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer ccancel()
	sess, err := client.New(mcp.Implementation{Name: "c", Version: "1"}, &o).Connect(cctx, transport.NewMemoryTransport(a))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sess.Close()
		cancel()
		testwait.Recv(t, served, "the server to end")
	})
	return sess
}

// RequestOptions replace the client's capabilities and log level on the
// requests of one context, and route their progress to their own callback
// under a token of their own, while other requests keep the client's.
func TestRequestOptionsModern(t *testing.T) {
	seenc := make(chan seen, 4)
	var mu sync.Mutex
	var clientWide, own []mcp.ProgressToken
	sess := metaServer(t, mcp.LatestVersion, seenc, &client.Options{
		Capabilities: &mcp.ClientCapabilities{},
		LogLevel:     mcp.LevelError,
		OnProgress: func(ctx context.Context, p *mcp.ProgressNotificationParams) {
			mu.Lock()
			clientWide = append(clientWide, p.ProgressToken)
			mu.Unlock()
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	caps := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}
	octx := client.WithRequestOptions(ctx, &client.RequestOptions{
		Capabilities: caps,
		LogLevel:     mcp.LevelDebug,
		OnProgress: func(ctx context.Context, p *mcp.ProgressNotificationParams) {
			mu.Lock()
			own = append(own, p.ProgressToken)
			mu.Unlock()
		},
	})
	if _, err := sess.CallTool(octx, "x", nil); err != nil {
		t.Fatal(err)
	}
	got := testwait.Recv(t, seenc, "what the server saw")
	if got.caps.Elicitation == nil || got.level != mcp.LevelDebug || !got.token.IsValid() {
		t.Errorf("with RequestOptions the server saw capabilities %+v, level %q, token %v; want elicitation, debug and a token", got.caps, got.level, got.token)
	}
	if _, err := sess.CallTool(ctx, "x", nil); err != nil {
		t.Fatal(err)
	}
	plain := testwait.Recv(t, seenc, "what the server saw")
	if plain.caps.Elicitation != nil || plain.level != mcp.LevelError || !plain.token.IsValid() || plain.token == got.token {
		t.Errorf("without them the server saw capabilities %+v, level %q, token %v; want the client's own and a fresh token", plain.caps, plain.level, plain.token)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(own) != 1 || own[0] != got.token {
		t.Errorf("RequestOptions.OnProgress received %v, want the one report of its request (%v)", own, got.token)
	}
	if len(clientWide) != 1 || clientWide[0] != plain.token {
		t.Errorf("Options.OnProgress received %v, want only the other request's report (%v)", clientWide, plain.token)
	}
}

// On a legacy session the capabilities were declared in initialize, and
// stay; progress still gets a token of its own.
func TestRequestOptionsLegacy(t *testing.T) {
	seenc := make(chan seen, 4)
	progress := make(chan mcp.ProgressToken, 2)
	sess := metaServer(t, mcp.Version20251125, seenc, &client.Options{Capabilities: &mcp.ClientCapabilities{}})
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	octx := client.WithRequestOptions(ctx, &client.RequestOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}},
		OnProgress:   func(ctx context.Context, p *mcp.ProgressNotificationParams) { progress <- p.ProgressToken },
	})
	if _, err := sess.CallTool(octx, "x", nil); err != nil {
		t.Fatal(err)
	}
	got := testwait.Recv(t, seenc, "what the server saw")
	if got.caps.Elicitation != nil || !got.token.IsValid() {
		t.Errorf("on a legacy session the server saw capabilities %+v and token %v; want initialize's and a token", got.caps, got.token)
	}
	if len(progress) != 1 || <-progress != got.token {
		t.Errorf("RequestOptions.OnProgress did not receive its request's progress")
	}
}
