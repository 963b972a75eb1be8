package streamhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
)

// DefaultMaxMessageSize is the largest message the client accepts when
// ClientOptions.MaxMessageSize is not set: 4 MiB.
const DefaultMaxMessageSize = 4 << 20

// ClientOptions configures the transport made by NewClientTransport. A nil
// *ClientOptions means defaults.
type ClientOptions struct {
	// HTTPClient sends the POSTs. Default: http.DefaultClient. Do not give
	// it a Timeout shorter than your longest request: a subscriptions/listen
	// stream is one request that lasts as long as the subscription. Bound
	// each call with its context instead.
	HTTPClient *http.Client
	// Header holds headers added to every request, such as Authorization.
	// The transport's own headers (Content-Type, Accept,
	// MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Param-*, and on
	// legacy sessions Mcp-Session-Id and Last-Event-ID) win over these.
	// They are sent to the endpoint's origin (scheme, host and port) only:
	// a redirect to another origin is followed without them (and without
	// a Referer), and the Logger says so at warn level.
	Header http.Header
	// Logger receives the transport's diagnostics, such as the tools it
	// removed from a tools/list result. Default: slog.Default().
	Logger *slog.Logger
	// MaxMessageSize is the largest response body or event, in bytes, the
	// transport accepts. A larger response is reported to the caller as an
	// error response. Zero or negative means DefaultMaxMessageSize.
	MaxMessageSize int
}

