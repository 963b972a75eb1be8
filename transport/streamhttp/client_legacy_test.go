package streamhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/transport"
)

// The tests in this file drive the client transport against legacy
// (2025-11-25) Streamable HTTP endpoints written here by hand, so that they
// pin the wire behaviour independently of this package's server side.

// legacyHit is one HTTP request a legacy test endpoint received.
type legacyHit struct {
	method string // GET, POST, DELETE
	header http.Header
	body   []byte
	rpc    string // the JSON-RPC method of a POST, or "response"
}

// legacyEndpoint is a scripted legacy Streamable HTTP endpoint. By default
// it answers initialize with session sessionID and version, accepts
// notifications and responses with 202, answers other requests with a
// JSON {"result":{"method":...}}, GET with 405 and DELETE with 200. The
// hooks replace the defaults; a hook that returns false falls back to them.
type legacyEndpoint struct {
	t         *testing.T
	url       string
	sessionID string
	version   string

	post   func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message, body []byte) bool
	get    func(w http.ResponseWriter, r *http.Request) bool
	delete func(w http.ResponseWriter, r *http.Request) bool

	mu   sync.Mutex
	hits []legacyHit
}

func newLegacyEndpoint(t *testing.T, sessionID, version string, configure func(e *legacyEndpoint)) *legacyEndpoint {
	t.Helper()
	e := &legacyEndpoint{t: t, sessionID: sessionID, version: version}
	if configure != nil {
		configure(e)
	}
	ts := httptest.NewServer(http.HandlerFunc(e.serve))
	t.Cleanup(ts.Close)
	e.url = ts.URL
	return e
}

func (e *legacyEndpoint) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	h := legacyHit{method: r.Method, header: r.Header.Clone(), body: body}
	var msg jsonrpc.Message
	if r.Method == http.MethodPost {
		m, _, err := jsonrpc.DecodeMessage(body)
		if err != nil {
			e.t.Errorf("legacy endpoint got %q: %v", body, err)
			w.WriteHeader(400)
			return
		}
		msg = m
		h.rpc = "response"
		if req, ok := m.(*jsonrpc.Request); ok {
			h.rpc = req.Method
		}
	}
	e.mu.Lock()
	e.hits = append(e.hits, h)
	e.mu.Unlock()
	switch r.Method {
	case http.MethodPost:
		if e.post != nil && e.post(w, r, msg, body) {
			return
		}
		req, ok := msg.(*jsonrpc.Request)
		switch {
		case !ok || req.IsNotification():
			w.WriteHeader(http.StatusAccepted)
		case req.Method == "initialize":
			e.mu.Lock()
			sid := e.sessionID
			e.mu.Unlock()
			if sid != "" {
				w.Header().Set("Mcp-Session-Id", sid)
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":%q,"capabilities":{"tools":{}},"serverInfo":{"name":"legacy","version":"1"}}}`, req.ID.Raw(), e.version)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"method":%q}}`, req.ID.Raw(), req.Method)
		}
	case http.MethodGet:
		if e.get != nil && e.get(w, r) {
			return
		}
		w.WriteHeader(http.StatusMethodNotAllowed)
	case http.MethodDelete:
		if e.delete != nil && e.delete(w, r) {
			return
		}
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}

// requests returns the hits so far with the given HTTP method and, for
// POSTs, JSON-RPC method ("" for any).
func (e *legacyEndpoint) requests(method, rpc string) []legacyHit {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []legacyHit
	for _, h := range e.hits {
		if h.method == method && (rpc == "" || h.rpc == rpc) {
			out = append(out, h)
		}
	}
	return out
}

// waitFor polls until cond holds, failing the test after ten seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// writeEvents writes raw SSE text and flushes it.
func writeEvents(w http.ResponseWriter, text string) {
	io.WriteString(w, text)
	w.(http.Flusher).Flush()
}

// startSSE sends the headers of an event stream.
func startSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(200)
	w.(http.Flusher).Flush()
}

// fakeClock records the waits the transport asks for and returns at once.
type fakeClock struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (f *fakeClock) wait(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	f.waits = append(f.waits, d)
	f.mu.Unlock()
	return ctx.Err()
}

func (f *fakeClock) recorded() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.waits...)
}

