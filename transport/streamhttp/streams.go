package streamhttp

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// This file is the resumable event streams of legacy sessions.
//
// A session has one standalone stream (number 0: what a GET carries) and
// one stream per request that answered with an event stream (numbers 1,
// 2, ...: what the request's POST carries). A stream is not a connection:
// every event is numbered, kept in the session's replay buffer and written
// to the stream's connection if it has one. A connection can drop, or the
// server can close it (SEP-1699 polling), and a GET with Last-Event-ID then
// becomes the stream's connection: it first gets the kept events after that
// id, then the live ones. Event ids are "<stream>-<seq>", so that the id a
// client resumes from names its stream: the specification forbids
// replaying on one stream the events of another.

// httpConn is one HTTP response that carries an event stream: a POST's
// or a GET's. Its ServeHTTP waits until the connection is released, and
// nothing writes to it afterwards. Whoever owns the connection (the
// request, then its stream) serialises writes and release under its lock.
type httpConn struct {
	w        http.ResponseWriter
	rc       *http.ResponseController
	released chan struct{} // closed by release: ServeHTTP may return
	failed   bool          // a write failed: the client is gone

	keepAlive time.Duration
	writeTime time.Duration // HandlerOptions.WriteTimeout: the deadline of each write
	quiet     *time.Timer   // fires when the stream has been quiet for keepAlive
}

func newHTTPConn(w http.ResponseWriter, keepAlive, writeTime time.Duration) *httpConn {
	return &httpConn{w: w, rc: http.NewResponseController(w), released: make(chan struct{}), keepAlive: keepAlive, writeTime: writeTime}
}

// startSSE sends the headers of an event stream.
func (c *httpConn) startSSE() {
	h := c.w.Header()
	h["Content-Type"] = sseContentType
	h["Cache-Control"] = noCache
	h["X-Accel-Buffering"] = noAccelBuffering
	// A stream lasts as long as it has something to say: the server's
	// WriteTimeout, meant for whole responses, must not cut it.
	_ = c.rc.SetWriteDeadline(time.Time{})
	c.w.WriteHeader(http.StatusOK)
}

// write writes b and flushes it, within WriteTimeout.
func (c *httpConn) write(b []byte) error { return c.writeEvent(b, true) }

// writeEvent writes b, within WriteTimeout, flushing it when flush is set.
// An event written unflushed goes with the next flushed one, or with the
// end of the response when the connection is released: the priming event
// (an event always follows it at once) and the final one (net/http flushes
// it together with the end of the chunked body). Each flush is a write
// system call, the larger part of what an event costs.
func (c *httpConn) writeEvent(b []byte, flush bool) error {
	if c.failed {
		return errConnFailed
	}
	// Renewed per write: a stream that is read lasts; one whose client
	// stopped reading fails here, and the session's stream detaches from
	// the connection as from any dropped one.
	_ = c.rc.SetWriteDeadline(writeDeadline(c.writeTime))
	if _, err := c.w.Write(b); err != nil {
		c.failed = true
		return err
	}
	if !flush {
		return nil
	}
	if err := c.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		c.failed = true
		return err
	}
	if c.quiet != nil {
		c.quiet.Reset(c.keepAlive)
	}
	return nil
}

// release lets the connection's ServeHTTP return. It is called once, by
// the owner, under the owner's lock.
func (c *httpConn) release() {
	select {
	case <-c.released:
		return
	default:
	}
	if c.quiet != nil {
		c.quiet.Stop()
	}
	close(c.released)
}

var errConnFailed = errors.New("streamhttp: the connection failed")

// eventStream is one resumable stream of a legacy session.
type eventStream struct {
	ls  *serverSession
	num uint64
	req *sessionRequest // the request the stream answers; nil for the standalone stream

	mu     sync.Mutex // orders the events: held while one is numbered, kept and written
	seq    uint64     // the last event's sequence number
	ended  bool       // the last event is sent (the response; or the session ended)
	opened bool       // standalone stream: a GET has opened it, so its events are kept
	conn   *httpConn  // where events are written; nil while no connection carries the stream
	grace  *time.Timer

	// Under ls.mu: the replay buffer's bookkeeping.
	kept     int  // events of this stream in the buffer
	finished bool // ended, as seen from the buffer: the stream goes when its last kept event does
}

// eventID is the SSE id of the stream's event seq.
func (st *eventStream) eventID(seq uint64) string {
	return strconv.FormatUint(st.num, 10) + "-" + strconv.FormatUint(seq, 10)
}

