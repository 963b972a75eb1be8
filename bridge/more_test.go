package bridge_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/parley-mcp/parley/bridge"
	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
)

// A legacy host and a legacy server: the server's requests reach the host
// as requests, through the bridge's session.
func TestLegacyHostLegacyServer(t *testing.T) {
	url, _ := legacyRemote(t, newRemoteEvents())
	sess := startBridge(t, httpRemote(url), hostCallbacks(&client.Options{ProtocolVersion: mcp.Version20251125}, false))
	for _, tc := range []struct{ tool, want string }{
		{"ask", "accept:Ada"},
		{"sample", "sampled:a rose"},
		{"roots", "roots:file:///work"},
	} {
		if got := callTool(t, sess, tc.tool); got != tc.want {
			t.Errorf("%s through the bridge = %q, want %q", tc.tool, got, tc.want)
		}
	}
}

// The progress the remote server reports reaches the host under the token
// the host chose, not the one the bridge sent the remote server.
func TestProgressKeepsTheHostsToken(t *testing.T) {
	url, _ := modernRemote(t, newRemoteEvents())
	hostSide, bridgeSide := transport.NewMemoryPipe()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- bridge.Serve(ctx, bridgeSide, httpRemote(url), &bridge.Options{Logger: quiet}) }()
	tokens := make(chan string, 4)
	host := jsonrpc.NewConn(hostSide, &jsonrpc.ConnOptions{Logger: quiet, Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if req.Method == mcp.NotificationProgress {
			var p struct {
				Token json.RawMessage `json:"progressToken"`
			}
			_ = json.Unmarshal(req.Params, &p)
			tokens <- string(p.Token)
		}
		return nil, nil
	})})
	defer func() {
		host.Close()
		testwait.Recv(t, served, "Serve to return")
	}()
	var init json.RawMessage
	must(t, host.Call(ctx, mcp.MethodInitialize, json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}`), &init))
	must(t, host.Notify(ctx, mcp.NotificationInitialized, nil))
	var res json.RawMessage
	must(t, host.Call(ctx, mcp.MethodCallTool, json.RawMessage(`{"name":"progress","arguments":{},"_meta":{"progressToken":"host-7"}}`), &res))
	if len(tokens) != 2 {
		t.Fatalf("the host received %d progress notifications before the result, want 2", len(tokens))
	}
	for range 2 {
		if got := <-tokens; got != `"host-7"` {
			t.Errorf("progress reached the host with token %s, want \"host-7\"", got)
		}
	}
}

// A legacy host's resources/subscribe holds a subscription on the remote
// server, whose updates reach the host.
func TestLegacyHostResourceUpdates(t *testing.T) {
	url, remote := modernRemote(t, newRemoteEvents())
	must(t, remote.AddResource(&mcp.Resource{URI: "file:///doc", Name: "doc"}, func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: "file:///doc", Text: "v1"}}}, nil
	}))
	sess := startBridge(t, httpRemote(url), hostCallbacks(&client.Options{ProtocolVersion: mcp.Version20251125}, false))
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: []string{"file:///doc"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	remote.LowLevel().NotifyResourceUpdated("file:///doc")
	for ev := range sub.Events() {
		if ev.Method == mcp.NotificationResourceUpdated {
			if ev.URI != "file:///doc" {
				t.Errorf("update of %q, want file:///doc", ev.URI)
			}
			return
		}
	}
	t.Fatalf("the subscription ended without the update: %v", sub.Err())
}
