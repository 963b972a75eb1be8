package client

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
)

// Session is one connection to a server, of either protocol generation:
// 2026-07-28, where every request stands alone, or legacy (2025-11-25 and
// earlier), opened by initialize. Its methods work the same in both, except
// where they say otherwise. It is safe for concurrent use: any number of
// calls may be in flight at once.
type Session struct {
	client *Client
	conn   *jsonrpc.Conn
	tc     *onceCloser // the transport connection under conn

	meta       atomic.Pointer[mcp.RequestMetaObject] // the _meta of every request, for the current version
	discovered atomic.Pointer[mcp.DiscoverResult]

	// legacy is set before initialize is sent: from then on requests
	// carry no envelope and the server's requests are served. It is
	// atomic because the read loop, which serves them, is already running.
	legacy      atomic.Bool
	initialized atomic.Pointer[mcp.InitializeResult] // the server's answer to initialize

	pinned bool // the version is pinned: never switch it

	// inc is the legacy session initialize opened, replaced when the
	// server loses it and a new one opens (reinit.go); nil under
	// 2026-07-28. offer is the version the first initialize offered, which
	// every later one offers again.
	inc        atomic.Pointer[incarnation]
	offer      mcp.ProtocolVersion
	renewing   renewing
	toolRepeat sync.Map // tool name -> whether it is safe to repeat (reinit.go)

	// resourceSubs counts the open legacy Listen streams that want each
	// resource URI, so resources/unsubscribe goes out only when the last
	// one ends. subMu serializes the (un)subscribe requests with the
	// counts, so a subscribe and an unsubscribe of one URI cannot cross on
	// the wire.
	subMu        sync.Mutex
	resourceSubs map[string]int
	subsInc      *incarnation // the legacy session resourceSubs counts for

	// answering counts the callbacks answering a legacy server's requests
	// right now: the requests they serve wait on the client, not on the
	// server, so RequestTimeout does not cut them meanwhile.
	answering atomic.Int32

	deadlines deadlines // the RequestTimeout of pending 2026-07-28 requests

	cache *resultCache // nil when Options.Cache disables it (cache.go)

	nextToken atomic.Int64 // progress tokens
	progress  sync.Map     // progress token -> RequestOptions.OnProgress of a request in flight
	nextSub   atomic.Int64 // listen request ids

	mu      sync.Mutex
	subs    map[jsonrpc.ID]*Subscription // open listen streams, by request id
	closing bool                         // Close has begun: no new streams
	streams sync.WaitGroup               // listen goroutines; Add only under mu while !closing
}

func newSession(c *Client, tc transport.Conn, version mcp.ProtocolVersion, pinned bool) *Session {
	s := &Session{client: c, subs: make(map[jsonrpc.ID]*Subscription), pinned: pinned, tc: &onceCloser{Conn: tc}, resourceSubs: make(map[string]int), cache: newResultCache(c.opts.Cache)}
	s.setVersion(version)
	s.conn = jsonrpc.NewConn(s.tc, &jsonrpc.ConnOptions{
		Logger:  c.log,
		Handler: jsonrpc.HandlerFunc(s.handle),
	})
	return s
}

// setVersion builds the shared _meta for version. The object is never
// written after it is stored, so requests can share it.
func (s *Session) setVersion(v mcp.ProtocolVersion) {
	info := s.client.info
	s.meta.Store(&mcp.RequestMetaObject{
		ProtocolVersion:    v,
		ClientCapabilities: s.client.opts.Capabilities,
		ClientInfo:         &info,
		LogLevel:           s.client.opts.LogLevel,
	})
}

// ProtocolVersion returns the protocol version the session speaks: the
// one negotiated with server/discover, or the one the server answered
// initialize with on a legacy session. Its Era tells the generations apart.
func (s *Session) ProtocolVersion() mcp.ProtocolVersion { return s.meta.Load().ProtocolVersion }

// ServerInfo returns the server's self-description from the latest
// server/discover result, or from initialize on a legacy session; nil if
// it sent none.
func (s *Session) ServerInfo() *mcp.Implementation {
	if r := s.initialized.Load(); r != nil {
		return &r.ServerInfo
	}
	if d := s.discovered.Load(); d != nil && d.Meta != nil {
		return d.Meta.ServerInfo
	}
	return nil
}

