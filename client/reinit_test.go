package client_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// The tests in this file restart a Parley legacy server over HTTP under a
// client (issue 30 §4, design record 041): the server process's state is
// gone (a new server.Server and handler on the same address, the old
// listener and its connections closed), as a restarted deployment's is.

// restartServer is a legacy (2025-11-25) Parley server over Streamable
// HTTP that a test restarts on the same address. Each incarnation (gen 1,
// 2, …) serves:
//
//   - tools "read" (readOnlyHint), "put" (idempotentHint) and "send" (no
//     hints), each answering "<name>:<gen>";
//   - resources/read of file:///r, answering "r:<gen>", and so
//     resources/subscribe;
//   - logging.
//
// It records the JSON-RPC method of every POST each incarnation received.
// With lossStatus 400 it answers an unknown session 400 instead of 404, as
// servers built after the TypeScript SDK's examples do.
type restartServer struct {
	t          *testing.T
	addr       string
	lossStatus int
	versions   []mcp.ProtocolVersion // what each incarnation serves; nil: 2025-11-25
	loseAll    bool                  // 404 to every request that carries a session id but initialize
	down       bool                  // 503 to every POST without a session id (initialize)
	cut        map[string]int        // cut the connection of the next n POSTs of a method, unanswered

	conns connTracker // the client's connections to it

	mu   sync.Mutex
	gen  int
	hs   *http.Server
	h    *streamhttp.Handler
	seen map[int][]string
}

func startRestartServer(t *testing.T, configure func(r *restartServer)) *restartServer {
	t.Helper()
	r := &restartServer{t: t, lossStatus: http.StatusNotFound, seen: make(map[int][]string)}
	if configure != nil {
		configure(r)
	}
	r.start("127.0.0.1:0")
	t.Cleanup(r.stop)
	return r
}

func (r *restartServer) url() string { return "http://" + r.addr + "/mcp" }

// start serves a new incarnation on addr.
func (r *restartServer) start(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		r.t.Fatalf("listening on %s again: %v", addr, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.addr = ln.Addr().String()
	r.gen++
	gen := r.gen
	versions := r.versions
	if versions == nil {
		versions = []mcp.ProtocolVersion{mcp.Version20251125}
	}
	s := newServer(&server.Options{SupportedVersions: versions})
	tools := []mcp.Tool{tool("read"), tool("put"), tool("send")}
	yes := true
	tools[0].Annotations = &mcp.ToolAnnotations{ReadOnlyHint: &yes}
	tools[1].Annotations = &mcp.ToolAnnotations{IdempotentHint: &yes}
	s.HandleListTools(func(context.Context, *server.Request, *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		return &mcp.ListToolsResult{Tools: tools}, nil
	})
	s.HandleCallTool(func(_ context.Context, _ *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		return mcp.TextResult(p.Name + ":" + strconv.Itoa(gen)), nil
	})
	s.HandleReadResource(func(_ context.Context, _ *server.Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: p.URI, Text: "r:" + strconv.Itoa(gen)}}}, nil
	})
	r.h = streamhttp.NewHandler(s, nil)
	h := r.h
	r.hs = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.serve(gen, h, w, req)
	})}
	go r.hs.Serve(ln)
}

func (r *restartServer) serve(gen int, h http.Handler, w http.ResponseWriter, req *http.Request) {
	var method string
	if req.Method == http.MethodPost {
		body, _ := io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			Method string          `json:"method"`
			ID     json.RawMessage `json:"id"`
		}
		json.Unmarshal(body, &m)
		method = m.Method
		if method == "" {
			method = "response"
		}
		r.mu.Lock()
		r.seen[gen] = append(r.seen[gen], method)
		loseAll, down := r.loseAll, r.down
		cut := r.cut[method] > 0
		if cut {
			r.cut[method]--
		}
		r.mu.Unlock()
		sid := req.Header.Get(streamhttp.HeaderSessionID)
		switch {
		case cut:
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.Close()
			}
			return
		case loseAll && m.ID != nil && method != mcp.MethodInitialize && sid != "":
			w.WriteHeader(http.StatusNotFound)
			return
		case down && sid == "":
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
	}
	if r.lossStatus != http.StatusNotFound {
		w = &statusRewriter{ResponseWriter: w, from: http.StatusNotFound, to: r.lossStatus}
	}
	h.ServeHTTP(w, req)
}

