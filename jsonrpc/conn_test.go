package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/parley-mcp/parley/transport"
)

func quietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// newConnPair returns two Conns connected by a memory pipe, closed when the
// test ends.
func newConnPair(t *testing.T, clientHandler, serverHandler Handler) (client, server *Conn) {
	t.Helper()
	ct, st := transport.NewMemoryPipe()
	client = NewConn(ct, &ConnOptions{Handler: clientHandler, Logger: quietLogger()})
	server = NewConn(st, &ConnOptions{Handler: serverHandler, Logger: quietLogger()})
	t.Cleanup(func() {
		client.Close()
		server.Close()
	})
	return client, server
}

// rawPeer is the far end of a Conn's transport, driven by hand: the test
// writes raw messages to the Conn and sees every message the Conn writes.
type rawPeer struct {
	t    testing.TB
	conn transport.Conn
	msgs chan []byte // what the Conn wrote, in order; closed when the pipe ends
}

// newRawPeer returns a Conn served by h and the raw peer talking to it; both
// are closed when the test ends.
func newRawPeer(t *testing.T, h Handler) (*Conn, *rawPeer) {
	t.Helper()
	a, b := transport.NewMemoryPipe()
	c := NewConn(a, &ConnOptions{Handler: h, Logger: quietLogger()})
	p := &rawPeer{t: t, conn: b, msgs: make(chan []byte, 1000)}
	go func() {
		defer close(p.msgs)
		for {
			data, err := b.Read(context.Background())
			if err != nil {
				return
			}
			p.msgs <- data
		}
	}()
	t.Cleanup(func() {
		c.Close()
		b.Close()
	})
	return c, p
}

func (p *rawPeer) send(msg string) {
	p.t.Helper()
	if err := p.conn.Write(context.Background(), []byte(msg)); err != nil {
		p.t.Fatalf("peer write: %v", err)
	}
}

// next returns the next message the Conn wrote. Inside a synctest bubble, a
// message that never comes is reported as a deadlock; outside, after a
// generous timeout.
func (p *rawPeer) next() Message {
	p.t.Helper()
	select {
	case data, ok := <-p.msgs:
		if !ok {
			p.t.Fatal("pipe closed while waiting for a message")
		}
		m, _, err := DecodeMessage(data)
		if err != nil {
			p.t.Fatalf("Conn wrote an invalid message %s: %v", data, err)
		}
		return m
	case <-time.After(10 * time.Second):
		p.t.Fatal("no message from the Conn")
		return nil
	}
}

func (p *rawPeer) nextResponse() *Response {
	p.t.Helper()
	m := p.next()
	resp, ok := m.(*Response)
	if !ok {
		p.t.Fatalf("got %#v, want a response", m)
	}
	return resp
}

// expectNothing checks, once every goroutine of the bubble is blocked, that
// the Conn has written nothing more.
func (p *rawPeer) expectNothing() {
	p.t.Helper()
	synctest.Wait()
	select {
	case data := <-p.msgs:
		p.t.Fatalf("Conn wrote %s, want nothing", data)
	default:
	}
}

func wantError(t *testing.T, resp *Response, id string, code int64) *Error {
	t.Helper()
	if resp.ID.Raw() != id {
		t.Errorf("response id %q, want %q", resp.ID.Raw(), id)
	}
	if resp.Error == nil {
		t.Fatalf("response %s has result %s, want error %d", resp.ID.Raw(), resp.Result, code)
	}
	if resp.Error.Code != code {
		t.Errorf("error code %d (%s), want %d", resp.Error.Code, resp.Error.Message, code)
	}
	return resp.Error
}

func wantResult(t *testing.T, resp *Response, id, result string) {
	t.Helper()
	if resp.ID.Raw() != id || resp.Error != nil || string(resp.Result) != result {
		t.Fatalf("got response id %s result %s error %v; want id %s result %s", resp.ID.Raw(), resp.Result, resp.Error, id, result)
	}
}

// echo returns each request's params as its result.
var echo = HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
	if req.Params == nil {
		return nil, nil
	}
	return req.Params, nil
})

func TestConcurrentCalls(t *testing.T) {
	var served atomic.Int64
	client, _ := newConnPair(t, nil, HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		served.Add(1)
		var p struct{ N int }
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, err
		}
		if p.N%7 == 0 {
			return nil, &Error{Code: 1000 + int64(p.N), Message: "multiple of seven"}
		}
		return map[string]any{"n": p.N, "method": req.Method}, nil
	}))
	const n = 200
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			method := fmt.Sprintf("m/%d", i)
			var got struct {
				N      int
				Method string
			}
			err := client.Call(context.Background(), method, map[string]int{"n": i}, &got)
			switch {
			case i%7 == 0:
				var rpcErr *Error
				if !errors.As(err, &rpcErr) || rpcErr.Code != 1000+int64(i) {
					errs <- fmt.Errorf("call %d: got %v, want error %d", i, err, 1000+i)
				}
			case err != nil:
				errs <- fmt.Errorf("call %d: %v", i, err)
			case got.N != i || got.Method != method:
				errs <- fmt.Errorf("call %d got the response %+v", i, got)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if served.Load() != n {
		t.Errorf("served %d requests, want %d", served.Load(), n)
	}
}