// ServerCapabilities returns the capabilities the server declared in the
// latest server/discover result, or in initialize on a legacy session. The
// result is shared: do not modify it.
func (s *Session) ServerCapabilities() *mcp.ServerCapabilities {
	if r := s.initialized.Load(); r != nil {
		return &r.Capabilities
	}
	if d := s.discovered.Load(); d != nil {
		return &d.Capabilities
	}
	return &mcp.ServerCapabilities{}
}

// Instructions returns how the server says it should be used, from the
// latest server/discover result or from initialize, or "".
func (s *Session) Instructions() string {
	if r := s.initialized.Load(); r != nil {
		return r.Instructions
	}
	if d := s.discovered.Load(); d != nil {
		return d.Instructions
	}
	return ""
}

// Close ends the session and closes its transport. Open subscriptions end
// first, with jsonrpc.ErrConnClosed (their Events channels are closed),
// and the server is told to stop serving them; then the transport closes,
// and calls still in flight fail with an error wrapping
// jsonrpc.ErrConnClosed. For a transport
// that runs a server process, Close also reports how the process ended.
// Closing the transport is also what ends a legacy session on the server:
// a stdio server sees its input close, and the HTTP transport ends its
// session itself (DELETE) when closed.
func (s *Session) Close() error {
	s.mu.Lock()
	s.closing = true
	open := make([]*Subscription, 0, len(s.subs))
	for _, sub := range s.subs {
		open = append(open, sub)
	}
	s.mu.Unlock()
	// The listen streams end first, while the connection is still up, so
	// that each can tell the server (a cancellation) before the transport
	// closes: a server that does not end its work when its peer leaves
	// would otherwise keep serving them, and a stdio server process would
	// not exit on its input's end.
	for _, sub := range open {
		sub.sessionClosed.Store(true)
		sub.cancel()
	}
	s.streams.Wait()
	s.conn.Close()
	s.renewing.wg.Wait() // a new initialize in flight fails with the connection
	s.deadlines.stop()
	// The connection may have closed the transport already, when the
	// server went away first; its result is kept for this call.
	return s.tc.Close()
}

// onceCloser closes a transport connection once and remembers the result,
// so that Session.Close reports it even when the JSON-RPC connection closed
// the transport first (for a server process: how the process ended).
type onceCloser struct {
	transport.Conn
	once sync.Once
	err  error
}

func (c *onceCloser) Close() error {
	c.once.Do(func() { c.err = c.Conn.Close() })
	return c.err
}

// Done is closed when the session has ended.
func (s *Session) Done() <-chan struct{} { return s.conn.Done() }

// requestMeta returns the _meta for one request: the shared object, or a
// copy with what ro changes, or with a fresh progress token when progress is
// wanted (token, when valid, is the one ro.OnProgress listens on). A legacy
// request carries no envelope (initialize declared it once), so its _meta
// is the progress token alone, or nothing.
func (s *Session) requestMeta(ro *RequestOptions, token mcp.ProgressToken) *mcp.RequestMetaObject {
	if !token.IsValid() && s.client.opts.OnProgress != nil {
		token = s.progressToken()
	}
	if s.legacy.Load() {
		if !token.IsValid() {
			return nil
		}
		return &mcp.RequestMetaObject{ProgressToken: token}
	}
	m := s.meta.Load()
	if !token.IsValid() && (ro == nil || (ro.Capabilities == nil && ro.LogLevel == "")) {
		return m
	}
	c := *m
	c.ProgressToken = token
	if ro != nil {
		if ro.Capabilities != nil {
			c.ClientCapabilities = ro.Capabilities
		}
		if ro.LogLevel != "" {
			c.LogLevel = ro.LogLevel
		}
	}
	return &c
}

func (s *Session) progressToken() mcp.ProgressToken {
	return mcp.ProgressToken(jsonrpc.StringID("p" + strconv.FormatInt(s.nextToken.Add(1), 10)))
}

// call sends one request. setMeta stores the request's _meta in params just
// before encoding (again on a version retry). The raw result is returned.
// It is bounded by Options.RequestTimeout; a subscriptions/listen stream,
// which lasts as long as its caller wants, goes through callID instead. On
// a legacy session it recovers from what it can (reinit.go): a session the
// server lost is replaced, and a request safe to repeat is sent again once
// its POST failed.
func (s *Session) call(ctx context.Context, method string, params any, setMeta func(*mcp.RequestMetaObject)) (json.RawMessage, error) {
	inc := s.inc.Load()
	res, err := s.callOnce(ctx, method, params, setMeta)
	if err != nil && inc != nil {
		return s.recoverFrom(ctx, inc, method, params, setMeta, err)
	}
	return res, err
}

