package bridge_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/mcp"
)

// A 2026-07-28 host reaches a server that speaks 2025-11-25 only: each
// request the server sends while it serves the call becomes one round of
// input_required toward the host, whose next round carries the answer back
// to the waiting server.
func TestModernHostLegacyServer(t *testing.T) {
	url, _ := legacyRemote(t, newRemoteEvents())
	var rounds atomic.Int32
	progress := make(chan *mcp.ProgressNotificationParams, 4)
	o := hostCallbacks(&client.Options{ProtocolVersion: mcp.LatestVersion}, false)
	o.OnProgress = func(ctx context.Context, p *mcp.ProgressNotificationParams) { progress <- p }
	o.Loop = &client.LoopOptions{OnRound: func(ctx context.Context, p *client.Pending) error {
		rounds.Add(1)
		return nil
	}}
	sess := startBridge(t, httpRemote(url), o)
	if got := sess.ProtocolVersion(); got != mcp.LatestVersion {
		t.Fatalf("the host speaks %q to the bridge, want %q", got, mcp.LatestVersion)
	}
	for _, tc := range []struct{ tool, want string }{
		{"ask", "accept:Ada"},
		{"sample", "sampled:a rose"},
		{"roots", "roots:file:///work"},
		{"progress", "done"},
	} {
		rounds.Store(0)
		if got := callTool(t, sess, tc.tool); got != tc.want {
			t.Errorf("%s through the bridge = %q, want %q", tc.tool, got, tc.want)
		}
		want := int32(1)
		if tc.tool == "progress" {
			want = 0
		}
		if n := rounds.Load(); n != want {
			t.Errorf("%s took %d input_required rounds at the host, want %d", tc.tool, n, want)
		}
	}
	if len(progress) != 2 {
		t.Errorf("the host received %d progress notifications from the legacy server, want 2", len(progress))
	}
}

// A 2026-07-28 host's decline reaches the legacy server as its answer.
func TestModernHostLegacyServerDecline(t *testing.T) {
	url, _ := legacyRemote(t, newRemoteEvents())
	sess := startBridge(t, httpRemote(url), hostCallbacks(&client.Options{ProtocolVersion: mcp.LatestVersion}, true))
	if got := callTool(t, sess, "ask"); got != "decline:" {
		t.Errorf("ask, declined at the host = %q, want %q", got, "decline:")
	}
}

// A round whose requestState the bridge did not hand out (or no longer
// holds) is refused with the one error every unusable state gets.
func TestModernHostUnknownRelayState(t *testing.T) {
	url, _ := legacyRemote(t, newRemoteEvents())
	sess := startBridge(t, httpRemote(url), hostCallbacks(&client.Options{ProtocolVersion: mcp.LatestVersion}, false))
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	p := &mcp.CallToolRequestParams{Name: "ask", InputResponses: mcp.InputResponses{"q1": []byte(`{"action":"decline"}`)}}
	p.SetRequestState("parley-bridge:feed:1", true)
	_, err := sess.CallToolRound(ctx, p)
	var rpc *mcp.Error
	if !errors.As(err, &rpc) || rpc.Code != mcp.NewInvalidRequestStateError().Code {
		t.Fatalf("a round with a requestState the bridge does not hold = %v, want the invalid-state error", err)
	}
}

// A 2026-07-28 host cancelling a call ends the call on the legacy server,
// and a 2026-07-28 server alike.
func TestModernHostCancellation(t *testing.T) {
	for _, legacy := range []bool{true, false} {
		ev := newRemoteEvents()
		var url string
		if legacy {
			url, _ = legacyRemote(t, ev)
		} else {
			url, _ = modernRemote(t, ev)
		}
		sess := startBridge(t, httpRemote(url), hostCallbacks(&client.Options{ProtocolVersion: mcp.LatestVersion}, false))
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := sess.CallTool(ctx, "slow", nil)
			done <- err
		}()
		testwait.Recv(t, ev.started, "the remote tool to start")
		cancel()
		testwait.Recv(t, ev.cancelled, "the host's cancellation to reach the remote tool")
		if err := testwait.Recv(t, done, "the host's call to end"); !errors.Is(err, context.Canceled) {
			t.Errorf("legacy remote %v: the cancelled call = %v, want context.Canceled", legacy, err)
		}
	}
}

// A 2026-07-28 host and a 2026-07-28 server: rounds pass through as they
// are, and progress comes back under the host's token.
func TestModernHostModernServer(t *testing.T) {
	url, _ := modernRemote(t, newRemoteEvents())
	progress := make(chan *mcp.ProgressNotificationParams, 4)
	o := hostCallbacks(&client.Options{ProtocolVersion: mcp.LatestVersion}, false)
	o.OnProgress = func(ctx context.Context, p *mcp.ProgressNotificationParams) { progress <- p }
	sess := startBridge(t, httpRemote(url), o)
	for _, tc := range []struct{ tool, want string }{
		{"ask", "accept:Ada"},
		{"sample", "sampled:a rose"},
		{"roots", "roots:file:///work"},
		{"progress", "done"},
	} {
		if got := callTool(t, sess, tc.tool); got != tc.want {
			t.Errorf("%s through the bridge = %q, want %q", tc.tool, got, tc.want)
		}
	}
	if len(progress) != 2 {
		t.Errorf("the host received %d progress notifications, want 2", len(progress))
	}
}
