package bridge_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/bridge"
	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

var quiet = slog.New(slog.DiscardHandler)

// Name is the form the remote servers' "ask" tool shows.
type Name struct {
	Name string `json:"name" jsonschema:"your name"`
}

// remoteEvents is what a remote server's tools report to the test.
type remoteEvents struct {
	started   chan struct{} // the tool "slow" began
	cancelled chan struct{} // the tool "slow" saw its context end
	release   chan struct{} // closed when the test ends: "slow" returns
}

func newRemoteEvents() *remoteEvents {
	return &remoteEvents{started: make(chan struct{}, 1), cancelled: make(chan struct{}, 1), release: make(chan struct{})}
}

// modernRemote serves a Parley mcpserver that speaks 2026-07-28 only, over
// httptest, and returns its URL and the server.
func modernRemote(t *testing.T, ev *remoteEvents) (string, *mcpserver.Server) {
	return remoteServer(t, ev, "remote-2026", mcp.LatestVersion)
}

// legacyRemote is modernRemote speaking 2025-11-25 only: its questions are
// requests of its own, sent while a call is in flight.
func legacyRemote(t *testing.T, ev *remoteEvents) (string, *mcpserver.Server) {
	return remoteServer(t, ev, "remote-2025", mcp.Version20251125)
}

func remoteServer(t *testing.T, ev *remoteEvents, name string, version mcp.ProtocolVersion) (string, *mcpserver.Server) {
	t.Helper()
	s := mcpserver.MustNew(mcp.Implementation{Name: name, Version: "1.0.0"}, &mcpserver.Options{
		Logger:            quiet,
		SupportedVersions: []mcp.ProtocolVersion{version},
	})
	ask := mcpserver.Elicit[Name]("name", func(struct{}, *mcpserver.Call) string { return "What is your name?" }).AllowDecline()
	must(t, mcpserver.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks for a name."},
		func(ctx context.Context, call *mcpserver.Call, _ struct{}) (string, error) {
			o := ask.Outcome(call)
			return string(o.Action) + ":" + o.Content.Name, nil
		}, ask))
	sample := mcpserver.Sample("poem", func(struct{}, *mcpserver.Call) mcp.CreateMessageRequestParams {
		return mcp.CreateMessageRequestParams{MaxTokens: 10, Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.SamplingContent{&mcp.TextContent{Text: "a poem"}}}}}
	})
	must(t, mcpserver.AddTool(s, &mcp.Tool{Name: "sample", Description: "Samples a poem."},
		func(ctx context.Context, call *mcpserver.Call, _ struct{}) (string, error) {
			return "sampled:" + textOf(sample.Get(call).Content), nil
		}, sample))
	roots := mcpserver.ListRoots("roots")
	must(t, mcpserver.AddTool(s, &mcp.Tool{Name: "roots", Description: "Lists the roots."},
		func(ctx context.Context, call *mcpserver.Call, _ struct{}) (string, error) {
			var uris []string
			for _, r := range roots.Get(call) {
				uris = append(uris, r.URI)
			}
			return "roots:" + strings.Join(uris, ","), nil
		}, roots))
	addCommonTools(t, s, ev)
	srv := httptest.NewServer(s.HTTPHandler(nil))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(ev.release) })
	return srv.URL, s
}

// addCommonTools adds "slow" (reports progress, then waits for its
// cancellation) and "progress" (reports progress twice, then answers).
func addCommonTools(t *testing.T, s *mcpserver.Server, ev *remoteEvents) {
	must(t, mcpserver.AddTool(s, &mcp.Tool{Name: "slow", Description: "Waits to be cancelled."},
		func(ctx context.Context, call *mcpserver.Call, _ struct{}) (string, error) {
			ev.started <- struct{}{}
			select {
			case <-ctx.Done():
				ev.cancelled <- struct{}{}
				return "", ctx.Err()
			case <-ev.release:
				// A regression that loses the cancellation fails its
				// test; this lets the server close without waiting.
				return "released", nil
			}
		}))
	must(t, mcpserver.AddTool(s, &mcp.Tool{Name: "progress", Description: "Reports progress."},
		func(ctx context.Context, call *mcpserver.Call, _ struct{}) (string, error) {
			_ = call.Progress(ctx, 1, 2, "half")
			_ = call.Progress(ctx, 2, 2, "all")
			return "done", nil
		}))
}

// startBridge runs the bridge to remote on one end of an in-memory pipe
// and returns a host session on the other, opened with opts.
func startBridge(t *testing.T, remote transport.Transport, opts *client.Options) *client.Session {
	t.Helper()
	hostSide, bridgeSide := transport.NewMemoryPipe()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- bridge.Serve(ctx, bridgeSide, remote, &bridge.Options{Logger: quiet}) }()
	o := *opts
	o.Logger = quiet
	cctx, ccancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer ccancel()
	sess, err := client.New(mcp.Implementation{Name: "host", Version: "1.0.0"}, &o).Connect(cctx, transport.NewMemoryTransport(hostSide))
	if err != nil {
		cancel()
		t.Fatalf("host Connect through the bridge: %v", err)
	}
	t.Cleanup(func() {
		sess.Close()
		if err := testwait.Recv(t, served, "Serve to return after the host left"); err != nil {
			t.Errorf("Serve = %v, want nil after the host closed its side", err)
		}
		cancel()
	})
	return sess
}

// hostCallbacks answer as a person at the host would: the name "Ada" (or
// a decline when declineName is set), a sampled "a rose", one root.
func hostCallbacks(o *client.Options, declineName bool) *client.Options {
	o.Elicit = func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
		if declineName {
			return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
		}
		return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": "Ada"}}, nil
	}
	o.Sample = func(ctx context.Context, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
		return &mcp.CreateMessageResult{Role: mcp.RoleAssistant, Model: "test", Content: mcp.SamplingContent{&mcp.TextContent{Text: "a rose"}}}, nil
	}
	o.ListRoots = func(ctx context.Context) (*mcp.ListRootsResult, error) {
		return &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///work"}}}, nil
	}
	return o
}

func httpRemote(url string) transport.Transport { return streamhttp.NewClientTransport(url, nil) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func textOf(c any) string {
	switch v := c.(type) {
	case *mcp.TextContent:
		return v.Text
	case mcp.SamplingContent:
		var out string
		for _, b := range v {
			out += textOf(b)
		}
		return out
	}
	return ""
}

func resultText(res *mcp.CallToolResult) string {
	var out string
	for _, b := range res.Content {
		out += textOf(b)
	}
	return out
}

// callTool calls a tool through the bridge within the test's deadline.
func callTool(t *testing.T, sess *client.Session, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	res, err := sess.CallTool(ctx, name, nil)
	if err != nil {
		t.Fatalf("CallTool %s: %v", name, err)
	}
	if res.IsError {
		t.Fatalf("CallTool %s: tool error %q", name, resultText(res))
	}
	return resultText(res)
}

var _ = server.New

// addGreet adds the tool "greet", which answers "hello".
func addGreet(s *mcpserver.Server) error {
	return mcpserver.AddTool(s, &mcp.Tool{Name: "greet", Description: "Says hello."},
		func(ctx context.Context, call *mcpserver.Call, _ struct{}) (string, error) { return "hello", nil })
}
