package streamhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
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

// This file is the client side of legacy Streamable HTTP sessions
// (2025-11-25, 2025-06-18, 2025-03-26). A connection becomes legacy when
// an initialize request is written to it; from then on every message takes
// the paths below instead of the stateless 2026-07-28 ones in client.go.
// What differs:
//
//   - The server may assign a session (the Mcp-Session-Id header of the
//     initialize response), which every later POST, GET and DELETE
//     carries; MCP-Protocol-Version is the version initialize negotiated.
//     Mcp-Method, Mcp-Name and Mcp-Param-* do not exist before 2026-07-28
//     and are not sent.
//   - The server sends requests (elicitation/create, sampling/createMessage,
//     roots/list, ping) on a request's event stream or on the GET stream;
//     they go to Read, and the responses written to the connection are
//     POSTed back.
//   - Event streams are resumable: a stream that ends after an event id but
//     before the response is picked up again with GET and Last-Event-ID.
//   - A 404 to a POST carrying the session id means the server ended the
//     session, and so does a 400 to it when a ping on the session gets 400
//     or 404 too (servers that predate the rule answer an unknown session
//     400); the connection answers every later request with an error
//     until a new initialize is written, and holds the requests written
//     while that initialize is in flight until it is answered, so that
//     they go with the new session's id.
//   - The GET stream reconnects with Last-Event-ID after a growing delay;
//     when it gives up, the next message the server accepts starts it
//     again from the last event id, so that a passing outage does not cost
//     the session its notifications for good.

var (
	canonSessionID   = http.CanonicalHeaderKey(HeaderSessionID)
	canonLastEventID = http.CanonicalHeaderKey(HeaderLastEventID)
	acceptStream     = []string{"text/event-stream"}
)

// ErrSessionEnded is wrapped by the errors Write returns on a legacy
// connection whose session the server has ended (it answered HTTP 404 to a
// message carrying the session id, or 400 to it and to a ping on the
// session: see NewClientTransport). Requests written after that are not
// sent: each is answered with an error response whose data has
// "sessionEnded": true, delivered as a *transport.CallError whose cause
// wraps it. Writing a new initialize request starts a new session on the
// same connection. It is transport.ErrSessionEnded, so that a client that
// knows no Streamable HTTP can match it.
var ErrSessionEnded = transport.ErrSessionEnded

// Limits of the legacy paths.
const (
	// maxResumeAttempts bounds the reconnections in a row that bring no
	// new event, for a request's stream and for the GET stream alike. Any
	// event resets the count, so a server that polls (closes the
	// connection after each event) can keep a stream going indefinitely.
	maxResumeAttempts = 5
	// deleteTimeout bounds the DELETE that Close sends to end the session:
	// it is a courtesy to the server and must not hold up the caller.
	deleteTimeout = 2 * time.Second
	// pingTimeout bounds the ping that asks whether the server still knows
	// a session after a 400 (see sessionGone).
	pingTimeout = 10 * time.Second
	// maxBackoff bounds the growing wait between failed attempts to
	// reconnect an event stream, unless the server's own retry is longer.
	maxBackoff = 30 * time.Second
	// getSentTimeout bounds how long Write of notifications/initialized
	// waits for the GET stream's request to be written out.
	getSentTimeout = time.Second
)

// legacySession is the state of a legacy connection.
type legacySession struct {
	mu      sync.Mutex
	id      string // Mcp-Session-Id; "" when the server assigned none
	version string // the negotiated protocol version; "" before initialize is answered
	ended   bool   // the server answered 404 to the session id
	closed  bool   // Close has ended the session
	stopGet context.CancelFunc
	calls   map[jsonrpc.ID]*legacyCall // requests in flight

	// opening is closed once the initialize in flight has been answered
	// or has failed; nil when none is. Requests written meanwhile wait for
	// it: sent at once, they would carry no session id.
	opening chan struct{}
	// opened is set once an initialize has succeeded: a later one that
	// fails leaves the connection without a session (ended), so that the
	// requests after it fail as the session's loss, not as a server's 400
	// to a request without a session id.
	opened bool
	// idleGet holds the events of a GET stream that gave up after failing
	// maxResumeAttempts times in a row (the last event id and the retry),
	// until a message the server accepts starts the stream again from
	// there; nil while the stream runs, or when the server refused it.
	idleGet  *legacyEvents
	hasIdle  atomic.Bool  // idleGet != nil, read without the lock on every POST
	accepted atomic.Int64 // messages the server accepted (2xx), for the GET stream
	held     atomic.Int32 // requests waiting for opening (for tests)
}