func TestCallsBothWays(t *testing.T) {
	// Each side calls the other while serving its calls; a handler may
	// itself call back over the same connection.
	var server *Conn
	client, server := newConnPair(t, echo, HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		if req.Method == "direct" {
			return nil, errors.New("the server serves no direct calls")
		}
		var back json.RawMessage
		if err := server.Call(ctx, "back", req.Params, &back); err != nil { // served by the client
			return nil, err
		}
		return back, nil
	}))
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			var got []int
			if err := client.Call(context.Background(), "forth", []int{i}, &got); err != nil || len(got) != 1 || got[0] != i {
				t.Errorf("client call %d: %v, %v", i, got, err)
			}
		})
		wg.Go(func() {
			var got []int
			if err := server.Call(context.Background(), "direct", []int{i}, &got); err != nil || len(got) != 1 || got[0] != i {
				t.Errorf("server call %d: %v, %v", i, got, err)
			}
		})
	}
	wg.Wait()
}

func TestNotificationsBothWays(t *testing.T) {
	type note struct{ method, params string }
	record := func(ch chan note) Handler {
		return HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			if !req.IsNotification() {
				return nil, errors.New("only notifications expected")
			}
			ch <- note{req.Method, string(req.Params)}
			return "ignored", errors.New("ignored too")
		})
	}
	toClient, toServer := make(chan note, 10), make(chan note, 10)
	client, server := newConnPair(t, record(toClient), record(toServer))
	ctx := context.Background()
	for i := range 3 {
		if err := client.Notify(ctx, "notifications/c", map[string]int{"i": i}); err != nil {
			t.Fatal(err)
		}
		if err := server.Notify(ctx, "notifications/s", []int{i}); err != nil {
			t.Fatal(err)
		}
	}
	if err := client.Notify(ctx, "notifications/bare", nil); err != nil {
		t.Fatal(err)
	}
	// Notifications are served in the order they were sent.
	for i := range 3 {
		if got, want := <-toServer, (note{"notifications/c", fmt.Sprintf(`{"i":%d}`, i)}); got != want {
			t.Errorf("server got %v, want %v", got, want)
		}
		if got, want := <-toClient, (note{"notifications/s", fmt.Sprintf(`[%d]`, i)}); got != want {
			t.Errorf("client got %v, want %v", got, want)
		}
	}
	if got, want := <-toServer, (note{"notifications/bare", ""}); got != want {
		t.Errorf("server got %v, want %v", got, want)
	}
}

func TestNotificationWireForm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := newRawPeer(t, nil)
		if err := c.Notify(context.Background(), "notifications/progress", json.RawMessage(`{"progress":1}`)); err != nil {
			t.Fatal(err)
		}
		m := p.next()
		if r, ok := m.(*Request); !ok || !r.IsNotification() || r.Method != "notifications/progress" || string(r.Params) != `{"progress":1}` {
			t.Errorf("got %#v", m)
		}
		// Notifications get no reply, even with no handler.
		p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		p.expectNothing()
	})
}

func TestHandlerErrorSentVerbatim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := newRawPeer(t, HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			return nil, fmt.Errorf("wrapped: %w", &Error{Code: CodeInvalidParams, Message: `bad "uri"`, Data: json.RawMessage(`{"uri":"x://y"}`)})
		}))
		p.send(`{"jsonrpc":"2.0","id":"e1","method":"resources/read"}`)
		data := <-p.msgs
		if want := `{"jsonrpc":"2.0","id":"e1","error":{"code":-32602,"message":"bad \"uri\"","data":{"uri":"x://y"}}}`; string(data) != want {
			t.Errorf("wire form\n got %s\nwant %s", data, want)
		}
	})
}

func TestCallReturnsErrorResponse(t *testing.T) {
	client, _ := newConnPair(t, nil, HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		return nil, NewError(-32002, "Resource not found", map[string]string{"uri": "file:///x"})
	}))
	err := client.Call(context.Background(), "resources/read", nil, nil)
	var rpcErr *Error
	if !errors.As(err, &rpcErr) {
		t.Fatalf("Call = %v, want an *Error", err)
	}
	var data struct{ URI string }
	if rpcErr.Code != -32002 || rpcErr.Message != "Resource not found" || rpcErr.DecodeData(&data) != nil || data.URI != "file:///x" {
		t.Errorf("got %#v", rpcErr)
	}
	if !errors.Is(err, &Error{Code: -32002}) || errors.Is(err, &Error{Code: CodeInternalError}) {
		t.Error("errors.Is does not match by code")
	}
}

func TestPlainErrorIsInternal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := newRawPeer(t, HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			return nil, errors.New("disk on fire")
		}))
		p.send(`{"jsonrpc":"2.0","id":1,"method":"m"}`)
		e := wantError(t, p.nextResponse(), "1", CodeInternalError)
		if e.Message != "Internal error" || len(e.Data) != 0 {
			t.Errorf("a plain Go error reached the peer: %#v", e)
		}
	})
}

func TestTypedNilErrorIsInternal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := newRawPeer(t, HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			var e *Error
			return "not sent", e // a nil *Error in a non-nil error
		}))
		p.send(`{"jsonrpc":"2.0","id":1,"method":"m"}`)
		wantError(t, p.nextResponse(), "1", CodeInternalError)
	})
}

func TestHandlerPanicKeepsServing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := newRawPeer(t, HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			if req.Method == "boom" {
				panic("kaboom")
			}
			return json.RawMessage(`"pong"`), nil
		}))
		p.send(`{"jsonrpc":"2.0","id":1,"method":"boom"}`)
		e := wantError(t, p.nextResponse(), "1", CodeInternalError)
		if strings.Contains(e.Message, "kaboom") {
			t.Errorf("panic value leaked to the peer: %q", e.Message)
		}
		p.send(`{"jsonrpc":"2.0","method":"boom"}`) // a panicking notification handler
		p.send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)
		wantResult(t, p.nextResponse(), "2", `"pong"`)
	})
}

