package jsonrpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/parley-mcp/parley/internal/jsontext"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/transport"
)

// CancelMethod is the notification that cancels a request in flight. Its
// params are {"requestId": <id>, "reason"?: <string>}. It is MCP's
// cancellation convention; Conn sends it when a Call's context ends and obeys
// it for requests it is serving.
const CancelMethod = "notifications/cancelled"

// Handler serves the requests and notifications a Conn receives.
type Handler interface {
	// Handle serves one request or notification (req.IsNotification()).
	//
	// For a request, the returned value is the result: it is sent as JSON
	// (a json.RawMessage is sent as it is, after checking that it is valid
	// JSON; a RawValid is sent without that check; a nil result is sent as
	// {}). A returned *Error (found with errors.As) is sent as the error
	// response; any other error goes to the Logger and the peer gets a bare
	// internal error, since a Go error's text is not the peer's business. A
	// panic is recovered and answered with an internal error, and so is a
	// result that cannot be encoded. Requests are served concurrently, each
	// on its own goroutine (a lone request on the goroutine that read it,
	// which hands the reading on first), with a context that ends when the
	// peer cancels the request, when the peer leaves (the transport's read
	// side ends) or when the connection closes; once the peer has
	// cancelled, no response is sent.
	//
	// Notifications are served one at a time, in the order they arrived, on
	// the connection's read goroutine: handle them quickly and do not block.
	// Their result is ignored.
	Handle(ctx context.Context, req *Request) (any, error)
}

// HandlerFunc adapts a function to a Handler.
type HandlerFunc func(ctx context.Context, req *Request) (any, error)

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, req *Request) (any, error) { return f(ctx, req) }

// ConnOptions configures a Conn. A nil *ConnOptions means defaults.
type ConnOptions struct {
	// Handler serves incoming requests and notifications. When nil, every
	// request is answered with method-not-found and notifications are
	// dropped.
	Handler Handler
	// Logger receives what the connection cannot report to anyone else
	// (undecodable responses, write failures). Default: slog.Default().
	Logger *slog.Logger
}

// ErrConnClosed is returned by calls that cannot complete because the
// connection closed.
var ErrConnClosed = errors.New("jsonrpc: connection closed")

// Conn is a JSON-RPC 2.0 connection over a transport.Conn. It multiplexes
// any number of concurrent outgoing calls and incoming requests, matches
// responses to calls by id, and propagates cancellation both ways.
//
// A Conn starts reading as soon as it is made. It is safe for concurrent use.
type Conn struct {
	t       transport.Conn
	handler Handler
	log     *slog.Logger

	ctx    context.Context // ends when the connection closes
	cancel context.CancelFunc
	// work is the parent of the contexts of the peer's requests: it ends
	// when the connection closes or when the read side ends (the peer
	// left), whereas ctx, under which responses are written, lasts until
	// the connection closes.
	work     context.Context
	stopWork context.CancelFunc

	nextID atomic.Int64

	mu       sync.Mutex
	pending  map[ID]chan *Response     // our calls awaiting a response
	freeChs  []chan *Response          // empty response channels to reuse
	inflight map[ID]context.CancelFunc // peer requests being served
	closeErr error                     // why the read loop ended

	// handlers counts the goroutines that serve a request or wait, idle,
	// to read (see lead); the one reading is not among them.
	handlers sync.WaitGroup
	// An idle goroutine waits on follow, to be handed the reading, and on
	// jobs, to be handed a request to serve; idle counts them.
	follow  chan struct{}
	jobs    chan job
	idle    atomic.Int32
	serving atomic.Int32  // requests being served
	done    chan struct{} // closed when the reading and handlers are done
	closing sync.Once
}