// legacyCall is one request in flight on a legacy connection. Its response
// normally comes on its own stream, but a server may deliver it on another
// one (the GET stream, or a stream it resumed there); whoever finds it
// first claims it, so that it is delivered once.
type legacyCall struct {
	answered atomic.Bool
	cancel   context.CancelFunc
}

// claim reports whether the caller is the first to answer the call.
func (lc *legacyCall) claim() bool { return lc.answered.CompareAndSwap(false, true) }

// snapshot returns the session id and version to send, and whether the
// session has ended.
func (s *legacySession) snapshot() (id, version string, ended bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id, s.version, s.ended
}

// await waits until no initialize is in flight, then returns what
// snapshot does. ok is false when ctx ended first.
func (s *legacySession) await(ctx context.Context) (id, version string, ended, ok bool) {
	for {
		s.mu.Lock()
		opening := s.opening
		if opening == nil {
			id, version, ended = s.id, s.version, s.ended
			s.mu.Unlock()
			return id, version, ended, true
		}
		s.mu.Unlock()
		s.held.Add(1)
		select {
		case <-opening:
		case <-ctx.Done():
			s.held.Add(-1)
			return "", "", false, false
		}
		s.held.Add(-1)
	}
}

// end records that the server ended session id (a 404 to a message that
// carried it). A 404 to an older session, already replaced by a new
// initialize, changes nothing.
func (s *legacySession) end(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.id != id || id == "" {
		return
	}
	s.ended = true
	s.stopGetLocked()
}

// stopGetLocked ends the GET stream, running or idle. s.mu is held.
func (s *legacySession) stopGetLocked() {
	if s.stopGet != nil {
		s.stopGet()
		s.stopGet = nil
	}
	s.idleGet = nil
	s.hasIdle.Store(false)
}

// initDone ends the wait that initialize began (opening), once it has been
// answered: ok tells whether it opened a session. A re-initialize that
// failed leaves the connection without one.
func (s *legacySession) initDone(opening chan struct{}, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case ok:
		s.opened = true
	case s.opened:
		s.ended = true
	}
	if s.opening == opening {
		s.opening = nil
	}
	close(opening)
}

// legacyHeaders builds the headers of a legacy message: the caller's, then
// Accept, the negotiated version and the session id (ours win). The session
// headers are the transport's alone: a caller's Mcp-Session-Id would ride
// on initialize, which must go without one.
func (c *clientConn) legacyHeaders(accept []string, id, version string) http.Header {
	h := make(http.Header, len(c.opts.Header)+5)
	for k, v := range c.opts.Header {
		if ck := http.CanonicalHeaderKey(k); ck != canonSessionID && ck != canonLastEventID {
			h[k] = v
		}
	}
	if accept != nil {
		h["Accept"] = accept
	}
	if version != "" {
		h[canonProtocolVersion] = []string{version}
	}
	if id != "" {
		h[canonSessionID] = []string{id}
	}
	return h
}

// legacySession returns the connection's legacy state, making the
// connection legacy if it is not yet.
func (c *clientConn) legacySession() *legacySession {
	if s := c.legacy.Load(); s != nil {
		return s
	}
	c.legacy.CompareAndSwap(nil, &legacySession{calls: make(map[jsonrpc.ID]*legacyCall)})
	return c.legacy.Load()
}