// NewClientTransport returns a transport to the Streamable HTTP MCP endpoint
// at url, for client.Client.Connect or any other user of transport.Conn.
//
// Each Connect returns a new connection; nothing is shared between them but
// the HTTP client. The connection turns each request written to it into a
// POST of its own, with the headers 2026-07-28 requires, and makes what the
// server answers (the JSON response, or the notifications and response of
// an event stream) available to Read:
//
//   - A response from the server is delivered as it is; an error response
//     without an id (such as a 403 from DNS rebinding protection) is given
//     the request's id.
//   - A failure with no JSON-RPC answer (a network error, an HTTP error
//     status without a JSON-RPC body, a stream that ends before the
//     response, a response over MaxMessageSize) is delivered as an error
//     response for the request with code -32603 (internal error) and a
//     message saying what happened, such as "HTTP 502 Bad Gateway"; its
//     data is {"httpStatus": N} when there was a status.
//   - When a Go error caused the failure (the HTTP client's, such as an
//     OAuth RoundTripper's typed error, or a broken body), or the POST's
//     HTTP status was not 2xx (a *transport.HTTPStatusError, whether or
//     not the body held the server's own JSON-RPC error), Read returns a
//     *transport.CallError that carries both the error response and that
//     cause, and jsonrpc.Conn fails the call with an error matching both:
//     errors.As finds the server's -32022 in a 400 and the 400 itself, so
//     that a caller can tell an authorization wall (401, 403) or an outage
//     (5xx) from a server that refused the request.
//   - A notifications/cancelled for a request in flight closes that
//     request's POST, which is how Streamable HTTP cancels; nothing is
//     sent. Other notifications are POSTed, and Write returns an error
//     unless the server accepts them (202).
//   - Responses written to the connection are dropped: under 2026-07-28 a
//     client never sends one (a legacy session POSTs them, see below).
//
// The connection watches tools/list results go by and learns the tools'
// x-mcp-header annotations, which it mirrors as Mcp-Param-* headers on
// tools/call. A tool whose annotations are invalid is removed from the
// result (and logged), as the specification requires. When the server
// answers a tools/call with -32020 (header mismatch), the connection fetches
// tools/list again with the call's _meta and retries the call once.
//
// A request's POST lives as long as the context the request was written
// with: when it ends, the POST is closed and nothing more is delivered for
// that request.
//
// # Legacy sessions
//
// A connection on which an initialize request is written speaks the
// session-based Streamable HTTP of 2025-11-25 (and 2025-06-18, 2025-03-26)
// from then on, so that a client can fall back to a server that predates
// 2026-07-28 without another transport:
//
//   - The Mcp-Session-Id the server puts on the initialize response, if
//     any, is sent on every later POST, GET and DELETE, and
//     MCP-Protocol-Version is the protocolVersion of the initialize
//     result (initialize itself goes without either). Mcp-Method, Mcp-Name
//     and Mcp-Param-* do not exist before 2026-07-28 and are not sent;
//     tools/list results are delivered untouched, and -32020 is not
//     retried.
//   - The server may send requests (elicitation/create, sampling/
//     createMessage, roots/list, ping) as well as notifications on a
//     request's event stream; both go to Read. Responses written to the
//     connection, the client's answers to those requests, are POSTed like
//     notifications, and Write returns an error unless the server accepts
//     them. A notifications/cancelled is POSTed too (a legacy server does
//     not take a closed stream for a cancellation), and the request's POST
//     is closed.
//   - Once notifications/initialized has been accepted and the session has
//     an id, the connection opens the session's GET stream, whose requests
//     and notifications go to Read; 405 means the server offers none. When
//     it drops, the connection reconnects with Last-Event-ID after the
//     server's retry delay (1 s if it gave none, at most 5 min), doubled
//     after each attempt that fails (up to 30 s, or the server's delay if
//     longer), and gives up after 5 attempts in a row that bring no event;
//     the next message the server accepts then starts it again from the
//     last event id.
//   - A request's event stream that ends after the server gave an event id
//     but before the response is resumed with GET and Last-Event-ID after
//     the retry delay (doubled after each attempt that fails, as above),
//     as often as the server keeps sending events (SSE polling). A
//     response that arrives on another stream than its request's is
//     delivered all the same, once.
//   - An HTTP 404 to a POST carrying the session id means the server
//     ended the session (a 404 to a GET only means there is no GET
//     stream: some servers route POST alone). So does an HTTP 400 to it
//     when a ping carrying the session id is refused with 400 or 404 too:
//     servers that predate the rule answer an unknown session 400, which
//     a malformed request gets as well, and the ping tells the two apart.
//     That request gets an error response (code -32603, data
//     {"httpStatus": 404, "sessionEnded": true}), every later request one
//     with data {"sessionEnded": true} without being sent, each delivered
//     in a *transport.CallError whose cause wraps [ErrSessionEnded] (and
//     the status), and notifications and responses an error wrapping
//     ErrSessionEnded, until a new initialize starts a new session. The
//     server did not act on any of them. Requests written while that
//     initialize is in flight wait for its answer, and go with the new
//     session's id; if it fails, the connection stays without a session.
//     The connection has methods SessionID() string and SessionEnded()
//     bool for callers that type-assert it.
//   - Close sends DELETE with the session id (best effort, for at most two
//     seconds; 405 is fine), after closing the streams.
func NewClientTransport(url string, opts *ClientOptions) transport.Transport {
	t := &clientTransport{url: url}
	if opts != nil {
		t.opts = *opts
	}
	if t.opts.HTTPClient == nil {
		t.opts.HTTPClient = http.DefaultClient
	}
	if t.opts.Logger == nil {
		t.opts.Logger = slog.Default()
	}
	if t.opts.MaxMessageSize <= 0 {
		t.opts.MaxMessageSize = DefaultMaxMessageSize
	}
	t.opts.Header = t.opts.Header.Clone()
	t.opts.HTTPClient = keepHeadersHome(t.opts.HTTPClient, t.opts.Header, t.opts.Logger)
	return t
}

type clientTransport struct {
	url  string
	opts ClientOptions
	// wait waits before an event stream is resumed; tests replace it with
	// a fake clock. nil means realWait.
	wait func(ctx context.Context, d time.Duration) error
}

