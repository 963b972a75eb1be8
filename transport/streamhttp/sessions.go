package streamhttp

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/internal/fairshare"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// Defaults of SessionOptions.
const (
	// DefaultMaxSessions bounds the legacy sessions open at once.
	DefaultMaxSessions = 1000
	// DefaultMaxSessionsPerCaller bounds the legacy sessions one caller
	// (principal, else client address) holds at once: a tenth of the
	// default pool, so that one client cannot fill it.
	DefaultMaxSessionsPerCaller = 100
	// DefaultIdleTimeout is how long a legacy session may go without a
	// request and without an open stream before it is closed.
	DefaultIdleTimeout = 10 * time.Minute
	// DefaultResumeWindow is how long a request whose event stream lost
	// its connection keeps running, waiting for the client to resume the
	// stream.
	DefaultResumeWindow = 30 * time.Second
	// DefaultReplayBytes bounds the events a legacy session keeps for
	// clients that resume a stream.
	DefaultReplayBytes = 1 << 20
	// DefaultRetry is the reconnection delay the handler advises on the
	// event streams of legacy sessions.
	DefaultRetry = time.Second
)

// SessionOptions configures how the handler serves legacy clients (MCP
// 2025-11-25, 2025-06-18 and 2025-03-26), which open a session with
// initialize. It has no effect on 2026-07-28 requests, and none at all when
// the server serves no legacy version. A nil *SessionOptions means
// defaults.
type SessionOptions struct {
	// MaxSessions bounds the sessions open at once, so that clients that
	// initialize and never come back cannot exhaust the server's memory.
	// An initialize over the bound is answered with 503 Service
	// Unavailable and a JSON-RPC error saying so; open sessions are not
	// touched. Zero or negative means DefaultMaxSessions.
	MaxSessions int

	// MaxSessionsPerCaller bounds the sessions (open, and being opened)
	// of one caller, its principal when the request is authenticated
	// ([auth.InfoFrom]), else its client address, once the pool is under
	// pressure: three quarters of MaxSessions open. Below that a caller
	// may hold more, so that the clients behind one proxy or NAT (one
	// address) are not held to one client's share while there is room.
	// Under pressure, an initialize from a caller at its bound first closes
	// that caller's least recently used idle session (no request in
	// progress, no open stream); when it has none, the initialize is
	// answered with 429 Too Many Requests and a JSON-RPC error naming the
	// limit. So one client that opens sessions in a loop, or holds them
	// all busy, takes at most three quarters of the pool and recycles its
	// own beyond that; the last quarter stays for the others.
	// Zero means DefaultMaxSessionsPerCaller; negative, or a value not
	// below MaxSessions, means no bound per caller.
	MaxSessionsPerCaller int

	// IdleTimeout closes a session that has had no request in progress and
	// no open stream for this long: legacy clients often leave without the
	// DELETE that ends their session. Zero means DefaultIdleTimeout;
	// negative keeps idle sessions until they are deleted.
	IdleTimeout time.Duration

	// ResumeWindow is how long a request keeps running after the
	// connection carrying its event stream dropped (or the handler closed
	// it with CloseEventStream), waiting for the client to resume the
	// stream with a GET and Last-Event-ID. The specification asks servers
	// not to take a dropped connection for a cancellation; a window bounds
	// what a client that never comes back costs. When it passes, the
	// request's context is cancelled. A request that has sent no event
	// (its answer would be plain JSON) has no id to resume from and is
	// cancelled as soon as its connection drops. Zero means
	// DefaultResumeWindow; negative cancels at once, as 2026-07-28 does.
	ResumeWindow time.Duration

	// ReplayBytes bounds the events each session keeps for clients that
	// resume a stream; the oldest go first, and the newest is always kept.
	// Zero means DefaultReplayBytes; negative keeps none, so streams
	// cannot be resumed.
	ReplayBytes int

	// Retry is the reconnection delay advised in the retry field of each
	// event stream's first event: how long a client waits before it
	// resumes a stream whose connection closed. Zero means DefaultRetry.
	Retry time.Duration

	// Stateless serves legacy clients without sessions, for deployments
	// where any instance may receive any POST: initialize is answered
	// without Mcp-Session-Id, and each legacy request is served on its own
	// with the version its MCP-Protocol-Version header names (2025-03-26
	// when it has none, as the specification says). There is nothing to
	// resume, and no back-channel: a handler that asks the client
	// (elicitation, sampling, roots) gets an error that says so. GET and
	// DELETE are answered with 405.
	Stateless bool
}