// dialLegacy connects a client transport to url with a fake clock.
func dialLegacy(t *testing.T, url string, opts *ClientOptions) (*clientConn, *fakeClock) {
	t.Helper()
	clock := &fakeClock{}
	tr := NewClientTransport(url, opts).(*clientTransport)
	tr.wait = clock.wait
	conn, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn.(*clientConn), clock
}

const legacyInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`

// handshake writes initialize, reads its response and writes
// notifications/initialized.
func handshake(t *testing.T, c *clientConn) {
	t.Helper()
	write(t, c, legacyInitialize)
	if r := readResponse(t, c); r.Error != nil || r.ID.Raw() != "1" {
		t.Fatalf("initialize: %+v", r)
	}
	write(t, c, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func write(t *testing.T, c *clientConn, msg string) {
	t.Helper()
	if err := c.Write(context.Background(), []byte(msg)); err != nil {
		t.Fatalf("Write %s: %v", msg, err)
	}
}

// readMessage reads the next message, failing after ten seconds.
func readMessage(t *testing.T, c *clientConn) jsonrpc.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	m, _, err := jsonrpc.DecodeMessage(raw)
	if err != nil {
		t.Fatalf("Read %s: %v", raw, err)
	}
	return m
}

// readRefusal reads the error response to a request whose POST got HTTP
// status: Read returns it in a *transport.CallError whose cause is the
// *transport.HTTPStatusError.
func readRefusal(t *testing.T, c *clientConn, status int) *jsonrpc.Response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := c.Read(ctx)
	var ce *transport.CallError
	if !errors.As(err, &ce) {
		t.Fatalf("Read = %s, %v; want a *transport.CallError", raw, err)
	}
	var se *transport.HTTPStatusError
	if !errors.As(err, &se) || se.StatusCode != status {
		t.Fatalf("Read: %v, want a *transport.HTTPStatusError with status %d", err, status)
	}
	m, _, derr := jsonrpc.DecodeMessage(ce.Response)
	r, ok := m.(*jsonrpc.Response)
	if derr != nil || !ok || r.Error == nil {
		t.Fatalf("CallError.Response = %s (%v), want an error response", ce.Response, derr)
	}
	return r
}

func readResponse(t *testing.T, c *clientConn) *jsonrpc.Response {
	t.Helper()
	m := readMessage(t, c)
	r, ok := m.(*jsonrpc.Response)
	if !ok {
		t.Fatalf("read %#v, want a response", m)
	}
	return r
}

func readRequest(t *testing.T, c *clientConn) *jsonrpc.Request {
	t.Helper()
	m := readMessage(t, c)
	r, ok := m.(*jsonrpc.Request)
	if !ok {
		t.Fatalf("read %#v, want a request or notification", m)
	}
	return r
}

// TestLegacySessionHeaders: after initialize, every message carries the
// session id and the negotiated version, and none of the 2026-only headers;
// initialize itself carries neither; tools/list results go through
// untouched; the GET stream is tried once after notifications/initialized
// and a 405 ends it.
func TestLegacySessionHeaders(t *testing.T) {
	e := newLegacyEndpoint(t, "sess-1", "2025-06-18", func(e *legacyEndpoint) {
		e.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message, _ []byte) bool {
			if req, ok := m.(*jsonrpc.Request); ok && req.Method == "tools/list" {
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":{"tools":[
{"name":"route","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}},
{"name":"odd","inputSchema":{"type":"object","properties":{"n":{"type":"number","x-mcp-header":"N"}}}}]}}`, req.ID.Raw())
				return true
			}
			return false
		}
	})
	c, _ := dialLegacy(t, e.url, &ClientOptions{Header: http.Header{"Authorization": {"Bearer t"}, "Mcp-Session-Id": {"forged"}}})
	handshake(t, c)
	if c.SessionID() != "sess-1" || c.SessionEnded() {
		t.Errorf("SessionID %q, SessionEnded %v", c.SessionID(), c.SessionEnded())
	}

	write(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
	list := readResponse(t, c)
	if !strings.Contains(string(list.Result), `"odd"`) {
		t.Errorf("tools/list result was filtered on a legacy session: %s", list.Result)
	}
	write(t, c, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"route","arguments":{"region":"eu"},"_meta":{"progressToken":"p"}}}`)
	if r := readResponse(t, c); r.Error != nil || !strings.Contains(string(r.Result), "tools/call") {
		t.Errorf("tools/call: %+v", r)
	}
	write(t, c, `{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)

	posts := e.requests("POST", "")
	if len(posts) != 5 {
		t.Fatalf("%d POSTs, want 5", len(posts))
	}
	init := posts[0]
	if init.rpc != "initialize" || init.header.Get(HeaderProtocolVersion) != "" || init.header.Get(HeaderSessionID) != "" ||
		init.header.Get(HeaderMethod) != "" || init.header.Get("Accept") != "application/json, text/event-stream" ||
		init.header.Get("Content-Type") != "application/json" || init.header.Get("Authorization") != "Bearer t" {
		t.Errorf("initialize headers %v", init.header)
	}
	for _, p := range posts[1:] {
		h := p.header
		if h.Get(HeaderSessionID) != "sess-1" || len(h.Values(HeaderSessionID)) != 1 || h.Get(HeaderProtocolVersion) != "2025-06-18" ||
			h.Get("Authorization") != "Bearer t" || h.Get("Accept") != "application/json, text/event-stream" || h.Get("Content-Type") != "application/json" {
			t.Errorf("%s headers %v", p.rpc, h)
		}
		for k := range h {
			if k == canonMethod || k == canonName || strings.HasPrefix(k, canonParamPrefix) {
				t.Errorf("%s carries the 2026-only header %s", p.rpc, k)
			}
		}
	}
	waitFor(t, "the GET stream", func() bool { return len(e.requests("GET", "")) == 1 })
	get := e.requests("GET", "")[0].header
	if get.Get("Accept") != "text/event-stream" || get.Get(HeaderSessionID) != "sess-1" || get.Get(HeaderProtocolVersion) != "2025-06-18" || get.Get(HeaderLastEventID) != "" {
		t.Errorf("GET headers %v", get)
	}
	c.Close()
	if n := len(e.requests("GET", "")); n != 1 {
		t.Errorf("%d GETs after a 405, want 1", n)
	}
}

