package streamhttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"sync"
	"time"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/internal/fairshare"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// This file serves legacy clients (2025-11-25 and earlier): initialize,
// the POSTs of a session, its GET stream and its DELETE, and the
// stateless legacy mode.

// speaks2026 reports whether a request belongs to 2026-07-28: it carries
// the _meta envelope, or its MCP-Protocol-Version header names a
// 2026-07-28 version. Such a request is served statelessly whatever else
// it carries (an Mcp-Session-Id, a method legacy clients use), so that
// initialize or ping sent the 2026-07-28 way get the same -32601 they
// always did.
func speaks2026(r *http.Request, msg *jsonrpc.Request) bool {
	// The header first: every 2026-07-28 client sends it, and reading it
	// spares the body a second scan on the hot path.
	return mcp.ProtocolVersion(protocolVersionHeader(r.Header)).Era() == mcp.EraModern || server.ClaimsEnvelope(msg)
}

// serveInitialize opens a legacy session (or, in stateless mode, only
// answers the handshake).
func (h *Handler) serveInitialize(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Request) {
	if h.sessions == nil { // stateless
		sess, res, err := h.s.Initialize(r.Context(), msg, nil)
		if err != nil {
			writeError(w, http.StatusBadRequest, msg.ID, asRPCError(err))
			return
		}
		sess.Close() // nothing is kept: every later request stands alone
		h.writeResult(w, msg.ID, res)
		return
	}
	if h.shutdown.closed() {
		shuttingDown(w, msg.ID)
		return
	}
	ctx := h.callerContext(r)
	caller := auth.CallerKey(ctx)
	if h.sessions.opts.MaxSessionsPerCaller <= 0 {
		caller = ""
	}
	evicted, err := h.sessions.reserve(caller)
	if evicted != nil {
		h.sessions.closeSession(evicted, "evicted: least recently used idle session of a caller at its limit")
	}
	switch {
	case errors.Is(err, errPoolFull):
		h.log.Warn("streamhttp: refusing initialize: the session limit is reached", "limit", h.sessions.opts.MaxSessions)
		writeError(w, http.StatusServiceUnavailable, msg.ID, wire.Internal("Service Unavailable: the limit of %d open sessions is reached; try again later", h.sessions.opts.MaxSessions))
		return
	case errors.Is(err, errCallerFull):
		h.log.Warn("streamhttp: refusing initialize: the caller's session limit is reached", "limit", h.sessions.opts.MaxSessionsPerCaller, "remote", r.RemoteAddr)
		writeError(w, http.StatusTooManyRequests, msg.ID, wire.Internal("Too Many Requests: this caller already has %d sessions, the limit per caller (SessionOptions.MaxSessionsPerCaller), and none of them is idle; end one with DELETE or try again later", h.sessions.opts.MaxSessionsPerCaller))
		return
	case errors.Is(err, errReserveOnly):
		var why *sessionRefusal
		errors.As(err, &why)
		reserveShare := fairshare.ReserveShare(h.sessions.opts.MaxSessionsPerCaller)
		h.log.Warn("streamhttp: refusing initialize: the rest of the session pool is kept for callers holding fewer sessions", "open", why.open, "limit", h.sessions.opts.MaxSessions, "held", why.held, "remote", r.RemoteAddr)
		writeError(w, http.StatusTooManyRequests, msg.ID, wire.Internal("Too Many Requests: %d of the server's %d sessions (SessionOptions.MaxSessions) are taken, and the rest is kept for callers with fewer than %d; this caller has %d and none of them is idle; end one with DELETE or try again later",
			why.open, h.sessions.opts.MaxSessions, reserveShare, why.held))
		return
	}
	ls := h.sessions.newSession(r, caller)
	sess, res, err := h.s.Initialize(ctx, msg, &server.SessionOptions{Notify: ls.notifyStandalone})
	if err != nil {
		h.sessions.unreserve(caller)
		writeError(w, http.StatusBadRequest, msg.ID, asRPCError(err))
		return
	}
	ls.sess = sess
	h.sessions.add(ls)
	ls.touch() // the idle clock runs from the start
	w.Header().Set(HeaderSessionID, ls.id)
	h.writeResult(w, msg.ID, res)
}

// writeResult writes a result as a JSON response.
func (h *Handler) writeResult(w http.ResponseWriter, id jsonrpc.ID, res any) {
	msg, status := encodeOutcome(id, res, nil, h.log)
	writeJSON(w, status, msg)
}

