package bridge_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"

	"github.com/parley-mcp/parley/bridge"
	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/transport"
)

// A host that speaks 2025-11-25 calls a tool of a server that speaks
// 2026-07-28 only, through the bridge. The server asks for a name with an
// input_required round; the bridge asks the host with elicitation/create,
// which the host's Elicit callback answers. In a real deployment the host
// connection is stdio.ServerConn(nil) and the remote is a URL (ServeURL).
func ExampleServeURL() {
	logger := slog.New(slog.DiscardHandler)
	remote := mcpserver.MustNew(mcp.Implementation{Name: "remote", Version: "1.0.0"}, &mcpserver.Options{
		Logger:            logger,
		SupportedVersions: []mcp.ProtocolVersion{mcp.LatestVersion},
	})
	name := mcpserver.Elicit[Name]("name", func(struct{}, *mcpserver.Call) string { return "What is your name?" })
	_ = mcpserver.AddTool(remote, &mcp.Tool{Name: "greet", Description: "Greets the person at the host."},
		func(ctx context.Context, call *mcpserver.Call, _ struct{}) (string, error) {
			return "Hello, " + name.Get(call).Name + "!", nil
		}, name)
	srv := httptest.NewServer(remote.HTTPHandler(nil))
	defer srv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hostSide, bridgeSide := transport.NewMemoryPipe()
	go bridge.ServeURL(ctx, bridgeSide, srv.URL, &bridge.Options{Logger: logger})

	host := client.New(mcp.Implementation{Name: "desktop-host", Version: "1.0.0"}, &client.Options{
		ProtocolVersion: mcp.Version20251125,
		Logger:          logger,
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			fmt.Println("host asked:", p.(*mcp.ElicitRequestFormParams).Message)
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": "Ada"}}, nil
		},
	})
	sess, err := host.Connect(ctx, transport.NewMemoryTransport(hostSide))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, "greet", nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(sess.ProtocolVersion(), res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// host asked: What is your name?
	// 2025-11-25 Hello, Ada!
}