// TestLegacyServerRequestOnPostStream: a server request on a tools/call's
// event stream reaches Read, and the response the client writes is POSTed
// with the session; the call then completes on the same stream.
func TestLegacyServerRequestOnPostStream(t *testing.T) {
	answered := make(chan []byte, 1)
	e := newLegacyEndpoint(t, "sess-2", "2025-11-25", func(e *legacyEndpoint) {
		e.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message, body []byte) bool {
			switch m := m.(type) {
			case *jsonrpc.Response:
				answered <- body
				w.WriteHeader(http.StatusAccepted)
				return true
			case *jsonrpc.Request:
				if m.Method != "tools/call" {
					return false
				}
				startSSE(w)
				writeEvents(w, "id: s-1\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":\"p\",\"progress\":1}}\n\n")
				writeEvents(w, "id: s-2\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"e1\",\"method\":\"elicitation/create\",\"params\":{\"message\":\"Region?\",\"requestedSchema\":{\"type\":\"object\",\"properties\":{}}}}\n\n")
				select {
				case answer := <-answered:
					var resp struct {
						Result json.RawMessage `json:"result"`
					}
					json.Unmarshal(answer, &resp)
					writeEvents(w, fmt.Sprintf("id: s-3\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":%q}]}}\n\n", m.ID.Raw(), resp.Result))
				case <-r.Context().Done():
				}
				return true
			}
			return false
		}
	})
	c, _ := dialLegacy(t, e.url, nil)
	handshake(t, c)
	write(t, c, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ask","arguments":{}}}`)
	if n := readRequest(t, c); n.Method != "notifications/progress" || !n.IsNotification() {
		t.Fatalf("first message %+v", n)
	}
	ask := readRequest(t, c)
	if ask.Method != "elicitation/create" || ask.ID.Raw() != `"e1"` {
		t.Fatalf("server request %+v", ask)
	}
	write(t, c, `{"jsonrpc":"2.0","id":"e1","result":{"action":"accept","content":{"region":"eu"}}}`)
	r := readResponse(t, c)
	if r.ID.Raw() != "7" || r.Error != nil || !strings.Contains(string(r.Result), `region`) {
		t.Fatalf("tools/call response %+v %s", r, r.Result)
	}
	resp := e.requests("POST", "response")
	if len(resp) != 1 {
		t.Fatalf("%d response POSTs", len(resp))
	}
	if h := resp[0].header; h.Get(HeaderSessionID) != "sess-2" || h.Get(HeaderProtocolVersion) != "2025-11-25" || h.Get("Content-Type") != "application/json" || h.Get(HeaderMethod) != "" {
		t.Errorf("response POST headers %v", h)
	}
}

