package streamhttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/transport"
)

// The tests in this file pin what the client transport does when a legacy
// server loses the session (issue 30 §4, design record 041): the cause it
// gives, the ping that reads a 400 as the session's loss, the requests it
// holds while a new initialize is in flight, and the GET stream's backoff
// and revival after an outage.

// readSessionEnded reads the error response to a request that failed
// because the session ended: Read returns it in a *transport.CallError
// whose cause matches ErrSessionEnded (and transport.ErrSessionEnded).
func readSessionEnded(t *testing.T, c *clientConn) *jsonrpc.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	raw, err := c.Read(ctx)
	var ce *transport.CallError
	if !errors.As(err, &ce) || !errors.Is(err, ErrSessionEnded) || !errors.Is(err, transport.ErrSessionEnded) {
		t.Fatalf("Read = %s, %v; want a *transport.CallError matching ErrSessionEnded", raw, err)
	}
	m, _, derr := jsonrpc.DecodeMessage(ce.Response)
	r, ok := m.(*jsonrpc.Response)
	if derr != nil || !ok || r.Error == nil || !strings.Contains(string(r.Error.Data), `"sessionEnded":true`) {
		t.Fatalf("CallError.Response = %s (%v), want an error response with sessionEnded", ce.Response, derr)
	}
	return r
}

// forgetful is a legacy endpoint that forgets its sessions on restart, as
// a restarted server does: a message carrying an id it does not know gets
// status (404 by the specification; 400 from servers built as the
// TypeScript SDK's examples are), with a JSON-RPC error in the body, and so
// does a ping carrying it. Each initialize opens session "s1", "s2", ….
type forgetful struct {
	*legacyEndpoint
	status int

	mu      sync.Mutex
	n       int
	current string
	holdNew chan struct{} // when set, the answer to the next initialize waits for it to close
}

func newForgetful(t *testing.T, status int, configure func(f *forgetful)) *forgetful {
	f := &forgetful{status: status}
	if configure != nil {
		configure(f)
	}
	f.legacyEndpoint = newLegacyEndpoint(t, "", "2025-11-25", func(e *legacyEndpoint) {
		e.post = f.post
	})
	return f
}