// Connect checks the URL and returns a new connection. It sends nothing:
// Streamable HTTP has no handshake.
func (t *clientTransport) Connect(ctx context.Context) (transport.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	u, err := url.Parse(t.url)
	if err != nil {
		return nil, fmt.Errorf("streamhttp: bad endpoint URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("streamhttp: endpoint URL %q is not http or https", t.url)
	}
	c := &clientConn{
		url:   t.url,
		u:     u,
		host:  strings.TrimSuffix(u.Host, ":"), // as http.NewRequest has it
		opts:  &t.opts,
		in:    make(chan inbound, 16),
		jobs:  make(chan callJob),
		calls: make(map[jsonrpc.ID]context.CancelFunc),
		tools: make(map[string][]paramHeader),
		wait:  t.wait,
	}
	if c.wait == nil {
		c.wait = realWait
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, nil
}

// clientConn is one client connection; see NewClientTransport.
type clientConn struct {
	url  string
	u    *url.URL // url, parsed once: newPost copies it
	host string   // u.Host without an empty port
	opts *ClientOptions

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	in     chan inbound // what Read returns
	wg     sync.WaitGroup
	jobs   chan callJob // to an idle caller; see caller
	idle   atomic.Int32 // callers waiting on jobs

	mu    sync.Mutex
	calls map[jsonrpc.ID]context.CancelFunc // requests in flight
	tools map[string][]paramHeader          // x-mcp-header annotations learned from tools/list

	version  atomic.Pointer[[]string] // the MCP-Protocol-Version header value of the last request
	internal atomic.Int64             // ids of the transport's own requests

	// legacy is set once an initialize request has been written: the
	// connection then speaks a legacy (2025-11-25 and earlier) session,
	// see client_legacy.go.
	legacy atomic.Pointer[legacySession]
	wait   func(ctx context.Context, d time.Duration) error // before resuming a stream
}

// Read returns the next message from the server, or a *transport.CallError
// for a request that failed with a Go error as its cause (see
// NewClientTransport). After Close it returns an error wrapping
// transport.ErrClosed.
func (c *clientConn) Read(ctx context.Context) ([]byte, error) {
	if c.ctx.Err() != nil {
		return nil, transport.ErrClosed
	}
	select {
	case in := <-c.in:
		if in.err != nil {
			return nil, in.err
		}
		return in.msg, nil
	case <-c.ctx.Done():
		return nil, transport.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Write sends one message: a request starts its POST and returns at once, a
// notification (or, on a legacy session, a response) is POSTed and Write
// waits for the server to accept it.
func (c *clientConn) Write(ctx context.Context, msg []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.ctx.Err() != nil {
		return transport.ErrClosed
	}
	out, err := peekOutgoing(msg)
	if err == nil {
		out.info.target, out.info.targetSet = transport.TargetFrom(ctx)
	}
	if err == nil && (c.legacy.Load() != nil || (out.method == mcp.MethodInitialize && out.id.IsValid())) {
		return c.writeLegacy(ctx, &out, msg)
	}
	switch {
	case err != nil:
		return err
	case out.response:
		c.opts.Logger.Debug("streamhttp: dropping a response; Streamable HTTP clients send none")
		return nil
	case !out.id.IsValid():
		return c.sendNotification(ctx, &out, msg)
	}
	return c.startCall(ctx, &out, msg)
}

// Close ends the connection: every request in flight has its POST closed.
// It waits for the goroutines serving them, and the idle ones waiting for
// a request, to return. On a legacy
// connection with a session it then sends DELETE to end the session (best
// effort, bounded by deleteTimeout).
func (c *clientConn) Close() error {
	c.mu.Lock()
	c.cancel()
	for _, cancel := range c.calls {
		cancel()
	}
	c.mu.Unlock()
	c.wg.Wait()
	if s := c.legacy.Load(); s != nil {
		c.closeLegacy(s)
	}
	return nil
}

// SessionID returns the Mcp-Session-Id the server assigned to a legacy
// connection, or "" (a 2026-07-28 connection, or a server that assigned
// none). It is what the client package reaches with a type assertion.
func (c *clientConn) SessionID() string {
	if s := c.legacy.Load(); s != nil {
		id, _, _ := s.snapshot()
		return id
	}
	return ""
}

// SessionEnded reports whether the server has ended the legacy session
// (it answered 404 to the session id). Writing a new initialize request
// starts a new session.
func (c *clientConn) SessionEnded() bool {
	if s := c.legacy.Load(); s != nil {
		_, _, ended := s.snapshot()
		return ended
	}
	return false
}

// headers builds the headers of a POST for a request or notification.
func (c *clientConn) headers(method string, info *requestInfo) http.Header {
	h := make(http.Header, len(c.opts.Header)+6)
	for k, v := range c.opts.Header {
		h[k] = v
	}
	h["Content-Type"] = jsonContentType
	h["Accept"] = acceptBoth
	last := c.version.Load()
	switch {
	case info.version == "":
		if last != nil {
			h[canonProtocolVersion] = *last // a notification: the version of the last request
		}
	case last != nil && (*last)[0] == info.version:
		h[canonProtocolVersion] = *last
	default:
		v := []string{info.version}
		c.version.Store(&v)
		h[canonProtocolVersion] = v
	}
	if v, ok := methodHeaders[method]; ok {
		h[canonMethod] = v
	} else {
		h[canonMethod] = []string{method}
	}
	switch method {
	case mcp.MethodCallTool, mcp.MethodGetPrompt:
		if info.name != nil {
			h[canonName] = []string{EncodeHeaderValue(*info.name)}
		}
	case mcp.MethodReadResource:
		if info.uri != nil {
			h[canonName] = []string{EncodeHeaderValue(*info.uri)}
		}
	default:
		if info.targetSet {
			h[canonName] = []string{EncodeHeaderValue(info.target)}
		}
	}
	if method == mcp.MethodCallTool && info.name != nil && len(info.args) > 0 {
		c.mu.Lock()
		params := c.tools[*info.name]
		c.mu.Unlock()
		for _, ph := range params {
			v, _ := argumentAt(info.args, ph.path)
			if v == nil {
				continue // absent or null: no header
			}
			if text, ok := headerText(v); ok {
				h[ph.key] = []string{EncodeHeaderValue(text)}
			}
		}
	}
	return h
}

// Header values shared by every POST (net/http never modifies them).
var (
	acceptBoth    = []string{"application/json, text/event-stream"}
	methodHeaders = func() map[string][]string {
		m := make(map[string][]string, len(knownMethods))
		for _, k := range knownMethods {
			m[k] = []string{k}
		}
		return m
	}()
)

// sendNotification POSTs a notification, except a cancellation, which closes
// the POST of the request it names.
func (c *clientConn) sendNotification(ctx context.Context, m *outgoing, msg []byte) error {
	if m.method == jsonrpc.CancelMethod {
		var p struct {
			Params struct {
				RequestID jsonrpc.ID `json:"requestId"`
			} `json:"params"`
		}
		if json.Unmarshal(msg, &p) == nil && p.Params.RequestID.IsValid() {
			c.mu.Lock()
			cancel := c.calls[p.Params.RequestID]
			c.mu.Unlock()
			if cancel != nil {
				cancel()
			}
		}
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	req := c.newPost(ctx, msg, c.headers(m.method, &m.info))
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		if c.ctx.Err() != nil {
			return transport.ErrClosed
		}
		return fmt.Errorf("streamhttp: sending %s: %w", m.method, err)
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("streamhttp: the server refused notification %s: HTTP %s", m.method, resp.Status)
	}
	return nil
}

// startCall starts the POST of a request on a caller goroutine of its own
// (an idle one, or a new one; see caller). The POST ends with the context
// the request was written with, or at Close; only the drain of an event
// stream after its response outlives that context (see beginCall).
func (c *clientConn) startCall(ctx context.Context, m *outgoing, msg []byte) error {
	cctx, cancel, unlink, err := c.beginCall(ctx, m.id)
	if err != nil {
		return err
	}
	job := callJob{ctx: cctx, written: ctx, cancel: cancel, unlink: unlink, m: m, msg: msg}
	select {
	case c.jobs <- job: // an idle caller took it
	default:
		go c.caller(job)
	}
	return nil
}

// callJob is one request for a caller goroutine to run.
type callJob struct {
	ctx     context.Context // the request's, see beginCall
	written context.Context // the one the request was written with
	cancel  context.CancelFunc
	unlink  func() bool // stops written's end from ending ctx
	m       *outgoing
	msg     []byte
}

// maxIdleCallers bounds the caller goroutines kept waiting for a request.
const maxIdleCallers = 4

// caller runs job, then, while fewer than maxIdleCallers wait, waits for
// the next request instead of exiting. A request's POST runs deep in
// net/http: a fresh goroutine grew its stack by copying on every call, 9%
// of a tools/call's CPU (BENCHMARKS.md, issue 13); a caller that stays
// keeps the stack it grew. An idle caller counts in c.wg, so Close waits
// for it too.
func (c *clientConn) caller(job callJob) {
	for {
		c.call(&job)
		job.unlink()
		c.endCall(job.m.id, job.cancel)
		job = callJob{} // an idle caller keeps no message alive
		if !c.goIdle() {
			return
		}
		select {
		case job = <-c.jobs:
			c.idle.Add(-1)
			c.wg.Done()
		case <-c.ctx.Done():
			c.idle.Add(-1)
			c.wg.Done()
			return
		}
	}
}

// goIdle registers a caller as idle, unless enough wait already or the
// connection is closed.
func (c *clientConn) goIdle() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx.Err() != nil || c.idle.Load() >= maxIdleCallers {
		return false
	}
	c.idle.Add(1)
	c.wg.Add(1)
	return true
}

// beginCall registers a request's exchange under id, so that a
// notifications/cancelled or Close ends it, and returns its context. That
// context has ctx's values and ends with ctx until unlink is called: call
// unlinks it once an event stream's response has been read, because the
// caller's context ends as soon as it has its answer (the client package
// cancels it when the call returns) and net/http closes a connection whose
// request context ends before its body was read to the end, so the drain
// in release would fail and the next POST would need a new connection.
// The goroutine that runs the exchange calls unlink and endCall when it is
// done.
func (c *clientConn) beginCall(ctx context.Context, id jsonrpc.ID) (context.Context, context.CancelFunc, func() bool, error) {
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ctx.Err() != nil {
		cancel()
		return nil, nil, nil, transport.ErrClosed
	}
	unlink := context.AfterFunc(ctx, cancel)
	c.calls[id] = cancel
	c.wg.Add(1)
	return cctx, cancel, unlink, nil
}

// endCall ends what beginCall registered.
func (c *clientConn) endCall(id jsonrpc.ID, cancel context.CancelFunc) {
	cancel()
	c.mu.Lock()
	delete(c.calls, id)
	c.mu.Unlock()
	c.wg.Done()
}

// call runs one request to its end and delivers its response.
func (c *clientConn) call(job *callJob) {
	ctx, m, msg := job.ctx, job.m, job.msg
	deliver := func(n []byte) { c.deliver(ctx, n) }
	rep := c.exchange(ctx, m.id, msg, c.headers(m.method, &m.info), deliver)
	if rep == nil {
		return // abandoned: the caller no longer waits for it
	}
	if m.method == mcp.MethodCallTool && rep.code() == mcp.CodeHeaderMismatch && m.info.name != nil {
		// The tool's annotations may have changed since we last listed
		// it: list again and retry, once.
		rep.release()
		c.opts.Logger.Debug("streamhttp: header mismatch on tools/call; refreshing tools/list and retrying", "tool", *m.info.name)
		c.refreshTools(ctx, &m.info)
		if rep = c.exchange(ctx, m.id, msg, c.headers(m.method, &m.info), deliver); rep == nil {
			return
		}
	}
	if m.method == mcp.MethodListTools && rep.resp.Error == nil {
		if filtered, changed := c.learnTools(rep.resp.Result); changed {
			rep.raw = encodeResponse(rep.resp.ID, filtered, nil)
		}
	}
	if rep.rest != nil {
		// The drain in release outlives the caller's context: it is
		// bounded by drainTimeout, and Close or a cancellation still end
		// it through the call's own cancel.
		job.unlink()
	}
	c.deliverReply(job.written, rep)
	rep.release()
}

// inbound is what one Read returns: a message, or a *transport.CallError.
type inbound struct {
	msg []byte
	err error
}

// deliver hands a message to Read, unless ctx ends first.
func (c *clientConn) deliver(ctx context.Context, msg []byte) {
	select {
	case c.in <- inbound{msg: msg}:
	case <-ctx.Done():
	}
}

// deliverReply hands the response to a request to Read: as a
// *transport.CallError when the request failed with a cause, so that the
// caller can match the cause, and as the message otherwise. ctx is the
// context the request was written with: the one of its exchange may have
// been unlinked from it.
func (c *clientConn) deliverReply(ctx context.Context, rep *reply) {
	in := inbound{msg: rep.raw}
	if rep.cause != nil {
		in = inbound{err: &transport.CallError{Response: rep.raw, Err: rep.cause}}
	}
	select {
	case c.in <- in:
	case <-ctx.Done():
	}
}

// reply is the response to one POST.
type reply struct {
	raw  []byte            // the response message, with the request's id
	resp *jsonrpc.Response // raw, decoded
	// rest is the remainder of an event stream whose response has been
	// read; release drains and closes it.
	rest io.ReadCloser
	// cause is the Go error behind a failure response, if any (the HTTP
	// client's error for a POST that failed): deliverReply hands it to the
	// caller in a *transport.CallError.
	cause error
}

func (r *reply) code() int64 {
	if r.resp.Error == nil {
		return 0
	}
	return r.resp.Error.Code
}

// release is called once the reply has been used. The server ends an event
// stream right after the response, so draining what is left lets the HTTP
// client reuse the connection; a stream that stays open is cut after
// drainTimeout.
func (r *reply) release() {
	if r == nil || r.rest == nil {
		return
	}
	t := time.AfterFunc(drainTimeout, func() { r.rest.Close() })
	io.Copy(io.Discard, io.LimitReader(r.rest, 64<<10))
	t.Stop()
	r.rest.Close()
}

// drainTimeout bounds how long release waits for the end of a stream.
const drainTimeout = time.Second

// exchange POSTs a request and returns its response, handing the
// notifications of an event stream to onNotify on the way (nil drops them).
// It returns nil when ctx ended: no one wants the answer any more. Any other
// failure becomes an error response. The caller must release the reply.
func (c *clientConn) exchange(ctx context.Context, id jsonrpc.ID, msg []byte, hdr http.Header, onNotify func([]byte)) *reply {
	req := c.newPost(ctx, msg, hdr)
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return failure(id, 0, "streamhttp: POST failed: "+err.Error()).because(err)
	}
	var rep *reply
	switch mediaType(resp.Header.Get("Content-Type")) {
	case "text/event-stream":
		rep = c.readStream(ctx, id, resp, onNotify)
		if rep != nil && ctx.Err() == nil {
			rep.rest = resp.Body
			return rep.refusedWith(resp)
		}
	case "application/json":
		rep = c.readJSON(ctx, id, resp)
	default:
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		rep = statusFailure(id, resp)
	}
	resp.Body.Close()
	if ctx.Err() != nil {
		return nil
	}
	return rep.refusedWith(resp)
}

// newPost builds the POST of msg to the endpoint, as
// http.NewRequestWithContext would, but from the URL Connect parsed:
// parsing it again on every request was 4% of a tools/call's CPU, and its
// stack growth more (BENCHMARKS.md, issue 13). Each request gets its own
// copy of the URL, since a RoundTripper may keep or rewrite it.
func (c *clientConn) newPost(ctx context.Context, msg []byte, hdr http.Header) *http.Request {
	u := *c.u
	req := http.Request{
		Method:        http.MethodPost,
		URL:           &u,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        hdr,
		Body:          io.NopCloser(bytes.NewReader(msg)),
		GetBody:       func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(msg)), nil },
		ContentLength: int64(len(msg)),
		Host:          c.host,
	}
	return req.WithContext(ctx)
}