// TestLegacyResponseRefused: Write reports a response the server does not
// accept.
func TestLegacyResponseRefused(t *testing.T) {
	e := newLegacyEndpoint(t, "sess-r", "2025-11-25", func(e *legacyEndpoint) {
		e.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message, body []byte) bool {
			if _, ok := m.(*jsonrpc.Response); ok {
				w.WriteHeader(http.StatusBadRequest)
				return true
			}
			return false
		}
	})
	c, _ := dialLegacy(t, e.url, nil)
	handshake(t, c)
	if err := c.Write(context.Background(), []byte(`{"jsonrpc":"2.0","id":"x","result":{}}`)); err == nil || !strings.Contains(err.Error(), "400") {
		t.Errorf("Write of a refused response = %v", err)
	}
}

// TestLegacyGetStream: the GET stream opens after notifications/initialized,
// its messages reach Read, and when it drops it is reopened with
// Last-Event-ID after the retry the server gave.
func TestLegacyGetStream(t *testing.T) {
	e := newLegacyEndpoint(t, "sess-3", "2025-11-25", func(e *legacyEndpoint) {
		e.get = func(w http.ResponseWriter, r *http.Request) bool {
			switch r.Header.Get(HeaderLastEventID) {
			case "":
				startSSE(w)
				writeEvents(w, "id: g-1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}\n\n")
				writeEvents(w, "retry: 3000\nid: g-2\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"p1\",\"method\":\"ping\"}\n\n")
				return true // the connection drops
			case "g-2":
				startSSE(w)
				writeEvents(w, "id: g-3\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/list_changed\"}\n\n")
				<-r.Context().Done()
				return true
			}
			w.WriteHeader(http.StatusBadRequest)
			return true
		}
	})
	c, clock := dialLegacy(t, e.url, nil)
	handshake(t, c)
	if n := readRequest(t, c); n.Method != "notifications/tools/list_changed" {
		t.Fatalf("first GET message %+v", n)
	}
	ping := readRequest(t, c)
	if ping.Method != "ping" || ping.ID.Raw() != `"p1"` {
		t.Fatalf("second GET message %+v", ping)
	}
	write(t, c, `{"jsonrpc":"2.0","id":"p1","result":{}}`)
	if n := readRequest(t, c); n.Method != "notifications/resources/list_changed" {
		t.Fatalf("message after the reconnection %+v", n)
	}
	gets := e.requests("GET", "")
	if len(gets) != 2 {
		t.Fatalf("%d GETs, want 2", len(gets))
	}
	if h := gets[1].header; h.Get(HeaderLastEventID) != "g-2" || h.Get(HeaderSessionID) != "sess-3" || h.Get("Accept") != "text/event-stream" {
		t.Errorf("reconnection headers %v", h)
	}
	if w := clock.recorded(); len(w) != 1 || w[0] != 3*time.Second {
		t.Errorf("waits %v, want [3s]", w)
	}
	if n := len(e.requests("POST", "response")); n != 1 {
		t.Errorf("%d response POSTs, want 1", n)
	}
}

// TestLegacyGetStreamGivesUp: a GET stream that keeps failing is retried a
// bounded number of times, after the default delay doubled for each
// failure but the first.
func TestLegacyGetStreamGivesUp(t *testing.T) {
	e := newLegacyEndpoint(t, "sess-4", "2025-11-25", func(e *legacyEndpoint) {
		e.get = func(w http.ResponseWriter, r *http.Request) bool {
			w.WriteHeader(http.StatusServiceUnavailable)
			return true
		}
	})
	c, clock := dialLegacy(t, e.url, nil)
	handshake(t, c)
	want := 1 + maxResumeAttempts
	waitFor(t, "the GET attempts", func() bool { return len(e.requests("GET", "")) == want })
	c.Close()
	if n := len(e.requests("GET", "")); n != want {
		t.Errorf("%d GETs, want %d", n, want)
	}
	waits := clock.recorded()
	if len(waits) != maxResumeAttempts {
		t.Errorf("%d waits, want %d", len(waits), maxResumeAttempts)
	}
	for i, d := range waits {
		if want := defaultRetryDelay << i; d != want {
			t.Errorf("wait %d: %v, want %v", i+1, d, want)
		}
	}
}