// NewConn starts a connection over t.
func NewConn(t transport.Conn, opts *ConnOptions) *Conn {
	if opts == nil {
		opts = &ConnOptions{}
	}
	c := &Conn{
		t:        t,
		handler:  opts.Handler,
		log:      opts.Logger,
		pending:  make(map[ID]chan *Response),
		inflight: make(map[ID]context.CancelFunc),
		done:     make(chan struct{}),
		follow:   make(chan struct{}),
		jobs:     make(chan job),
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.work, c.stopWork = context.WithCancel(c.ctx)
	go c.lead()
	return c
}

// Close closes the connection: pending calls fail with ErrConnClosed, the
// contexts of requests being served end, and the transport is closed. Close
// waits for the read loop and every request handler to return, so it must not
// be called from a Handler (call it from another goroutine instead). Only the
// first call reports the transport's Close error.
func (c *Conn) Close() error {
	var err error
	c.closing.Do(func() {
		c.cancel()
		err = c.t.Close()
	})
	<-c.done
	return err
}

// Done is closed when the connection has ended: the peer closed it (or the
// transport failed) or Close was called, and every request handler has
// returned. A peer that leaves ends its work: once the read side ends, the
// contexts of the requests still being served end too, and Done waits only
// for their handlers to notice. Whatever they return is still written if
// the transport allows it (on stdio a peer may close its output but keep
// reading).
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns why the connection ended: nil while it runs, io.EOF when the
// peer closed it cleanly, ErrConnClosed when Close was called, or the
// transport's read error.
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeErr
}

// Call sends a request and waits for its response. params is marshalled as
// JSON and must encode as an object or an array (a json.RawMessage is sent
// as it is, once checked; a RawValid without the check; nil omits params). When result is not nil, the response's result
// is decoded into it (a *json.RawMessage receives the raw bytes). An error
// response is returned as an *Error; one a transport delivered with a
// cause (transport.CallError: a request it failed to deliver, or an HTTP
// status other than 2xx), as a *TransportError that matches both.
//
// If ctx ends first, Call sends a cancellation notification for the request
// (in the background) and returns ctx.Err(); a deadline on ctx thus acts as a
// timeout for the request. If the connection ends first, Call returns
// ErrConnClosed.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	raw, trusted, err := marshalParams(params)
	if err != nil {
		return err
	}
	resp, err := c.callRaw(ctx, ID{}, method, raw, trusted)
	if err != nil {
		return err
	}
	if result == nil {
		return nil
	}
	if rm, ok := result.(*json.RawMessage); ok {
		*rm = resp
		return nil
	}
	if err := json.Unmarshal(resp, result); err != nil {
		return fmt.Errorf("jsonrpc: decoding result of %s: %w", method, err)
	}
	return nil
}

// CallRaw is Call with params and result as raw JSON.
func (c *Conn) CallRaw(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return c.callRaw(ctx, ID{}, method, params, false)
}

// CallRawValid is CallRaw with params that an encoder wrote (see
// RawValid), which are therefore not checked again before they are sent.
func (c *Conn) CallRawValid(ctx context.Context, method string, params RawValid) (json.RawMessage, error) {
	return c.callRaw(ctx, ID{}, method, json.RawMessage(params), true)
}

// CallRawID is CallRaw with a request id chosen by the caller, for protocols
// in which the request id names something beyond the call (an MCP
// subscriptions/listen stream, say). id must be valid and not in use by
// another call in flight on this Conn, or CallRawID fails with ErrIDInUse.
// The ids the Conn picks itself are numbers, and it skips any in use, so a
// string id never collides with them.
func (c *Conn) CallRawID(ctx context.Context, id ID, method string, params json.RawMessage) (json.RawMessage, error) {
	if !id.IsValid() {
		return nil, errors.New("jsonrpc: CallRawID needs a valid id")
	}
	return c.callRaw(ctx, id, method, params, false)
}

// ErrIDInUse is returned by CallRawID for an id already used by a call in
// flight.
var ErrIDInUse = errors.New("jsonrpc: request id already in use by a call in flight")

