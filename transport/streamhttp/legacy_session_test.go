package streamhttp

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// These tests run the handler inside a synctest bubble, where time is fake:
// the idle timeout and the resume window pass without waiting, and a
// bubble that ends with a goroutine still blocked (a leaked handler, keep-
// alive loop or session) fails the test. Real sockets cannot be used in a
// bubble, so requests go straight to ServeHTTP.

// bubbleWriter is a ResponseWriter for bubbles; every access is locked.
type bubbleWriter struct {
	header http.Header // the handler's, until WriteHeader

	mu     sync.Mutex
	sent   http.Header // the header as written
	status int
	buf    bytes.Buffer
}

func (w *bubbleWriter) Header() http.Header { return w.header }

func (w *bubbleWriter) WriteHeader(status int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.status == 0 {
		w.status, w.sent = status, w.header.Clone()
	}
}

func (w *bubbleWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.Write(b)
}

func (w *bubbleWriter) Flush() {}

// bubbleCall is one request being served in a bubble.
type bubbleCall struct {
	w      *bubbleWriter
	cancel context.CancelFunc // the client goes away
	done   chan struct{}      // ServeHTTP returned
}

// bubbleDo starts serving a request; body may be empty.
func bubbleDo(h http.Handler, method string, hdr http.Header, body string) *bubbleCall {
	ctx, cancel := context.WithCancel(context.Background())
	ctx = context.WithValue(ctx, http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80})
	req := httptest.NewRequestWithContext(ctx, method, "http://localhost/mcp", strings.NewReader(body))
	req.Header = hdr
	c := &bubbleCall{w: &bubbleWriter{header: http.Header{}}, cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(c.done)
		h.ServeHTTP(c.w, req)
	}()
	return c
}

// bubblePost serves a POST to its end.
func bubblePost(h http.Handler, hdr http.Header, body string) *bubbleCall {
	c := bubbleDo(h, http.MethodPost, hdr, body)
	<-c.done
	c.cancel()
	return c
}

func (c *bubbleCall) status() int {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	return c.w.status
}

func (c *bubbleCall) body() string {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	return c.w.buf.String()
}

func (c *bubbleCall) sessionID() string {
	c.w.mu.Lock()
	defer c.w.mu.Unlock()
	return c.w.sent.Get("Mcp-Session-Id")
}

// events parses the events written so far.
func (c *bubbleCall) events() []srvEvent {
	var out []srvEvent
	for block := range strings.SplitSeq(c.body(), "\n\n") {
		var ev srvEvent
		fields := false
		for line := range strings.SplitSeq(block, "\n") {
			name, value, ok := strings.Cut(line, ": ")
			if !ok {
				name, value, ok = strings.Cut(line, ":")
			}
			if !ok || name == "" {
				continue
			}
			fields = true
			switch name {
			case "id":
				ev.id = value
			case "retry":
				ev.retry = value
			case "data":
				ev.data = value
			}
		}
		if fields {
			out = append(out, ev)
		}
	}
	return out
}

// isDone reports whether ServeHTTP returned.
func (c *bubbleCall) isDone() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// bubbleSession opens a session on h and returns its id.
func bubbleSession(t *testing.T, h http.Handler) string {
	t.Helper()
	c := bubblePost(h, srvHeaders(""), srvInitialize)
	sid := c.sessionID()
	if c.status() != http.StatusOK || sid == "" {
		t.Fatalf("initialize: status %d, session %q: %s", c.status(), sid, c.body())
	}
	t.Cleanup(func() {
		// A failed test may leave the session open, and its goroutines
		// would then deadlock the bubble, hiding the failure. A test
		// that passes has closed it itself.
		if t.Failed() {
			if hh, ok := h.(*Handler); ok {
				if ls := hh.sessions.lookup(sid, httptest.NewRequest(http.MethodGet, "/", nil)); ls != nil {
					hh.sessions.closeSession(ls, "test failed")
				}
			}
		}
	})
	return sid
}

// bubbleDelete ends session sid, so that the bubble can end: a session's
// goroutine lives as long as the session.
func bubbleDelete(t *testing.T, h http.Handler, sid string) {
	t.Helper()
	c := bubbleDo(h, http.MethodDelete, http.Header{"Mcp-Session-Id": {sid}}, "")
	<-c.done
	c.cancel()
	if c.status() != http.StatusOK {
		t.Fatalf("DELETE: status %d", c.status())
	}
}