// TestLegacyPostStreamResumed is the conformance suite's sse-retry
// scenario and more: a tools/call stream that ends after an event id but
// before the response is resumed with GET and Last-Event-ID after the
// server's retry, twice, while the session's own GET stream stays open.
func TestLegacyPostStreamResumed(t *testing.T) {
	e := newLegacyEndpoint(t, "sess-5", "2025-11-25", func(e *legacyEndpoint) {
		var callID string
		e.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message, _ []byte) bool {
			req, ok := m.(*jsonrpc.Request)
			if !ok || req.Method != "tools/call" {
				return false
			}
			e.mu.Lock()
			callID = req.ID.Raw()
			e.mu.Unlock()
			startSSE(w)
			writeEvents(w, "id: ev-1\nretry: 500\ndata: \n\n")
			writeEvents(w, "id: ev-2\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progressToken\":1,\"progress\":1}}\n\n")
			return true // closed before the response
		}
		e.get = func(w http.ResponseWriter, r *http.Request) bool {
			startSSE(w)
			switch r.Header.Get(HeaderLastEventID) {
			case "": // the session's stream: held open
				writeEvents(w, "id: standalone-1\nretry: 500\ndata: \n\n")
				<-r.Context().Done()
			case "ev-2": // an event, no response, and a new retry
				writeEvents(w, "id: ev-3\nretry: 700\ndata: \n\n")
			case "ev-3": // the response, then held open as the suite's mock does
				e.mu.Lock()
				id := callID
				e.mu.Unlock()
				writeEvents(w, "id: ev-4\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":"+id+",\"result\":{\"content\":[]}}\n\n")
				<-r.Context().Done()
			}
			return true
		}
	})
	c, clock := dialLegacy(t, e.url, nil)
	handshake(t, c)
	waitFor(t, "the GET stream", func() bool { return len(e.requests("GET", "")) == 1 })
	write(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"test_reconnection","arguments":{}}}`)
	if n := readRequest(t, c); n.Method != "notifications/progress" {
		t.Fatalf("first message %+v", n)
	}
	r := readResponse(t, c)
	if r.ID.Raw() != "2" || r.Error != nil {
		t.Fatalf("tools/call response %+v", r)
	}
	gets := e.requests("GET", "")
	if len(gets) != 3 {
		t.Fatalf("%d GETs, want 3", len(gets))
	}
	for i, want := range []string{"", "ev-2", "ev-3"} {
		h := gets[i].header
		if h.Get(HeaderLastEventID) != want || h.Get(HeaderSessionID) != "sess-5" || h.Get(HeaderProtocolVersion) != "2025-11-25" || h.Get("Accept") != "text/event-stream" {
			t.Errorf("GET %d headers %v", i, h)
		}
	}
	if w := clock.recorded(); len(w) != 2 || w[0] != 500*time.Millisecond || w[1] != 700*time.Millisecond {
		t.Errorf("waits %v, want [500ms 700ms]", w)
	}
}

// TestLegacyPostStreamNotResumable: a stream that ends before the response
// without having given an event id cannot be resumed: the request gets an
// error response and no GET is sent for it.
func TestLegacyPostStreamNotResumable(t *testing.T) {
	e := newLegacyEndpoint(t, "", "2025-11-25", func(e *legacyEndpoint) {
		e.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message, _ []byte) bool {
			if req, ok := m.(*jsonrpc.Request); ok && req.Method == "tools/call" {
				startSSE(w)
				writeEvents(w, "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\",\"data\":1}}\n\n")
				return true
			}
			return false
		}
	})
	c, _ := dialLegacy(t, e.url, nil)
	handshake(t, c)
	write(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`)
	readRequest(t, c)
	r := readResponse(t, c)
	if r.Error == nil || !strings.Contains(r.Error.Message, "ended before the response") {
		t.Fatalf("response %+v", r)
	}
	if n := len(e.requests("GET", "")); n != 0 {
		t.Errorf("%d GETs", n)
	}
}