// restart ends the current incarnation (its sessions, its listener and
// every connection to it) and serves a new one on the same address, once
// the client has seen its connections close (as it has by the time it
// sends anything after a real restart, which takes longer than that).
func (r *restartServer) restart() {
	before := r.conns.snapshot()
	r.stop()
	r.conns.waitClosed(r.t, before)
	r.start(r.addr)
}

// transport returns a client transport to the server whose connections
// the server tracks.
func (r *restartServer) transport() transport.Transport {
	return streamhttp.NewClientTransport(r.url(), &streamhttp.ClientOptions{
		Logger:     quiet(),
		HTTPClient: &http.Client{Transport: &http.Transport{DialContext: r.conns.dial}},
	})
}

// connTracker tracks the connections a client's HTTP transport dials.
type connTracker struct {
	mu     sync.Mutex
	open   map[*trackedConn]bool
	change chan struct{} // closed and replaced when a connection closes
}

type trackedConn struct {
	net.Conn
	ct   *connTracker
	once sync.Once
}

func (c *trackedConn) Close() error {
	c.once.Do(func() {
		c.ct.mu.Lock()
		delete(c.ct.open, c)
		if c.ct.change != nil {
			close(c.ct.change)
			c.ct.change = nil
		}
		c.ct.mu.Unlock()
	})
	return c.Conn.Close()
}

func (ct *connTracker) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	tc := &trackedConn{Conn: conn, ct: ct}
	ct.mu.Lock()
	if ct.open == nil {
		ct.open = make(map[*trackedConn]bool)
	}
	ct.open[tc] = true
	ct.mu.Unlock()
	return tc, nil
}

func (ct *connTracker) snapshot() []*trackedConn {
	ct.mu.Lock()
	defer ct.mu.Unlock()
	var out []*trackedConn
	for c := range ct.open {
		out = append(out, c)
	}
	return out
}

// waitClosed waits until the client has closed every connection of
// conns.
func (ct *connTracker) waitClosed(t *testing.T, conns []*trackedConn) {
	t.Helper()
	deadline := time.NewTimer(testwait.FailAfter)
	defer deadline.Stop()
	for {
		ct.mu.Lock()
		left := 0
		for _, c := range conns {
			if ct.open[c] {
				left++
			}
		}
		if ct.change == nil {
			ct.change = make(chan struct{})
		}
		change := ct.change
		ct.mu.Unlock()
		if left == 0 {
			return
		}
		select {
		case <-change:
		case <-deadline.C:
			t.Fatalf("waited %v for the client to close %d connections to the old server", testwait.FailAfter, left)
		}
	}
}

func (r *restartServer) stop() {
	r.mu.Lock()
	hs, h := r.hs, r.h
	r.mu.Unlock()
	hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	h.Shutdown(ctx)
}

// received returns how many POSTs of method incarnation gen received.
func (r *restartServer) received(gen int, method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, m := range r.seen[gen] {
		if m == method {
			n++
		}
	}
	return n
}

type statusRewriter struct {
	http.ResponseWriter
	from, to int
}

func (w *statusRewriter) WriteHeader(code int) {
	if code == w.from {
		code = w.to
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusRewriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// logRecords collects the client's log records.
type logRecords struct {
	mu      sync.Mutex
	records []slog.Record
}

func (l *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecords) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	l.records = append(l.records, r.Clone())
	l.mu.Unlock()
	return nil
}
func (l *logRecords) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecords) WithGroup(string) slog.Handler      { return l }

// find returns the attributes of the records whose message contains msg.
func (l *logRecords) find(msg string) []map[string]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]string
	for _, r := range l.records {
		if !strings.Contains(r.Message, msg) {
			continue
		}
		attrs := map[string]string{"level": r.Level.String()}
		r.Attrs(func(a slog.Attr) bool {
			attrs[a.Key] = a.Value.String()
			return true
		})
		out = append(out, attrs)
	}
	return out
}

