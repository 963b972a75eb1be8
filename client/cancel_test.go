package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// slowServer has a tool "slow" that runs until its context ends. started
// receives a value when a call begins; stopped receives the error of the
// call's context when it ends.
func slowServer() (s *server.Server, started <-chan struct{}, stopped <-chan error) {
	s = fixture(nil)
	begin := make(chan struct{}, 16)
	end := make(chan error, 16)
	s.Use(func(next server.Handler) server.Handler {
		return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
			if p, ok := req.Params.(*mcp.CallToolRequestParams); !ok || p.Name != "slow" {
				return next(ctx, req)
			}
			begin <- struct{}{}
			<-ctx.Done()
			end <- ctx.Err()
			return nil, ctx.Err()
		}
	})
	return s, begin, end
}

func TestCallDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, started, stopped := slowServer()
		sess, w := connect(t, newClient(nil), s)

		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		start := time.Now()
		_, err := sess.CallTool(ctx, "slow", nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("CallTool: %v, want context.DeadlineExceeded", err)
		}
		// The bubble's clock moves only when everything waits: the call
		// returned at the deadline, not a moment later.
		if d := time.Since(start); d != 3*time.Second {
			t.Errorf("CallTool returned after %v, want exactly the 3s deadline", d)
		}
		<-started
		if err := <-stopped; !errors.Is(err, context.Canceled) {
			t.Errorf("the handler's context ended with %v, want context.Canceled", err)
		}

		// The server was told which request to stop.
		call := w.Requests(mcp.MethodCallTool)[0]
		synctest.Wait()
		var found bool
		for _, m := range w.Sent() {
			if m.Method != "notifications/cancelled" {
				continue
			}
			var id json.RawMessage
			m.param(t, "requestId", &id)
			found = found || string(id) == string(call.ID)
		}
		if !found {
			t.Errorf("no notifications/cancelled for request %s", call.ID)
		}
		// And it sent no answer for it.
		for _, m := range w.Received() {
			if string(m.ID) == string(call.ID) {
				t.Errorf("server answered the cancelled call: %s", m.Raw)
			}
		}
		// The session is fine afterwards.
		if res, err := sess.CallTool(context.Background(), "echo", echoArgs("after")); err != nil || text(res) != "after" {
			t.Errorf("CallTool after a timeout = %v, %v", res, err)
		}
	})
}

func TestCallCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, started, stopped := slowServer()
		sess, _ := connect(t, newClient(nil), s)
		ctx, cancel := context.WithCancel(context.Background())
		done := async(func() error { _, err := sess.CallTool(ctx, "slow", nil); return err })
		<-started
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("CallTool: %v, want context.Canceled", err)
		}
		if err := <-stopped; !errors.Is(err, context.Canceled) {
			t.Errorf("handler: %v", err)
		}
	})
}

func TestCallWithDoneContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sess, w := connect(t, newClient(nil), fixture(nil))
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		before := len(w.Sent())
		if _, err := sess.CallTool(ctx, "echo", nil); !errors.Is(err, context.Canceled) {
			t.Errorf("CallTool: %v", err)
		}
		for range sess.Tools(ctx) {
		}
		synctest.Wait()
		if n := len(w.Sent()) - before; n != 0 {
			t.Errorf("%d messages sent with a done context", n)
		}
	})
}

func TestCloseFailsCallsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, started, stopped := slowServer()
		sess, _ := connect(t, newClient(nil), s)
		const n = 3
		results := make(chan error, n)
		for range n {
			go func() {
				_, err := sess.CallTool(context.Background(), "slow", nil)
				results <- err
			}()
		}
		for range n {
			<-started
		}
		if err := sess.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		for range n {
			if err := <-results; !errors.Is(err, jsonrpc.ErrConnClosed) {
				t.Errorf("call in flight: %v, want ErrConnClosed", err)
			}
		}
		select {
		case <-sess.Done():
		default:
			t.Error("Done not closed after Close")
		}
		// Calls after Close fail at once.
		if _, err := sess.CallTool(context.Background(), "echo", nil); !errors.Is(err, jsonrpc.ErrConnClosed) {
			t.Errorf("CallTool after Close: %v", err)
		}
		for _, err := range sess.Tools(context.Background()) {
			if !errors.Is(err, jsonrpc.ErrConnClosed) {
				t.Errorf("Tools after Close: %v", err)
			}
		}
		if err := sess.Close(); err != nil {
			t.Errorf("second Close: %v", err)
		}
		// The server's handlers run on until the server stops (the test's
		// cleanup stops it): the server's connection lets requests in
		// flight finish after the peer has gone.
		_ = stopped
	})
}

// TestServerGoesAway: when the server closes the connection, calls in
// flight fail and the session is done.
func TestServerGoesAway(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sess, f := dialFake(t, newClient(nil))
		done := async(func() error { _, err := sess.CallTool(context.Background(), "x", nil); return err })
		f.expect(mcp.MethodCallTool)
		f.conn.Close()
		if err := <-done; !errors.Is(err, jsonrpc.ErrConnClosed) {
			t.Errorf("CallTool: %v, want ErrConnClosed", err)
		}
		<-sess.Done()
	})
}

// TestConcurrentCalls runs many calls of every kind at once over one
// session (for the race detector).
func TestConcurrentCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var pl progressLog
		var ll logLog
		srv := fixture(nil)
		sess, _ := connect(t, newClient(&client.Options{OnProgress: pl.record, OnLog: ll.record, LogLevel: mcp.LevelDebug}), srv)
		ctx := context.Background()
		sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true})
		if err != nil {
			t.Fatal(err)
		}
		errs := make(chan error, 100)
		for i := range 10 {
			go func() {
				var err error
				switch i % 5 {
				case 0:
					_, err = sess.CallTool(ctx, "work", nil)
				case 1:
					for _, e := range sess.Tools(ctx) {
						if e != nil {
							err = e
						}
					}
				case 2:
					_, err = sess.GetPrompt(ctx, "greeting", nil)
				case 3:
					_, err = sess.ReadResource(ctx, "file:///readme.txt")
				case 4:
					srv.NotifyToolListChanged()
					_, err = sess.Discover(ctx)
				}
				errs <- err
			}()
		}
		for range 10 {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
		synctest.Wait()
		if got, _ := pending(sub); len(got) != 2 {
			t.Errorf("%d events, want 2", len(got))
		}
		if pl.count() != 4 || len(ll.get()) != 4 {
			t.Errorf("%d progress and %d log notifications, want 4 each", pl.count(), len(ll.get()))
		}
	})
}
