package server

import (
	"context"
	"encoding/json"
	"sync"
	"sync/atomic"

	"github.com/parley-mcp/parley/internal/jsontext"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
)

// Legacy sessions.
//
// A client of the legacy era (2025-11-25 and earlier) opens a session with
// initialize, declares its capabilities once for the whole session, and
// receives server-to-client requests (elicitation/create,
// sampling/createMessage, roots/list) while a request of its own is being
// served. A Session turns each of its requests into the same *Request a
// 2026-07-28 request becomes, with a _meta made from what the session
// declared, so that one set of handlers and middleware serves both
// generations. Only what differs lives here: the handshake, the methods
// 2026-07-28 removed, and the back-channel.

// CallFunc sends one server-to-client request on the channel of the request
// being served and returns the client's raw result, or its error (an
// *jsonrpc.Error when the client answered with one).
type CallFunc func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)

// SessionOptions configures a legacy session opened by [Server.Initialize].
type SessionOptions struct {
	// Notify sends the notifications that belong to no request: list
	// changes and resource updates. On stdio it is the connection; on
	// Streamable HTTP the session's GET stream. Nil drops them.
	Notify NotifyFunc
}

// Session is a legacy session, opened by an initialize request through
// [Server.Initialize]. Transports keep it for as long as the session lasts
// and serve each later message of the session with [Session.Handle]; Close
// ends it. A Session is safe for concurrent use.
type Session struct {
	s       *Server
	version mcp.ProtocolVersion
	caps    *mcp.ClientCapabilities
	info    *mcp.Implementation
	notify  NotifyFunc

	level       atomic.Pointer[mcp.LoggingLevel] // set by logging/setLevel
	initialized atomic.Bool                      // notifications/initialized arrived

	mu        sync.Mutex
	subs      map[string]struct{} // resources/subscribe URIs
	closeOnce sync.Once

	queue  changeQueue // changes not yet sent, by a goroutine of their own (send)
	ctx    context.Context
	cancel context.CancelFunc // ends ctx: called by Close
}

// legacyVersion picks the version of a new session: the one the client
// asked for when the server serves it, else the newest legacy version the
// server serves, else "" (the server serves no legacy version).
func (s *Server) legacyVersion(asked mcp.ProtocolVersion) mcp.ProtocolVersion {
	if asked.Era() == mcp.EraLegacy && s.supports(asked) {
		return asked
	}
	for _, v := range s.opts.SupportedVersions { // preferred first
		if v.Era() == mcp.EraLegacy {
			return v
		}
	}
	return ""
}

// ServesLegacy reports whether the server serves any legacy version, that
// is, whether it answers initialize.
func (s *Server) ServesLegacy() bool { return s.legacyVersion("") != "" }

// Initialize serves an initialize request: it opens a legacy session and
// returns it with the result to send. The error is always an
// *jsonrpc.Error: -32601 when the server serves no legacy version (the
// message lists the versions it does serve), -32602 for params that do
// not decode or are over Options.MaxInitializeSize.
func (s *Server) Initialize(ctx context.Context, msg *jsonrpc.Request, opts *SessionOptions) (*Session, *mcp.InitializeResult, error) {
	version := s.legacyVersion("")
	if msg.Method != mcp.MethodInitialize || version == "" {
		return nil, nil, s.noHandshake()
	}
	if limit := s.maxInitializeSize(); limit > 0 && len(msg.Params) > limit {
		return nil, nil, wire.InvalidParams("Invalid params: initialize params are %d bytes, over the server's limit of %d (Options.MaxInitializeSize)", len(msg.Params), limit)
	}
	var p mcp.InitializeRequestParams
	if err := json.Unmarshal(msg.Params, &p); err != nil || len(msg.Params) == 0 {
		why := "missing"
		if err != nil {
			why = cleanJSONError(err)
		}
		return nil, nil, wire.InvalidParams("Invalid params: initialize: %s", why)
	}
	sess := &Session{
		s:       s,
		version: s.legacyVersion(p.ProtocolVersion),
		caps:    &p.Capabilities,
		info:    &p.ClientInfo,
		subs:    make(map[string]struct{}),
		queue:   changeQueue{limit: s.opts.ListenBuffer},
	}
	sess.ctx, sess.cancel = context.WithCancel(context.Background())
	if opts != nil {
		sess.notify = opts.Notify
	}
	s.hub.addSession(sess)
	s.log.Debug("server: legacy session opened", "version", sess.version, "client", p.ClientInfo.Name)
	caps := *s.capabilities()
	return sess, &mcp.InitializeResult{
		ProtocolVersion: sess.version,
		Capabilities:    caps,
		ServerInfo:      s.info,
		Instructions:    s.opts.Instructions,
	}, nil
}

