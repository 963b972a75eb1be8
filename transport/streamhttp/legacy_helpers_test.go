package streamhttp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// This file holds the helpers of the legacy (2025-11-25) handler tests:
// tools that ask the client and poll, raw HTTP requests of a legacy
// client, and an SSE reader that keeps ids and retry fields.

// srvVersion is the version the tests' sessions speak.
const srvVersion = "2025-11-25"

// srvTools adds to a fixture the tools only legacy sessions exercise:
//
//   - "ask" elicits a region with a server-to-client request and answers
//     with it; its end is reported on askEnded (nil, or the context's
//     cause when it was cancelled while waiting).
//   - "poll" closes its event stream's connection (CloseEventStream,
//     reported on polled), waits for pollGo, then reports progress and
//     answers "polled".
type srvTools struct {
	askEnded chan error
	polled   chan bool
	pollGo   chan struct{}
}

func addSrvTools(f *fixture) *srvTools {
	lt := &srvTools{askEnded: make(chan error, 1), polled: make(chan bool, 1), pollGo: make(chan struct{})}
	f.s.Use(func(next server.Handler) server.Handler {
		return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
			p, ok := req.Params.(*mcp.CallToolRequestParams)
			if !ok {
				return next(ctx, req)
			}
			switch p.Name {
			case "ask":
				raw, err := req.Ask(ctx, mcp.NewElicitFormRequest("Which region?", mcp.ElicitRequestedSchema{
					Properties: map[string]mcp.PrimitiveSchemaDefinition{"region": &mcp.StringSchema{}},
				}))
				if err != nil {
					if ctx.Err() != nil {
						lt.askEnded <- context.Cause(ctx)
					} else {
						lt.askEnded <- nil
					}
					return nil, err
				}
				lt.askEnded <- nil
				var answer mcp.ElicitResult
				if err := json.Unmarshal(raw, &answer); err != nil {
					return nil, err
				}
				return mcp.TextResult("region: " + answer.Content["region"].(string)), nil
			case "poll":
				lt.polled <- CloseEventStream(ctx)
				select {
				case <-lt.pollGo:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
				if err := req.Progress(ctx, 1, 1, "resumed"); err != nil {
					return nil, err
				}
				return mcp.TextResult("polled"), nil
			}
			return next(ctx, req)
		}
	})
	return lt
}

// srvServer serves a fixture with legacy tools over a real HTTP server.
func srvServer(t *testing.T, opts *HandlerOptions) (string, *fixture, *srvTools, *Handler) {
	t.Helper()
	f := newFixture()
	lt := addSrvTools(f)
	h := NewHandler(f.s, opts)
	ts := httptest.NewServer(h)
	// As a server shutting down does: the sessions' goroutines end with
	// the test rather than at their idle timeout.
	t.Cleanup(func() { ts.Close(); EndSessions(h) })
	return ts.URL, f, lt, h
}