// resolved returns o with its defaults filled in.
func (o *SessionOptions) resolved() SessionOptions {
	var r SessionOptions
	if o != nil {
		r = *o
	}
	if r.MaxSessions <= 0 {
		r.MaxSessions = DefaultMaxSessions
	}
	switch {
	case r.MaxSessionsPerCaller == 0:
		r.MaxSessionsPerCaller = min(DefaultMaxSessionsPerCaller, r.MaxSessions)
	case r.MaxSessionsPerCaller < 0:
		r.MaxSessionsPerCaller = 0 // no bound
	}
	if r.MaxSessionsPerCaller >= r.MaxSessions {
		// A share as large as the pool bounds nothing: the pool's own
		// limit (503, open sessions untouched) speaks instead.
		r.MaxSessionsPerCaller = 0
	}
	if r.IdleTimeout == 0 {
		r.IdleTimeout = DefaultIdleTimeout
	}
	if r.ResumeWindow == 0 {
		r.ResumeWindow = DefaultResumeWindow
	}
	if r.ReplayBytes == 0 {
		r.ReplayBytes = DefaultReplayBytes
	}
	if r.Retry <= 0 {
		r.Retry = DefaultRetry
	}
	return r
}

// sessionStore holds the open legacy sessions of one handler.
type sessionStore struct {
	h    *Handler
	opts SessionOptions

	mu       sync.Mutex
	byID     map[string]*serverSession
	reserved int // initialize requests being served, counted against MaxSessions
	callers  map[string]*callerSessions

	uses atomic.Uint64 // orders sessions by last use, for eviction
}

// callerSessions is what one caller holds: n counts its open sessions and
// its initializes being served, open only the former.
type callerSessions struct {
	n    int
	open map[*serverSession]struct{}
}

func newSessionStore(h *Handler, opts SessionOptions) *sessionStore {
	return &sessionStore{h: h, opts: opts, byID: make(map[string]*serverSession), callers: make(map[string]*callerSessions)}
}

// Why reserve refuses a session.
var (
	errPoolFull    = errors.New("the session limit is reached")
	errCallerFull  = errors.New("the caller's session limit is reached")
	errReserveOnly = errors.New("the rest of the session pool is kept for callers holding fewer sessions")
)

// sessionRefusal is reserve's error: which limit refused the session, and what
// the pool and the caller held then, for the message.
type sessionRefusal struct {
	limit      error // errPoolFull, errCallerFull or errReserveOnly
	open, held int
}

func (r *sessionRefusal) Error() string { return r.limit.Error() }
func (r *sessionRefusal) Unwrap() error { return r.limit }

// reserve claims room for one more session of caller. A caller at its
// limit (its share under pressure, or its reserve share once the pool is
// into its last eighth) first gives up its least recently used idle
// session (returned as evicted, for the caller of reserve to close); the
// error says which limit refused the session when none could be made.
func (s *sessionStore) reserve(caller string) (evicted *serverSession, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cs := s.callers[caller]
	bounded := caller != "" && s.opts.MaxSessionsPerCaller > 0
	held := 0
	if bounded && cs != nil {
		held = cs.n
	}
	// Shares apply under pressure only: below three quarters of the pool
	// a caller may hold more than its share, as the many clients behind
	// one proxy (one address) do; above it, no caller takes more. Sessions
	// being created count: a burst of initializes is pressure too.
	open := len(s.byID) + s.reserved
	pressure := open >= s.opts.MaxSessions-s.opts.MaxSessions/4
	atShare := bounded && pressure && held >= s.opts.MaxSessionsPerCaller
	// And the last eighth is kept for callers holding (almost) nothing, so
	// that callers each at their share do not fill the pool together.
	reserveOnly := bounded && fairshare.Refused(held, s.opts.MaxSessionsPerCaller, open, s.opts.MaxSessions)
	if atShare || reserveOnly {
		if evicted = cs.leastRecentlyUsedIdle(); evicted != nil {
			s.forgetLocked(evicted)
			atShare, reserveOnly = false, false
		}
	}
	if len(s.byID)+s.reserved >= s.opts.MaxSessions {
		return evicted, &sessionRefusal{errPoolFull, open, held}
	}
	if atShare {
		return nil, &sessionRefusal{errCallerFull, open, held}
	}
	if reserveOnly {
		return nil, &sessionRefusal{errReserveOnly, open, held}
	}
	s.reserved++
	if bounded {
		// Looked up again: an eviction that took the caller's count to 0
		// dropped its entry.
		if cs = s.callers[caller]; cs == nil {
			cs = &callerSessions{open: make(map[*serverSession]struct{})}
			s.callers[caller] = cs
		}
		cs.n++
	}
	return evicted, nil
}

