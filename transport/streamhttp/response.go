package streamhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
)

// responder answers one request, choosing between the two response shapes
// of Streamable HTTP:
//
//   - application/json, a single JSON-RPC response, when the request sent
//     no notification before its result. Its HTTP status follows the error
//     codes the specification pins (400, 404), so a handler's -32021 is a
//     400 like the specification asks.
//   - text/event-stream, when the request sends a notification (progress,
//     a log message, the acknowledgement of subscriptions/listen) and the
//     client accepts event streams. The stream starts with the first
//     notification (status 200, no-cache, X-Accel-Buffering: no), carries
//     each notification as a flushed event, then the response, and ends.
//     An error after the stream started travels in-band.
//
// A client that does not accept event streams gets its response as JSON and
// loses the notifications.
//
// The responder serves 2026-07-28 requests and stateless legacy ones, whose
// streams are not resumable. The requests of a legacy session are served by
// a sessionRequest (legacy.go) instead: its events have ids, outlive the
// connection, and carry server-to-client requests.
type responder struct {
	w         http.ResponseWriter
	rc        *http.ResponseController
	ctx       context.Context // the request's: ends when the client goes away
	id        jsonrpc.ID
	streamOK  bool
	keepAlive time.Duration
	writeTime time.Duration // HandlerOptions.WriteTimeout: the deadline of each write
	log       *slog.Logger
	// inBand sends every JSON-RPC error with 200, as legacy Streamable
	// HTTP does: there, 404 means "your session is gone" and 400 a
	// transport-level refusal, so a handler's -32601 or -32602 must not
	// borrow them.
	inBand bool

	mu        sync.Mutex
	streaming bool        // the event stream has started
	done      bool        // the response is written: nothing more may be
	failed    error       // a write to the client failed
	quiet     *time.Timer // runs keepAliveFire when the stream has been quiet for keepAlive
}

func newResponder(w http.ResponseWriter, r *http.Request, id jsonrpc.ID, streamOK bool, keepAlive, writeTime time.Duration, log *slog.Logger) *responder {
	return &responder{
		w:         w,
		rc:        http.NewResponseController(w),
		ctx:       r.Context(),
		id:        id,
		streamOK:  streamOK,
		keepAlive: keepAlive,
		writeTime: writeTime,
		log:       log,
	}
}

// errResponded is returned by notify once the response has been sent: the
// request is over and nothing more may be sent for it.
var errResponded = errors.New("streamhttp: the request has been answered; its stream is closed")

// notify is the request's server.NotifyFunc.
func (p *responder) notify(ctx context.Context, method string, params any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !p.streamOK {
		return nil // the client takes JSON only: notifications have nowhere to go
	}
	p.mu.Lock()
	first := !p.streaming
	p.mu.Unlock()
	if first {
		// The first event starts the stream: its encoding and net/http's
		// writing of the response header take several KiB of stack, below
		// every frame of the handler and its middleware. On a listen
		// stream that pushed the goroutine that then parks for the
		// stream's life (net/http's own) from an 8 KiB stack to 16 KiB,
		// where it stayed. It is sent from a goroutine of its own, whose
		// stack goes when it ends.
		done := make(chan error, 1)
		go func() { done <- p.send(ctx, method, params) }()
		return <-done
	}
	return p.send(ctx, method, params)
}

// send encodes a notification and writes it as an event, starting the
// stream if it has not started.
func (p *responder) send(ctx context.Context, method string, params any) error {
	msg, err := encodeNotification(method, params)
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.done:
		return errResponded
	case p.failed != nil:
		return p.failed
	}
	if err := p.ctx.Err(); err != nil {
		return err
	}
	p.startLocked()
	return p.writeLocked(appendEvent(make([]byte, 0, len(msg)+len(eventPrefix)+len(eventSuffix)), msg))
}

func marshalParams(params any) (json.RawMessage, error) {
	if raw, ok := params.(json.RawMessage); ok {
		return raw, nil
	}
	return json.Marshal(params)
}

// startLocked starts the event stream if it has not started yet.
func (p *responder) startLocked() {
	if p.streaming {
		return
	}
	p.streaming = true
	h := p.w.Header()
	h["Content-Type"] = sseContentType
	h["Cache-Control"] = noCache
	h["X-Accel-Buffering"] = noAccelBuffering
	// A stream lasts as long as its request: the server's WriteTimeout,
	// meant for whole responses, must not cut it. Writers that cannot
	// (a test recorder) are fine as they are.
	_ = p.rc.SetWriteDeadline(time.Time{})
	p.w.WriteHeader(http.StatusOK)
	if p.keepAlive > 0 {
		// A timer that runs a function, not a goroutine that waits for a
		// timer: a quiet stream (an idle listen stream, for hours) holds
		// no goroutine of its own beyond net/http's.
		p.quiet = time.AfterFunc(p.keepAlive, p.keepAliveFire)
	}
}

// writeLocked writes b to the stream and flushes it, within WriteTimeout.
func (p *responder) writeLocked(b []byte) error {
	// Renewed per write, so that a stream read as it goes lasts as long as
	// it must. A writer without deadlines (a test recorder) just writes.
	_ = p.rc.SetWriteDeadline(writeDeadline(p.writeTime))
	if _, err := p.w.Write(b); err != nil {
		p.failed = err
		return err
	}
	if err := p.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		p.failed = err
		return err
	}
	if p.quiet != nil {
		p.quiet.Reset(p.keepAlive)
	}
	return nil
}