// TestLegacyResumeGivesUp: resumption that keeps failing ends with an error
// response after a bounded number of attempts.
func TestLegacyResumeGivesUp(t *testing.T) {
	e := newLegacyEndpoint(t, "sess-6", "2025-11-25", func(e *legacyEndpoint) {
		e.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message, _ []byte) bool {
			if req, ok := m.(*jsonrpc.Request); ok && req.Method == "tools/call" {
				startSSE(w)
				writeEvents(w, "id: a\ndata: \n\n")
				return true
			}
			return false
		}
		e.get = func(w http.ResponseWriter, r *http.Request) bool {
			if r.Header.Get(HeaderLastEventID) == "" {
				return false // 405: no session stream
			}
			w.WriteHeader(http.StatusBadGateway)
			return true
		}
	})
	c, clock := dialLegacy(t, e.url, nil)
	handshake(t, c)
	write(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x"}}`)
	r := readResponse(t, c)
	if r.Error == nil || !strings.Contains(r.Error.Message, "attempts to resume") {
		t.Fatalf("response %+v", r)
	}
	var resumes int
	for _, g := range e.requests("GET", "") {
		if g.header.Get(HeaderLastEventID) == "a" {
			resumes++
		}
	}
	if resumes != maxResumeAttempts || len(clock.recorded()) != maxResumeAttempts {
		t.Errorf("%d resumptions and %d waits, want %d", resumes, len(clock.recorded()), maxResumeAttempts)
	}
}

// TestLegacyResponseOnOtherStream: a response that the server sends on the
// session's GET stream instead of its request's stream is delivered once,
// and the request's POST is closed.
func TestLegacyResponseOnOtherStream(t *testing.T) {
	called := make(chan string, 1)
	postClosed := make(chan struct{})
	e := newLegacyEndpoint(t, "sess-7", "2025-11-25", func(e *legacyEndpoint) {
		e.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message, _ []byte) bool {
			if req, ok := m.(*jsonrpc.Request); ok && req.Method == "tools/call" {
				startSSE(w)
				writeEvents(w, "id: c-1\ndata: \n\n")
				called <- req.ID.Raw()
				<-r.Context().Done()
				close(postClosed)
				return true
			}
			return false
		}
		e.get = func(w http.ResponseWriter, r *http.Request) bool {
			startSSE(w)
			select {
			case id := <-called:
				writeEvents(w, "id: g-1\ndata: {\"jsonrpc\":\"2.0\",\"id\":"+id+",\"result\":{\"content\":[]}}\n\n")
			case <-r.Context().Done():
			}
			<-r.Context().Done()
			return true
		}
	})
	c, _ := dialLegacy(t, e.url, nil)
	handshake(t, c)
	write(t, c, `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"x"}}`)
	if r := readResponse(t, c); r.ID.Raw() != "5" || r.Error != nil {
		t.Fatalf("response %+v", r)
	}
	select {
	case <-postClosed:
	case <-time.After(10 * time.Second):
		t.Fatal("the request's POST was not closed")
	}
	// Nothing else is delivered for the request: the next message is the
	// answer to the next request.
	write(t, c, `{"jsonrpc":"2.0","id":6,"method":"tools/list"}`)
	if r := readResponse(t, c); r.ID.Raw() != "6" {
		t.Fatalf("next message %+v", r)
	}
}