// leastRecentlyUsedIdle returns the open session with no request in
// progress and no stream open that was used longest ago, or nil.
func (cs *callerSessions) leastRecentlyUsedIdle() *serverSession {
	var lru *serverSession
	var lruUse uint64
	for ls := range cs.open {
		ls.mu.Lock()
		idle, used := !ls.closed && ls.active == 0, ls.lastUse
		ls.mu.Unlock()
		if idle && (lru == nil || used < lruUse) {
			lru, lruUse = ls, used
		}
	}
	return lru
}

// unreserve gives back a reservation of caller that did not become a
// session.
func (s *sessionStore) unreserve(caller string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reserved-- // a failed initialize gives its place in the pool back
	if cs := s.callers[caller]; cs != nil {
		if cs.n--; cs.n == 0 { // and in its caller's share
			delete(s.callers, caller)
		}
	}
}

// add turns a reservation into the open session ls.
func (s *sessionStore) add(ls *serverSession) {
	s.mu.Lock()
	s.reserved--
	s.byID[ls.id] = ls
	if cs := s.callers[ls.callerKey]; cs != nil {
		cs.open[ls] = struct{}{}
	}
	s.mu.Unlock()
}

// forgetLocked removes ls from the store's maps (later requests get 404)
// and from its caller's share; closing it is the caller's job.
func (s *sessionStore) forgetLocked(ls *serverSession) {
	if s.byID[ls.id] != ls {
		return
	}
	delete(s.byID, ls.id)
	if cs := s.callers[ls.callerKey]; cs != nil {
		delete(cs.open, ls)
		if cs.n--; cs.n == 0 {
			delete(s.callers, ls.callerKey)
		}
	}
}

// lookup returns the open session id, if r may use it: a session opened
// by an authenticated caller serves only that caller, so that a leaked id
// alone is not enough to use someone's session.
func (s *sessionStore) lookup(id string, r *http.Request) *serverSession {
	s.mu.Lock()
	ls := s.byID[id]
	s.mu.Unlock()
	if ls == nil || !ls.sameCaller(r) {
		return nil
	}
	return ls
}

// len returns the number of open sessions.
func (s *sessionStore) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.byID)
}

// closeSession ends ls: it leaves the store (later requests get 404), its
// requests in progress are cancelled, its streams end and what it kept is
// dropped.
func (s *sessionStore) closeSession(ls *serverSession, why string) {
	s.mu.Lock()
	s.forgetLocked(ls)
	s.mu.Unlock()

	ls.mu.Lock()
	if ls.closed {
		ls.mu.Unlock()
		return
	}
	ls.closed = true
	if ls.idle != nil {
		ls.idle.Stop()
	}
	streams := make([]*eventStream, 0, len(ls.streams))
	for _, st := range ls.streams {
		streams = append(streams, st)
	}
	ls.streams = nil
	ls.kept, ls.keptHead, ls.keptBytes = nil, 0, 0
	ls.mu.Unlock()

	ls.cancel() // the requests' contexts derive from the session's
	if ls.sess != nil {
		ls.sess.Close()
	}
	for _, st := range streams {
		st.mu.Lock()
		st.closeLocked()
		st.mu.Unlock()
	}
	s.h.log.Debug("streamhttp: legacy session closed", "reason", why)
}

// serverSession is one legacy session served over Streamable HTTP: the
// server's session, and what HTTP adds to it (streams, the replay buffer,
// the server-to-client requests waiting for their answer, the idle clock).
type serverSession struct {
	id     string
	store  *sessionStore
	sess   *server.Session
	caller *auth.Info // who opened the session, if authenticated
	// callerKey names whose share the session counts against
	// (auth.CallerKey of the initialize); "" when no bound per caller
	// applies.
	callerKey string

	ctx    context.Context // ends when the session does
	cancel context.CancelFunc

	standalone *eventStream

	mu       sync.Mutex
	closed   bool
	active   int         // requests in progress and connections open
	lastUse  uint64      // from store.uses: when the session was last busy or touched
	idle     *time.Timer // runs while active is 0
	idleGen  uint64      // invalidates a timer that fired while it was being stopped
	streams  map[uint64]*eventStream
	nextNum  uint64
	inflight map[jsonrpc.ID]context.CancelCauseFunc // the session's requests in progress, by id
	calls    map[jsonrpc.ID]chan *jsonrpc.Response  // server-to-client requests awaiting their answer
	lastCall int64                                  // the id of the last server-to-client request

	// The replay buffer: events of every stream, oldest first.
	kept      []keptEvent
	keptHead  int // kept[:keptHead] are evicted
	keptBytes int
}