// readJSON reads a single JSON response.
func (c *clientConn) readJSON(ctx context.Context, id jsonrpc.ID, resp *http.Response) *reply {
	limit := c.opts.MaxMessageSize
	body, err := readLimited(resp.Body, resp.ContentLength, limit)
	switch {
	case errors.Is(err, errBodyTooLarge):
		return failure(id, resp.StatusCode, fmt.Sprintf("streamhttp: the response exceeds the limit of %d bytes", limit))
	case err != nil:
		if ctx.Err() != nil {
			return nil
		}
		return failure(id, resp.StatusCode, "streamhttp: reading the response: "+err.Error()).because(err)
	}
	m, _, derr := jsonrpc.DecodeMessage(body)
	r, ok := m.(*jsonrpc.Response)
	if derr != nil || !ok {
		if resp.StatusCode/100 != 2 {
			return statusFailure(id, resp)
		}
		return failure(id, resp.StatusCode, "streamhttp: the server's answer is not a JSON-RPC response")
	}
	return c.ownResponse(id, r, body, resp)
}

// ownResponse makes r the response to request id: an error response
// without id (the server could not or did not name it) is given it.
func (c *clientConn) ownResponse(id jsonrpc.ID, r *jsonrpc.Response, raw []byte, resp *http.Response) *reply {
	switch {
	case r.ID == id:
		return &reply{raw: raw, resp: r}
	case !r.ID.IsValid() && r.Error != nil:
		r.ID = id
		return &reply{raw: encodeResponse(id, nil, r.Error), resp: r}
	}
	return failure(id, resp.StatusCode, fmt.Sprintf("streamhttp: the server answered request %s with the response to %s", id.Raw(), r.ID.Raw()))
}