// legacyVersionOf returns the protocol version of a stateless legacy
// request: its MCP-Protocol-Version header, 2025-03-26 without one (as
// the specification says), or nil with the error to answer for a version
// the server does not serve.
func (h *Handler) legacyVersionOf(r *http.Request) (mcp.ProtocolVersion, *jsonrpc.Error) {
	v := mcp.ProtocolVersion(protocolVersionHeader(r.Header))
	if v == "" {
		v = mcp.Version20250326
	}
	for _, sv := range h.s.SupportedVersions() {
		if sv == v && v.Era() == mcp.EraLegacy {
			return v, nil
		}
	}
	return "", wire.InvalidRequest(
		"Bad Request: unsupported %s %s (supported protocol versions: %v)", HeaderProtocolVersion, echoHeader(string(v)), h.s.SupportedVersions())
}

// serveStateless serves a legacy request without a session.
func (h *Handler) serveStateless(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Request) {
	v, verr := h.legacyVersionOf(r)
	if verr != nil {
		writeError(w, http.StatusBadRequest, msg.ID, verr)
		return
	}
	sess := h.s.StatelessSession(v)
	if msg.IsNotification() {
		sess.Handle(r.Context(), msg, nil, nil)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	rs := newResponder(w, r, msg.ID, acceptsEventStream(r.Header.Values("Accept")), h.keepAlive, h.writeTime, h.log)
	rs.inBand = true
	res, err := sess.Handle(h.callerContext(r), msg, rs.notify, nil) // nil: no back-channel, handlers that ask are told so
	rs.finish(res, err)
}

// serveSessionPost serves a POST of an open session: a request, a
// notification, or the client's answer to a server-to-client request.
func (h *Handler) serveSessionPost(w http.ResponseWriter, r *http.Request, ls *serverSession, m jsonrpc.Message) {
	switch m := m.(type) {
	case *jsonrpc.Response:
		if e := ls.versionMismatch(r); e != nil {
			writeError(w, http.StatusBadRequest, jsonrpc.ID{}, e)
			return
		}
		if !ls.deliver(m) {
			writeError(w, http.StatusBadRequest, jsonrpc.ID{}, wire.InvalidRequest("Bad Request: this session sent no request with id %s", m.ID.Raw()))
			return
		}
		ls.touch()
		w.WriteHeader(http.StatusAccepted)
	case *jsonrpc.Request:
		if e := ls.versionMismatch(r); e != nil {
			writeError(w, http.StatusBadRequest, m.ID, e)
			return
		}
		if m.IsNotification() {
			if m.Method == jsonrpc.CancelMethod {
				ls.cancelRequest(m.Params)
			}
			ls.sess.Handle(r.Context(), m, nil, nil)
			ls.touch()
			w.WriteHeader(http.StatusAccepted)
			return
		}
		h.serveSessionRequest(w, r, ls, m)
	}
}

// sessionRequestKey is the context key of the *sessionRequest a handler
// serves; see CloseEventStream.
type sessionRequestKey struct{}

// serveSessionRequest serves one request of a session. The handler runs
// on its own goroutine, so that the POST can end before the request does:
// when the connection drops, or the handler closes it (CloseEventStream),
// the request goes on and its events wait for the client to resume the
// stream.
func (h *Handler) serveSessionRequest(w http.ResponseWriter, r *http.Request, ls *serverSession, msg *jsonrpc.Request) {
	if !ls.acquire() {
		h.unknownSession(w, msg.ID)
		return
	}
	// The request's context keeps the values of the HTTP request's (the
	// caller's identity, for one) but not its cancellation: a dropped
	// connection is not a cancellation under 2025-11-25. It ends with
	// the session, a notifications/cancelled, or an abandoned stream.
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(h.callerContext(r)))
	if !ls.track(msg.ID, cancel) {
		cancel(nil)
		ls.release()
		writeError(w, http.StatusBadRequest, msg.ID, wire.InvalidRequest("Bad Request: a request with id %s is already in progress on this session", msg.ID.Raw()))
		return
	}
	stop := context.AfterFunc(ls.ctx, func() { cancel(errSessionEnded) })
	q := &sessionRequest{
		ls:       ls,
		id:       msg.ID,
		conn:     newHTTPConn(w, h.keepAlive, h.writeTime),
		streamOK: acceptsEventStream(r.Header.Values("Accept")),
		cancel:   cancel,
		retry:    h.sessions.opts.Retry,
	}
	ctx = context.WithValue(ctx, sessionRequestKey{}, q)
	go func() {
		defer ls.release()
		defer stop()
		defer cancel(nil)
		res, err := h.handleGuarded(ctx, ls, msg, q)
		// The id is free before the client can read the answer: a
		// client that sends its next request the moment it has one must
		// not find the id still in progress.
		ls.untrack(msg.ID)
		q.finish(res, err, h)
	}()
	waitConn(r.Context(), q.conn, q.clientLeft)
}