// parseEventID splits an event id made by eventID.
func parseEventID(id string) (stream, seq uint64, ok bool) {
	a, b, found := strings.Cut(id, "-")
	if !found {
		return 0, 0, false
	}
	stream, err1 := strconv.ParseUint(a, 10, 64)
	seq, err2 := strconv.ParseUint(b, 10, 64)
	return stream, seq, err1 == nil && err2 == nil
}

// emit sends msg as the stream's next event: numbered, kept for replay and
// written to the connection, if there is one. An event sent while no
// connection carries the stream waits in the buffer for the client to
// resume. final marks the response, after which the stream takes nothing
// more and its connection is released.
func (st *eventStream) emit(msg []byte, final bool) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.emitLocked(msg, final)
}

func (st *eventStream) emitLocked(msg []byte, final bool) error {
	if st.ended {
		return errResponded
	}
	st.seq++
	ev := appendIDEvent(make([]byte, 0, len(msg)+len(eventPrefix)+len(eventSuffix)+24), st.eventID(st.seq), msg)
	st.ls.keep(st, st.seq, ev)
	if final {
		st.ended = true
		st.ls.streamEnded(st)
		st.stopGraceLocked()
	}
	c := st.conn
	if c == nil {
		return nil
	}
	if err := c.writeEvent(ev, !final); err != nil || final {
		st.detachLocked(c)
	}
	return nil
}

// attachLocked makes c the stream's connection. A connection it had is
// released: the client that resumes on another connection has evidently
// lost that one.
func (st *eventStream) attachLocked(c *httpConn) {
	if old := st.conn; old != nil && old != c {
		old.release()
	}
	st.conn = c
	st.stopGraceLocked()
	if c.keepAlive > 0 && c.quiet == nil {
		c.quiet = time.NewTimer(c.keepAlive)
		go st.keepAliveLoop(c)
	}
}

// detachLocked releases c if it still carries the stream. A request's
// stream left without a connection gets the session's resume window to
// be resumed; when it passes with no GET carrying the stream, the request
// is cancelled, since nobody is left to read its answer.
func (st *eventStream) detachLocked(c *httpConn) {
	if st.conn != c {
		return
	}
	st.conn = nil
	c.release()
	if st.ended || st.req == nil {
		return
	}
	window := st.ls.store.opts.ResumeWindow
	if window < 0 {
		st.req.cancel(errStreamAbandoned)
		return
	}
	st.stopGraceLocked()
	var t *time.Timer
	t = time.AfterFunc(window, func() {
		st.mu.Lock()
		expired := st.grace == t && st.conn == nil && !st.ended
		st.mu.Unlock()
		if expired {
			st.req.cancel(errStreamAbandoned)
		}
	})
	st.grace = t
}

func (st *eventStream) stopGraceLocked() {
	if st.grace != nil {
		st.grace.Stop()
		st.grace = nil
	}
}

// closeLocked ends the stream because its session ended.
func (st *eventStream) closeLocked() {
	st.ended = true
	st.stopGraceLocked()
	if c := st.conn; c != nil {
		st.conn = nil
		c.release()
	}
}

// keepAliveLoop sends a comment whenever c has been quiet for its
// keep-alive interval (every write restarts the quiet timer), for as long
// as c carries the stream.
func (st *eventStream) keepAliveLoop(c *httpConn) {
	for {
		select {
		case <-c.released:
			return
		case <-c.quiet.C:
			st.mu.Lock()
			if st.conn != c {
				st.mu.Unlock()
				return
			}
			if err := c.write(keepAlive); err != nil {
				st.detachLocked(c)
			}
			st.mu.Unlock()
		}
	}
}

// Why a session request was cancelled, for its handler (context.Cause).
var (
	errStreamAbandoned = errors.New("streamhttp: the request's event stream lost its connection and was not resumed")
	errClientGone      = errors.New("streamhttp: the client closed the request's connection before any event")
	errSessionEnded    = errors.New("streamhttp: the session ended")
	errCancelled       = errors.New("streamhttp: the client cancelled the request")
)

// waitConn blocks until c is released, or the client closes the
// connection (then leave is called, which must release c if it still
// carries a stream).
func waitConn(ctx context.Context, c *httpConn, leave func()) {
	select {
	case <-c.released:
	case <-ctx.Done():
		leave()
		<-c.released
	}
}