// keptEvent is one event in a session's replay buffer.
type keptEvent struct {
	st   *eventStream
	seq  uint64
	data []byte // the whole encoded event
}

func (s *sessionStore) newSession(r *http.Request, callerKey string) *serverSession {
	ls := &serverSession{
		id:        rand.Text(), // 128 random bits in base32: visible ASCII, as required
		store:     s,
		caller:    callerOf(r),
		callerKey: callerKey,
		streams:   make(map[uint64]*eventStream),
		nextNum:   1,
		inflight:  make(map[jsonrpc.ID]context.CancelCauseFunc),
		calls:     make(map[jsonrpc.ID]chan *jsonrpc.Response),
	}
	ls.ctx, ls.cancel = context.WithCancel(context.Background())
	ls.standalone = &eventStream{ls: ls, num: 0}
	ls.streams[0] = ls.standalone
	return ls
}

func callerOf(r *http.Request) *auth.Info {
	if info := auth.InfoFrom(r.Context()); info != nil {
		c := *info
		return &c
	}
	return nil
}

// sameCaller compares the principal only (client, issuer, subject): a
// token refreshed mid-session has a new expiry and may have other scopes,
// and is still the caller who opened the session.
func (ls *serverSession) sameCaller(r *http.Request) bool {
	return ls.caller.SameCaller(auth.InfoFrom(r.Context()))
}

// acquire marks the session busy (a request in progress, a stream open):
// it does not expire meanwhile. It reports false for a closed session.
func (ls *serverSession) acquire() bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.closed {
		return false
	}
	ls.active++
	ls.lastUse = ls.store.uses.Add(1)
	ls.idleGen++
	if ls.idle != nil {
		ls.idle.Stop()
		ls.idle = nil
	}
	return true
}

// release undoes acquire; the idle clock starts when nothing is left.
func (ls *serverSession) release() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.active--
	ls.lastUse = ls.store.uses.Add(1)
	if ls.active == 0 {
		ls.startIdleLocked()
	}
}

// touch restarts the idle clock of a session that is not busy: a
// notification or an answer is activity too.
func (ls *serverSession) touch() {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.lastUse = ls.store.uses.Add(1)
	if ls.active == 0 {
		ls.startIdleLocked()
	}
}

func (ls *serverSession) startIdleLocked() {
	if ls.closed || ls.store.opts.IdleTimeout < 0 {
		return
	}
	if ls.idle != nil {
		ls.idle.Stop()
	}
	ls.idleGen++
	gen := ls.idleGen
	ls.idle = time.AfterFunc(ls.store.opts.IdleTimeout, func() {
		ls.mu.Lock()
		expired := !ls.closed && ls.active == 0 && ls.idleGen == gen
		ls.mu.Unlock()
		if expired {
			ls.store.closeSession(ls, "idle")
		}
	})
}

// newStream opens the event stream of request q.
func (ls *serverSession) newStream(q *sessionRequest) *eventStream {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	st := &eventStream{ls: ls, num: ls.nextNum, req: q}
	ls.nextNum++
	if !ls.closed {
		ls.streams[st.num] = st
	} else {
		st.ended = true
	}
	return st
}

// stream returns the stream numbered num, if it is live or has events in
// the buffer.
func (ls *serverSession) stream(num uint64) *eventStream {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return ls.streams[num]
}

// keep adds an event of st to the replay buffer, evicting the oldest
// events beyond the bound. Called with st.mu held.
func (ls *serverSession) keep(st *eventStream, seq uint64, data []byte) {
	max := ls.store.opts.ReplayBytes
	if max < 0 {
		return
	}
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.closed {
		return
	}
	ls.kept = append(ls.kept, keptEvent{st: st, seq: seq, data: data})
	ls.keptBytes += len(data)
	st.kept++
	for ls.keptBytes > max && len(ls.kept)-ls.keptHead > 1 {
		e := ls.kept[ls.keptHead]
		ls.kept[ls.keptHead] = keptEvent{}
		ls.keptHead++
		ls.keptBytes -= len(e.data)
		e.st.kept--
		if e.st.finished && e.st.kept == 0 {
			delete(ls.streams, e.st.num)
		}
	}
	if ls.keptHead > len(ls.kept)/2 { // compact now and then
		n := copy(ls.kept, ls.kept[ls.keptHead:])
		clear(ls.kept[n:])
		ls.kept = ls.kept[:n]
		ls.keptHead = 0
	}
}