// callRaw makes a call with the given id, or with the next free id of the
// Conn's own when id is zero. trusted says params are RawValid.
func (c *Conn) callRaw(ctx context.Context, id ID, method string, params json.RawMessage, trusted bool) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	chosen := id.IsValid()
	var (
		msg []byte
		ch  chan *Response
	)
	for ch == nil {
		if !chosen {
			id = Int64ID(c.nextID.Add(1))
		}
		var err error
		msg, err = appendRequest(make([]byte, 0, 48+len(id.Raw())+len(method)+len(params)), id, method, params, trusted)
		if err != nil {
			return nil, fmt.Errorf("jsonrpc: encoding %s request: %w", method, err)
		}
		c.mu.Lock()
		if c.closeErr != nil {
			c.mu.Unlock()
			return nil, ErrConnClosed
		}
		if _, dup := c.pending[id]; dup {
			c.mu.Unlock()
			if chosen {
				return nil, fmt.Errorf("%w: %s", ErrIDInUse, id.Raw())
			}
			continue // a caller chose this number: take the next one
		}
		if n := len(c.freeChs); n > 0 {
			ch = c.freeChs[n-1]
			c.freeChs = c.freeChs[:n-1]
		} else {
			ch = make(chan *Response, 1)
		}
		c.pending[id] = ch
		c.mu.Unlock()
	}

	if err := c.t.Write(ctx, msg); err != nil {
		c.forget(id, ch)
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case c.ctx.Err() != nil:
			return nil, ErrConnClosed
		}
		return nil, fmt.Errorf("jsonrpc: sending %s: %w", method, err)
	}

	var resp *Response
	select {
	case resp = <-ch:
	case <-ctx.Done():
		if c.forget(id, ch) {
			c.sendCancel(id, context.Cause(ctx))
		}
		return nil, ctx.Err()
	}
	c.recycle(ch)
	switch {
	case resp == nil:
		return nil, ErrConnClosed
	case resp.local != nil:
		return nil, resp.local
	case resp.Error != nil:
		return nil, resp.Error
	}
	return resp.Result, nil
}

// forget abandons the pending call id, whose response channel is ch,
// reporting whether it was still pending. If it was not, deliver or shutdown
// has taken ch and is about to send on it.
func (c *Conn) forget(id ID, ch chan *Response) bool {
	c.mu.Lock()
	_, ok := c.pending[id]
	if ok {
		delete(c.pending, id)
		c.putChanLocked(ch)
	}
	c.mu.Unlock()
	return ok
}

// recycle keeps ch, which has delivered its one value, for another call.
func (c *Conn) recycle(ch chan *Response) {
	c.mu.Lock()
	c.putChanLocked(ch)
	c.mu.Unlock()
}

// maxFreeChs bounds the response channels a Conn keeps for reuse.
const maxFreeChs = 32

// putChanLocked keeps ch for reuse. ch must be empty and unreachable from
// pending, so that nothing can send on it until it is handed out again.
// Channels are reused per Conn, never across Conns: a channel belongs to the
// synctest bubble (if any) that made it.
func (c *Conn) putChanLocked(ch chan *Response) {
	if len(c.freeChs) < maxFreeChs {
		c.freeChs = append(c.freeChs, ch)
	}
}

// sendCancel tells the peer to stop serving id. It is best effort (the
// caller has already given up on the response) and runs in the background,
// so that a congested transport cannot delay the caller; it gives up when the
// connection closes.
func (c *Conn) sendCancel(id ID, cause error) {
	reason := ""
	if cause != nil {
		reason = cause.Error()
	}
	params, _ := json.Marshal(struct {
		RequestID ID     `json:"requestId"`
		Reason    string `json:"reason,omitempty"`
	}{id, reason})
	go func() {
		if err := c.Notify(c.ctx, CancelMethod, json.RawMessage(params)); err != nil && c.ctx.Err() == nil {
			c.log.Debug("jsonrpc: sending cancellation failed", "id", id.String(), "err", err)
		}
	}()
}