// StatelessSession returns a session for one legacy request served
// without session state (stateless Streamable HTTP, where the initialize
// that opened the session may have reached another instance). It speaks
// version (a legacy version the server serves, else the newest legacy one
// it serves; nil when it serves none), knows nothing of the client's
// capabilities, receives no list changes, and has no back-channel. It
// needs no Close.
func (s *Server) StatelessSession(version mcp.ProtocolVersion) *Session {
	v := s.legacyVersion(version)
	if v == "" {
		return nil
	}
	sess := &Session{s: s, version: v, caps: &mcp.ClientCapabilities{}, info: &mcp.Implementation{}, subs: make(map[string]struct{})}
	sess.ctx, sess.cancel = context.WithCancel(context.Background())
	sess.closeOnce.Do(func() {}) // never in the hub: nothing to undo
	return sess
}

// ClaimsEnvelope reports whether msg carries the 2026-07-28 request
// envelope (a protocol version in params._meta). Such a request is served
// as a 2026-07-28 request whatever its method, so that initialize, ping
// and the other removed methods sent with the envelope get -32601 rather
// than opening a legacy session: the envelope, not the method, says which
// generation a request belongs to. Legacy clients never send it.
func ClaimsEnvelope(msg *jsonrpc.Request) bool {
	claims := false
	jsontext.Members(msg.Params, func(key, value []byte) {
		if string(key) == "_meta" {
			jsontext.Members(value, func(k, _ []byte) {
				if string(k) == mcp.MetaKeyProtocolVersion {
					claims = true
				}
			})
		}
	})
	return claims
}

// noHandshake is the answer to initialize on a server (or a connection)
// that speaks no legacy version.
func (s *Server) noHandshake() *jsonrpc.Error {
	if s.ServesLegacy() {
		return wire.MethodNotFound(
			"Method not found: initialize (a request with the 2026-07-28 _meta envelope needs no handshake; legacy clients send initialize without it; supported protocol versions: %s)",
			joinVersions(s.opts.SupportedVersions))
	}
	return wire.MethodNotFound(
		"Method not found: initialize (this server speaks MCP without a handshake; supported protocol versions: %s)",
		joinVersions(s.modernVersions()))
}

// ProtocolVersion returns the version the session speaks.
func (ss *Session) ProtocolVersion() mcp.ProtocolVersion { return ss.version }

// ClientCapabilities returns the capabilities the client declared in
// initialize. Do not modify them.
func (ss *Session) ClientCapabilities() *mcp.ClientCapabilities { return ss.caps }

// ClientInfo returns the client's self-description from initialize.
func (ss *Session) ClientInfo() *mcp.Implementation { return ss.info }

// Initialized reports whether the client sent notifications/initialized.
func (ss *Session) Initialized() bool { return ss.initialized.Load() }

// Close ends the session: it stops receiving list changes and resource
// updates. Requests still being served run to their end. Close is safe to
// call more than once.
func (ss *Session) Close() {
	// Not under ss.mu: the hub takes its lock before ss.mu (to keep a
	// session's subscriptions and its index together), so taking them
	// the other way round could deadlock.
	ss.closeOnce.Do(func() {
		ss.s.hub.removeSession(ss)
		ss.cancel()
	})
}

// Done is closed when the session is closed.
func (ss *Session) Done() <-chan struct{} { return ss.ctx.Done() }

// Handle serves one message of the session after initialize: a request's
// result (to send as the response's result; encode it as it is, with
// mcp.Marshal or json.Marshal: it is the handler's result as
// mcp.LegacyResult shapes it, without the members of 2026-07-28) or an
// error (an *jsonrpc.Error to send as it is); (nil, nil) for a
// notification.
//
// notify carries the notifications of the request (progress, log
// messages); call sends the server-to-client requests that serve it
// (elicitation, sampling, roots). Either may be nil: a nil call means the
// session has no back-channel (stateless Streamable HTTP), and a handler
// that needs one fails with an error that says so.
func (ss *Session) Handle(ctx context.Context, msg *jsonrpc.Request, notify NotifyFunc, call CallFunc) (any, error) {
	if msg.IsNotification() {
		ss.handleNotification(msg)
		return nil, nil
	}
	switch msg.Method {
	case mcp.MethodInitialize:
		return nil, wire.InvalidRequest("Invalid request: the session is already initialized")
	case mcp.MethodPing:
		return &mcp.EmptyResult{}, nil
	case mcp.MethodSetLoggingLevel:
		return ss.setLevel(msg)
	case mcp.MethodSubscribeResource, mcp.MethodUnsubscribeResource:
		return ss.subscribe(msg)
	case mcp.MethodDiscover, mcp.MethodSubscriptionsListen:
		// 2026-07-28 methods; a legacy session has initialize and
		// resources/subscribe instead.
		return nil, methodNotFound(msg.Method)
	}
	raw := msg.Params
	if len(raw) == 0 {
		raw = emptyParams // legacy requests may omit params altogether
	}
	m := methods[msg.Method]
	if m == nil {
		e := ss.s.extension(msg.Method)
		if e == nil {
			return nil, methodNotFound(msg.Method)
		}
		params, meta, target, err := e.prepare(raw)
		if err != nil {
			return nil, err
		}
		meta = ss.requestMeta(meta)
		if err := requireExtension(e, meta.ClientCapabilities); err != nil {
			return nil, err
		}
		req := &Request{ID: msg.ID, Method: msg.Method, Params: params, Meta: meta, notify: notify, call: call, session: ss, target: target, targetMember: e.opts.Target}
		return ss.s.Serve(ctx, req)
	}
	params, meta, err := m.decode(raw)
	if err != nil {
		return nil, wire.InvalidParams("Invalid params: %s", cleanJSONError(err))
	}
	req := &Request{ID: msg.ID, Method: msg.Method, Params: params, Meta: ss.requestMeta(meta), notify: notify, call: call, session: ss}
	return ss.s.Serve(ctx, req)
}