// sent records what middleware sees of the requests the client sends.
type sent struct {
	mu   sync.Mutex
	reqs []string // method, "+reinit" when Reinitialization is set, "+repeat" when Repeat
}

func (s *sent) middleware(next client.Handler) client.Handler {
	return func(ctx context.Context, req *client.Request) (any, error) {
		if req.Kind == client.KindRequest {
			m := req.Method
			if r := req.Reinitialization; r != nil {
				m += "+reinit(" + r.Method + ")"
			}
			if req.Repeat {
				m += "+repeat"
			}
			s.mu.Lock()
			s.reqs = append(s.reqs, m)
			s.mu.Unlock()
		}
		return next(ctx, req)
	}
}

func (s *sent) since(n int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs[n:])
}

func (s *sent) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.reqs)
}

func connectHTTP(t *testing.T, tr transport.Transport, opts *client.Options) *client.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	sess, err := newClient(opts).Connect(ctx, tr)
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

func callText(t *testing.T, sess *client.Session, name string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	res, err := sess.CallTool(ctx, name, nil)
	if err != nil {
		t.Fatalf("CallTool %s: %v", name, err)
	}
	return text(res)
}

// TestReinitializeAfterRestart: when the legacy server restarts under a
// session, the next request finds the session lost, the session opens a
// new one (one initialize, with the log level set again), and the request
// is sent again on it when it is safe: a list, a read, a tool annotated
// read-only or idempotent. A tool without those hints is not sent again:
// its call fails with a *SessionEndedError that says a new session is
// open, and the caller's own call then goes through. The logger and
// middleware see what happened. Alike whether the server answers the lost
// session 404, as the specification says, or 400, as servers built after
// the TypeScript SDK's examples do (a ping on the session confirms it).
func TestReinitializeAfterRestart(t *testing.T) {
	for _, status := range []int{http.StatusNotFound, http.StatusBadRequest} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			srv := startRestartServer(t, func(r *restartServer) { r.lossStatus = status })
			logs := &logRecords{}
			mw := &sent{}
			sess := connectHTTP(t, srv.transport(), &client.Options{
				ProtocolVersion: mcp.Version20251125,
				LogLevel:        mcp.LevelDebug,
				Logger:          slog.New(logs),
				Middleware:      []client.Middleware{mw.middleware},
			})
			ctx := testCtx(t)
			first := sess.TransportSessionID()
			if _, err := sess.ListTools(ctx, ""); err != nil {
				t.Fatal(err)
			}
			if got := callText(t, sess, "read"); got != "read:1" {
				t.Fatalf("read = %q", got)
			}

			// A list: repeated on the new session.
			srv.restart()
			n := mw.len()
			tools, err := sess.ListTools(ctx, "")
			if err != nil || len(tools.Tools) != 3 {
				t.Fatalf("ListTools after the restart: %v, %v", tools, err)
			}
			if got, want := mw.since(n), []string{"tools/list", "initialize+reinit(tools/list)", "logging/setLevel+reinit(tools/list)", "tools/list+reinit(tools/list)+repeat"}; !slices.Equal(got, want) {
				t.Errorf("middleware saw %q, want %q", got, want)
			}
			// The new server refused the first tools/list (404, or 400 and
			// a ping), and answered the repeat.
			if srv.received(2, mcp.MethodInitialize) != 1 || srv.received(2, mcp.MethodSetLoggingLevel) != 1 || srv.received(2, mcp.MethodListTools) != 2 {
				t.Errorf("the new server got %v, want one initialize, one logging/setLevel and two tools/list", srv.seen[2])
			}
			if id := sess.TransportSessionID(); id == "" || id == first {
				t.Errorf("session id %q after the restart, was %q", id, first)
			}
			recs := logs.find("a new one is open")
			if len(recs) != 1 || recs[0]["level"] != "WARN" || recs[0]["lostSession"] != first || recs[0]["method"] != "tools/list" {
				t.Errorf("log records %v, want one warning naming the lost session %q", recs, first)
			}
			if want := map[int]int{404: 0, 400: 1}[status]; srv.received(2, mcp.MethodPing) != want {
				t.Errorf("the new server got %d pings, want %d", srv.received(2, mcp.MethodPing), want)
			}

			// Tools annotated read-only or idempotent: repeated.
			for i, name := range []string{"read", "put"} {
				srv.restart()
				if got, want := callText(t, sess, name), name+":"+strconv.Itoa(3+i); got != want {
					t.Errorf("%s after a restart = %q, want %q (the new server's answer)", name, got, want)
				}
			}
			// A resource read: repeated.
			srv.restart()
			res, err := sess.ReadResource(ctx, "file:///r")
			if err != nil || len(res.Contents) != 1 || res.Contents[0].(*mcp.TextResourceContents).Text != "r:5" {
				t.Fatalf("ReadResource after a restart: %+v, %v", res, err)
			}

			// A tool without hints: not repeated.
			srv.restart()
			_, err = sess.CallTool(ctx, "send", nil)
			var ended *client.SessionEndedError
			if !errors.As(err, &ended) || !ended.Reinitialized || ended.Method != mcp.MethodCallTool ||
				!errors.Is(err, client.ErrSessionEnded) || !errors.Is(err, transport.ErrSessionEnded) {
				t.Fatalf("CallTool send after a restart: %v, want a *SessionEndedError with Reinitialized", err)
			}
			if n := srv.received(6, mcp.MethodCallTool); n != 1 || srv.received(6, mcp.MethodInitialize) != 1 {
				t.Fatalf("the new server got %v: want an initialize and only the refused tools/call", srv.seen[6])
			}
			if got := callText(t, sess, "send"); got != "send:6" {
				t.Errorf("send, sent again by the caller = %q", got)
			}
		})
	}
}