// Notify sends a notification. params is encoded as for Call. It returns
// ErrConnClosed once the connection has ended.
func (c *Conn) Notify(ctx context.Context, method string, params any) error {
	raw, trusted, err := marshalParams(params)
	if err != nil {
		return err
	}
	msg, err := appendRequest(make([]byte, 0, 48+len(method)+len(raw)), ID{}, method, raw, trusted)
	if err != nil {
		return fmt.Errorf("jsonrpc: encoding %s notification: %w", method, err)
	}
	if c.closed() {
		return ErrConnClosed
	}
	if err := c.t.Write(ctx, msg); err != nil {
		switch {
		case ctx.Err() != nil:
			return ctx.Err()
		case c.ctx.Err() != nil:
			return ErrConnClosed
		}
		return fmt.Errorf("jsonrpc: sending %s: %w", method, err)
	}
	return nil
}

// closed reports whether the connection has ended or is closing.
func (c *Conn) closed() bool {
	if c.ctx.Err() != nil {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeErr != nil
}

// marshalParams encodes params, reporting whether they are RawValid.
func marshalParams(params any) (raw json.RawMessage, trusted bool, err error) {
	switch p := params.(type) {
	case nil:
		return nil, false, nil
	case json.RawMessage:
		return p, false, nil
	case RawValid:
		return json.RawMessage(p), true, nil
	default:
		b, err := json.Marshal(p)
		if err != nil {
			return nil, false, fmt.Errorf("jsonrpc: encoding params: %w", err)
		}
		return b, true, nil // json.Marshal writes valid JSON
	}
}

// lead is the connection's reading: one goroutine at a time reads (the
// leader), handling responses and notifications itself, in order. A
// request that arrives while no other is being served, the leader serves
// itself, after handing the reading to another goroutine (an idle one, else
// a new one); a request that arrives while others are being served goes to
// an idle or new goroutine, and the leader reads on (see startRequest).
//
// Serving on the goroutine that read the request takes one goroutine
// handoff off the request's path (about a quarter of an in-memory typed
// tools/call, BENCHMARKS.md, issue 24); handing on the reading first
// keeps notifications, cancellations and responses to the handler's own
// calls flowing while it runs. Under concurrency the goroutine handed the
// reading waits to be scheduled behind the request its leader serves, and
// the next request waits with it: there the reader hands requests out
// instead, as it always did before.
//
// The goroutines are kept for their stacks: a new goroutine starts with a
// small stack, and decoding a request's params and arguments grows it, by
// copying, twice or more per request; on the in-memory tools/call that
// copying was a fifth of the CPU profile (BENCHMARKS.md, "Profile-driven
// changes"). An idle goroutine's stack is shrunk back by the garbage
// collector if it stays idle.
func (c *Conn) lead() {
	for {
		j, ok := c.readRequest()
		if !ok {
			return
		}
		c.handlers.Add(1) // from here on this goroutine is a handler
		select {
		case c.follow <- struct{}{}: // an idle goroutine reads on
		default:
			go c.lead()
		}
		c.serveJob(j)
		if !c.idleUntilLead() {
			return
		}
	}
}

// worker serves j, handed to it by the reader, then waits, idle.
func (c *Conn) worker(j job) {
	c.serveJob(j)
	if c.idleUntilLead() {
		c.lead()
	}
}

// serveJob serves j and counts it done.
func (c *Conn) serveJob(j job) {
	c.serve(j.ctx, j.cancel, j.req)
	c.serving.Add(-1)
}

// readRequest reads and handles messages until one is a request to serve,
// which it returns. When the read side ends it shuts the connection down
// and returns false.
func (c *Conn) readRequest() (job, bool) {
	var err error
	for {
		var data []byte
		data, err = c.t.Read(c.ctx)
		if err != nil {
			if errors.Is(err, transport.ErrMessageTooLarge) && c.ctx.Err() == nil {
				// Not fatal: the transport dropped the message.
				c.tooLarge(err)
				continue
			}
			var ce *transport.CallError
			if errors.As(err, &ce) && c.ctx.Err() == nil {
				// Not fatal: one request failed in the transport.
				c.callFailed(ce)
				continue
			}
			break
		}
		if j, ok := c.dispatch(data); ok {
			return j, true
		}
	}
	if c.ctx.Err() != nil {
		err = ErrConnClosed // Close was called: whatever Read said, that is why
	}
	c.shutdown(err)
	return job{}, false
}

// idleUntilLead waits, as a handler, serving the requests it is handed,
// until this goroutine is handed the reading (true) or is not needed any
// more (false): the read side has ended, or enough goroutines wait
// already. Either way it is no longer a handler when it returns.
func (c *Conn) idleUntilLead() bool {
	defer c.handlers.Done()
	for {
		if c.idle.Add(1) > maxIdleFollowers {
			c.idle.Add(-1)
			return false
		}
		select {
		case <-c.follow:
			c.idle.Add(-1)
			return true
		case j := <-c.jobs:
			c.idle.Add(-1)
			c.serveJob(j)
		case <-c.work.Done():
			// The read side has ended: no request can come any more.
			c.idle.Add(-1)
			return false
		}
	}
}

// dispatch handles one incoming message, returning the request to serve
// when it is one. data is ours (transport.Conn.Read hands over the slice),
// so decoded messages may alias it.
func (c *Conn) dispatch(data []byte) (job, bool) {
	msg, id, responseShaped, rpcErr := decodeMessage(data, false)
	if rpcErr != nil {
		if responseShaped {
			// Never answer a response, even a broken one: that could
			// start an error ping-pong between two peers.
			c.log.Warn("jsonrpc: dropping invalid response", "id", id.String(), "err", rpcErr)
			return job{}, false
		}
		c.reply(id, nil, rpcErr)
		return job{}, false
	}
	switch m := msg.(type) {
	case *Response:
		c.deliver(m)
	case *Request:
		if m.IsNotification() {
			c.handleNotification(m)
		} else {
			return c.startRequest(m)
		}
	}
	return job{}, false
}

// tooLarge handles a message the transport dropped for its size. When the
// transport kept the message's beginning and it names an id, the message
// is failed where it belongs: a response fails its call at once (rather
// than leaving it to wait for its context), a request is answered with an
// error under its id. A message whose id cannot be read is only logged:
// an error response without an id would reach no caller on the other side.
func (c *Conn) tooLarge(err error) {
	var h transport.MessageHead
	if errors.As(err, &h) {
		if id, response, ok := headID(h.MessageHead()); ok {
			if response {
				c.deliver(&Response{ID: id, local: fmt.Errorf("jsonrpc: the response was dropped: %w", err)})
			} else {
				c.reply(id, nil, invalidRequest(err.Error()))
			}
			return
		}
	}
	c.log.Warn("jsonrpc: dropped an oversized message whose id could not be read", "err", err)
}

// callFailed fails the call whose request the transport could not deliver,
// with an error that matches both the error response the transport stood
// in with and the transport's cause. Anything else in ce.Response is
// handled as if Read had returned it, and the cause is only logged.
func (c *Conn) callFailed(ce *transport.CallError) {
	msg, _, _, rpcErr := decodeMessage(ce.Response, false)
	if r, ok := msg.(*Response); ok && rpcErr == nil && r.Error != nil && r.ID.IsValid() {
		if ce.Err != nil {
			r.local = &TransportError{RPC: r.Error, Err: ce.Err}
		}
		c.deliver(r)
		return
	}
	c.log.Debug("jsonrpc: a transport's failed request came without an error response", "err", ce.Err)
	if len(ce.Response) > 0 {
		c.dispatch(ce.Response)
	}
}

// TransportError is the error of a call that failed in the transport
// rather than at the peer (on Streamable HTTP: a POST that failed), or
// that the peer refused at the transport's level (an HTTP status other
// than 2xx), when the transport kept the cause (see transport.CallError).
// It matches both the error response, a *Error found with errors.As (the
// transport's -32603 stand-in, or the peer's own error object when it sent
// one), and the cause, so that, say, errors.Is(err,
// oauthclient.ErrIssuerMismatch) holds for a call whose POST the OAuth
// RoundTripper refused, and errors.As finds a *transport.HTTPStatusError
// for a call answered with HTTP 401.
type TransportError struct {
	RPC *Error // the error object of the response that failed the call
	Err error  // why the transport failed the request
}

// Error returns the error object's message, as the call's error would be
// without the cause.
func (e *TransportError) Error() string { return e.RPC.Error() }

// Unwrap returns the error object and the cause.
func (e *TransportError) Unwrap() []error { return []error{e.RPC, e.Err} }

// headID reads the id of a message from its first bytes: whether it is a
// response (it has a result or an error member) or a request (a method).
// The value of the last member the head shows may be cut short, so an id
// counts only when another member follows it.
func headID(head []byte) (id ID, response, ok bool) {
	type member struct{ key, value []byte }
	var members [8]member
	n := 0
	jsontext.Members(head, func(key, value []byte) {
		if n < len(members) {
			members[n] = member{key, value}
		}
		n++
	})
	complete := n - 1 // members before the last are whole
	n = min(n, len(members))
	haveID, kind := false, 0 // kind: 1 request, 2 response
	for i, m := range members[:n] {
		switch string(m.key) {
		case "id":
			haveID = i < complete && id.UnmarshalJSON(m.value) == nil && id.IsValid()
		case "method":
			kind = 1
		case "result", "error":
			kind = 2
		}
	}
	if !haveID || kind == 0 {
		return ID{}, false, false
	}
	return id, kind == 2, true
}

func (c *Conn) shutdown(err error) {
	c.mu.Lock()
	c.closeErr = err
	pending := c.pending
	c.pending = nil // CallRaw sees closeErr and no longer adds to it
	c.mu.Unlock()
	for _, ch := range pending {
		ch <- nil
	}
	// Nothing more can arrive, not even a cancellation: the requests being
	// served would otherwise run for as long as their handlers like (a
	// subscriptions/listen stream forever), keeping the connection open
	// for a peer that has left. Their responses may still be written.
	c.stopWork()
	c.handlers.Wait()
	c.closing.Do(func() {
		c.cancel()
		c.t.Close()
	})
	close(c.done)
}

func (c *Conn) deliver(resp *Response) {
	c.mu.Lock()
	ch, ok := c.pending[resp.ID]
	if ok {
		delete(c.pending, resp.ID)
	}
	c.mu.Unlock()
	switch {
	case ok:
		ch <- resp // buffered, and we are its only sender: never blocks
	case resp.Error != nil && !resp.ID.IsValid():
		// The peer could not tell which request failed (say, it could not
		// parse it): no call can be failed, but someone should know.
		c.log.Warn("jsonrpc: peer reported an error without an id", "code", resp.Error.Code, "message", resp.Error.Message)
	default:
		c.log.Debug("jsonrpc: response for unknown or abandoned request", "id", resp.ID.String())
	}
}

func (c *Conn) handleNotification(req *Request) {
	if req.Method == CancelMethod {
		var p struct {
			RequestID ID `json:"requestId"`
		}
		if json.Unmarshal(req.Params, &p) == nil && p.RequestID.IsValid() {
			c.mu.Lock()
			cancel, ok := c.inflight[p.RequestID]
			if ok {
				// The entry stays, marked by a nil func, until the handler
				// returns, so the response is suppressed.
				c.inflight[p.RequestID] = nil
			}
			c.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
		// Also let the handler see it (a server may log it).
	}
	if c.handler == nil {
		return
	}
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("jsonrpc: notification handler panicked", "method", req.Method, "panic", r, "stack", string(debug.Stack()))
		}
	}()
	c.handler.Handle(c.ctx, req)
}