func TestResults(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := newRawPeer(t, HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			switch req.Method {
			case "nil":
				return nil, nil
			case "struct":
				return struct {
					A int `json:"a"`
				}{1}, nil
			case "raw":
				return json.RawMessage("{\n  \"b\": 2\n}"), nil
			case "bad raw":
				return json.RawMessage(`{"b":`), nil
			case "unmarshalable":
				return func() {}, nil
			case "bad data":
				return nil, &Error{Code: 7, Message: "m", Data: json.RawMessage(`nope`)}
			}
			return nil, errors.New("unexpected")
		}))
		for _, m := range []string{"nil", "struct", "raw", "bad raw", "unmarshalable", "bad data"} {
			p.send(`{"jsonrpc":"2.0","id":"` + m + `","method":"` + m + `"}`)
		}
		got := map[string]*Response{}
		for range 6 {
			r := p.nextResponse()
			got[r.ID.String()] = r
		}
		wantResult(t, got["nil"], `"nil"`, `{}`)
		wantResult(t, got["struct"], `"struct"`, `{"a":1}`)
		wantResult(t, got["raw"], `"raw"`, `{"b":2}`) // compacted: one line
		// A result or error that cannot be encoded still gets an answer.
		wantError(t, got["bad raw"], `"bad raw"`, CodeInternalError)
		wantError(t, got["unmarshalable"], `"unmarshalable"`, CodeInternalError)
		wantError(t, got["bad data"], `"bad data"`, CodeInternalError)
	})
}

func TestNoHandlerMethodNotFound(t *testing.T) {
	client, _ := newConnPair(t, nil, nil)
	err := client.Call(context.Background(), "tools/list", nil, nil)
	if !errors.Is(err, &Error{Code: CodeMethodNotFound}) {
		t.Errorf("Call = %v, want method not found", err)
	}
}

func TestInvalidJSONFromPeer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := newRawPeer(t, echo)
		p.send(`{"jsonrpc":"2.0","id":1,"method":`)
		r := p.nextResponse()
		wantError(t, r, "", CodeParseError)
		if r.ID.IsValid() {
			t.Errorf("parse error reply has id %s, want null", r.ID.Raw())
		}
		p.send(`{"jsonrpc":"2.0","id":2,"method":"echo","params":[1]}`)
		wantResult(t, p.nextResponse(), "2", `[1]`)
	})
}

func TestNonRequestFromPeer(t *testing.T) {
	tests := []struct {
		msg, id string
	}{
		{`[{"jsonrpc":"2.0","id":1,"method":"x"}]`, ""},
		{`42`, ""},
		{`{"id":3,"method":"x"}`, "3"},
		{`{"jsonrpc":"2.0","id":4,"method":""}`, "4"},
		{`{"jsonrpc":"2.0","id":null,"method":"x"}`, ""},
		{`{"jsonrpc":"2.0","id":{},"method":"x"}`, ""},
		{`{"jsonrpc":"2.0","id":5,"method":"x","result":1}`, "5"},
		{`{"jsonrpc":"2.0","id":6,"method":"x","params":1}`, "6"},
		{`{"jsonrpc":"2.0","id":"x"}`, `"x"`},
		{`{"jsonrpc":"2.0","method":""}`, ""},
	}
	synctest.Test(t, func(t *testing.T) {
		_, p := newRawPeer(t, echo)
		for _, tt := range tests {
			p.send(tt.msg)
			wantError(t, p.nextResponse(), tt.id, CodeInvalidRequest)
		}
		p.send(`{"jsonrpc":"2.0","id":7,"method":"echo"}`)
		wantResult(t, p.nextResponse(), "7", `{}`)
	})
}

func TestResponsesAreNeverAnswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, p := newRawPeer(t, echo)
		for _, msg := range []string{
			`{"jsonrpc":"2.0","id":999,"result":{}}`,                               // unknown id
			`{"jsonrpc":"2.0","id":"x","error":{"code":1,"message":"m"}}`,          // unknown id
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"oops"}}`, // no id
			`{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"m"}}`,
			`{"jsonrpc":"2.0","result":{}}`,
			`{"jsonrpc":"1.0","id":1,"result":{}}`,
			`{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}`,
			`{"jsonrpc":"2.0","id":1,"error":null}`,
		} {
			p.send(msg)
		}
		p.expectNothing()
		p.send(`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"ok":true}}`)
		// The first message back is the echo: nothing was sent before it.
		wantResult(t, p.nextResponse(), "1", `{"ok":true}`)
	})
}

// fakeTransport is a transport.Conn whose reads the test scripts and whose
// writes it observes.
type fakeTransport struct {
	reads     chan fakeRead // closing it makes Read return io.EOF
	writes    chan []byte
	closed    chan struct{}
	closeOnce sync.Once
}

type fakeRead struct {
	data []byte
	err  error
}

func newFakeTransport() *fakeTransport {
	return &fakeTransport{reads: make(chan fakeRead), writes: make(chan []byte, 100), closed: make(chan struct{})}
}

func (f *fakeTransport) Read(ctx context.Context) ([]byte, error) {
	select {
	case r, ok := <-f.reads:
		if !ok {
			return nil, io.EOF
		}
		return r.data, r.err
	case <-f.closed:
		return nil, transport.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (f *fakeTransport) Write(ctx context.Context, msg []byte) error {
	select {
	case <-f.closed:
		return transport.ErrClosed
	default:
	}
	select {
	case f.writes <- msg:
		return nil
	case <-f.closed:
		return transport.ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (f *fakeTransport) Close() error {
	f.closeOnce.Do(func() { close(f.closed) })
	return nil
}

func (f *fakeTransport) nextWrite(t *testing.T) *Response {
	t.Helper()
	m, _, err := DecodeMessage(<-f.writes)
	if err != nil {
		t.Fatal(err)
	}
	r, ok := m.(*Response)
	if !ok {
		t.Fatalf("wrote %#v, want a response", m)
	}
	return r
}

// headErr is an oversized-message error that kept the message's head, as
// stdio's does.
type headErr struct{ head string }

func (e headErr) Error() string       { return "stdio: discarded a message: over the limit" }
func (e headErr) Unwrap() error       { return transport.ErrMessageTooLarge }
func (e headErr) MessageHead() []byte { return []byte(e.head) }

func TestMessageTooLargeIsNotFatal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeTransport()
		c := NewConn(f, &ConnOptions{Handler: echo, Logger: quietLogger()})
		defer c.Close()
		// No head, or a head whose id cannot be trusted: nothing is
		// answered (an error without an id reaches no caller).
		f.reads <- fakeRead{err: fmt.Errorf("reading: %w (limit 1 MiB)", transport.ErrMessageTooLarge)}
		f.reads <- fakeRead{err: headErr{`{"jsonrpc":"2.0","method":"echo","id":12`}} // the id may go on: 123...
		f.reads <- fakeRead{err: headErr{`{"jsonrpc":"2.0","params":[1,2,3`}}
		// A request whose id the head shows gets its error.
		f.reads <- fakeRead{err: headErr{`{"jsonrpc":"2.0","id":"r7","method":"echo","params":["xxxxxxxx`}}
		r := f.nextWrite(t)
		wantError(t, r, `"r7"`, CodeInvalidRequest)
		if !strings.Contains(r.Error.Message, "over the limit") {
			t.Errorf("error message %q", r.Error.Message)
		}
		f.reads <- fakeRead{data: []byte(`{"jsonrpc":"2.0","id":1,"method":"echo","params":[2]}`)}
		wantResult(t, f.nextWrite(t), "1", `[2]`)
		select {
		case <-c.Done():
			t.Fatal("Conn ended")
		default:
		}
	})
}

// TestOversizedResponseFailsItsCall: a response the transport dropped for
// its size fails the call it answers at once, with an error that says so.
func TestOversizedResponseFailsItsCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeTransport()
		c := NewConn(f, &ConnOptions{Logger: quietLogger()})
		defer c.Close()
		done := make(chan error, 1)
		go func() { done <- c.Call(context.Background(), "big", nil, nil) }()
		m, _, err := DecodeMessage(<-f.writes)
		if err != nil {
			t.Fatal(err)
		}
		id := m.(*Request).ID
		f.reads <- fakeRead{err: headErr{`{"jsonrpc":"2.0","id":` + id.Raw() + `,"result":{"content":"xxxxxxxx`}}
		err = <-done
		if !errors.Is(err, transport.ErrMessageTooLarge) || !strings.Contains(err.Error(), "response was dropped") {
			t.Fatalf("Call = %v, want an error wrapping ErrMessageTooLarge", err)
		}
	})
}

func TestReadErrorEndsConn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeTransport()
		c := NewConn(f, &ConnOptions{Logger: quietLogger()})
		boom := errors.New("wire cut")
		f.reads <- fakeRead{err: boom}
		<-c.Done()
		if !errors.Is(c.Err(), boom) {
			t.Errorf("Err() = %v, want %v", c.Err(), boom)
		}
		if err := c.Call(context.Background(), "m", nil, nil); !errors.Is(err, ErrConnClosed) {
			t.Errorf("Call after the end = %v, want ErrConnClosed", err)
		}
		c.Close()
	})
}

func TestDuplicateInflightID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		_, p := newRawPeer(t, HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			if req.Method == "wait" {
				<-release
			}
			return req.Method, nil
		}))
		p.send(`{"jsonrpc":"2.0","id":1,"method":"wait"}`)
		synctest.Wait() // the handler for id 1 is running
		p.send(`{"jsonrpc":"2.0","id":1,"method":"dup"}`)
		e := wantError(t, p.nextResponse(), "1", CodeInvalidRequest)
		if !strings.Contains(e.Message, "in use") {
			t.Errorf("message %q", e.Message)
		}
		// Same text, other id: 1.0 and "1" are not 1.
		p.send(`{"jsonrpc":"2.0","id":"1","method":"other"}`)
		wantResult(t, p.nextResponse(), `"1"`, `"other"`)
		close(release)
		wantResult(t, p.nextResponse(), "1", `"wait"`)
		// Once answered, the id may be used again.
		p.send(`{"jsonrpc":"2.0","id":1,"method":"again"}`)
		wantResult(t, p.nextResponse(), "1", `"again"`)
	})
}

// cancelParams decodes a notifications/cancelled message.
func cancelParams(t *testing.T, m Message) (requestID ID, reason string) {
	t.Helper()
	r, ok := m.(*Request)
	if !ok || !r.IsNotification() || r.Method != CancelMethod {
		t.Fatalf("got %#v, want %s", m, CancelMethod)
	}
	var p struct {
		RequestID ID     `json:"requestId"`
		Reason    string `json:"reason"`
	}
	if err := json.Unmarshal(r.Params, &p); err != nil {
		t.Fatal(err)
	}
	return p.RequestID, p.Reason
}

func TestCallCancelSendsCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := newRawPeer(t, nil)
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error)
		go func() { errc <- c.Call(ctx, "tools/call", map[string]string{"name": "slow"}, nil) }()
		req, ok := p.next().(*Request)
		if !ok || req.IsNotification() || req.Method != "tools/call" {
			t.Fatalf("got %#v, want the request", req)
		}
		synctest.Wait()
		select {
		case err := <-errc:
			t.Fatalf("Call returned %v before cancellation", err)
		default:
		}
		cancel()
		if err := <-errc; err != context.Canceled {
			t.Errorf("Call = %v, want context.Canceled", err)
		}
		id, reason := cancelParams(t, p.next())
		if id != req.ID {
			t.Errorf("cancelled requestId %s, want %s", id.Raw(), req.ID.Raw())
		}
		if reason == "" {
			t.Error("no reason given")
		}
		// A late response for the abandoned call is dropped quietly.
		p.send(`{"jsonrpc":"2.0","id":` + req.ID.Raw() + `,"result":{}}`)
		p.expectNothing()
		// The connection still works.
		go func() { errc <- c.Call(context.Background(), "ping", nil, nil) }()
		ping := p.next().(*Request)
		p.send(`{"jsonrpc":"2.0","id":` + ping.ID.Raw() + `,"result":{}}`)
		if err := <-errc; err != nil {
			t.Errorf("ping: %v", err)
		}
	})
}

func TestCallCancelCause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := newRawPeer(t, nil)
		ctx, cancel := context.WithCancelCause(context.Background())
		errc := make(chan error)
		go func() { errc <- c.Call(ctx, "m", nil, nil) }()
		p.next()
		cancel(errors.New("user pressed stop"))
		if err := <-errc; err != context.Canceled {
			t.Errorf("Call = %v, want context.Canceled", err)
		}
		if _, reason := cancelParams(t, p.next()); reason != "user pressed stop" {
			t.Errorf("reason %q, want the cause", reason)
		}
	})
}

func TestCallDeadlineIsTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := newRawPeer(t, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		errc := make(chan error)
		go func() { errc <- c.Call(ctx, "slow", nil, nil) }()
		req := p.next().(*Request)
		time.Sleep(5*time.Second - time.Nanosecond)
		synctest.Wait()
		select {
		case err := <-errc:
			t.Fatalf("Call returned %v before its deadline", err)
		default:
		}
		time.Sleep(time.Nanosecond)
		if err := <-errc; err != context.DeadlineExceeded {
			t.Errorf("Call = %v, want context.DeadlineExceeded", err)
		}
		if id, _ := cancelParams(t, p.next()); id != req.ID {
			t.Errorf("cancelled %s, want %s", id.Raw(), req.ID.Raw())
		}
	})
}

func TestCallWithEndedContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := newRawPeer(t, nil)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := c.Call(ctx, "m", nil, nil); err != context.Canceled {
			t.Errorf("Call = %v, want context.Canceled", err)
		}
		if err := c.Notify(ctx, "n", nil); err != context.Canceled {
			t.Errorf("Notify = %v, want context.Canceled", err)
		}
		p.expectNothing() // neither the request nor a cancellation went out
	})
}

func TestCallBadParams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := newRawPeer(t, nil)
		ctx := context.Background()
		for _, params := range []any{5, "s", json.RawMessage(`{"a":`), func() {}} {
			if err := c.Call(ctx, "m", params, nil); err == nil {
				t.Errorf("Call with params %v succeeded", params)
			}
			if err := c.Notify(ctx, "m", params); err == nil {
				t.Errorf("Notify with params %v succeeded", params)
			}
		}
		if err := c.Call(ctx, "", nil, nil); err == nil {
			t.Error("Call with no method succeeded")
		}
		p.expectNothing()
	})
}

func TestCallResultDecoding(t *testing.T) {
	client, _ := newConnPair(t, nil, HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		return json.RawMessage(`{"tools":[{"name":"a"}]}`), nil
	}))
	var raw json.RawMessage
	if err := client.Call(context.Background(), "tools/list", nil, &raw); err != nil || string(raw) != `{"tools":[{"name":"a"}]}` {
		t.Errorf("raw result %s, %v", raw, err)
	}
	var typed struct {
		Tools []struct{ Name string }
	}
	if err := client.Call(context.Background(), "tools/list", nil, &typed); err != nil || len(typed.Tools) != 1 || typed.Tools[0].Name != "a" {
		t.Errorf("typed result %+v, %v", typed, err)
	}
	var wrong []int
	if err := client.Call(context.Background(), "tools/list", nil, &wrong); err == nil {
		t.Error("decoding into the wrong type succeeded")
	}
	got, err := client.CallRaw(context.Background(), "tools/list", json.RawMessage(`{"cursor":"c"}`))
	if err != nil || string(got) != `{"tools":[{"name":"a"}]}` {
		t.Errorf("CallRaw = %s, %v", got, err)
	}
}

func TestIncomingCancellation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cancelled := make(chan error, 1)
		var notes atomic.Int64
		_, p := newRawPeer(t, HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			switch {
			case req.IsNotification():
				notes.Add(1) // the handler sees the cancellation too
				return nil, nil
			case req.Method == "slow":
				<-ctx.Done()
				cancelled <- ctx.Err()
				return "too late", nil // must not be sent
			}
			return "pong", nil
		}))
		p.send(`{"jsonrpc":"2.0","id":"r1","method":"slow"}`)
		synctest.Wait()
		p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r1","reason":"user"}}`)
		if err := <-cancelled; err != context.Canceled {
			t.Errorf("handler ctx ended with %v", err)
		}
		p.expectNothing()
		if notes.Load() != 1 {
			t.Errorf("handler saw %d notifications, want 1", notes.Load())
		}
		// Cancelling unknown, finished or malformed ids is harmless.
		p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"r1"}}`)
		p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12345}}`)
		p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":{}}}`)
		p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled"}`)
		p.send(`{"jsonrpc":"2.0","id":"r2","method":"ping"}`)
		wantResult(t, p.nextResponse(), `"r2"`, `"pong"`)
		p.expectNothing()
	})
}