// streamEnded notes that st has sent its last event: the stream is
// forgotten once none of its events is kept. Called with st.mu held.
func (ls *serverSession) streamEnded(st *eventStream) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	st.finished = true
	if st.kept == 0 && ls.streams[st.num] == st {
		delete(ls.streams, st.num)
	}
}

// keptAfter returns the kept events of st after seq, and whether some
// that followed seq are no longer kept. Called with st.mu held.
func (ls *serverSession) keptAfter(st *eventStream, seq uint64) (events [][]byte, gap bool) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	next := seq + 1
	for _, e := range ls.kept[ls.keptHead:] {
		if e.st != st || e.seq <= seq {
			continue
		}
		if e.seq != next {
			gap = true
		}
		next = e.seq + 1
		events = append(events, e.data)
	}
	if next <= st.seq {
		gap = true
	}
	return events, gap
}

// track records a request in progress, so that notifications/cancelled
// can reach it. It reports false when a request with that id is already in
// progress.
func (ls *serverSession) track(id jsonrpc.ID, cancel context.CancelCauseFunc) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if _, dup := ls.inflight[id]; dup {
		return false
	}
	ls.inflight[id] = cancel
	return true
}

func (ls *serverSession) untrack(id jsonrpc.ID) {
	ls.mu.Lock()
	delete(ls.inflight, id)
	ls.mu.Unlock()
}

// cancelRequest serves notifications/cancelled from the client.
func (ls *serverSession) cancelRequest(params json.RawMessage) {
	var p struct {
		RequestID jsonrpc.ID `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil || !p.RequestID.IsValid() {
		return
	}
	ls.mu.Lock()
	cancel := ls.inflight[p.RequestID]
	ls.mu.Unlock()
	if cancel != nil {
		cancel(errCancelled)
	}
}

// newCall allocates the id of a server-to-client request, unique within
// the session, and the channel its answer arrives on.
func (ls *serverSession) newCall() (jsonrpc.ID, chan *jsonrpc.Response) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.lastCall++
	id := jsonrpc.Int64ID(ls.lastCall)
	ch := make(chan *jsonrpc.Response, 1)
	ls.calls[id] = ch
	return id, ch
}

func (ls *serverSession) dropCall(id jsonrpc.ID) {
	ls.mu.Lock()
	delete(ls.calls, id)
	ls.mu.Unlock()
}

// deliver hands the client's answer to the server-to-client request
// waiting for it. It reports false for an id the session never issued; an
// answer that comes after its request gave up is dropped.
func (ls *serverSession) deliver(resp *jsonrpc.Response) bool {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ch := ls.calls[resp.ID]; ch != nil {
		delete(ls.calls, resp.ID)
		ch <- resp // buffered, and removed from calls: never blocks
		return true
	}
	n, err := strconv.ParseInt(resp.ID.Raw(), 10, 64)
	return err == nil && n >= 1 && n <= ls.lastCall
}

// notifyStandalone is the server session's Notify: list changes and
// resource updates go on the standalone stream. Until a GET has opened
// it, there is nobody to tell and they are dropped; afterwards they are
// kept while no GET carries the stream, for the client to resume.
func (ls *serverSession) notifyStandalone(ctx context.Context, method string, params any) error {
	msg, err := encodeNotification(method, params)
	if err != nil {
		return err
	}
	st := ls.standalone
	st.mu.Lock()
	defer st.mu.Unlock()
	if !st.opened || st.ended {
		return nil
	}
	return st.emitLocked(msg, false)
}

// encodeNotification encodes a notification message.
func encodeNotification(method string, params any) ([]byte, error) {
	var raw json.RawMessage
	if params != nil {
		var err error
		if raw, err = marshalParams(params); err != nil {
			return nil, err
		}
	}
	return jsonrpc.EncodeMessage(&jsonrpc.Request{Method: method, Params: raw})
}

// versionMismatch checks a session request's MCP-Protocol-Version
// header: absent is accepted (the session knows its version), anything
// else must be the session's version.
func (ls *serverSession) versionMismatch(r *http.Request) *jsonrpc.Error {
	v := protocolVersionHeader(r.Header)
	if v == "" || mcp.ProtocolVersion(v) == ls.sess.ProtocolVersion() {
		return nil
	}
	return wire.InvalidRequest("%s", "Bad Request: "+HeaderProtocolVersion+" "+echoHeader(v)+
		" is not the protocol version of this session ("+string(ls.sess.ProtocolVersion())+")")
}