// readStream reads an event stream up to the request's response, handing
// notifications on.
func (c *clientConn) readStream(ctx context.Context, id jsonrpc.ID, resp *http.Response, onNotify func([]byte)) *reply {
	sr := newSSEReader(resp.Body, c.opts.MaxMessageSize)
	for {
		data, err := sr.next()
		switch {
		case err == io.EOF:
			return failure(id, resp.StatusCode, "streamhttp: the event stream ended before the response")
		case errors.Is(err, errEventTooLarge):
			return failure(id, resp.StatusCode, fmt.Sprintf("streamhttp: an event exceeds the limit of %d bytes", c.opts.MaxMessageSize))
		case err != nil:
			if ctx.Err() != nil {
				return nil
			}
			return failure(id, resp.StatusCode, "streamhttp: the event stream broke before the response: "+err.Error()).because(err)
		}
		m, _, derr := jsonrpc.DecodeMessage(data)
		if derr != nil {
			c.opts.Logger.Warn("streamhttp: dropping an event that is not a JSON-RPC message", "err", derr)
			continue
		}
		switch m := m.(type) {
		case *jsonrpc.Response:
			if m.ID == id || (!m.ID.IsValid() && m.Error != nil) {
				return c.ownResponse(id, m, data, resp)
			}
			c.opts.Logger.Warn("streamhttp: dropping a response to another request", "id", m.ID.String())
		case *jsonrpc.Request:
			if !m.IsNotification() {
				// 2026-07-28 servers never send requests.
				c.opts.Logger.Warn("streamhttp: dropping a request from the server", "method", m.Method)
				continue
			}
			if onNotify != nil {
				onNotify(data)
			}
		}
	}
}