// TestReinitializeOnce: however many requests find the session lost at
// once, one initialize opens the new session, and each request that is
// safe to repeat is sent again on it.
func TestReinitializeOnce(t *testing.T) {
	srv := startRestartServer(t, nil)
	sess := connectHTTP(t, srv.transport(), &client.Options{ProtocolVersion: mcp.Version20251125})
	ctx := testCtx(t)
	srv.restart()
	const n = 8
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := sess.ListTools(ctx, "")
			errs <- err
		}()
	}
	for range n {
		if err := testwait.Recv(t, errs, "a ListTools"); err != nil {
			t.Errorf("ListTools: %v", err)
		}
	}
	if got := srv.received(2, mcp.MethodInitialize); got != 1 {
		t.Errorf("the new server got %d initialize requests, want 1", got)
	}
}

// TestReinitializeAtMostOnceARequest: against a server that loses every
// session at once, a request opens one new session and is sent again once;
// then it fails, instead of initializing again and again. The next request
// tries once more.
func TestReinitializeAtMostOnceARequest(t *testing.T) {
	srv := startRestartServer(t, nil)
	sess := connectHTTP(t, srv.transport(), &client.Options{ProtocolVersion: mcp.Version20251125})
	srv.mu.Lock()
	srv.loseAll = true
	srv.mu.Unlock()
	ctx := testCtx(t)
	_, err := sess.ListTools(ctx, "")
	var ended *client.SessionEndedError
	if !errors.As(err, &ended) || ended.Reinitialized || !errors.Is(err, client.ErrSessionEnded) {
		t.Fatalf("ListTools: %v, want a *SessionEndedError without a new session", err)
	}
	if inits, lists := srv.received(1, mcp.MethodInitialize), srv.received(1, mcp.MethodListTools); inits != 2 || lists != 2 {
		t.Errorf("the server got %d initialize and %d tools/list, want 2 of each (one renewal, one repeat)", inits, lists)
	}
	if _, err := sess.ListTools(ctx, ""); !errors.Is(err, client.ErrSessionEnded) {
		t.Fatalf("second ListTools: %v", err)
	}
	if inits := srv.received(1, mcp.MethodInitialize); inits != 3 {
		t.Errorf("the server got %d initialize, want 3", inits)
	}
}

