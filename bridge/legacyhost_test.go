package bridge_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/mcp"
)

// A host pinned to 2025-11-25 reaches a server that speaks 2026-07-28 only:
// each input_required round of the server becomes a real request to the
// host (elicitation, sampling, roots), answered by the host's callbacks,
// and the call comes back complete.
func TestLegacyHostModernServer(t *testing.T) {
	url, _ := modernRemote(t, newRemoteEvents())
	var (
		mu    sync.Mutex
		asked []string
	)
	o := hostCallbacks(&client.Options{ProtocolVersion: mcp.Version20251125}, false)
	elicit, sample, roots := o.Elicit, o.Sample, o.ListRoots
	o.Elicit = func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
		mu.Lock()
		asked = append(asked, mcp.MethodElicit)
		mu.Unlock()
		return elicit(ctx, p)
	}
	o.Sample = func(ctx context.Context, p *mcp.CreateMessageRequestParams) (*mcp.CreateMessageResult, error) {
		mu.Lock()
		asked = append(asked, mcp.MethodCreateMessage)
		mu.Unlock()
		return sample(ctx, p)
	}
	o.ListRoots = func(ctx context.Context) (*mcp.ListRootsResult, error) {
		mu.Lock()
		asked = append(asked, mcp.MethodListRoots)
		mu.Unlock()
		return roots(ctx)
	}
	sess := startBridge(t, httpRemote(url), o)
	if got := sess.ProtocolVersion(); got != mcp.Version20251125 {
		t.Fatalf("the host speaks %q to the bridge, want %q", got, mcp.Version20251125)
	}
	if info := sess.ServerInfo(); info == nil || info.Name != "remote-2026" {
		t.Errorf("the host sees serverInfo %+v, want the remote server's", info)
	}
	for _, tc := range []struct{ tool, want, method string }{
		{"ask", "accept:Ada", mcp.MethodElicit},
		{"sample", "sampled:a rose", mcp.MethodCreateMessage},
		{"roots", "roots:file:///work", mcp.MethodListRoots},
	} {
		mu.Lock()
		asked = nil
		mu.Unlock()
		if got := callTool(t, sess, tc.tool); got != tc.want {
			t.Errorf("%s through the bridge = %q, want %q", tc.tool, got, tc.want)
		}
		mu.Lock()
		if len(asked) != 1 || asked[0] != tc.method {
			t.Errorf("%s: the host was asked %v, want one %s", tc.tool, asked, tc.method)
		}
		mu.Unlock()
	}
}

// A declined elicitation reaches the remote server as the host's answer,
// and the tool's result says so.
func TestLegacyHostDeclines(t *testing.T) {
	url, _ := modernRemote(t, newRemoteEvents())
	sess := startBridge(t, httpRemote(url), hostCallbacks(&client.Options{ProtocolVersion: mcp.Version20251125}, true))
	if got := callTool(t, sess, "ask"); got != "decline:" {
		t.Errorf("ask, declined at the host = %q, want %q", got, "decline:")
	}
}

// The host's progress token reaches the remote server, and the progress it
// reports comes back to the host under that token, before the result.
func TestLegacyHostProgress(t *testing.T) {
	url, _ := modernRemote(t, newRemoteEvents())
	progress := make(chan *mcp.ProgressNotificationParams, 4)
	o := hostCallbacks(&client.Options{ProtocolVersion: mcp.Version20251125}, false)
	o.OnProgress = func(ctx context.Context, p *mcp.ProgressNotificationParams) { progress <- p }
	sess := startBridge(t, httpRemote(url), o)
	if got := callTool(t, sess, "progress"); got != "done" {
		t.Fatalf("progress = %q, want done", got)
	}
	if len(progress) != 2 {
		t.Fatalf("the host received %d progress notifications before the result, want 2", len(progress))
	}
	first, second := <-progress, <-progress
	if first.Progress != 1 || first.Total != 2 || first.Message != "half" || second.Progress != 2 {
		t.Errorf("progress = %+v then %+v, want 1/2 half then 2/2", first, second)
	}
	if !first.ProgressToken.IsValid() || first.ProgressToken != second.ProgressToken {
		t.Errorf("progress tokens %v and %v, want the host's own token on both", first.ProgressToken, second.ProgressToken)
	}
}

// The host cancelling its call cancels the call on the remote server.
func TestLegacyHostCancellation(t *testing.T) {
	ev := newRemoteEvents()
	url, _ := modernRemote(t, ev)
	sess := startBridge(t, httpRemote(url), hostCallbacks(&client.Options{ProtocolVersion: mcp.Version20251125}, false))
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
		t.Errorf("the cancelled call = %v, want context.Canceled", err)
	}
}

// A tool added on the remote server is announced to a host of either
// generation: a legacy host's session, a 2026-07-28 host's listen stream.
func TestListChanged(t *testing.T) {
	for _, version := range []mcp.ProtocolVersion{mcp.Version20251125, mcp.LatestVersion} {
		t.Run(string(version), func(t *testing.T) {
			url, remote := modernRemote(t, newRemoteEvents())
			changed := make(chan struct{}, 1)
			sess := startBridge(t, httpRemote(url), hostCallbacks(&client.Options{ProtocolVersion: version}, false))
			ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
			defer cancel()
			sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true})
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Close()
			go func() {
				for ev := range sub.Events() {
					if ev.Method == mcp.NotificationToolListChanged {
						select {
						case changed <- struct{}{}:
						default:
						}
					}
				}
			}()
			// The bridge follows the remote server's changes from when it
			// connected, and the host's stream is acknowledged: a change
			// made now reaches the host.
			must(t, addGreet(remote))
			testwait.Recv(t, changed, "notifications/tools/list_changed at the host")
			if got := callTool(t, sess, "greet"); got != "hello" {
				t.Errorf("greet = %q", got)
			}
		})
	}
}