// failure builds an error response for a request that got no JSON-RPC
// answer.
func failure(id jsonrpc.ID, status int, message string) *reply {
	e := wire.Internal("%s", message)
	if status != 0 {
		e.Data = json.RawMessage(`{"httpStatus":` + strconv.Itoa(status) + `}`)
	}
	r := &jsonrpc.Response{ID: id, Error: e}
	return &reply{raw: encodeResponse(id, nil, e), resp: r}
}

// because records err as the cause of failure response r.
func (r *reply) because(err error) *reply {
	r.cause = err
	return r
}

// refusedWith records the status of resp, when it is not 2xx, as the
// cause of r (unless r already has one, such as a body that broke): the
// caller gets a *transport.HTTPStatusError beside the error response,
// whether that is the server's own JSON-RPC error or the transport's
// stand-in, and can act on the status without reading the message.
func (r *reply) refusedWith(resp *http.Response) *reply {
	if r != nil && r.cause == nil && resp.StatusCode/100 != 2 {
		r.cause = &transport.HTTPStatusError{StatusCode: resp.StatusCode, Status: resp.Status}
	}
	return r
}

// statusFailure is the failure of a response that is not JSON-RPC: "HTTP
// 502 Bad Gateway", or, for a success status, a note that no response came.
func statusFailure(id jsonrpc.ID, resp *http.Response) *reply {
	if resp.StatusCode/100 == 2 {
		return failure(id, resp.StatusCode, fmt.Sprintf("streamhttp: HTTP %s carried no JSON-RPC response", resp.Status))
	}
	return failure(id, resp.StatusCode, "HTTP "+resp.Status)
}