// TestRecoveryDisabled: with Options.DisableRecovery a lost
// session stays lost: every request fails with a *SessionEndedError, and
// nothing is initialized.
func TestRecoveryDisabled(t *testing.T) {
	srv := startRestartServer(t, nil)
	logs := &logRecords{}
	sess := connectHTTP(t, srv.transport(), &client.Options{ProtocolVersion: mcp.Version20251125, DisableRecovery: true, Logger: slog.New(logs)})
	ctx := testCtx(t)
	srv.restart()
	for range 2 {
		_, err := sess.ListTools(ctx, "")
		var ended *client.SessionEndedError
		if !errors.As(err, &ended) || ended.Reinitialized || !errors.Is(err, client.ErrSessionEnded) {
			t.Fatalf("ListTools: %v, want a *SessionEndedError", err)
		}
	}
	if got := srv.received(2, mcp.MethodInitialize); got != 0 {
		t.Errorf("the new server got %d initialize requests, want none", got)
	}
	if got := srv.received(2, mcp.MethodListTools); got != 1 {
		t.Errorf("the new server got %d tools/list, want 1 (refused): the second was not sent", got)
	}
	if recs := logs.find("the server lost the session"); len(recs) != 1 {
		t.Errorf("log records %v, want one about the loss", recs)
	}
}

// TestReinitializeWhileServerDown: when the server is still down after it
// lost the session, opening a new one fails and so does the request; the
// next request, once the server is back, opens it.
func TestReinitializeWhileServerDown(t *testing.T) {
	srv := startRestartServer(t, nil)
	sess := connectHTTP(t, srv.transport(), &client.Options{ProtocolVersion: mcp.Version20251125})
	ctx := testCtx(t)
	srv.restart()
	if _, err := sess.ListTools(ctx, ""); err != nil {
		t.Fatal(err)
	}
	// The server restarts, and refuses to open sessions for a while.
	srv.restart()
	srv.mu.Lock()
	srv.down = true
	srv.mu.Unlock()
	_, err := sess.ListTools(ctx, "")
	var ended *client.SessionEndedError
	if !errors.As(err, &ended) || ended.Reinitialized || !strings.Contains(err.Error(), "opening a new session failed") {
		t.Fatalf("ListTools while the server is down: %v", err)
	}
	srv.mu.Lock()
	srv.down = false
	srv.mu.Unlock()
	if _, err := sess.ListTools(ctx, ""); err != nil {
		t.Fatalf("ListTools once the server is back: %v", err)
	}
}