// keepAliveFire sends a comment when the stream has been quiet for the
// keep-alive interval; the write restarts the timer (as every write does),
// until finish, a failed write or the client leaving.
func (p *responder) keepAliveFire() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done || p.failed != nil || p.ctx.Err() != nil {
		return
	}
	_ = p.writeLocked(keepAlive) // a failure is kept in p.failed; the timer is not set again
}

// finish sends the response to the request: the handler's result, or its
// error. After finish, the ResponseWriter is never touched again.
func (p *responder) finish(res any, err error) {
	// Encoded outside the lock (a large result takes long), and framed as
	// an event, since whether the answer goes on a stream is known only
	// under the lock; a plain JSON answer is the same bytes without the
	// framing.
	event, status := encodeFramed(eventPrefix, eventSuffix, p.id, res, err, p.log)
	if p.inBand && status != http.StatusInternalServerError {
		status = http.StatusOK
	}

	p.mu.Lock()
	defer p.mu.Unlock()
	p.done = true
	if p.quiet != nil {
		p.quiet.Stop()
	}
	if p.failed != nil || p.ctx.Err() != nil {
		return // the client is gone: there is no one to answer
	}
	if p.streaming {
		// Unflushed: net/http flushes the last event with the end of the
		// chunked body when the handler returns, in one write.
		_ = p.rc.SetWriteDeadline(writeDeadline(p.writeTime))
		_, _ = p.w.Write(event)
		return
	}
	msg := event[len(eventPrefix) : len(event)-len(eventSuffix)]
	// A large result to a client that does not read must not block for
	// ever either.
	if p.writeTime > 0 {
		_ = p.rc.SetWriteDeadline(writeDeadline(p.writeTime))
	}
	writeJSON(p.w, status, msg)
}

// encodeOutcome encodes the response to request id: the handler's result,
// or its error. status is the HTTP status a JSON response carrying it gets
// under 2026-07-28 (see statusOf); 500 when the result cannot be encoded.
func encodeOutcome(id jsonrpc.ID, res any, err error, log *slog.Logger) (msg []byte, status int) {
	return encodeFramed(nil, nil, id, res, err, log)
}

// encodeFramed is encodeOutcome between prefix and suffix (an event's
// framing). It encodes into a pooled buffer and returns an exact copy, one
// allocation for a small message; a message too large for the pool is
// returned as it was encoded, in the one buffer that held it.
func encodeFramed(prefix, suffix []byte, id jsonrpc.ID, res any, err error, log *slog.Logger) (msg []byte, status int) {
	bp := outBufPool.Get().(*[]byte)
	b, status := appendOutcome(append((*bp)[:0], prefix...), id, res, err, log)
	b = append(b, suffix...)
	if cap(b) > maxPooledOut {
		outBufPool.Put(bp) // b outgrew it: *bp is still the small buffer
		return b, status
	}
	msg = bytes.Clone(b)
	*bp = b[:0]
	outBufPool.Put(bp)
	return msg, status
}

// outBufPool holds the buffers responses are encoded into.
var outBufPool = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// maxPooledOut bounds the buffers kept in outBufPool.
const maxPooledOut = 64 << 10

// appendOutcome is encodeOutcome appending to dst. A result is encoded
// straight into the message, after its framing, so that a large one is
// held once: encoding it apart and then copying it into a message held it
// three times (the encoder's buffer, its copy, the message).
func appendOutcome(dst []byte, id jsonrpc.ID, res any, err error, log *slog.Logger) (msg []byte, status int) {
	if err != nil {
		rpcErr := asRPCError(err)
		return append(dst, encodeResponse(id, nil, rpcErr)...), statusOf(rpcErr.Code)
	}
	start := len(dst)
	// The framing jsonrpc.AppendMessage writes for a response (TestAppendOutcomeFraming).
	dst = append(dst, `{"jsonrpc":"2.0"`...)
	if id.IsValid() {
		dst = append(dst, `,"id":`...)
		dst = append(dst, id.Raw()...)
	} else {
		dst = append(dst, `,"id":null`...)
	}
	dst = append(dst, `,"result":`...)
	// mcp.AppendJSON writes what json.Marshal writes: valid, compact JSON,
	// with no line break to split an event.
	out, merr := mcp.AppendJSON(dst, res)
	if merr != nil {
		log.Error("streamhttp: encoding a result", "err", merr)
		return append(dst[:start], encodeResponse(id, nil, wire.Internal("Internal error: the result could not be encoded"))...), http.StatusInternalServerError
	}
	return append(out, '}'), http.StatusOK
}

// encodeResponse encodes a response; a result that is not valid JSON
// becomes an internal error.
func encodeResponse(id jsonrpc.ID, result json.RawMessage, e *jsonrpc.Error) []byte {
	msg, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Result: result, Error: e})
	if err != nil {
		msg, _ = jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: wire.Internal("Internal error: the response could not be encoded")})
	}
	return msg
}