// readLimited reads a body of at most limit bytes.
func readLimited(r io.Reader, length int64, limit int) ([]byte, error) {
	if length > int64(limit) {
		return nil, errBodyTooLarge
	}
	if length > 0 {
		buf := make([]byte, length)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	var b bytes.Buffer
	n, err := b.ReadFrom(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if n > int64(limit) {
		return nil, errBodyTooLarge
	}
	return b.Bytes(), nil
}

// learnTools records the x-mcp-header annotations of the tools in a
// tools/list result and removes the tools whose annotations are invalid.
// It returns the result to deliver and whether it differs from result.
func (c *clientConn) learnTools(result json.RawMessage) (json.RawMessage, bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(result, &top) != nil {
		return result, false
	}
	var tools []json.RawMessage
	if json.Unmarshal(top["tools"], &tools) != nil {
		return result, false
	}
	kept := make([]json.RawMessage, 0, len(tools))
	c.mu.Lock()
	for _, raw := range tools {
		var t struct {
			Name        string          `json:"name"`
			InputSchema json.RawMessage `json:"inputSchema"`
		}
		if json.Unmarshal(raw, &t) != nil {
			kept = append(kept, raw) // not our business: the caller decodes it
			continue
		}
		params, err := parseParamHeaders(t.InputSchema)
		if err != nil {
			delete(c.tools, t.Name)
			c.opts.Logger.Warn("streamhttp: removing a tool with an invalid x-mcp-header annotation from tools/list", "tool", t.Name, "reason", err.Error())
			continue
		}
		if len(params) > 0 {
			c.tools[t.Name] = params
		} else {
			delete(c.tools, t.Name)
		}
		kept = append(kept, raw)
	}
	c.mu.Unlock()
	if len(kept) == len(tools) {
		return result, false
	}
	b, err := json.Marshal(kept)
	if err != nil {
		return result, false
	}
	top["tools"] = b
	out, err := json.Marshal(top)
	if err != nil {
		return result, false
	}
	return out, true
}

// maxRefreshPages bounds the tools/list pages a refresh reads.
const maxRefreshPages = 100

// refreshTools lists the server's tools again, with the _meta of the call
// that failed, until it has seen the called tool or the last page.
func (c *clientConn) refreshTools(ctx context.Context, call *requestInfo) {
	cursor := ""
	for range maxRefreshPages {
		params := map[string]any{}
		if len(call.meta) > 0 {
			params["_meta"] = call.meta
		}
		if cursor != "" {
			params["cursor"] = cursor
		}
		raw, err := json.Marshal(params)
		if err != nil {
			return
		}
		id := jsonrpc.StringID("streamhttp-tools-refresh-" + strconv.FormatInt(c.internal.Add(1), 10))
		msg, err := jsonrpc.EncodeMessage(&jsonrpc.Request{ID: id, Method: mcp.MethodListTools, Params: raw})
		if err != nil {
			return
		}
		rep := c.exchange(ctx, id, msg, c.headers(mcp.MethodListTools, &requestInfo{version: call.version}), nil)
		rep.release()
		if rep == nil || rep.resp.Error != nil {
			return
		}
		c.learnTools(rep.resp.Result)
		var page struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if json.Unmarshal(rep.resp.Result, &page) != nil {
			return
		}
		for _, t := range page.Tools {
			if t.Name == *call.name {
				return
			}
		}
		if page.NextCursor == "" || page.NextCursor == cursor {
			return
		}
		cursor = page.NextCursor
	}
}