// writeLegacy is Write on a legacy connection.
func (c *clientConn) writeLegacy(ctx context.Context, m *outgoing, msg []byte) error {
	s := c.legacySession()
	switch {
	case m.response:
		// The answer to a server request: 2025-11-25 has it POSTed like
		// a notification.
		return c.postLegacy(ctx, s, "a response", msg)
	case !m.id.IsValid():
		if m.method == jsonrpc.CancelMethod {
			// Legacy servers are told explicitly (closing a stream is not
			// a cancellation there), and the request's POST is closed as
			// nobody waits for its answer any more.
			c.cancelLegacyCall(s, msg)
		}
		err := c.postLegacy(ctx, s, m.method, msg)
		if err == nil && m.method == mcp.NotificationInitialized {
			// Wait until the GET is on the wire before the client sends
			// anything else: a server that finds no GET stream may send
			// what belongs there on the next request's stream, and one
			// that finds it late may send a request's own messages there.
			if sent := c.startGetStream(s); sent != nil {
				t := time.NewTimer(getSentTimeout)
				select {
				case <-sent:
				case <-t.C:
				case <-ctx.Done():
				}
				t.Stop()
			}
		}
		return err
	}
	var opening chan struct{}
	if m.method == mcp.MethodInitialize {
		// A new session starts: whatever the last one was, its id and
		// version no longer apply, and its GET stream is over.
		opening = make(chan struct{})
		s.mu.Lock()
		s.id, s.version, s.ended = "", "", false
		s.stopGetLocked()
		s.opening = opening
		s.mu.Unlock()
	}
	return c.startLegacyCall(ctx, s, m, msg, opening)
}