// handleGuarded serves msg on ls, turning a panic into an internal error:
// the handler runs on a goroutine of its own, where net/http's recovery
// does not reach.
func (h *Handler) handleGuarded(ctx context.Context, ls *serverSession, msg *jsonrpc.Request, q *sessionRequest) (res any, err error) {
	defer func() {
		if v := recover(); v != nil {
			h.log.Error("streamhttp: handler panicked", "method", msg.Method, "panic", v, "stack", string(debug.Stack()))
			res, err = nil, wire.Internal("")
		}
	}()
	return ls.sess.Handle(ctx, msg, q.notify, q.call)
}

// sessionRequest is one request of a session being served. Its answer is
// JSON until the first event (a notification, a server-to-client
// request); from then on the request has its own resumable event stream,
// started on the POST's connection.
type sessionRequest struct {
	ls       *serverSession
	id       jsonrpc.ID
	conn     *httpConn // the POST's
	streamOK bool      // the client accepts an event stream
	cancel   context.CancelCauseFunc
	retry    time.Duration

	mu   sync.Mutex
	st   *eventStream // from the first event on
	done bool         // the answer is decided
}

// stream returns the request's event stream, starting it on the POST's
// connection the first time: the priming event first, so that the client
// holds an id to resume from.
func (q *sessionRequest) stream() (*eventStream, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.st != nil:
		return q.st, nil
	case q.done:
		return nil, errResponded
	case !q.streamOK:
		return nil, errNoEventStream
	}
	select {
	case <-q.conn.released:
		return nil, errClientGone // before any id: there is nothing to resume
	default:
	}
	st := q.ls.newStream(q)
	st.mu.Lock()
	if st.ended { // the session ended meanwhile
		q.conn.release()
	} else {
		q.conn.startSSE()
		err := q.conn.writeEvent(appendPriming(nil, st.eventID(0), q.retry), false)
		st.attachLocked(q.conn)
		if err != nil {
			st.detachLocked(q.conn)
		}
	}
	st.mu.Unlock()
	q.st = st
	return st, nil
}

// clientLeft is called when the POST's connection drops. Before any event
// the client holds no id to resume from, so the request is abandoned;
// afterwards the stream waits for the client to resume it.
func (q *sessionRequest) clientLeft() {
	q.mu.Lock()
	st := q.st
	if st == nil {
		q.done = true
		q.conn.release()
		q.mu.Unlock()
		q.cancel(errClientGone)
		return
	}
	q.mu.Unlock()
	st.mu.Lock()
	st.detachLocked(q.conn)
	st.mu.Unlock()
}

// notify is the request's server.NotifyFunc: progress and log messages go
// on the request's own stream.
func (q *sessionRequest) notify(ctx context.Context, method string, params any) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !q.streamOK {
		return nil // the client takes JSON only: notifications have nowhere to go
	}
	msg, err := encodeNotification(method, params)
	if err != nil {
		return err
	}
	st, err := q.stream()
	if err != nil {
		return err
	}
	return st.emit(msg, false)
}

// call is the request's server.CallFunc: a server-to-client request goes
// on the request's own stream (the specification ties such requests to
// the request they serve), and its answer comes back as a POST of the
// session, which deliver routes here.
func (q *sessionRequest) call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	if !q.streamOK {
		return nil, wire.InvalidRequest(
			"Cannot send %s: the client did not accept text/event-stream for this request, so no request can reach it", method)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	id, answer := q.ls.newCall()
	defer q.ls.dropCall(id)
	msg, err := jsonrpc.EncodeMessage(&jsonrpc.Request{ID: id, Method: method, Params: params})
	if err != nil {
		return nil, err
	}
	st, err := q.stream()
	if err != nil {
		return nil, err
	}
	if err := st.emit(msg, false); err != nil {
		return nil, err
	}
	select {
	case resp := <-answer:
		if resp.Error != nil {
			return nil, resp.Error
		}
		return resp.Result, nil
	case <-ctx.Done():
		// Tell the client to stop asking its user (best effort: the
		// stream may have ended with the request).
		if note, err := encodeNotification(jsonrpc.CancelMethod, &mcp.CancelledNotificationParams{RequestID: id, Reason: context.Cause(ctx).Error()}); err == nil {
			st.emit(note, false)
		}
		return nil, ctx.Err()
	}
}