func TestIncomingCancellationMatchesExactID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		_, p := newRawPeer(t, HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			if req.IsNotification() {
				return nil, nil
			}
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-release:
				return "done", nil
			}
		}))
		p.send(`{"jsonrpc":"2.0","id":1,"method":"slow"}`)
		// "1" is not 1: this cancels nothing.
		p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"1"}}`)
		p.expectNothing()
		close(release)
		wantResult(t, p.nextResponse(), "1", `"done"`)
	})
}

func TestCloseFailsPendingCalls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := newRawPeer(t, nil)
		errc := make(chan error, 3)
		for range 3 {
			go func() { errc <- c.Call(context.Background(), "never", nil, nil) }()
		}
		for range 3 {
			p.next()
		}
		if err := c.Close(); err != nil {
			t.Errorf("Close = %v", err)
		}
		for range 3 {
			if err := <-errc; err != ErrConnClosed {
				t.Errorf("pending Call = %v, want ErrConnClosed", err)
			}
		}
		select {
		case <-c.Done():
		default:
			t.Error("Done not closed after Close")
		}
		if c.Err() != ErrConnClosed {
			t.Errorf("Err() = %v, want ErrConnClosed", c.Err())
		}
		if err := c.Call(context.Background(), "m", nil, nil); err != ErrConnClosed {
			t.Errorf("Call after Close = %v", err)
		}
		if err := c.Notify(context.Background(), "n", nil); err != ErrConnClosed {
			t.Errorf("Notify after Close = %v", err)
		}
		if err := c.Close(); err != nil {
			t.Errorf("second Close = %v", err)
		}
	})
}

func TestCloseUnblocksHandlers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		started := make(chan struct{})
		handlerErr := make(chan error, 1)
		client, server := newConnPair(t, nil, HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			close(started)
			<-ctx.Done()
			handlerErr <- ctx.Err()
			return nil, ctx.Err()
		}))
		errc := make(chan error, 1)
		go func() { errc <- client.Call(context.Background(), "hang", nil, nil) }()
		<-started
		server.Close() // returns only once the handler has returned
		if err := <-handlerErr; err != context.Canceled {
			t.Errorf("handler ctx: %v", err)
		}
		// The client sees the pipe close.
		if err := <-errc; err != ErrConnClosed {
			t.Errorf("Call = %v, want ErrConnClosed", err)
		}
		<-client.Done()
		if client.Err() != io.EOF {
			t.Errorf("client Err() = %v, want io.EOF", client.Err())
		}
	})
}

// A peer that leaves ends its work: at its EOF the handlers still running
// see their contexts end, the connection is done once they have returned,
// and what they return is still written (the transport's write side may
// outlive its read side, as on stdio).
func TestPeerEOFCancelsHandlers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakeTransport()
		started := make(chan struct{}, 2)
		release := make(chan struct{})
		c := NewConn(f, &ConnOptions{Logger: quietLogger(), Handler: HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			started <- struct{}{}
			if req.Method == "stubborn" {
				<-ctx.Done() // notices the cancellation, finishes anyway
				<-release
				return "finished", nil
			}
			<-ctx.Done()
			return nil, ctx.Err()
		})})
		defer c.Close()
		f.reads <- fakeRead{data: []byte(`{"jsonrpc":"2.0","id":1,"method":"stubborn"}`)}
		f.reads <- fakeRead{data: []byte(`{"jsonrpc":"2.0","id":2,"method":"forever"}`)}
		<-started
		<-started
		close(f.reads) // the peer is done sending: io.EOF
		synctest.Wait()
		select {
		case <-c.Done():
			t.Fatal("Done closed while a handler runs")
		default:
		}
		if err := c.Err(); err != io.EOF {
			t.Errorf("Err() = %v while draining, want io.EOF", err)
		}
		if err := c.Call(context.Background(), "m", nil, nil); err != ErrConnClosed {
			t.Errorf("Call after peer EOF = %v, want ErrConnClosed", err)
		}
		close(release)
		<-c.Done()
		if err := c.Err(); err != io.EOF {
			t.Errorf("Err() = %v, want io.EOF", err)
		}
		got := map[string]*Response{}
		for range 2 {
			r := f.nextWrite(t)
			got[r.ID.Raw()] = r
		}
		if r := got["1"]; r == nil || r.Error != nil || string(r.Result) != `"finished"` {
			t.Errorf("response to 1: %#v, want the result", r)
		}
		if r := got["2"]; r == nil || r.Error == nil || r.Error.Message != "Request cancelled" {
			t.Errorf("response to 2: %#v, want its handler's cancellation", r)
		}
	})
}

func TestPeerEOFOnMemoryPipe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a, b := transport.NewMemoryPipe()
		c := NewConn(a, &ConnOptions{Logger: quietLogger()})
		defer c.Close()
		b.Write(context.Background(), []byte(`{"jsonrpc":"2.0","method":"n"}`))
		b.Close()
		<-c.Done()
		if c.Err() != io.EOF {
			t.Errorf("Err() = %v, want io.EOF", c.Err())
		}
	})
}

func TestCancelNotificationDoesNotBlockCall(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A peer that reads nothing: once the pipe's buffer is full, the
		// cancellation cannot be written, but Call must still return.
		a, b := transport.NewMemoryPipe()
		defer b.Close()
		c := NewConn(a, &ConnOptions{Logger: quietLogger()})
		defer c.Close()
		var calls sync.WaitGroup
		for i := range 40 {
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i+1)*time.Second)
			calls.Go(func() {
				defer cancel()
				if err := c.Call(ctx, "m", nil, nil); err != context.DeadlineExceeded {
					t.Errorf("Call = %v, want DeadlineExceeded", err)
				}
			})
		}
		calls.Wait()
	})
}

// FuzzConn feeds arbitrary messages (one per line) to a Conn and checks
// that it never panics or writes invalid JSON, and that it still answers a
// valid request sent afterwards.
func FuzzConn(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":1}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"slow\"}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":1}}",
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"a\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"a\"}",
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"panic"}`,
		`{"jsonrpc":"2.0","method":"panic"}`,
		"not json\n[1,2]\n42\nnull\n{}",
		`{"jsonrpc":"2.0","id":{},"method":"x"}`,
		`{"jsonrpc":"2.0","id":1,"method":"x","result":1}`,
		"",
	} {
		f.Add([]byte(s))
	}
	const probe = "__probe__"
	f.Fuzz(func(t *testing.T, data []byte) {
		if strings.Contains(string(data), probe) {
			t.Skip("input names the probe id")
		}
		lines := strings.Split(string(data), "\n")
		if len(lines) > 100 {
			lines = lines[:100]
		}
		synctest.Test(t, func(t *testing.T) {
			_, p := newRawPeer(t, HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
				switch req.Method {
				case "panic":
					panic("fuzz")
				case "slow":
					select {
					case <-ctx.Done():
						return nil, ctx.Err()
					case <-time.After(time.Second):
					}
				}
				return req.Params, nil
			}))
			for _, line := range lines {
				p.send(line)
			}
			p.send(`{"jsonrpc":"2.0","id":"` + probe + `","method":"echo","params":["probe"]}`)
			for {
				data, ok := <-p.msgs
				if !ok {
					t.Fatal("the Conn ended")
				}
				m, _, err := DecodeMessage(data)
				if err != nil {
					t.Fatalf("Conn wrote an invalid message %q: %v", data, err)
				}
				r, ok := m.(*Response)
				if !ok {
					t.Fatalf("Conn wrote %#v, want only responses", m)
				}
				if r.ID == StringID(probe) {
					wantResult(t, r, `"`+probe+`"`, `["probe"]`)
					return
				}
			}
		})
	})
}