// startRequest registers req as in flight (so that a cancellation read
// after it finds it) and returns it to serve, or answers it at once when
// its id is taken.
func (c *Conn) startRequest(req *Request) (job, bool) {
	c.mu.Lock()
	if _, dup := c.inflight[req.ID]; dup {
		c.mu.Unlock()
		c.reply(req.ID, nil, invalidRequest("id "+req.ID.Raw()+" is already in use by a request in flight"))
		return job{}, false
	}
	ctx, cancel := context.WithCancel(c.work)
	c.inflight[req.ID] = cancel
	c.mu.Unlock()
	j := job{ctx, cancel, req}
	if c.serving.Add(1) == 1 {
		return j, true // the only one: the reader serves it (see lead)
	}
	// Others are being served: the reader stays the reader, and the
	// request goes to an idle goroutine or a new one.
	select {
	case c.jobs <- j:
	default:
		c.handlers.Add(1)
		go c.worker(j)
	}
	return job{}, false
}

// job is a request to serve, with its context.
type job struct {
	ctx    context.Context
	cancel context.CancelFunc
	req    *Request
}

// maxIdleFollowers bounds the goroutines a Conn keeps idle, waiting to read
// or to serve.
const maxIdleFollowers = 8

func (c *Conn) serve(ctx context.Context, cancel context.CancelFunc, req *Request) {
	result, err := c.call(ctx, req)
	c.mu.Lock()
	live := c.inflight[req.ID] != nil
	delete(c.inflight, req.ID)
	c.mu.Unlock()
	cancel()
	if !live {
		return // the peer cancelled it: send nothing more for this id
	}
	if err != nil {
		var rpcErr *Error
		switch {
		case errors.Is(err, context.Canceled) && !errors.As(err, &rpcErr):
			rpcErr = wire.Internal("Request cancelled")
		case !errors.As(err, &rpcErr):
			// A Go error's text names types, paths and values that are
			// not the peer's business: it goes to the log, the peer gets
			// the bare internal error. A handler says something to the
			// peer by returning an *Error.
			c.log.Error("jsonrpc: handler failed", "method", req.Method, "err", err)
			rpcErr = wire.Internal("")
		case rpcErr == nil: // a nil *Error returned as a non-nil error
			rpcErr = wire.Internal("")
		}
		c.reply(req.ID, nil, rpcErr)
		return
	}
	c.reply(req.ID, result, nil)
}