// finish sends the request's answer: as JSON when no event came before
// it, else as the last event of its stream (which a client that lost the
// connection can still fetch with Last-Event-ID).
func (q *sessionRequest) finish(res any, err error, h *Handler) {
	msg, status := encodeOutcome(q.id, res, err, h.log)
	if status != http.StatusInternalServerError {
		status = http.StatusOK // legacy errors travel in-band: 404 would mean "session gone"
	}
	q.mu.Lock()
	if st := q.st; st != nil {
		q.done = true
		q.mu.Unlock()
		st.emit(msg, true)
		return
	}
	defer q.mu.Unlock()
	if q.done {
		return // the client left before any event
	}
	q.done = true
	if h.writeTime > 0 {
		_ = q.conn.rc.SetWriteDeadline(writeDeadline(h.writeTime))
	}
	writeJSON(q.conn.w, status, msg)
	q.conn.release()
}

// errNoEventStream: the client does not accept an event stream for this
// request, so events have nowhere to go.
var errNoEventStream = fmt.Errorf("streamhttp: the client does not accept an event stream for this request")

// CloseEventStream closes the HTTP connection that carries the event
// stream of the request being served with ctx, without ending the stream
// or the request: the client reconnects after the advised retry delay with
// a GET and Last-Event-ID, and gets every event sent meanwhile, the
// response included (SEP-1699 polling). A long-running handler uses it so
// that no connection stays open for the whole request. If the request
// has not sent an event yet, its stream starts first, so that the client
// holds an id to resume from.
//
// It reports false, and does nothing, when ctx is not that of a request
// of a stateful legacy session served by this package (2026-07-28
// requests cannot be resumed: closing their stream cancels them), or when
// the request has answered or its client does not accept event streams.
func CloseEventStream(ctx context.Context) bool {
	q, _ := ctx.Value(sessionRequestKey{}).(*sessionRequest)
	if q == nil {
		return false
	}
	st, err := q.stream()
	if err != nil {
		return false
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.ended {
		return false
	}
	if c := st.conn; c != nil {
		st.detachLocked(c)
	}
	return true
}

// EndSessions ends every legacy session of h, a *Handler made by
// NewHandler: their requests in progress are cancelled and their streams
// end. Clients that come back get 404 and initialize again; the handler
// goes on serving. For any other http.Handler, including middleware
// wrapped around a *Handler, it does nothing, which is how a shutdown got
// lost.
//
// Deprecated: use (*Handler).Shutdown, which cannot be handed a wrapper,
// also ends listen streams, refuses new requests and waits for the ones in
// progress.
func EndSessions(h http.Handler) {
	if hh, ok := h.(*Handler); ok {
		hh.endSessions("server shutting down")
	}
}

// serveGet serves a GET: a session's standalone stream, or the resumption
// of one of its streams.
func (h *Handler) serveGet(w http.ResponseWriter, r *http.Request) {
	ls := h.sessionOf(w, r, "GET")
	if ls == nil {
		return
	}
	if !acceptsEventStream(r.Header.Values("Accept")) {
		writeError(w, http.StatusNotAcceptable, jsonrpc.ID{}, wire.InvalidRequest("Not Acceptable: a GET answers with an event stream; send Accept: text/event-stream"))
		return
	}
	if !h.shutdown.enter() {
		shuttingDown(w, jsonrpc.ID{})
		return
	}
	defer h.shutdown.leave()
	if !ls.acquire() {
		h.unknownSession(w, jsonrpc.ID{})
		return
	}
	defer ls.release()
	c := newHTTPConn(w, h.keepAlive, h.writeTime)
	retry := h.sessions.opts.Retry

	var st *eventStream
	if last := r.Header.Get(HeaderLastEventID); last != "" {
		num, seq, ok := parseEventID(last)
		if ok {
			st = ls.stream(num)
		}
		if st == nil {
			writeError(w, http.StatusBadRequest, jsonrpc.ID{}, wire.InvalidRequest(
				"Bad Request: %s %s names no stream of this session that can be resumed (its events are no longer kept, or it never existed)", HeaderLastEventID, echoHeader(last)))
			return
		}
		st.mu.Lock()
		if seq > st.seq {
			st.mu.Unlock()
			writeError(w, http.StatusBadRequest, jsonrpc.ID{}, wire.InvalidRequest(
				"Bad Request: %s %s names an event this session never sent", HeaderLastEventID, echoHeader(last)))
			return
		}
		events, gap := ls.keptAfter(st, seq)
		if gap {
			h.log.Warn("streamhttp: resuming a stream whose events are no longer all kept; some are lost", "lastEventID", last)
		}
		c.startSSE()
		err := c.write(appendPriming(nil, last, retry))
		for _, ev := range events {
			if err == nil {
				err = c.write(ev)
			}
		}
		switch {
		case st.ended:
			// Everything is replayed; a request's stream ends with its
			// response, and one of a closed session has nothing to add.
			st.mu.Unlock()
			return
		case err != nil:
			st.mu.Unlock()
			return
		}
		if st.num == 0 {
			st.opened = true
		}
		st.attachLocked(c)
		st.mu.Unlock()
	} else {
		st = ls.standalone
		st.mu.Lock()
		if st.conn != nil {
			st.mu.Unlock()
			writeError(w, http.StatusConflict, jsonrpc.ID{}, wire.InvalidRequest("%s", "Conflict: this session already has a GET stream open; resume it with "+HeaderLastEventID+" or close it first"))
			return
		}
		if st.ended {
			st.mu.Unlock()
			h.unknownSession(w, jsonrpc.ID{})
			return
		}
		c.startSSE()
		err := c.write(appendPriming(nil, st.eventID(st.seq), retry))
		if err != nil {
			st.mu.Unlock()
			return
		}
		st.opened = true
		st.attachLocked(c)
		st.mu.Unlock()
	}
	// A stream opened with a bearer token ends when the token expires:
	// the token was checked only when the stream opened. The client's
	// reconnection then meets the token check, whose 401 says why
	// (RFC 6750 invalid_token), and gets the events it missed once it
	// presents a fresh token.
	ctx := r.Context()
	if info := auth.InfoFrom(ctx); info != nil && !info.Expiry.IsZero() {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, info.Expiry)
		defer cancel()
	}
	// Where the middleware checks the token again, the stream ends as
	// soon as a check refuses it (auth.Revoked), with the same effect.
	if revoked := auth.Revoked(ctx); revoked != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go func() {
			select {
			case <-revoked:
				cancel()
			case <-ctx.Done():
			}
		}()
	}
	waitConn(ctx, c, func() {
		st.mu.Lock()
		st.detachLocked(c)
		st.mu.Unlock()
	})
}