// srvInitialize is a legacy client's initialize, declaring elicitation.
const srvInitialize = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"legacy-test","version":"1"}}}`

// srvHeaders are the headers of a legacy client's POST in session sid
// (none when sid is empty).
func srvHeaders(sid string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		h.Set("Mcp-Session-Id", sid)
		h.Set(HeaderProtocolVersion, srvVersion)
	}
	return h
}

// srvInit opens a session and returns its id.
func srvInit(t *testing.T, url string) string {
	t.Helper()
	resp, body := post(t, url, srvHeaders(""), srvInitialize)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: status %d: %s", resp.StatusCode, body)
	}
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		t.Fatalf("initialize: no Mcp-Session-Id; body %s", body)
	}
	resp, body = post(t, url, srvHeaders(sid), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: status %d: %s", resp.StatusCode, body)
	}
	return sid
}

// srvWith returns a copy of h with the given headers set (an empty value
// deletes one).
func srvWith(h http.Header, kv ...string) http.Header {
	h = h.Clone()
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			h.Del(kv[i])
		} else {
			h.Set(kv[i], kv[i+1])
		}
	}
	return h
}

// srvOpen sends a request and returns the response with its body unread.
func srvOpen(t *testing.T, method, url string, h http.Header, body string) *http.Response {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// srvGetHeaders are the headers of a legacy client's GET in session sid,
// resuming after lastID when it is not empty.
func srvGetHeaders(sid, lastID string) http.Header {
	h := http.Header{}
	h.Set("Accept", "text/event-stream")
	h.Set("Mcp-Session-Id", sid)
	h.Set(HeaderProtocolVersion, srvVersion)
	if lastID != "" {
		h.Set("Last-Event-ID", lastID)
	}
	return h
}

// srvEvent is one event of a stream, with the fields the tests check.
type srvEvent struct {
	id, data string
	retry    string // the retry field, if the event had one
}

// message decodes the event's data as a JSON-RPC message.
func (e srvEvent) message(t *testing.T) jsonrpc.Message {
	t.Helper()
	m, _, err := jsonrpc.DecodeMessage([]byte(e.data))
	if err != nil {
		t.Fatalf("event %q is not a JSON-RPC message: %v", e.data, err)
	}
	return m
}

// srvEvents reads the events of a stream on a goroutine, so that a test
// can wait for the next one with a deadline (a hung handler fails the test
// rather than hanging it). The error that ends the stream (io.EOF at its
// end) comes after every event, on the same channel.
type srvEvents struct {
	items chan srvItem
}

type srvItem struct {
	ev  srvEvent
	err error
}

func srvReadEvents(body io.Reader) *srvEvents {
	es := &srvEvents{items: make(chan srvItem, 64)}
	go func() {
		sc := bufio.NewScanner(body)
		sc.Buffer(make([]byte, 0, 4096), 1<<20)
		var ev srvEvent
		var data []string
		fields := false
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				if fields {
					ev.data = strings.Join(data, "\n")
					es.items <- srvItem{ev: ev}
				}
				ev, data, fields = srvEvent{}, nil, false
				continue
			}
			if strings.HasPrefix(line, ":") {
				continue
			}
			name, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			fields = true
			switch name {
			case "id":
				ev.id = value
			case "retry":
				ev.retry = value
			case "data":
				data = append(data, value)
			}
		}
		err := sc.Err()
		if err == nil {
			err = io.EOF
		}
		es.items <- srvItem{err: err}
	}()
	return es
}

// srvFailAfter bounds every wait for the handler; it is never a pause.
const srvFailAfter = 10 * time.Second

// next returns the next event.
func (es *srvEvents) next(t *testing.T) srvEvent {
	t.Helper()
	select {
	case it := <-es.items:
		if it.err != nil {
			t.Fatalf("the stream ended (%v) while an event was expected", it.err)
		}
		return it.ev
	case <-time.After(srvFailAfter):
		t.Fatal("no event")
	}
	return srvEvent{}
}

// end waits for the end of the stream; an event before it fails the test.
func (es *srvEvents) end(t *testing.T) {
	t.Helper()
	select {
	case it := <-es.items:
		switch {
		case it.err == nil:
			t.Fatalf("event %+v where the stream should end", it.ev)
		case !errors.Is(it.err, io.EOF):
			t.Fatalf("the stream broke: %v", it.err)
		}
	case <-time.After(srvFailAfter):
		t.Fatal("the stream did not end")
	}
}

// drain skips events up to the end of the stream.
func (es *srvEvents) drain(t *testing.T) {
	t.Helper()
	for {
		select {
		case it := <-es.items:
			if it.err == nil {
				continue
			}
			if !errors.Is(it.err, io.EOF) {
				t.Fatalf("the stream broke: %v", it.err)
			}
			return
		case <-time.After(srvFailAfter):
			t.Fatal("the stream did not end")
		}
	}
}

// srvRecv waits for a value on ch.
func srvRecv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(srvFailAfter):
		t.Fatalf("no %s", what)
	}
	var zero T
	return zero
}

// srvRecv2 waits for a value on ch, or for ch to close (open is false).
func srvRecv2[T any](t *testing.T, ch <-chan T, what string) (v T, open bool) {
	t.Helper()
	select {
	case v, open = <-ch:
		return v, open
	case <-time.After(srvFailAfter):
		t.Fatalf("no %s", what)
	}
	return v, false
}

// srvSend sends v on ch, failing the test if nobody takes it.
func srvSend[T any](t *testing.T, ch chan<- T, v T, what string) {
	t.Helper()
	select {
	case ch <- v:
	case <-time.After(srvFailAfter):
		t.Fatalf("nobody took %s", what)
	}
}

// srvAsRequest, srvAsNotification and srvAsResponse assert the kind of an event.
func srvAsRequest(t *testing.T, e srvEvent, method string) *jsonrpc.Request {
	t.Helper()
	r, ok := e.message(t).(*jsonrpc.Request)
	if !ok || r.Method != method || r.IsNotification() {
		t.Fatalf("event %s: want a %s request", e.data, method)
	}
	return r
}

func srvAsNotification(t *testing.T, e srvEvent, method string) *jsonrpc.Request {
	t.Helper()
	r, ok := e.message(t).(*jsonrpc.Request)
	if !ok || r.Method != method || !r.IsNotification() {
		t.Fatalf("event %s: want a %s notification", e.data, method)
	}
	return r
}

func srvAsResponse(t *testing.T, e srvEvent, id string) *jsonrpc.Response {
	t.Helper()
	r, ok := e.message(t).(*jsonrpc.Response)
	if !ok || r.ID.Raw() != id {
		t.Fatalf("event %s: want the response to %s", e.data, id)
	}
	return r
}

// srvPriming asserts that e is a priming event with id, and a retry field.
func srvPriming(t *testing.T, e srvEvent, id string) {
	t.Helper()
	if e.id != id || e.data != "" || e.retry == "" {
		t.Fatalf("event %+v: want a priming event with id %q, a retry field and empty data", e, id)
	}
}

// srvSession returns the handler's srvOpen session sid.
func (h *Handler) srvSession(t *testing.T, sid string) *serverSession {
	t.Helper()
	h.sessions.mu.Lock()
	defer h.sessions.mu.Unlock()
	ls := h.sessions.byID[sid]
	if ls == nil {
		t.Fatalf("no session %s", sid)
	}
	return ls
}