// TestListenEndsWhenSessionLost: a Listen stream of a legacy session that
// the server lost ends with an error matching ErrSessionEnded: whatever
// the server sent between the loss and the new session is gone. Listening
// again subscribes on the new session, and the old stream's end
// unsubscribes nothing there.
func TestListenEndsWhenSessionLost(t *testing.T) {
	srv := startRestartServer(t, nil)
	sess := connectHTTP(t, srv.transport(), &client.Options{ProtocolVersion: mcp.Version20251125})
	ctx := testCtx(t)
	sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: []string{"file:///r"}})
	if err != nil {
		t.Fatal(err)
	}
	srv.restart()
	if _, err := sess.ReadResource(ctx, "file:///r"); err != nil {
		t.Fatal(err)
	}
	testwait.Recv(t, sub.Done(), "the stream's end")
	var ended *client.SessionEndedError
	if err := sub.Err(); !errors.As(err, &ended) || !errors.Is(err, client.ErrSessionEnded) {
		t.Fatalf("stream ended with %v, want a *SessionEndedError", err)
	}
	again, err := sess.Listen(ctx, mcp.SubscriptionFilter{ResourceSubscriptions: []string{"file:///r"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.received(2, mcp.MethodSubscribeResource); got != 1 {
		t.Errorf("the new server got %d resources/subscribe, want 1", got)
	}
	again.Close()
	if got := srv.received(2, mcp.MethodUnsubscribeResource); got != 1 {
		t.Errorf("the new server got %d resources/unsubscribe, want 1 (the new stream's)", got)
	}
}

// TestReinitializeNoticesChanges: a server that comes back speaking
// another version, with other capabilities, is spoken to as it is now:
// the session's version and capabilities are the new ones, and the log
// says what changed.
func TestReinitializeNoticesChanges(t *testing.T) {
	srv := startRestartServer(t, func(r *restartServer) {
		r.versions = []mcp.ProtocolVersion{mcp.Version20251125, mcp.Version20250618}
	})
	logs := &logRecords{}
	sess := connectHTTP(t, srv.transport(), &client.Options{Logger: slog.New(logs)})
	if v := sess.ProtocolVersion(); v != mcp.Version20251125 {
		t.Fatalf("ProtocolVersion %q", v)
	}
	srv.mu.Lock()
	srv.versions = []mcp.ProtocolVersion{mcp.Version20250618}
	srv.mu.Unlock()
	srv.restart()
	ctx := testCtx(t)
	if _, err := sess.ListTools(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if v := sess.ProtocolVersion(); v != mcp.Version20250618 {
		t.Errorf("ProtocolVersion after the restart %q, want %q", v, mcp.Version20250618)
	}
	if r := sess.InitializeResult(); r == nil || r.ProtocolVersion != mcp.Version20250618 {
		t.Errorf("InitializeResult after the restart %+v", r)
	}
	recs := logs.find("a new one is open")
	if len(recs) != 1 || !strings.Contains(recs[0]["changed"], "protocolVersion") {
		t.Errorf("log records %v, want one naming the changed protocolVersion", recs)
	}
}

// TestFailedRequestsDoNotPoison: a request that fails (it times out on a
// server that hangs on it) fails alone: the next one, on the same legacy
// session, is answered.
func TestFailedRequestsDoNotPoison(t *testing.T) {
	release := make(chan struct{})
	s := newServer(&server.Options{SupportedVersions: []mcp.ProtocolVersion{mcp.Version20251125}})
	s.HandleCallTool(func(ctx context.Context, _ *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if p.Name == "hang" {
			select {
			case <-ctx.Done():
			case <-release:
			}
		}
		return mcp.TextResult(p.Name), nil
	})
	h := streamhttp.NewHandler(s, nil)
	hs := &http.Server{Handler: h}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go hs.Serve(ln)
	t.Cleanup(func() {
		close(release)
		hs.Close()
		h.Shutdown(context.Background())
	})
	sess := connectHTTP(t, streamhttp.NewClientTransport("http://"+ln.Addr().String(), &streamhttp.ClientOptions{Logger: quiet()}), &client.Options{ProtocolVersion: mcp.Version20251125, RequestTimeout: 50 * time.Millisecond})
	ctx := testCtx(t)
	if _, err := sess.CallTool(ctx, "hang", nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hang: %v, want a timeout", err)
	}
	if got := callText(t, sess, "echo"); got != "echo" {
		t.Errorf("the call after the timeout = %q", got)
	}
}

// TestRepeatAfterFailedPost: a request safe to repeat whose POST failed
// without an answer (the server cut the connection) is sent once more; a
// tools/call of a tool without hints is not (the server may have acted on
// it), and neither is a request whose repeat fails too.
func TestRepeatAfterFailedPost(t *testing.T) {
	srv := startRestartServer(t, nil)
	mw := &sent{}
	sess := connectHTTP(t, srv.transport(), &client.Options{ProtocolVersion: mcp.Version20251125, Middleware: []client.Middleware{mw.middleware}})
	ctx := testCtx(t)
	srv.mu.Lock()
	srv.cut = map[string]int{mcp.MethodListTools: 1, mcp.MethodCallTool: 2}
	srv.mu.Unlock()
	n := mw.len()
	if _, err := sess.ListTools(ctx, ""); err != nil {
		t.Fatalf("ListTools: %v", err)
	}
	if got, want := mw.since(n), []string{"tools/list", "tools/list+repeat"}; !slices.Equal(got, want) {
		t.Errorf("middleware saw %q, want %q", got, want)
	}
	_, err := sess.CallTool(ctx, "send", nil)
	var failed *jsonrpc.TransportError
	if !errors.As(err, &failed) {
		t.Fatalf("CallTool send: %v, want the failed POST's error", err)
	}
	if got := srv.received(1, mcp.MethodCallTool); got != 1 {
		t.Errorf("the server got %d tools/call, want 1: send is not repeated", got)
	}
	// read is: its first POST is cut, its repeat answered.
	if got := callText(t, sess, "read"); got != "read:1" {
		t.Errorf("read = %q", got)
	}
	if got := srv.received(1, mcp.MethodCallTool); got != 3 {
		t.Errorf("the server got %d tools/call, want 3", got)
	}
	// Twice in a row: the repeat's failure is the request's.
	srv.mu.Lock()
	srv.cut = map[string]int{mcp.MethodListTools: 2}
	srv.mu.Unlock()
	if _, err := sess.ListTools(ctx, ""); !errors.As(err, &failed) {
		t.Fatalf("ListTools with two cuts: %v, want the failed POST's error", err)
	}
	if got := srv.received(1, mcp.MethodListTools); got != 4 {
		t.Errorf("the server got %d tools/list, want 4", got)
	}
}

// sessionEndedEnd is the client's end of a pipe to a fake legacy server,
// playing Streamable HTTP: an error response whose data says
// "sessionEnded" reaches the client as the *transport.CallError, caused by
// transport.ErrSessionEnded, that streamhttp delivers for a request the
// server refused because it lost the session.
type sessionEndedEnd struct{ transport.Conn }

func (e sessionEndedEnd) Read(ctx context.Context) ([]byte, error) {
	msg, err := e.Conn.Read(ctx)
	if err == nil && bytes.Contains(msg, []byte(`"sessionEnded":true`)) {
		return nil, &transport.CallError{Response: msg, Err: transport.ErrSessionEnded}
	}
	return msg, err
}

// TestRenewalShared: the requests that find one loss share one renewal. A
// request that finds the loss while the new initialize is in flight waits
// for it and sends nothing; one that finds it after the new session is
// open uses that session. Each is then repeated on the new session.
func TestRenewalShared(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clientEnd, serverEnd := transport.NewMemoryPipe()
		defer serverEnd.Close()
		f := &fake{t: t, conn: serverEnd}
		res := connectAsync(newClient(pinned(client.Options{})), transport.NewMemoryTransport(sessionEndedEnd{clientEnd}))
		f.handshake(legacyInit)
		r := <-res
		if r.err != nil {
			t.Fatal(r.err)
		}
		sess := r.sess
		defer sess.Close()
		msgs := make(chan wireMsg, 8)
		go func() {
			for {
				raw, err := f.conn.Read(context.Background())
				if err != nil {
					close(msgs)
					return
				}
				msgs <- decodeWire(t, raw)
			}
		}()
		expect := func(method string) wireMsg {
			t.Helper()
			m := <-msgs
			if m.Method != method {
				t.Fatalf("the client sent %s, want %s", m.Raw, method)
			}
			return m
		}
		quietNow := func(when string) {
			t.Helper()
			synctest.Wait()
			select {
			case m := <-msgs:
				t.Fatalf("the client sent %s %s", m.Raw, when)
			default:
			}
		}
		lose := func(id json.RawMessage) { f.fail(id, -32603, "the session has ended", `{"sessionEnded":true}`) }
		listTools := func() <-chan error {
			return async(func() error { _, err := sess.ListTools(context.Background(), ""); return err })
		}
		listPrompts := func() <-chan error {
			return async(func() error { _, err := sess.ListPrompts(context.Background(), ""); return err })
		}
		// answerRepeats answers the repeats of tools/list and prompts/list,
		// in whichever order they come.
		answerRepeats := func() {
			t.Helper()
			for range 2 {
				m := <-msgs
				switch m.Method {
				case mcp.MethodListTools:
					f.reply(m.ID, `{"tools":[]}`)
				case mcp.MethodListPrompts:
					f.reply(m.ID, `{"prompts":[]}`)
				default:
					t.Fatalf("the client sent %s, want a repeat", m.Raw)
				}
			}
		}

		// During the renewal.
		a := listTools()
		lose(expect(mcp.MethodListTools).ID)
		init := expect(mcp.MethodInitialize)
		b := listPrompts()
		lose(expect(mcp.MethodListPrompts).ID)
		quietNow("while a new initialize was in flight")
		f.reply(init.ID, legacyInit)
		expect(mcp.NotificationInitialized)
		answerRepeats()
		if err := <-a; err != nil {
			t.Errorf("ListTools: %v", err)
		}
		if err := <-b; err != nil {
			t.Errorf("ListPrompts: %v", err)
		}

		// After the renewal.
		c := listTools()
		tl := expect(mcp.MethodListTools)
		d := listPrompts()
		pl := expect(mcp.MethodListPrompts)
		lose(tl.ID)
		f.reply(expect(mcp.MethodInitialize).ID, legacyInit)
		expect(mcp.NotificationInitialized)
		f.reply(expect(mcp.MethodListTools).ID, `{"tools":[]}`)
		if err := <-c; err != nil {
			t.Errorf("ListTools: %v", err)
		}
		lose(pl.ID)
		f.reply(expect(mcp.MethodListPrompts).ID, `{"prompts":[]}`)
		if err := <-d; err != nil {
			t.Errorf("ListPrompts: %v", err)
		}
		quietNow("after the repeats")
	})
}

// TestLostStreamsUnsubscribeNothing: a Listen stream of a session the
// server lost ends with the loss, and unsubscribes nothing on the new
// session as it ends (its subscription went with the old one); a new
// stream subscribes on the new session, and unsubscribes there as it
// ends.
func TestLostStreamsUnsubscribeNothing(t *testing.T) {
	const subscribable = `{"protocolVersion":"2025-11-25","capabilities":{"resources":{"subscribe":true}},"serverInfo":{"name":"legacy-fake","version":"0.1"}}`
	synctest.Test(t, func(t *testing.T) {
		clientEnd, serverEnd := transport.NewMemoryPipe()
		defer serverEnd.Close()
		f := &fake{t: t, conn: serverEnd}
		res := connectAsync(newClient(pinned(client.Options{})), transport.NewMemoryTransport(sessionEndedEnd{clientEnd}))
		f.handshake(subscribable)
		r := <-res
		if r.err != nil {
			t.Fatal(r.err)
		}
		sess := r.sess
		defer sess.Close()
		ctx := context.Background()
		filter := mcp.SubscriptionFilter{ResourceSubscriptions: []string{"file:///r"}}
		listen := func() *client.Subscription {
			t.Helper()
			ch := make(chan *client.Subscription, 1)
			go func() {
				sub, err := sess.Listen(ctx, filter)
				if err != nil {
					t.Errorf("Listen: %v", err)
				}
				ch <- sub
			}()
			f.reply(f.lexpect(mcp.MethodSubscribeResource).ID, `{}`)
			return <-ch
		}
		old := listen()
		done := async(func() error { _, err := sess.ListTools(ctx, ""); return err })
		f.fail(f.lexpect(mcp.MethodListTools).ID, -32603, "the session has ended", `{"sessionEnded":true}`)
		f.reply(f.lexpect(mcp.MethodInitialize).ID, subscribable)
		f.lexpect(mcp.NotificationInitialized)
		f.reply(f.lexpect(mcp.MethodListTools).ID, `{"tools":[]}`)
		if err := <-done; err != nil {
			t.Fatalf("ListTools: %v", err)
		}
		<-old.Done()
		if err := old.Err(); !errors.Is(err, client.ErrSessionEnded) {
			t.Errorf("the old stream ended with %v, want ErrSessionEnded", err)
		}
		msgs := make(chan []byte, 1)
		go func() {
			raw, err := f.conn.Read(ctx)
			if err == nil {
				msgs <- raw
			}
		}()
		synctest.Wait()
		select {
		case raw := <-msgs:
			t.Fatalf("the client sent %s as the old stream ended", raw)
		default:
		}
		// The reader above takes the next message: the new stream's
		// subscribe.
		ch := make(chan *client.Subscription, 1)
		go func() {
			sub, err := sess.Listen(ctx, filter)
			if err != nil {
				t.Errorf("Listen on the new session: %v", err)
			}
			ch <- sub
		}()
		m := decodeWire(t, <-msgs)
		if m.Method != mcp.MethodSubscribeResource {
			t.Fatalf("the client sent %s, want resources/subscribe", m.Raw)
		}
		f.reply(m.ID, `{}`)
		sub := <-ch
		if sub == nil {
			return
		}
		closed := async(sub.Close)
		f.reply(f.lexpect(mcp.MethodUnsubscribeResource).ID, `{}`)
		<-closed
	})
}