func (f *forgetful) post(w http.ResponseWriter, r *http.Request, m jsonrpc.Message, _ []byte) bool {
	f.mu.Lock()
	if req, ok := m.(*jsonrpc.Request); ok && req.Method == "initialize" {
		f.n++
		f.current = fmt.Sprintf("s%d", f.n)
		hold := f.holdNew
		f.holdNew = nil
		sid := f.current
		f.mu.Unlock()
		if hold != nil {
			<-hold
		}
		w.Header().Set("Mcp-Session-Id", sid)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-11-25","capabilities":{},"serverInfo":{"name":"forgetful","version":"1"}}}`, req.ID.Raw())
		return true
	}
	known := r.Header.Get(HeaderSessionID) == f.current
	f.mu.Unlock()
	if known {
		return false
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(f.status)
	io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request: Server not initialized"}}`)
	return true
}

// restart forgets every session.
func (f *forgetful) restart() {
	f.mu.Lock()
	f.current = ""
	f.mu.Unlock()
}

// TestLegacySessionEndedCause: a 404 to a request carrying the session id
// fails it with a cause that matches ErrSessionEnded (which is
// transport.ErrSessionEnded) and the status; a request written after it is
// not sent, and fails with ErrSessionEnded alone.
func TestLegacySessionEndedCause(t *testing.T) {
	f := newForgetful(t, http.StatusNotFound, nil)
	c, _ := dialLegacy(t, f.url, nil)
	handshake(t, c)
	f.restart()
	write(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	r := readSessionEnded(t, c)
	if r.ID.Raw() != "2" || !strings.Contains(string(r.Error.Data), `"httpStatus":404`) {
		t.Errorf("response to the 404 %+v", r)
	}
	pings := len(f.requests("POST", "ping"))
	write(t, c, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	_, err := c.Read(ctx)
	var status *transport.HTTPStatusError
	if !errors.Is(err, transport.ErrSessionEnded) || errors.As(err, &status) {
		t.Errorf("request after the end: %v, want ErrSessionEnded without a status", err)
	}
	if n := len(f.requests("POST", "tools/list")); n != 1 {
		t.Errorf("%d tools/list POSTs, want 1: the second was not to be sent", n)
	}
	if n := len(f.requests("POST", "ping")); n != pings || pings != 0 {
		t.Errorf("%d pings: a 404 needs no confirmation", n)
	}
}

// TestLegacy400ConfirmedByPing: a server that answers an unknown session
// 400, as the TypeScript SDK's sessionful servers do, has lost it when a
// ping on the session is refused too: the request fails as the session's
// end. A 400 that a ping on the session does not share is the request's
// own: it fails with it, and the session goes on.
func TestLegacy400ConfirmedByPing(t *testing.T) {
	t.Run("session lost", func(t *testing.T) {
		f := newForgetful(t, http.StatusBadRequest, nil)
		c, _ := dialLegacy(t, f.url, nil)
		handshake(t, c)
		f.restart()
		write(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		r := readSessionEnded(t, c)
		if !strings.Contains(string(r.Error.Data), `"httpStatus":400`) {
			t.Errorf("response %+v", r)
		}
		pings := f.requests("POST", "ping")
		if len(pings) != 1 || pings[0].header.Get(HeaderSessionID) != "s1" {
			t.Fatalf("pings %v, want one on session s1", pings)
		}
		if !c.SessionEnded() {
			t.Error("SessionEnded is false")
		}
	})
	t.Run("bad request", func(t *testing.T) {
		f := newForgetful(t, http.StatusBadRequest, nil)
		f.legacyEndpoint.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message, body []byte) bool {
			if req, ok := m.(*jsonrpc.Request); ok && req.Method == "tools/call" {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":"bad arguments"}}`, req.ID.Raw())
				return true
			}
			return f.post(w, r, m, body)
		}
		c, _ := dialLegacy(t, f.url, nil)
		handshake(t, c)
		write(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`)
		if r := readRefusal(t, c, http.StatusBadRequest); r.Error.Code != -32602 {
			t.Errorf("response %+v, want the server's -32602", r)
		}
		if c.SessionEnded() || len(f.requests("POST", "ping")) != 1 {
			t.Fatalf("SessionEnded %v after %d pings, want false after 1", c.SessionEnded(), len(f.requests("POST", "ping")))
		}
		write(t, c, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
		if r := readResponse(t, c); r.Error != nil {
			t.Errorf("tools/list after the 400: %+v", r.Error)
		}
	})
}

// TestLegacyRequestsWaitForInitialize: a request written while a new
// initialize is in flight is held until it is answered, and goes with the
// new session's id rather than with none.
func TestLegacyRequestsWaitForInitialize(t *testing.T) {
	f := newForgetful(t, http.StatusNotFound, nil)
	c, _ := dialLegacy(t, f.url, nil)
	handshake(t, c)
	f.restart()
	write(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	readSessionEnded(t, c)

	hold := make(chan struct{})
	f.mu.Lock()
	f.holdNew = hold
	f.mu.Unlock()
	write(t, c, strings.Replace(legacyInitialize, `"id":1`, `"id":10`, 1))
	waitFor(t, "the second initialize", func() bool { return len(f.requests("POST", "initialize")) == 2 })
	write(t, c, `{"jsonrpc":"2.0","id":11,"method":"tools/list"}`)
	waitFor(t, "the request to wait for initialize", func() bool {
		return c.legacy.Load().held.Load() == 1 || len(f.requests("POST", "tools/list")) == 2
	})
	if n := len(f.requests("POST", "tools/list")); n != 1 {
		t.Fatalf("%d tools/list POSTs while initialize was in flight, want 1 (the first)", n)
	}
	close(hold)
	if r := readResponse(t, c); r.ID.Raw() != "10" || r.Error != nil {
		t.Fatalf("initialize: %+v", r)
	}
	if r := readResponse(t, c); r.ID.Raw() != "11" || r.Error != nil {
		t.Fatalf("tools/list: %+v", r)
	}
	lists := f.requests("POST", "tools/list")
	if len(lists) != 2 || lists[1].header.Get(HeaderSessionID) != "s2" {
		t.Errorf("tools/list POSTs %v, want the second on s2", lists)
	}
}

// TestLegacyFailedReinitialize: a new initialize that fails leaves the
// connection without a session, so that the requests after it fail as
// the session's end (and a client knows to initialize again) instead of
// going out without a session id.
func TestLegacyFailedReinitialize(t *testing.T) {
	var down atomic.Bool
	f := newForgetful(t, http.StatusNotFound, nil)
	f.legacyEndpoint.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message, body []byte) bool {
		if down.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}
		return f.post(w, r, m, body)
	}
	c, _ := dialLegacy(t, f.url, nil)
	handshake(t, c)
	f.restart()
	down.Store(true)
	write(t, c, strings.Replace(legacyInitialize, `"id":1`, `"id":10`, 1))
	readRefusal(t, c, http.StatusServiceUnavailable)
	if !c.SessionEnded() {
		t.Error("SessionEnded is false after a failed re-initialize")
	}
	down.Store(false)
	write(t, c, `{"jsonrpc":"2.0","id":11,"method":"tools/list"}`)
	readSessionEnded(t, c)
	if n := len(f.requests("POST", "tools/list")); n != 0 {
		t.Errorf("%d tools/list POSTs without a session", n)
	}
	// A failed first initialize is no session's end.
	c2, _ := dialLegacy(t, f.url, nil)
	down.Store(true)
	write(t, c2, legacyInitialize)
	readRefusal(t, c2, http.StatusServiceUnavailable)
	if c2.SessionEnded() {
		t.Error("SessionEnded after a failed first initialize")
	}
}

// TestLegacyGetStreamRevived: a GET stream that gave up during an outage
// starts again, from its last event id, once the server accepts a message
// again: a passing outage does not cost the session its notifications.
func TestLegacyGetStreamRevived(t *testing.T) {
	var outage atomic.Bool
	e := newLegacyEndpoint(t, "sess-r", "2025-11-25", func(e *legacyEndpoint) {
		e.get = func(w http.ResponseWriter, r *http.Request) bool {
			switch {
			case outage.Load():
				w.WriteHeader(http.StatusServiceUnavailable)
			case r.Header.Get(HeaderLastEventID) == "":
				startSSE(w)
				writeEvents(w, "id: g-1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n")
				outage.Store(true) // the connection drops, and the server with it
			case r.Header.Get(HeaderLastEventID) == "g-1":
				startSSE(w)
				writeEvents(w, "id: g-2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/list_changed\"}\n\n")
				<-r.Context().Done()
			default:
				w.WriteHeader(http.StatusBadRequest)
			}
			return true
		}
	})
	c, clock := dialLegacy(t, e.url, nil)
	handshake(t, c)
	if n := readRequest(t, c); n.Method != "notifications/tools/list_changed" {
		t.Fatalf("first GET message %+v", n)
	}
	want := 1 + 1 + maxResumeAttempts // the first GET, then one more and maxResumeAttempts retries in the outage
	waitFor(t, "the GET stream to give up", func() bool { return c.legacy.Load().hasIdle.Load() })
	if n := len(e.requests("GET", "")); n != want {
		t.Fatalf("%d GETs before the stream gave up, want %d", n, want)
	}
	outage.Store(false)
	write(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	// The answer and the revived stream's event, in either order.
	var answered, notified bool
	for range 2 {
		switch m := readMessage(t, c).(type) {
		case *jsonrpc.Response:
			answered = m.Error == nil
		case *jsonrpc.Request:
			notified = m.Method == "notifications/resources/list_changed"
		}
	}
	if !answered || !notified {
		t.Fatalf("tools/list answered %v, the revived stream's event delivered %v", answered, notified)
	}
	gets := e.requests("GET", "")
	if len(gets) != want+1 || gets[want].header.Get(HeaderLastEventID) != "g-1" || gets[want].header.Get(HeaderSessionID) != "sess-r" {
		t.Errorf("%d GETs, the last with headers %v; want %d, the last resuming g-1", len(gets), gets[len(gets)-1].header, want+1)
	}
	// The waits of the outage grew; the revival waited for nothing.
	waits := clock.recorded()
	if waits[0] != defaultRetryDelay {
		t.Errorf("wait after the drop %v, want %v", waits[0], defaultRetryDelay)
	}
	for i, d := range waits[1:] {
		if want := defaultRetryDelay << i; d != want {
			t.Errorf("wait %d of the outage: %v, want %v", i+1, d, want)
		}
	}
	if len(waits) != 1+maxResumeAttempts {
		t.Errorf("%d waits, want %d", len(waits), 1+maxResumeAttempts)
	}
}

// TestBackoff: the wait before a reconnection doubles with each failure
// after the first, up to maxBackoff, unless the server asked for longer.
func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		d      time.Duration
		misses int
		want   time.Duration
	}{
		{time.Second, 0, time.Second},
		{time.Second, 1, time.Second},
		{time.Second, 2, 2 * time.Second},
		{time.Second, 5, 16 * time.Second},
		{time.Second, 6, maxBackoff},
		{time.Second, 100, maxBackoff},
		{10 * time.Millisecond, 3, 40 * time.Millisecond},
		{time.Minute, 1, time.Minute},
		{time.Minute, 4, time.Minute}, // the server's retry is longer than maxBackoff: it stands
	} {
		if got := backoff(tc.d, tc.misses); got != tc.want {
			t.Errorf("backoff(%v, %d) = %v, want %v", tc.d, tc.misses, got, tc.want)
		}
	}
}

// TestLegacyFailuresDoNotPoison: a request that fails (a 5xx, a
// connection the server cuts, a caller that gives up) fails alone: the
// next request on the connection goes out on the same session and is
// answered.
func TestLegacyFailuresDoNotPoison(t *testing.T) {
	release := make(chan struct{})
	e := newLegacyEndpoint(t, "sess-p", "2025-11-25", func(e *legacyEndpoint) {
		e.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message, _ []byte) bool {
			req, ok := m.(*jsonrpc.Request)
			if !ok || req.Method != "tools/call" {
				return false
			}
			switch string(req.ID.Raw()) {
			case "2":
				w.WriteHeader(http.StatusBadGateway)
			case "3":
				conn, _, err := w.(http.Hijacker).Hijack()
				if err == nil {
					conn.Close() // a reset, before any answer
				}
			case "4":
				startSSE(w)
				select { // the caller gives up first
				case <-r.Context().Done():
				case <-release:
				}
			default:
				return false
			}
			return true
		}
	})
	c, _ := dialLegacy(t, e.url, nil)
	handshake(t, c)
	defer close(release)

	write(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`)
	readRefusal(t, c, http.StatusBadGateway)
	write(t, c, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}`)
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	if _, err := c.Read(ctx); err == nil {
		t.Fatal("a cut connection answered")
	}
	callCtx, giveUp := context.WithCancel(context.Background())
	if err := c.Write(callCtx, []byte(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"x"}}`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the call to reach the server", func() bool { return len(e.requests("POST", "tools/call")) == 3 })
	giveUp()
	write(t, c, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"x"}}`)
	if r := readResponse(t, c); r.ID.Raw() != "5" || r.Error != nil {
		t.Fatalf("the call after the failures: %+v", r)
	}
	calls := e.requests("POST", "tools/call")
	if got := calls[len(calls)-1].header.Get(HeaderSessionID); got != "sess-p" || c.SessionEnded() {
		t.Errorf("the last call went on session %q (SessionEnded %v), want sess-p", got, c.SessionEnded())
	}
}

// TestLegacyGetStreamKeptByAcceptedMessage: a GET stream whose last
// attempt fails while the server accepts a message does not give up: the
// server is back, and the stream starts over at once.
func TestLegacyGetStreamKeptByAcceptedMessage(t *testing.T) {
	var gets atomic.Int32
	last := make(chan struct{})     // the last attempt of the outage has arrived
	answered := make(chan struct{}) // a POST has been answered meanwhile
	e := newLegacyEndpoint(t, "sess-k", "2025-11-25", func(e *legacyEndpoint) {
		e.get = func(w http.ResponseWriter, r *http.Request) bool {
			switch n := gets.Add(1); {
			case n < 1+maxResumeAttempts:
				w.WriteHeader(http.StatusServiceUnavailable)
			case n == 1+maxResumeAttempts:
				close(last)
				<-answered
				w.WriteHeader(http.StatusServiceUnavailable)
			default:
				startSSE(w)
				writeEvents(w, "id: k-1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n")
				<-r.Context().Done()
			}
			return true
		}
	})
	c, clock := dialLegacy(t, e.url, nil)
	handshake(t, c)
	testwait.Recv(t, last, "the last GET of the outage")
	write(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if r := readResponse(t, c); r.Error != nil {
		t.Fatalf("tools/list: %+v", r.Error)
	}
	close(answered)
	if n := readRequest(t, c); n.Method != "notifications/tools/list_changed" {
		t.Fatalf("GET message %+v", n)
	}
	waits := clock.recorded()
	if len(waits) != maxResumeAttempts+1 || waits[len(waits)-1] != defaultRetryDelay {
		t.Errorf("waits %v, want the outage's %d and then the default delay", waits, maxResumeAttempts)
	}
}