// TestLegacyCancel: on a legacy session notifications/cancelled is POSTed
// (closing a stream is no cancellation there) and the request's POST is
// closed without an answer.
func TestLegacyCancel(t *testing.T) {
	started := make(chan struct{})
	postClosed := make(chan struct{})
	e := newLegacyEndpoint(t, "sess-8", "2025-11-25", func(e *legacyEndpoint) {
		e.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message, _ []byte) bool {
			if req, ok := m.(*jsonrpc.Request); ok && req.Method == "tools/call" {
				startSSE(w)
				close(started)
				<-r.Context().Done()
				close(postClosed)
				return true
			}
			return false
		}
	})
	c, _ := dialLegacy(t, e.url, nil)
	handshake(t, c)
	write(t, c, `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"slow"}}`)
	srvRecv(t, started, "the tools/call POST")
	write(t, c, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9,"reason":"enough"}}`)
	select {
	case <-postClosed:
	case <-time.After(10 * time.Second):
		t.Fatal("the request's POST was not closed")
	}
	cancels := e.requests("POST", "notifications/cancelled")
	if len(cancels) != 1 || cancels[0].header.Get(HeaderSessionID) != "sess-8" {
		t.Fatalf("cancellation POSTs %v", cancels)
	}
	write(t, c, `{"jsonrpc":"2.0","id":10,"method":"tools/list"}`)
	if r := readResponse(t, c); r.ID.Raw() != "10" {
		t.Fatalf("next message %+v, want the answer to 10", r)
	}
}

// TestLegacyDeleteOnClose: Close ends the session with one DELETE carrying
// its id, even when the server answers 405.
func TestLegacyDeleteOnClose(t *testing.T) {
	e := newLegacyEndpoint(t, "sess-9", "2025-03-26", func(e *legacyEndpoint) {
		e.delete = func(w http.ResponseWriter, r *http.Request) bool {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return true
		}
	})
	c, _ := dialLegacy(t, e.url, &ClientOptions{Header: http.Header{"Authorization": {"Bearer t"}}})
	handshake(t, c)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	dels := e.requests("DELETE", "")
	if len(dels) != 1 {
		t.Fatalf("%d DELETEs, want 1", len(dels))
	}
	if h := dels[0].header; h.Get(HeaderSessionID) != "sess-9" || h.Get(HeaderProtocolVersion) != "2025-03-26" || h.Get("Authorization") != "Bearer t" {
		t.Errorf("DELETE headers %v", h)
	}
}

// TestLegacyNoSession: a server that assigns no session gets no GET stream
// and no DELETE, and requests carry the negotiated version alone.
func TestLegacyNoSession(t *testing.T) {
	e := newLegacyEndpoint(t, "", "2025-11-25", nil)
	c, _ := dialLegacy(t, e.url, nil)
	handshake(t, c)
	write(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	readResponse(t, c)
	c.Close()
	if n := len(e.requests("GET", "")) + len(e.requests("DELETE", "")); n != 0 {
		t.Errorf("%d GETs and DELETEs", n)
	}
	for _, p := range e.requests("POST", "")[1:] {
		if p.header.Get(HeaderSessionID) != "" || p.header.Get(HeaderProtocolVersion) != "2025-11-25" {
			t.Errorf("%s headers %v", p.rpc, p.header)
		}
	}
}

// TestLegacySessionEnded: a 404 to a request carrying the session id ends
// the session: that request and every later one get an error response
// (later ones without being sent), notifications fail with ErrSessionEnded,
// Close sends no DELETE, and a new initialize starts a new session.
func TestLegacySessionEnded(t *testing.T) {
	var mu sync.Mutex
	ended := false
	e := newLegacyEndpoint(t, "old", "2025-11-25", func(e *legacyEndpoint) {
		e.post = func(w http.ResponseWriter, r *http.Request, m jsonrpc.Message, _ []byte) bool {
			mu.Lock()
			defer mu.Unlock()
			if req, ok := m.(*jsonrpc.Request); ok && req.Method == "initialize" && ended {
				e.mu.Lock()
				e.sessionID = "new" // the next session
				e.mu.Unlock()
				return false
			}
			if r.Header.Get(HeaderSessionID) == "old" && ended {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotFound)
				io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}`)
				return true
			}
			return false
		}
		e.delete = func(w http.ResponseWriter, r *http.Request) bool { return false }
	})
	c, _ := dialLegacy(t, e.url, nil)
	handshake(t, c)
	mu.Lock()
	ended = true
	mu.Unlock()

	write(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	r := readRefusal(t, c, http.StatusNotFound)
	if r.ID.Raw() != "2" || r.Error == nil || !strings.Contains(r.Error.Message, "ended the session") ||
		!strings.Contains(string(r.Error.Data), `"sessionEnded":true`) || !strings.Contains(string(r.Error.Data), `"httpStatus":404`) {
		t.Fatalf("response to the 404 %+v", r)
	}
	if !c.SessionEnded() {
		t.Error("SessionEnded is false after a 404")
	}
	before := len(e.requests("POST", ""))
	write(t, c, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x"}}`)
	r = readSessionEnded(t, c)
	if r.ID.Raw() != "3" || r.Error == nil || !strings.Contains(r.Error.Message, "session has ended") {
		t.Fatalf("response after the end %+v", r)
	}
	if err := c.Write(context.Background(), []byte(`{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}`)); !errors.Is(err, ErrSessionEnded) {
		t.Errorf("notification after the end: %v", err)
	}
	if err := c.Write(context.Background(), []byte(`{"jsonrpc":"2.0","id":"s","result":{}}`)); !errors.Is(err, ErrSessionEnded) {
		t.Errorf("response after the end: %v", err)
	}
	if after := len(e.requests("POST", "")); after != before {
		t.Errorf("%d POSTs after the session ended", after-before)
	}

	// A new initialize starts over, without the old id.
	handshake(t, c)
	if c.SessionEnded() || c.SessionID() != "new" {
		t.Errorf("after a new initialize: SessionID %q, SessionEnded %v", c.SessionID(), c.SessionEnded())
	}
	inits := e.requests("POST", "initialize")
	if len(inits) != 2 || inits[1].header.Get(HeaderSessionID) != "" {
		t.Fatalf("initialize POSTs %v", inits)
	}
	write(t, c, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`)
	if r := readResponse(t, c); r.Error != nil {
		t.Fatalf("tools/list on the new session: %+v", r.Error)
	}
	c.Close()
	dels := e.requests("DELETE", "")
	if len(dels) != 1 || dels[0].header.Get(HeaderSessionID) != "new" {
		t.Errorf("DELETEs %v, want one for the new session", dels)
	}
}

// TestLegacyGet404KeepsSession: a 404 to the GET stream only means the
// server offers none; the session goes on.
func TestLegacyGet404KeepsSession(t *testing.T) {
	e := newLegacyEndpoint(t, "sess-g", "2025-11-25", func(e *legacyEndpoint) {
		e.get = func(w http.ResponseWriter, r *http.Request) bool {
			w.WriteHeader(http.StatusNotFound)
			return true
		}
	})
	c, clock := dialLegacy(t, e.url, nil)
	handshake(t, c)
	waitFor(t, "the GET stream", func() bool { return len(e.requests("GET", "")) == 1 })
	write(t, c, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	if r := readResponse(t, c); r.Error != nil || c.SessionEnded() {
		t.Fatalf("tools/list after a GET 404: %+v, SessionEnded %v", r.Error, c.SessionEnded())
	}
	c.Close()
	if n := len(e.requests("GET", "")); n != 1 || len(clock.recorded()) != 0 {
		t.Errorf("%d GETs and waits %v after a 404, want 1 and none", n, clock.recorded())
	}
}

// TestLegacyBadSessionID: an Mcp-Session-Id that could not be sent back is
// an error on initialize.
func TestLegacyBadSessionID(t *testing.T) {
	e := newLegacyEndpoint(t, "has space", "2025-11-25", nil)
	c, _ := dialLegacy(t, e.url, nil)
	write(t, c, legacyInitialize)
	if r := readResponse(t, c); r.Error == nil || !strings.Contains(r.Error.Message, "Mcp-Session-Id") {
		t.Fatalf("initialize response %+v", r)
	}
}

// TestLegacyEvents: the legacy event reader keeps ids and retry across
// connections, skips priming events and reads every line ending.
func TestLegacyEvents(t *testing.T) {
	ev := newLegacyEvents(1 << 10)
	ev.reset(strings.NewReader("id: 1\r\nretry: 250\r\ndata: \r\n\r\n" +
		": comment\n" +
		"event: message\ndata: {\"a\":\ndata: 1}\n\n" +
		"retry: soon\nid: 2\x00\nevent: other\ndata: x\n\n" +
		"id: 3\rdata: {}\r\r" +
		"id: 4\ndata: cut short"))
	var got []string
	for {
		data, err := ev.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(data))
	}
	if strings.Join(got, "|") != "{\"a\":\n1}|{}" {
		t.Errorf("data %q", got)
	}
	if ev.lastID != "3" || ev.delay() != 250*time.Millisecond || ev.events != 4 {
		t.Errorf("lastID %q, delay %v, events %d", ev.lastID, ev.delay(), ev.events)
	}
	// The next connection starts from the last id; an event without id
	// keeps it.
	ev.reset(strings.NewReader("data: {}\n\nretry: 99999999999\n\n"))
	if data, err := ev.next(); err != nil || string(data) != "{}" {
		t.Fatalf("next = %q, %v", data, err)
	}
	if _, err := ev.next(); err != io.EOF {
		t.Fatal(err)
	}
	if ev.lastID != "3" || ev.delay() != maxRetryDelay {
		t.Errorf("lastID %q, delay %v", ev.lastID, ev.delay())
	}
	if d := newLegacyEvents(10).delay(); d != defaultRetryDelay {
		t.Errorf("default delay %v", d)
	}
	big := newLegacyEvents(8)
	big.reset(bytes.NewReader([]byte("data: 0123456789\n\n")))
	if _, err := big.next(); !errors.Is(err, errEventTooLarge) {
		t.Errorf("oversized event: %v", err)
	}
}