// checkIdle fails the test if session ls has work left: requests in
// progress, questions waiting, busy marks.
func checkIdle(t *testing.T, ls *serverSession) {
	t.Helper()
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.active != 0 || len(ls.inflight) != 0 || len(ls.calls) != 0 {
		t.Fatalf("session busy: active %d, %d requests in progress, %d questions pending", ls.active, len(ls.inflight), len(ls.calls))
	}
}

// TestSessionIdleExpiry: a session with no request and no open stream is
// closed after IdleTimeout; a request or an open GET stream holds it open.
func TestSessionIdleExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture()
		h := NewHandler(f.s, nil)
		sid := bubbleSession(t, h)
		ping := `{"jsonrpc":"2.0","id":1,"method":"ping"}`

		time.Sleep(DefaultIdleTimeout - time.Second)
		if c := bubblePost(h, srvHeaders(sid), ping); c.status() != http.StatusOK {
			t.Fatalf("ping before the timeout: %d %s", c.status(), c.body())
		}
		time.Sleep(DefaultIdleTimeout - time.Second) // counted from the ping
		if c := bubblePost(h, srvHeaders(sid), ping); c.status() != http.StatusOK {
			t.Fatalf("ping after the first ping: %d %s", c.status(), c.body())
		}

		// An open GET stream is activity however long it is quiet.
		get := bubbleDo(h, http.MethodGet, srvGetHeaders(sid, ""), "")
		time.Sleep(3 * DefaultIdleTimeout)
		synctest.Wait()
		if get.isDone() || h.sessions.len() != 1 {
			t.Fatal("the session expired with its GET stream open")
		}
		if n := strings.Count(get.body(), ": keep-alive"); n < 100 {
			t.Errorf("%d keep-alives in 30 minutes", n)
		}
		get.cancel() // the client leaves
		<-get.done

		time.Sleep(DefaultIdleTimeout + time.Second)
		synctest.Wait()
		if h.sessions.len() != 0 {
			t.Fatal("the idle session was not closed")
		}
		if c := bubblePost(h, srvHeaders(sid), ping); c.status() != http.StatusNotFound {
			t.Fatalf("ping after expiry: %d %s", c.status(), c.body())
		}
	})
}

// TestSessionIdleTimeoutOption: IdleTimeout replaces the default, and a
// negative one keeps idle sessions.
func TestSessionIdleTimeoutOption(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture()
		short := NewHandler(f.s, &HandlerOptions{Sessions: &SessionOptions{IdleTimeout: time.Minute}})
		never := NewHandler(f.s, &HandlerOptions{Sessions: &SessionOptions{IdleTimeout: -1}})
		bubbleSession(t, short)
		sid := bubbleSession(t, never)
		time.Sleep(time.Minute + time.Second)
		synctest.Wait()
		if short.sessions.len() != 0 {
			t.Error("the session outlived IdleTimeout")
		}
		time.Sleep(24 * time.Hour)
		if never.sessions.len() != 1 {
			t.Error("a session expired with IdleTimeout < 0")
		}
		bubbleDelete(t, never, sid)
	})
}

// askBody is the tools/call of the fixture's "ask" tool.
const askBody = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ask"}}`