// callOnce is call without the renewal of a lost legacy session.
func (s *Session) callOnce(ctx context.Context, method string, params any, setMeta func(*mcp.RequestMetaObject)) (json.RawMessage, error) {
	rctx, end := s.requestContext(ctx)
	res, err := s.callID(rctx, jsonrpc.ID{}, method, params, setMeta)
	if err != nil && timedOut(ctx, rctx) {
		err = &RequestTimeoutError{Method: method, Timeout: s.client.requestTimeout}
	}
	end.stop()
	return res, err
}

// callID is call with a chosen request id (the zero ID lets the connection
// choose).
//
// A -32022 (unsupported protocol version) answer switches the session to
// the newest version that the server lists and the client speaks, and sends
// the request once more with it. A session with a pinned version, a list
// with nothing in common, and a second -32022 all end in an error wrapping
// ErrUnsupportedVersion: the session never loops.
func (s *Session) callID(ctx context.Context, id jsonrpc.ID, method string, params any, setMeta func(*mcp.RequestMetaObject)) (json.RawMessage, error) {
	ro := requestOptionsFrom(ctx)
	var token mcp.ProgressToken
	if ro != nil && ro.OnProgress != nil {
		// One token for every attempt of this request, routed to its
		// caller until the request returns.
		token = s.progressToken()
		s.progress.Store(token, ro.OnProgress)
		defer s.progress.Delete(token)
	}
	retried := false
	for {
		meta := s.requestMeta(ro, token)
		setMeta(meta)
		res, err := s.outgoing(ctx, id, method, params, meta, setMeta)
		if err == nil {
			return res, nil
		}
		data, ok := mcp.AsUnsupportedProtocolVersion(err)
		if !ok || s.legacy.Load() {
			// A legacy session settled its version in initialize, once.
			return nil, err
		}
		if retried {
			return nil, fmt.Errorf("client: %s: server refused protocol version %s after negotiation: %w (%w)", method, meta.ProtocolVersion, ErrUnsupportedVersion, err)
		}
		if s.pinned {
			return nil, fmt.Errorf("client: %s: server refused the pinned protocol version %s (it supports %v): %w (%w)", method, meta.ProtocolVersion, data.Supported, ErrUnsupportedVersion, err)
		}
		next := s.client.mutualVersion(data.Supported, false)
		// The same version again is worth one retry too: the retried flag
		// bounds it, and some servers refuse transiently.
		if next == "" {
			return nil, fmt.Errorf("client: %s: server supports %v: %w (%w)", method, data.Supported, ErrUnsupportedVersion, err)
		}
		s.client.log.Debug("client: switching protocol version", "from", meta.ProtocolVersion, "to", next)
		s.setVersion(next)
		retried = true
	}
}

// handle serves what the server sends: notifications, and on a legacy
// session the server's requests (a 2026-07-28 server sends none: it asks
// for input in its results).
func (s *Session) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	if !req.IsNotification() {
		if s.legacy.Load() {
			return s.serveLegacy(ctx, req)
		}
		return nil, wire.MethodNotFound("Method not found: %s", req.Method)
	}
	s.cache.notified(req.Method, req.Params) // before a stream's consumer sees it
	switch req.Method {
	case jsonrpc.CancelMethod:
		// On stdio a server may end a listen stream by cancelling its
		// request.
		s.cancelledByServer(req)
		return nil, nil
	case mcp.NotificationProgress:
		var p mcp.ProgressNotificationParams
		if err := json.Unmarshal(req.Params, &p); err != nil {
			s.client.log.Warn("client: bad progress notification", "err", err)
			return nil, nil
		}
		if f, ok := s.progress.Load(p.ProgressToken); ok {
			f.(func(context.Context, *mcp.ProgressNotificationParams))(ctx, &p)
		} else if f := s.client.opts.OnProgress; f != nil {
			f(ctx, &p)
		}
		return nil, nil
	case mcp.NotificationMessage:
		if f := s.client.opts.OnLog; f != nil {
			var p mcp.LoggingMessageNotificationParams
			if err := json.Unmarshal(req.Params, &p); err != nil {
				s.client.log.Warn("client: bad log notification", "err", err)
				return nil, nil
			}
			f(ctx, &p)
		}
		return nil, nil
	}
	if s.legacy.Load() {
		s.routeLegacy(req)
		return nil, nil
	}
	s.routeSubscription(req)
	return nil, nil
}

// isClosing reports whether Close has begun.
func (s *Session) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}
