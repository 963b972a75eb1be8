package streamhttp

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
)

// TestShutdownThroughMiddleware: a *Handler served behind middleware (here a
// wrapper that counts requests, as logging or auth middleware would) still
// shuts down, because Shutdown is a method of the value NewHandler returned,
// not a function that must be handed the mounted http.Handler. EndSessions,
// handed the wrapper as its documentation asked, left every session and
// stream running.
func TestShutdownThroughMiddleware(t *testing.T) {
	f := newFixture()
	addSrvTools(f)
	h := NewHandler(f.s, nil)
	var mu sync.Mutex
	seen := 0
	wrapped := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen++
		mu.Unlock()
		h.ServeHTTP(w, r)
	})
	ts := httptest.NewServer(wrapped)
	t.Cleanup(ts.Close)

	// A legacy session with its GET stream open, and a 2026-07-28 listen
	// stream.
	sid := srvInit(t, ts.URL)
	get := srvOpen(t, http.MethodGet, ts.URL, srvGetHeaders(sid, ""), "")
	if get.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: status %d", get.StatusCode)
	}
	events := srvReadEvents(get.Body)
	sess := connect(t, ts.URL, nil, nil)
	sub, err := sess.Listen(context.Background(), mcp.SubscriptionFilter{ToolsListChanged: true})
	if err != nil {
		t.Fatal(err)
	}

	// What the deprecated function did with the handler users mount.
	EndSessions(wrapped)
	if h.srvSession(t, sid) == nil {
		t.Fatal("EndSessions of a wrapper ended the session; the test's premise is gone")
	}

	ctx, cancel := context.WithTimeout(context.Background(), srvFailAfter)
	defer cancel()
	if err := h.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	events.drain(t) // the GET stream ended
	for range sub.Events() {
	}
	if !errors.Is(sub.Err(), client.ErrListenEnded) {
		t.Errorf("the listen stream ended with %v, want its final result (ErrListenEnded)", sub.Err())
	}

	// The ended session is gone; what would outlive the shutdown is
	// refused with 503; an ordinary call is still answered.
	if resp, body := post(t, ts.URL, srvHeaders(sid), `{"jsonrpc":"2.0","id":5,"method":"tools/list"}`); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a request of the ended session: status %d, want 404: %s", resp.StatusCode, body)
	}
	resp, body := post(t, ts.URL, srvHeaders(""), srvInitialize)
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("initialize after Shutdown: status %d, want 503: %s", resp.StatusCode, body)
	} else if _, e := rpcError(t, body); e == nil || e.Message != "Service Unavailable: the server is shutting down" {
		t.Errorf("initialize after Shutdown: %s", body)
	}
	if _, err := sess.Listen(context.Background(), mcp.SubscriptionFilter{ToolsListChanged: true}); err == nil {
		t.Error("a listen stream opened after Shutdown")
	}
	res, err := sess.CallTool(context.Background(), "echo", map[string]any{"text": "still here"})
	if err != nil || textOf(res) != "still here" {
		t.Errorf("an ordinary call after Shutdown: %q, %v", textOf(res), err)
	}
	mu.Lock()
	defer mu.Unlock()
	if seen == 0 {
		t.Error("the requests did not go through the middleware")
	}
}

// TestShutdownWaitsForStreams: Shutdown returns once the streams it ended
// are gone, or with ctx's error when one outlasts ctx; it may be called
// again, and from several goroutines.
func TestShutdownWaitsForStreams(t *testing.T) {
	h := NewHandler(newFixture().s, nil)
	if !h.shutdown.enter() { // a stream that ignores the shutdown
		t.Fatal("a stream was refused before Shutdown")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := h.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown with a stream still open and ctx done = %v, want context.Canceled", err)
	}
	if h.shutdown.enter() {
		t.Fatal("a stream was admitted after Shutdown")
	}
	h.shutdown.leave()
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), srvFailAfter)
			defer cancel()
			if err := h.Shutdown(ctx); err != nil {
				t.Errorf("Shutdown once the stream ended = %v, want nil", err)
			}
		})
	}
	wg.Wait()
}

// TestShutdownStateless: a handler without legacy sessions shuts down too.
func TestShutdownStateless(t *testing.T) {
	h := NewHandler(newFixture().s, &HandlerOptions{Sessions: &SessionOptions{Stateless: true}})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := h.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}