// serveDelete ends a session.
func (h *Handler) serveDelete(w http.ResponseWriter, r *http.Request) {
	ls := h.sessionOf(w, r, "DELETE")
	if ls == nil {
		return
	}
	h.sessions.closeSession(ls, "deleted by the client")
	w.WriteHeader(http.StatusOK)
}

// sessionOf returns the session a GET or DELETE names, or writes the
// answer to a request that names none it can use: 405 without a session
// id (where 2026-07-28 clients land), 404 for an unknown one, 400 for a
// version that is not the session's.
func (h *Handler) sessionOf(w http.ResponseWriter, r *http.Request, method string) *serverSession {
	id := r.Header.Get(HeaderSessionID)
	if h.sessions == nil || id == "" {
		h.methodNotAllowed(w)
		return nil
	}
	ls := h.sessions.lookup(id, r)
	if ls == nil {
		h.unknownSession(w, jsonrpc.ID{})
		return nil
	}
	if e := ls.versionMismatch(r); e != nil {
		writeError(w, http.StatusBadRequest, jsonrpc.ID{}, e)
		return nil
	}
	return ls
}

// unknownSession answers a request for a session that does not exist (or
// no longer does): 404 tells a legacy client to initialize again.
func (h *Handler) unknownSession(w http.ResponseWriter, id jsonrpc.ID) {
	writeError(w, http.StatusNotFound, id, wire.InvalidRequest("Not Found: the session does not exist or has ended; send initialize to start a new one"))
}