var emptyParams = json.RawMessage("{}")

// requestMeta makes the _meta a handler sees: the session's version,
// capabilities, client info and log level, with what the request itself
// carried (a progress token, trace context, extras).
func (ss *Session) requestMeta(own *mcp.RequestMetaObject) *mcp.RequestMetaObject {
	m := &mcp.RequestMetaObject{}
	if own != nil {
		*m = *own
	}
	m.ProtocolVersion = ss.version
	m.ClientCapabilities = ss.caps
	m.ClientInfo = ss.info
	m.LogLevel = ""
	if l := ss.level.Load(); l != nil {
		m.LogLevel = *l
	}
	return m
}

func (ss *Session) handleNotification(msg *jsonrpc.Request) {
	switch msg.Method {
	case mcp.NotificationInitialized:
		ss.initialized.Store(true)
	case jsonrpc.CancelMethod:
		// Obeyed by the connection.
	default:
		ss.s.log.Debug("server: ignoring notification", "method", msg.Method)
	}
}

func (ss *Session) setLevel(msg *jsonrpc.Request) (any, error) {
	var p mcp.SetLevelRequestParams
	if err := json.Unmarshal(msg.Params, &p); err != nil || !p.Level.Valid() {
		return nil, wire.InvalidParams("Invalid params: logging/setLevel needs a valid level (got %q)", p.Level)
	}
	ss.level.Store(&p.Level)
	return &mcp.EmptyResult{}, nil
}

func (ss *Session) subscribe(msg *jsonrpc.Request) (any, error) {
	caps := ss.s.capabilities()
	if caps.Resources == nil || !caps.Resources.Subscribe {
		return nil, methodNotFound(msg.Method)
	}
	var p mcp.SubscribeRequestParams
	if err := json.Unmarshal(msg.Params, &p); err != nil || p.URI == "" {
		return nil, wire.InvalidParams("%s", "Invalid params: "+msg.Method+" needs a uri")
	}
	limit := ss.s.opts.MaxStreamSubscriptions
	switch {
	case limit == 0:
		limit = DefaultMaxStreamSubscriptions
	case limit < 0:
		limit = 0
	}
	if !ss.s.hub.subscribeSession(ss, p.URI, msg.Method == mcp.MethodSubscribeResource, limit) {
		return nil, wire.InvalidParams("Invalid params: this session is subscribed to %d resources, the server's limit (Options.MaxStreamSubscriptions)", limit)
	}
	return &mcp.EmptyResult{}, nil
}

// send sends the session's queued changes, in order, until the queue is
// empty, so that publishing never waits for a slow client. It runs on a
// goroutine of its own that the first change of a burst starts (one at a
// time per session): an idle session holds no goroutine.
func (ss *Session) send() {
	var items []change
	for {
		if items = ss.queue.take(items, true); len(items) == 0 {
			return
		}
		for _, c := range items {
			if ss.ctx.Err() != nil {
				ss.queue.drop()
				break // closed: what is queued is not sent; take ends the sender
			}
			if ss.notify == nil {
				continue
			}
			var params any = &mcp.NotificationParams{}
			if c.method == mcp.NotificationResourceUpdated {
				params = &mcp.ResourceUpdatedNotificationParams{URI: c.uri}
			}
			if err := ss.notify(ss.ctx, c.method, params); err != nil {
				ss.s.log.Debug("server: could not send a change to a legacy session", "method", c.method, "err", err)
			}
		}
	}
}

// maxInitializeSize is Options.MaxInitializeSize with its default; 0 or
// less means no bound.
func (s *Server) maxInitializeSize() int {
	switch n := s.opts.MaxInitializeSize; {
	case n == 0:
		return DefaultMaxInitializeSize
	case n < 0:
		return 0
	default:
		return n
	}
}