// TestCancelRacesDoNotCrossResponses races cancellations against responses,
// so that response channels are abandoned and reused in every order: a call
// that succeeds must get its own result.
func TestCancelRacesDoNotCrossResponses(t *testing.T) {
	client, _ := newConnPair(t, nil, HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
		var n int
		if err := json.Unmarshal(req.Params, &[]*int{&n}); err != nil {
			return nil, err
		}
		for range n % 5 {
			runtime.Gosched()
		}
		return req.Params, nil
	}))
	var wg sync.WaitGroup
	for g := range 20 {
		wg.Go(func() {
			for i := range 100 {
				n := g*1000 + i
				ctx, cancel := context.WithCancel(context.Background())
				if i%3 != 0 {
					go func() {
						for range i % 7 {
							runtime.Gosched()
						}
						cancel()
					}()
				}
				var got []int
				err := client.Call(ctx, "echo", []int{n}, &got)
				cancel()
				switch {
				case err == context.Canceled:
				case err != nil:
					t.Errorf("call %d: %v", n, err)
				case len(got) != 1 || got[0] != n:
					t.Errorf("call %d got %v", n, got)
				}
			}
		})
	}
	wg.Wait()
	// Everything still works afterwards.
	var got []int
	if err := client.Call(context.Background(), "echo", []int{-1}, &got); err != nil || got[0] != -1 {
		t.Errorf("final call: %v, %v", got, err)
	}
}

func TestCallRawID(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := newRawPeer(t, nil)
		ctx := context.Background()
		type result struct {
			raw json.RawMessage
			err error
		}
		listen := make(chan result, 1)
		go func() {
			raw, err := c.CallRawID(ctx, StringID("listen-1"), "subscriptions/listen", json.RawMessage(`{}`))
			listen <- result{raw, err}
		}()
		req := p.next().(*Request)
		if req.ID != StringID("listen-1") {
			t.Fatalf("request id %s, want \"listen-1\"", req.ID.Raw())
		}
		// The id is taken while the call is in flight.
		if _, err := c.CallRawID(ctx, StringID("listen-1"), "m", nil); !errors.Is(err, ErrIDInUse) {
			t.Errorf("second call with the id = %v, want ErrIDInUse", err)
		}
		if _, err := c.CallRawID(ctx, ID{}, "m", nil); err == nil {
			t.Error("CallRawID with the zero id succeeded")
		}
		// A chosen number is skipped by the Conn's own ids.
		numbered := make(chan error, 1)
		go func() {
			_, err := c.CallRawID(ctx, Int64ID(1), "numbered", nil)
			numbered <- err
		}()
		if r := p.next().(*Request); r.ID != Int64ID(1) {
			t.Fatalf("request id %s, want 1", r.ID.Raw())
		}
		auto := make(chan error, 1)
		go func() {
			_, err := c.CallRaw(ctx, "auto", nil)
			auto <- err
		}()
		autoReq := p.next().(*Request)
		if autoReq.ID == Int64ID(1) {
			t.Fatal("the Conn reused id 1, which a call in flight holds")
		}
		p.send(`{"jsonrpc":"2.0","id":` + autoReq.ID.Raw() + `,"result":{}}`)
		p.send(`{"jsonrpc":"2.0","id":1,"result":{}}`)
		p.send(`{"jsonrpc":"2.0","id":"listen-1","result":{"done":true}}`)
		if err := <-auto; err != nil {
			t.Errorf("auto call: %v", err)
		}
		if err := <-numbered; err != nil {
			t.Errorf("numbered call: %v", err)
		}
		if r := <-listen; r.err != nil || string(r.raw) != `{"done":true}` {
			t.Errorf("listen call = %s, %v", r.raw, r.err)
		}
		// Once answered, the id can be used again.
		go func() {
			_, err := c.CallRawID(ctx, StringID("listen-1"), "again", nil)
			numbered <- err
		}()
		p.next()
		p.send(`{"jsonrpc":"2.0","id":"listen-1","result":{}}`)
		if err := <-numbered; err != nil {
			t.Errorf("reusing the id: %v", err)
		}
	})
}