// call runs the handler, turning a panic into an internal error.
func (c *Conn) call(ctx context.Context, req *Request) (result any, err error) {
	if c.handler == nil {
		return nil, wire.MethodNotFound("Method not found: %s", req.Method)
	}
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("jsonrpc: handler panicked", "method", req.Method, "panic", r, "stack", string(debug.Stack()))
			result, err = nil, wire.Internal("")
		}
	}()
	return c.handler.Handle(ctx, req)
}

// reply sends a response: an error response when rpcErr is not nil, else
// result as JSON.
func (c *Conn) reply(id ID, result any, rpcErr *Error) {
	var (
		raw     []byte
		trusted bool
	)
	if rpcErr == nil {
		var err error
		if raw, trusted, err = marshalResult(result); err != nil {
			c.log.Error("jsonrpc: encoding a result failed", "id", id.String(), "err", err)
			rpcErr = wire.Internal("Internal error: the result could not be encoded")
		}
	}
	size := 48 + len(id.Raw()) + len(raw)
	if rpcErr != nil {
		size += 32 + len(rpcErr.Message) + len(rpcErr.Data)
	}
	msg, err := appendResponse(make([]byte, 0, size), id, raw, trusted, rpcErr)
	if err != nil {
		// The handler's json.RawMessage result or error data was not JSON.
		// The peer still gets an answer.
		c.log.Error("jsonrpc: encoding a response failed", "id", id.String(), "err", err)
		msg, _ = appendResponse(msg[:0], id, nil, false, wire.Internal("Internal error: the response could not be encoded"))
	}
	err = c.t.Write(c.ctx, msg)
	if err != nil && c.ctx.Err() == nil && !errors.Is(err, transport.ErrClosed) && !errors.Is(err, io.ErrClosedPipe) {
		c.log.Warn("jsonrpc: writing response failed", "id", id.String(), "err", err)
	}
}

// marshalResult encodes a handler's result, reporting whether it is known
// to be valid JSON.
func marshalResult(result any) ([]byte, bool, error) {
	switch r := result.(type) {
	case nil:
		return []byte("{}"), true, nil
	case json.RawMessage:
		return r, false, nil
	case RawValid:
		return r, true, nil
	default:
		b, err := json.Marshal(r)
		return b, true, err
	}
}