// TestSessionResumeWindow: a client that drops the POST mid-question does
// not cancel the request at once (the specification says a disconnection
// is not a cancellation); resumed within ResumeWindow, the stream goes on
// and the answer completes the call.
func TestSessionResumeWindow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture()
		lt := addSrvTools(f)
		h := NewHandler(f.s, nil)
		sid := bubbleSession(t, h)

		call := bubbleDo(h, http.MethodPost, srvHeaders(sid), askBody)
		synctest.Wait()
		evs := call.events()
		if len(evs) != 2 || evs[1].id != "1-1" {
			t.Fatalf("events %+v", evs)
		}
		q := srvAsRequest(t, evs[1], mcp.MethodElicit)
		call.cancel() // the connection drops mid-question
		<-call.done

		time.Sleep(DefaultResumeWindow - time.Second)
		synctest.Wait()
		select {
		case err := <-lt.askEnded:
			t.Fatalf("the handler ended (%v) within the resume window", err)
		default:
		}
		get := bubbleDo(h, http.MethodGet, srvGetHeaders(sid, "1-0"), "")
		synctest.Wait()
		evs = get.events()
		if len(evs) != 2 || evs[1].id != "1-1" {
			t.Fatalf("resumed events %+v", evs)
		}
		srvPriming(t, evs[0], "1-0")
		srvAsRequest(t, evs[1], mcp.MethodElicit)

		// A resumed stream has no deadline of its own: minutes past the
		// resume window, the question (bounded by server.Options.
		// AnswerTimeout, ten minutes, not by the stream) still waits.
		time.Sleep(server.DefaultAnswerTimeout - time.Minute)
		answer := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"action":"accept","content":{"region":"ap-south-1"}}}`, q.ID.Raw())
		if c := bubblePost(h, srvHeaders(sid), answer); c.status() != http.StatusAccepted {
			t.Fatalf("answer: %d %s", c.status(), c.body())
		}
		<-get.done // the response ends the resumed stream
		evs = get.events()
		if res := srvAsResponse(t, evs[len(evs)-1], "1"); !strings.Contains(string(res.Result), "ap-south-1") {
			t.Fatalf("result %s", res.Result)
		}
		if err := <-lt.askEnded; err != nil {
			t.Fatalf("ask ended with %v", err)
		}
		get.cancel()
		synctest.Wait()
		checkIdle(t, h.srvSession(t, sid))
		bubbleDelete(t, h, sid)
	})
}

// TestSessionDisconnectMidQuestion: a client that drops the POST while the
// handler waits for its answer, and never resumes, ends the handler when
// ResumeWindow passes; nothing of the request is left behind (the bubble
// would not end with a goroutine still waiting).
func TestSessionDisconnectMidQuestion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture()
		lt := addSrvTools(f)
		h := NewHandler(f.s, &HandlerOptions{Sessions: &SessionOptions{ResumeWindow: 5 * time.Second}})
		sid := bubbleSession(t, h)

		call := bubbleDo(h, http.MethodPost, srvHeaders(sid), askBody)
		synctest.Wait()
		call.cancel()
		<-call.done
		start := time.Now()
		if err := <-lt.askEnded; err != errStreamAbandoned {
			t.Fatalf("ask ended with %v, want errStreamAbandoned", err)
		}
		if waited := time.Since(start); waited != 5*time.Second {
			t.Fatalf("the handler ended after %v, want the resume window (5s)", waited)
		}
		synctest.Wait()
		ls := h.srvSession(t, sid)
		checkIdle(t, ls)
		// The handler's answer (an error) is kept, and the client was
		// told to stop asking.
		get := bubbleDo(h, http.MethodGet, srvGetHeaders(sid, "1-1"), "")
		<-get.done
		get.cancel()
		evs := get.events()
		if len(evs) != 3 {
			t.Fatalf("events after 1-1: %+v", evs)
		}
		n := srvAsNotification(t, evs[1], jsonrpc.CancelMethod)
		if !strings.Contains(string(n.Params), `"requestId":1`) {
			t.Errorf("cancellation %s", n.Params)
		}
		if r := srvAsResponse(t, evs[2], "1"); r.Error == nil {
			t.Errorf("response %s, want an error", evs[2].data)
		}
		bubbleDelete(t, h, sid)
	})
}

// TestSessionDisconnectBeforeAnyEvent: a request that has sent nothing has
// no event id to resume from: its connection dropping cancels it at once.
func TestSessionDisconnectBeforeAnyEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFixture()
		h := NewHandler(f.s, nil)
		sid := bubbleSession(t, h)
		call := bubbleDo(h, http.MethodPost, srvHeaders(sid), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}`)
		<-f.slowStarted
		call.cancel()
		if err := <-f.slowEnded; err != context.Canceled {
			t.Fatalf("slow ended with %v", err)
		}
		<-call.done
		synctest.Wait()
		checkIdle(t, h.srvSession(t, sid))
		bubbleDelete(t, h, sid)
	})
}

// TestSessionCloseEventStreamOutside2025: CloseEventStream reports false
// for a context that is not a session request's.
func TestSessionCloseEventStreamOutside2025(t *testing.T) {
	if CloseEventStream(context.Background()) {
		t.Fatal("CloseEventStream(context.Background()) = true")
	}
}
