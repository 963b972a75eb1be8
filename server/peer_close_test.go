package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
)

// slowServer is the fixture with a tool "slow" that runs until its context
// ends, and a middleware that reports how each request's handler ended.
func slowServer(started chan<- string, ended chan<- error) *server.Server {
	s := newFixture(nil)
	s.Use(func(next server.Handler) server.Handler {
		return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
			if p, ok := req.Params.(*mcp.CallToolRequestParams); ok && p.Name == "slow" {
				started <- req.Method
				<-ctx.Done()
				ended <- ctx.Err()
				return nil, ctx.Err()
			}
			if req.Method != mcp.MethodSubscriptionsListen {
				return next(ctx, req)
			}
			res, err := next(ctx, req)
			ended <- err
			return res, err
		}
	})
	return s
}

// A peer that leaves ends its work: when the client's end of a stream
// connection closes, the handlers still running on it (a listen stream, a
// tool call) see their contexts end, and ServeConn returns nil. On today's
// main the listen stream kept ServeConn waiting for ever (synctest reports
// the deadlock).
func TestPeerLeavingEndsItsWork(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		name := "2026-07-28"
		if legacy {
			name = "legacy"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { peerLeaves(t, legacy) })
		})
	}
}

func peerLeaves(t *testing.T, legacy bool) {
	started := make(chan string, 2)
	ended := make(chan error, 2)
	s := slowServer(started, ended)
	a, b := transport.NewMemoryPipe()
	served := make(chan error, 1)
	go func() { served <- s.ServeConn(context.Background(), b) }()
	notes := make(chan *jsonrpc.Request, 16)
	peer := jsonrpc.NewConn(a, &jsonrpc.ConnOptions{Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
		if req.IsNotification() {
			notes <- req
		}
		return nil, nil
	})})
	ctx := context.Background()
	calls := make(chan error, 2)
	handlers := 1
	if legacy {
		init := json.RawMessage(`{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"old","version":"1"}}`)
		if err := peer.Call(ctx, mcp.MethodInitialize, init, nil); err != nil {
			t.Fatalf("initialize: %v", err)
		}
		if err := peer.Notify(ctx, mcp.NotificationInitialized, nil); err != nil {
			t.Fatal(err)
		}
		go func() { calls <- peer.Call(ctx, mcp.MethodCallTool, map[string]any{"name": "slow"}, nil) }()
	} else {
		handlers = 2
		go func() {
			calls <- peer.Call(ctx, mcp.MethodSubscriptionsListen, &mcp.SubscriptionsListenRequestParams{
				Meta: meta(), Notifications: mcp.SubscriptionFilter{ToolsListChanged: true},
			}, nil)
		}()
		if n := <-notes; n.Method != mcp.NotificationSubscriptionsAcknowledged {
			t.Fatalf("first notification %s, want the acknowledgement", n.Method)
		}
		go func() {
			calls <- peer.Call(ctx, mcp.MethodCallTool, &mcp.CallToolRequestParams{Meta: meta(), Name: "slow"}, nil)
		}()
	}
	<-started
	synctest.Wait()

	peer.Close() // the client leaves with its requests in flight

	for range handlers {
		if err := <-ended; !errors.Is(err, context.Canceled) {
			t.Errorf("a handler ended with %v, want context.Canceled", err)
		}
	}
	if err := <-served; err != nil {
		t.Errorf("ServeConn = %v after the peer left, want nil", err)
	}
	for range handlers {
		if err := <-calls; !errors.Is(err, jsonrpc.ErrConnClosed) {
			t.Errorf("the client's call ended with %v, want ErrConnClosed", err)
		}
	}
}