// RawValid is written without the validity check, but still compacted and
// still held to params being an object or an array.
func TestRawValid(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := newRawPeer(t, HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			switch req.Method {
			case "lines":
				return RawValid("{\n  \"b\": 2\n}"), nil
			case "unchecked":
				return RawValid(`{"b":`), nil // the caller broke its promise
			}
			return nil, errors.New("unexpected")
		}))
		p.send(`{"jsonrpc":"2.0","id":1,"method":"lines"}`)
		wantResult(t, p.nextResponse(), `1`, `{"b":2}`) // compacted: one line
		p.send(`{"jsonrpc":"2.0","id":2,"method":"unchecked"}`)
		if got, want := string(<-p.msgs), `{"jsonrpc":"2.0","id":2,"result":{"b":}`; got != want {
			t.Errorf("RawValid result written as %s, want %s (as it is, unchecked)", got, want)
		}

		ctx := context.Background()
		if err := c.Notify(ctx, "n", RawValid(`"s"`)); err == nil {
			t.Error("Notify with RawValid string params succeeded")
		}
		if err := c.Notify(ctx, "n", RawValid("[1,\n2]")); err != nil {
			t.Fatal(err)
		}
		if got, want := string(<-p.msgs), `{"jsonrpc":"2.0","method":"n","params":[1,2]}`; got != want {
			t.Errorf("notification written as %s, want %s", got, want)
		}
		go c.Call(ctx, "m", RawValid(`{"x":1}`), nil)
		req, ok := p.next().(*Request)
		if !ok || string(req.Params) != `{"x":1}` {
			t.Errorf("Call with RawValid params sent %#v", req)
		}
		p.send(`{"jsonrpc":"2.0","id":` + req.ID.Raw() + `,"result":{}}`)

		done := make(chan json.RawMessage)
		go func() {
			res, err := c.CallRawValid(ctx, "v", RawValid("{\"y\":\n2}"))
			if err != nil {
				t.Error(err)
			}
			done <- res
		}()
		data := <-p.msgs
		req2, _, err := DecodeMessage(data)
		if err != nil || strings.ContainsAny(string(data), "\r\n") || string(req2.(*Request).Params) != `{"y":2}` {
			t.Errorf("CallRawValid sent %s (%v), want params {\"y\":2} on one line", data, err)
		}
		p.send(`{"jsonrpc":"2.0","id":` + req2.(*Request).ID.Raw() + `,"result":{"z":3}}`)
		if res := <-done; string(res) != `{"z":3}` {
			t.Errorf("CallRawValid returned %s", res)
		}
	})
}

// The goroutine that reads a request serves it (see lead) only after it has
// handed the reading on: requests whose handlers all wait for a message
// that comes after them still see it, and a handler's own call to the peer
// gets its answer while the handler runs.
func TestReadingGoesOnWhileHandlersRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n = 3 * maxIdleFollowers // more than the idle goroutines kept
		release := make(chan struct{})
		var server *Conn
		handler := HandlerFunc(func(ctx context.Context, req *Request) (any, error) {
			if req.IsNotification() {
				if req.Method == "notifications/release" {
					close(release)
				}
				return nil, nil
			}
			var back string
			if err := server.Call(ctx, "ping/back", nil, &back); err != nil {
				return nil, err
			}
			select {
			case <-release:
				return back, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
		client, srv := newConnPair(t, HandlerFunc(func(ctx context.Context, req *Request) (any, error) { return "pong", nil }), handler)
		server = srv
		ctx := context.Background()
		results := make(chan string, n)
		for range n {
			go func() {
				var got string
				if err := client.Call(ctx, "wait", nil, &got); err != nil {
					got = err.Error()
				}
				results <- got
			}()
		}
		synctest.Wait() // every handler has its answer from the peer and waits
		if err := client.Notify(ctx, "notifications/release", nil); err != nil {
			t.Fatal(err)
		}
		for range n {
			if got := <-results; got != "pong" {
				t.Errorf("call returned %q, want pong", got)
			}
		}
		// The second wave is served by the goroutines the first one left.
		for range n {
			var got string
			if err := client.Call(ctx, "wait", nil, &got); err != nil || got != "pong" {
				t.Fatalf("after the wave: %q, %v", got, err)
			}
		}
	})
}