// cancelLegacyCall ends the local wait for the request a notifications/
// cancelled names.
func (c *clientConn) cancelLegacyCall(s *legacySession, msg []byte) {
	var p struct {
		Params struct {
			RequestID jsonrpc.ID `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(msg, &p) != nil || !p.Params.RequestID.IsValid() {
		return
	}
	s.mu.Lock()
	lc := s.calls[p.Params.RequestID]
	s.mu.Unlock()
	if lc != nil && lc.claim() {
		lc.cancel()
	}
}

// postLegacy POSTs a notification or response and waits for the server to
// accept it.
func (c *clientConn) postLegacy(ctx context.Context, s *legacySession, what string, msg []byte) error {
	id, version, ended := s.snapshot()
	if ended {
		return fmt.Errorf("streamhttp: sending %s: %w", what, ErrSessionEnded)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(msg))
	if err != nil {
		return fmt.Errorf("streamhttp: %w", err)
	}
	req.Header = c.legacyHeaders(acceptBoth, id, version)
	req.Header["Content-Type"] = jsonContentType
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		if c.ctx.Err() != nil {
			return transport.ErrClosed
		}
		return fmt.Errorf("streamhttp: sending %s: %w", what, err)
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch {
	case id != "" && (resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusBadRequest && c.sessionGone(ctx, id, version)):
		s.end(id)
		return fmt.Errorf("streamhttp: sending %s: %w (HTTP %s)", what, ErrSessionEnded, resp.Status)
	case resp.StatusCode/100 != 2:
		return fmt.Errorf("streamhttp: the server refused %s: HTTP %s", what, resp.Status)
	}
	c.reviveGetStream(s)
	return nil
}

// startLegacyCall starts the POST of a request in its own goroutine, like
// startCall. opening is the wait an initialize began (nil for any other
// request), which the call ends.
func (c *clientConn) startLegacyCall(ctx context.Context, s *legacySession, m *outgoing, msg []byte, opening chan struct{}) error {
	ctx, cancel, unlink, err := c.beginCall(ctx, m.id)
	if err != nil {
		if opening != nil {
			s.initDone(opening, false)
		}
		return err
	}
	lc := &legacyCall{cancel: cancel}
	s.mu.Lock()
	s.calls[m.id] = lc
	s.mu.Unlock()
	go func() {
		defer c.endCall(m.id, cancel)
		defer unlink()
		c.legacyCall(ctx, s, lc, m, msg, opening)
		s.mu.Lock()
		if s.calls[m.id] == lc {
			delete(s.calls, m.id)
		}
		s.mu.Unlock()
	}()
	return nil
}

// legacyCall runs one request of a legacy connection to its end and
// delivers its response, unless another stream has already delivered it.
// A request written while an initialize is in flight (opening, for that
// initialize itself) waits for its answer, and goes with the session it
// opened.
func (c *clientConn) legacyCall(ctx context.Context, s *legacySession, lc *legacyCall, m *outgoing, msg []byte, opening chan struct{}) {
	var rep *reply
	if opening != nil {
		rep = c.legacyExchange(ctx, s, lc, m, msg, "", "")
		s.initDone(opening, rep != nil && rep.resp.Error == nil)
	} else if id, version, ended, ok := s.await(ctx); !ok {
		return // the caller gave up meanwhile
	} else if ended {
		rep = sessionEnded(m.id, nil)
	} else {
		rep = c.legacyExchange(ctx, s, lc, m, msg, id, version)
	}
	if rep == nil {
		return
	}
	if lc.claim() {
		c.deliverReply(ctx, rep)
	}
	rep.release()
}

// sessionEnded is the error response to a request the server refused
// because its session ended (resp, with status 404, or 400 confirmed by a
// ping), or that was not sent because of an earlier refusal (resp nil).
// Its cause wraps ErrSessionEnded, and the status when there was one: the
// caller learns that the server did not act on the request.
func sessionEnded(id jsonrpc.ID, resp *http.Response) *reply {
	var (
		e     *jsonrpc.Error
		cause error = ErrSessionEnded
	)
	if resp != nil {
		status := resp.StatusCode
		e = wire.Internal("streamhttp: the server ended the session (HTTP %d); a new one starts with initialize", status).
			WithData(json.RawMessage(`{"httpStatus":` + strconv.Itoa(status) + `,"sessionEnded":true}`))
		cause = fmt.Errorf("%w (%w)", ErrSessionEnded, &transport.HTTPStatusError{StatusCode: status, Status: resp.Status})
	} else {
		e = wire.Internal("streamhttp: the session has ended (the server refused an earlier message); a new one starts with initialize").
			WithData(json.RawMessage(`{"sessionEnded":true}`))
	}
	return (&reply{raw: encodeResponse(id, nil, e), resp: &jsonrpc.Response{ID: id, Error: e}}).because(cause)
}

// sessionGone reports whether the server no longer knows session sid,
// after it answered a message carrying it with HTTP 400. The specification
// has a server answer an unknown session 404, but servers that predate
// the rule, and many built after their SDK's examples, answer 400 (the
// TypeScript SDK's sessionful server: "Server not initialized"), which a
// request the server found malformed gets too. A ping on the session tells
// them apart: a session the server knows answers it, one it does not is
// refused again, 400 or 404. Anything else (an answer, a failed POST)
// keeps the session.
func (c *clientConn) sessionGone(ctx context.Context, sid, version string) bool {
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	id := "streamhttp-ping-" + strconv.FormatInt(c.internal.Add(1), 10)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(`{"jsonrpc":"2.0","id":"`+id+`","method":"ping"}`))
	if err != nil {
		return false
	}
	req.Header = c.legacyHeaders(acceptBoth, sid, version)
	req.Header["Content-Type"] = jsonContentType
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		c.opts.Logger.Debug("streamhttp: pinging the session after HTTP 400 failed", "err", err)
		return false
	}
	gone := resp.StatusCode == http.StatusBadRequest || resp.StatusCode == http.StatusNotFound
	if gone {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	}
	resp.Body.Close()
	return gone
}

// legacyExchange POSTs a request and returns its response, delivering the
// server's requests and notifications on the way and resuming its stream
// when needed. It returns nil when ctx ended. For initialize, it records the
// session before the response is delivered, so that the messages the client
// sends next carry it.
func (c *clientConn) legacyExchange(ctx context.Context, s *legacySession, lc *legacyCall, m *outgoing, msg []byte, sid, version string) *reply {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(msg))
	if err != nil {
		return failure(m.id, 0, "streamhttp: "+err.Error()).because(err)
	}
	req.Header = c.legacyHeaders(acceptBoth, sid, version)
	req.Header["Content-Type"] = jsonContentType
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return failure(m.id, 0, "streamhttp: POST failed: "+err.Error()).because(err)
	}
	if resp.StatusCode == http.StatusNotFound && sid != "" {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		s.end(sid)
		return sessionEnded(m.id, resp)
	}
	var rep *reply
	switch mediaType(resp.Header.Get("Content-Type")) {
	case "text/event-stream":
		rep = c.readLegacyStream(ctx, s, m.id, resp) // closes or keeps the body
	case "application/json":
		rep = c.readJSON(ctx, m.id, resp)
		resp.Body.Close()
	default:
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		rep = statusFailure(m.id, resp)
	}
	if ctx.Err() != nil {
		rep.release()
		return nil
	}
	switch {
	case m.method == mcp.MethodInitialize:
		if rep.resp.Error == nil {
			rep = c.beginSession(s, m.id, resp.Header.Get(HeaderSessionID), rep)
		}
	case resp.StatusCode/100 == 2:
		c.reviveGetStream(s)
	case resp.StatusCode == http.StatusBadRequest && sid != "" && c.sessionGone(ctx, sid, version):
		rep.release()
		s.end(sid)
		return sessionEnded(m.id, resp)
	}
	return rep.refusedWith(resp)
}

// beginSession records the session an initialize response opened: its id
// (from the POST's headers) and the version the server chose.
func (c *clientConn) beginSession(s *legacySession, id jsonrpc.ID, sid string, rep *reply) *reply {
	for i := 0; i < len(sid); i++ {
		if sid[i] < 0x21 || sid[i] > 0x7e {
			// It could not be sent back as it is; failing here is clearer
			// than the 400s every later request would get.
			rep.release()
			return failure(id, 0, "streamhttp: the server's Mcp-Session-Id is not made of visible ASCII characters")
		}
	}
	var res struct {
		ProtocolVersion string `json:"protocolVersion"`
	}
	json.Unmarshal(rep.resp.Result, &res)
	version := res.ProtocolVersion
	for i := 0; i < len(version); i++ {
		if version[i] < 0x21 || version[i] > 0x7e {
			version = "" // not something a header can carry
			break
		}
	}
	s.mu.Lock()
	s.id, s.version, s.ended = sid, version, false
	s.mu.Unlock()
	return rep
}

// readLegacyStream reads a request's event stream up to its response,
// delivering the server's requests and notifications. When the stream ends
// before the response, after the server gave an event id, it reconnects with
// GET and Last-Event-ID once the server's retry delay has passed (SSE
// polling, SEP-1699), and goes on reading there. The returned reply keeps
// the body of the connection the response came on.
func (c *clientConn) readLegacyStream(ctx context.Context, s *legacySession, id jsonrpc.ID, resp *http.Response) *reply {
	ev := newLegacyEvents(c.opts.MaxMessageSize)
	misses := 0
	for resumed := false; ; resumed = true {
		ev.reset(resp.Body)
		before := ev.events
		rep, err := c.readLegacyEvents(ctx, s, ev, id, resp)
		if rep != nil {
			if ctx.Err() != nil {
				resp.Body.Close()
				return nil
			}
			if resumed {
				// A GET that resumed the stream may be held open by the
				// server; what it sends after the response is not ours to
				// drain and drop.
				resp.Body.Close()
			} else {
				rep.rest = resp.Body
			}
			return rep
		}
		resp.Body.Close()
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, errEventTooLarge):
			return failure(id, resp.StatusCode, fmt.Sprintf("streamhttp: an event exceeds the limit of %d bytes", c.opts.MaxMessageSize))
		case ev.lastID == "" && err == io.EOF:
			return failure(id, resp.StatusCode, "streamhttp: the event stream ended before the response")
		case ev.lastID == "":
			return failure(id, resp.StatusCode, "streamhttp: the event stream broke before the response: "+err.Error()).because(err)
		}
		if ev.events > before {
			misses = 0
		}
		// Resume: wait as the server asked, then GET the stream from the
		// last event seen, until a connection opens or we give up.
		for resp = nil; resp == nil; {
			if misses++; misses > maxResumeAttempts {
				return failure(id, 0, fmt.Sprintf("streamhttp: the event stream ended before the response, and %d attempts to resume it failed", maxResumeAttempts))
			}
			if c.wait(ctx, backoff(ev.delay(), misses)) != nil {
				return nil
			}
			r, rep := c.resumeGET(ctx, s, id, ev.lastID)
			if rep != nil || ctx.Err() != nil {
				return rep
			}
			resp = r
		}
	}
}

// resumeGET opens the GET that resumes a request's stream. It returns the
// response when the stream opened, a final reply when resuming is
// pointless, and neither when another attempt may work.
func (c *clientConn) resumeGET(ctx context.Context, s *legacySession, id jsonrpc.ID, lastID string) (*http.Response, *reply) {
	sid, version, ended := s.snapshot()
	if ended {
		// The request went out on the session and may have been acted
		// on: its failure is not the session's refusal of it.
		return nil, failure(id, 0, "streamhttp: the event stream ended before the response, and the session has ended since")
	}
	resp, err := c.openGET(ctx, sid, version, lastID)
	if err != nil {
		if ctx.Err() == nil {
			c.opts.Logger.Debug("streamhttp: resuming an event stream failed", "err", err)
		}
		return nil, nil
	}
	if resp.StatusCode/100 == 2 && mediaType(resp.Header.Get("Content-Type")) == "text/event-stream" {
		return resp, nil
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if retryableStatus(resp.StatusCode) {
		return nil, nil
	}
	// A 404 here ends the call but not the session: see runGetStream.
	return nil, failure(id, resp.StatusCode, "streamhttp: the event stream ended before the response, and resuming it failed: HTTP "+resp.Status)
}

// retryableStatus reports whether a failed GET may succeed later.
func retryableStatus(code int) bool {
	return code/100 == 5 || code == http.StatusRequestTimeout || code == http.StatusTooManyRequests
}

// openGET sends a GET for an event stream: the session's standalone stream,
// or (with lastID) the resumption of one.
func (c *clientConn) openGET(ctx context.Context, sid, version, lastID string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header = c.legacyHeaders(acceptStream, sid, version)
	if lastID != "" {
		req.Header[canonLastEventID] = []string{lastID}
	}
	return c.opts.HTTPClient.Do(req)
}

// readLegacyEvents reads one connection of a request's stream up to the
// request's response. It returns the response, or the error that ended the
// connection (io.EOF at its end).
func (c *clientConn) readLegacyEvents(ctx context.Context, s *legacySession, ev *legacyEvents, id jsonrpc.ID, resp *http.Response) (*reply, error) {
	for {
		data, err := ev.next()
		if err != nil {
			return nil, err
		}
		m, _, derr := jsonrpc.DecodeMessage(data)
		if derr != nil {
			c.opts.Logger.Warn("streamhttp: dropping an event that is not a JSON-RPC message", "err", derr)
			continue
		}
		switch m := m.(type) {
		case *jsonrpc.Response:
			if m.ID == id || (!m.ID.IsValid() && m.Error != nil) {
				return c.ownResponse(id, m, data, resp), nil
			}
			c.routeResponse(ctx, s, m, data)
		case *jsonrpc.Request:
			c.deliver(ctx, data) // server requests and notifications alike
		}
	}
}

// routeResponse delivers a response that came on a stream other than its
// request's own, and ends the wait on that stream.
func (c *clientConn) routeResponse(ctx context.Context, s *legacySession, m *jsonrpc.Response, data []byte) {
	s.mu.Lock()
	lc := s.calls[m.ID]
	s.mu.Unlock()
	if lc == nil || !lc.claim() {
		c.opts.Logger.Warn("streamhttp: dropping a response to no request in flight", "id", m.ID.String())
		return
	}
	c.deliver(ctx, data)
	lc.cancel()
}

// startGetStream opens the session's GET stream, on which the server sends
// requests and notifications unrelated to any request of the client. It
// needs a session: without one the server could not tell whose stream it
// is.
//
// The returned channel, nil when no stream is started, is closed once the
// first GET has been written out or has failed.
func (c *clientConn) startGetStream(s *legacySession) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.id == "" || s.ended || s.stopGet != nil {
		return nil
	}
	return c.goGetStream(s, newLegacyEvents(c.opts.MaxMessageSize))
}

// reviveGetStream starts the GET stream again, from where it stopped, if
// it gave up: the server has just accepted a message, so it is back.
func (c *clientConn) reviveGetStream(s *legacySession) {
	// Counted before hasIdle is read, and read by the stream after it
	// stores hasIdle: either this message revives the stream, or the
	// stream sees it and does not give up (runGetStream).
	s.accepted.Add(1)
	if !s.hasIdle.Load() {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	ev := s.idleGet
	if ev == nil || s.id == "" || s.ended || s.stopGet != nil {
		return
	}
	s.idleGet = nil
	s.hasIdle.Store(false)
	c.opts.Logger.Debug("streamhttp: the server accepts messages again; reopening the session's GET stream", "lastEventID", ev.lastID)
	c.goGetStream(s, ev)
}

// goGetStream runs the session's GET stream, reading ev's stream on, in a
// goroutine of its own. s.mu is held.
func (c *clientConn) goGetStream(s *legacySession, ev *legacyEvents) <-chan struct{} {
	ctx, cancel := context.WithCancel(c.ctx)
	c.mu.Lock()
	if c.ctx.Err() != nil {
		c.mu.Unlock()
		cancel()
		return nil
	}
	c.wg.Add(1)
	c.mu.Unlock()
	s.stopGet = cancel
	sid, version := s.id, s.version
	sent := make(chan struct{})
	go func() {
		defer c.wg.Done()
		defer cancel()
		c.runGetStream(ctx, s, sid, version, ev, sent)
	}()
	return sent
}

// runGetStream keeps the GET stream open until ctx ends: when a connection
// drops it reconnects with Last-Event-ID after the server's retry delay,
// doubled after each failed attempt (backoff), and it gives up after
// maxResumeAttempts attempts in a row that bring no event, leaving ev to
// the next message the server accepts (reviveGetStream). 405 (or 404)
// means the server offers no GET stream.
func (c *clientConn) runGetStream(ctx context.Context, s *legacySession, sid, version string, ev *legacyEvents, sent chan struct{}) {
	var once sync.Once
	written := func() { once.Do(func() { close(sent) }) }
	defer written()
	var accepted int64 // s.accepted when the last attempt began
	for misses, first := 0, true; ; first = false {
		if !first {
			if misses > maxResumeAttempts {
				if !c.getGivesUp(ctx, s, ev, accepted) {
					// The server accepted a message meanwhile: it is
					// back, and the stream starts over.
					misses = 0
					continue
				}
				c.opts.Logger.Warn("streamhttp: giving up on the session's GET stream until the server accepts a message again", "attempts", maxResumeAttempts)
				return
			}
			if c.wait(ctx, backoff(ev.delay(), misses)) != nil {
				return
			}
		}
		gctx := ctx
		if first {
			gctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { written() }})
		}
		accepted = s.accepted.Load()
		resp, err := c.openGET(gctx, sid, version, ev.lastID)
		written()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			c.opts.Logger.Debug("streamhttp: opening the GET stream failed", "err", err)
			misses++
			continue
		}
		if resp.StatusCode/100 == 2 && mediaType(resp.Header.Get("Content-Type")) == "text/event-stream" {
			before := ev.events
			ev.reset(resp.Body)
			err := c.readGetEvents(ctx, s, ev)
			resp.Body.Close()
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, errEventTooLarge) {
				c.opts.Logger.Warn("streamhttp: an event on the GET stream exceeds the message size limit", "limit", c.opts.MaxMessageSize)
			}
			if ev.events > before {
				misses = 0 // the connection brought something: not a failure
			} else {
				misses++
			}
			continue
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		resp.Body.Close()
		switch {
		case resp.StatusCode == http.StatusMethodNotAllowed:
			c.opts.Logger.Debug("streamhttp: the server offers no GET stream (HTTP 405)")
			return
		case resp.StatusCode == http.StatusNotFound:
			// The session may have ended, but some servers route only
			// POST and answer GET with 404 whatever the session: the next
			// POST tells for sure, so the session is not ended here.
			c.opts.Logger.Debug("streamhttp: the server offers no GET stream (HTTP 404)")
			return
		case retryableStatus(resp.StatusCode):
			misses++
		default:
			c.opts.Logger.Warn("streamhttp: the server refused the GET stream", "status", resp.Status)
			return
		}
	}
}

// getGivesUp leaves the GET stream idle (ev, for reviveGetStream), unless
// the server accepted a message since the stream's last attempt began
// (accepted was s.accepted then), in which case it reports false. A stream
// that is no longer the session's (ctx ended) just ends.
func (c *clientConn) getGivesUp(ctx context.Context, s *legacySession, ev *legacyEvents, accepted int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ctx.Err() != nil {
		return true
	}
	// hasIdle is stored before accepted is read: a message accepted from
	// here on finds it, and waits for s.mu to revive the stream.
	s.idleGet = ev
	s.hasIdle.Store(true)
	if s.accepted.Load() != accepted {
		s.idleGet = nil
		s.hasIdle.Store(false)
		return false
	}
	// Still the session's stream: every change of stopGet cancels the
	// stream it replaces, under s.mu.
	s.stopGet = nil
	return true
}

// readGetEvents reads one connection of the GET stream, delivering what
// the server sends, until it ends.
func (c *clientConn) readGetEvents(ctx context.Context, s *legacySession, ev *legacyEvents) error {
	for {
		data, err := ev.next()
		if err != nil {
			return err
		}
		m, _, derr := jsonrpc.DecodeMessage(data)
		if derr != nil {
			c.opts.Logger.Warn("streamhttp: dropping an event that is not a JSON-RPC message", "err", derr)
			continue
		}
		switch m := m.(type) {
		case *jsonrpc.Response:
			c.routeResponse(ctx, s, m, data)
		case *jsonrpc.Request:
			c.deliver(ctx, data)
		}
	}
}

// closeLegacy ends the session, once, with a DELETE carrying its id: a
// courtesy that lets the server free it at once. It is best effort and
// bounded by deleteTimeout; 405 (the server does not let clients end
// sessions) and every other answer are fine.
func (c *clientConn) closeLegacy(s *legacySession) {
	s.mu.Lock()
	sid, version := s.id, s.version
	skip := s.closed || s.ended || sid == ""
	s.closed = true
	s.stopGetLocked()
	s.mu.Unlock()
	if skip {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), deleteTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, c.url, nil)
	if err != nil {
		return
	}
	req.Header = c.legacyHeaders(nil, sid, version)
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		c.opts.Logger.Debug("streamhttp: ending the session failed", "err", err)
		return
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}

// backoff is the wait before the attempt that follows misses failed
// attempts in a row to reconnect an event stream: the stream's delay d
// (the server's retry, or defaultRetryDelay), doubled for each failure
// after the first, up to maxBackoff, or d itself when the server asked for
// more. A stream that brings events has no misses and waits d alone, so a
// server that polls (SEP-1699) is not slowed down.
func backoff(d time.Duration, misses int) time.Duration {
	limit := max(d, maxBackoff)
	for i := 1; i < misses && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

// realWait waits d, or until ctx ends.
func realWait(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
