package client_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/leakcheck"
	"github.com/parley-mcp/parley/internal/spectest"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
)

// closeSpy runs atClose when the client closes the transport, before
// closing it.
type closeSpy struct {
	transport.Conn
	once    sync.Once
	atClose func()
}

func (c *closeSpy) Close() error {
	c.once.Do(c.atClose)
	return c.Conn.Close()
}

// Session.Close ends its own listen streams first: by the time the
// transport closes, each has ended, with ErrConnClosed. The server's
// listen handlers end, and ServeConn returns by itself. On a legacy
// session the resources the streams subscribed to are not unsubscribed one
// by one: the session's end ends them, and Close does not wait for answers.
func TestCloseEndsListenStreamsFirst(t *testing.T) {
	for _, legacy := range []bool{false, true} {
		name := "2026-07-28"
		if legacy {
			name = "legacy"
		}
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { closeWithStreams(t, legacy) })
		})
	}
}

func closeWithStreams(t *testing.T, legacy bool) {
	spectest.Dir(t) // a missing fixture fails here, not on a goroutine of the connection
	srv := fixture(nil)
	ends := listenEnds(srv)
	clientEnd, serverEnd := transport.NewMemoryPipe()
	served := make(chan error, 1)
	go func() { served <- srv.ServeConn(context.Background(), serverEnd) }()

	var subs []*client.Subscription
	openAtClose := -1
	w := newLegacyWire(t, clientEnd)
	spy := &closeSpy{Conn: w, atClose: func() {
		openAtClose = 0
		for _, sub := range subs {
			select {
			case <-sub.Done():
			default:
				openAtClose++
			}
		}
	}}
	var opts *client.Options
	if legacy {
		opts = pinned(client.Options{})
	}
	ctx := context.Background()
	sess, err := newClient(opts).Connect(ctx, transport.NewMemoryTransport(spy))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []mcp.SubscriptionFilter{
		{ToolsListChanged: true},
		{ToolsListChanged: true, ResourceSubscriptions: []string{"file:///r1"}},
	} {
		sub, err := sess.Listen(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, sub)
	}
	synctest.Wait()

	if err := sess.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if openAtClose != 0 {
		t.Errorf("%d listen streams still open when the transport closed (-1: never closed), want 0", openAtClose)
	}
	for i, sub := range subs {
		if err := sub.Err(); !errors.Is(err, jsonrpc.ErrConnClosed) {
			t.Errorf("stream %d: Err() = %v, want ErrConnClosed", i, err)
		}
	}
	if !legacy {
		for range subs {
			if err := <-ends; !errors.Is(err, context.Canceled) {
				t.Errorf("the server's listen handler ended with %v, want context.Canceled", err)
			}
		}
	}
	if err := <-served; err != nil {
		t.Errorf("ServeConn = %v, want nil once the client left", err)
	}
	if n := len(w.Requests(mcp.MethodUnsubscribeResource)); n != 0 {
		t.Errorf("Close sent %d resources/unsubscribe, want none", n)
	}
}

// Closing a stdio session with a listen stream open and a call in flight
// is prompt: the server process sees its input end, its handlers are
// cancelled, and it exits by itself with status 0, so Close returns nil
// rather than a *stdio.TerminatedError (which it returned on today's main,
// after waiting CloseTimeout for a server kept alive by its listen stream).
func TestStdioCloseWithListenOpen(t *testing.T) {
	leakcheck.Check(t)
	for _, legacy := range []bool{false, true} {
		name := "2026-07-28"
		if legacy {
			name = "legacy"
		}
		t.Run(name, func(t *testing.T) {
			cmd, tr, _ := serverCommand(t, "serve")
			started := make(chan struct{}, 1)
			opts := &client.Options{OnProgress: func(ctx context.Context, p *mcp.ProgressNotificationParams) {
				if p.Message == "started" {
					started <- struct{}{}
				}
			}}
			if legacy {
				opts = pinned(*opts)
			}
			ctx, cancelFlow := context.WithTimeout(context.Background(), flowDeadline)
			defer cancelFlow()
			sess, err := newClient(opts).Connect(ctx, tr)
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true})
			if err != nil {
				t.Fatal(err)
			}
			call := async(func() error { _, err := sess.CallTool(ctx, "slow", nil); return err })
			testwait.Recv(t, started, "the slow call's start")

			err = testwait.Recv(t, async(sess.Close), "Close's return with a call and a listen stream in flight")
			if err != nil {
				t.Errorf("Close = %v, want nil: the server should exit on its own when its stdin closes", err)
			}
			if ps := cmd.ProcessState; ps == nil || !ps.Exited() || ps.ExitCode() != 0 {
				t.Errorf("server ended with %v, want exit status 0 without a signal", ps)
			}
			if err := sub.Err(); !errors.Is(err, jsonrpc.ErrConnClosed) {
				t.Errorf("stream Err() = %v, want ErrConnClosed", err)
			}
			if err := testwait.Recv(t, call, "the end of the call in flight"); !errors.Is(err, jsonrpc.ErrConnClosed) {
				t.Errorf("the call in flight ended with %v, want ErrConnClosed", err)
			}
		})
	}
}
