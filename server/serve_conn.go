package server

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
)

// ServeConn serves one stream connection (stdio, in-memory, a socket) until
// the peer closes it or ctx ends, and returns nil after a clean close by the
// peer. Requests on the connection are served concurrently.
//
// A peer that leaves ends its work: when the connection's input ends (on
// stdio, stdin reaching EOF), the contexts of the requests still being
// served end, subscriptions/listen streams included, and ServeConn returns
// once their handlers have. A stdio server process therefore exits when
// its client closes its input, as the stdio transport asks, rather than
// waiting to be signalled.
//
// The connection's generation is fixed by its first exchange: an
// initialize before any 2026-07-28 request has succeeded opens a legacy
// session, whose requests are then served with its version and
// capabilities, and whose handlers can send requests to the client;
// otherwise the connection serves 2026-07-28 requests, each on its own.
func (s *Server) ServeConn(ctx context.Context, t transport.Conn) error {
	var conn *jsonrpc.Conn
	ready := make(chan struct{}) // conn is set: the read loop starts before NewConn returns
	notify := func(ctx context.Context, method string, params any) error {
		<-ready
		return conn.Notify(ctx, method, params)
	}
	call := func(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
		<-ready
		return conn.CallRaw(ctx, method, params)
	}
	g := &connGeneration{}
	conn = jsonrpc.NewConn(t, &jsonrpc.ConnOptions{
		Logger: s.log,
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			res, err := g.handle(ctx, s, req, notify, call)
			if err != nil || res == nil {
				return res, err
			}
			// Encoded here, where mcp's encoders are known, rather than by
			// the connection through encoding/json: one allocation fewer.
			raw, err := mcp.Marshal(res)
			if err != nil {
				s.log.Error("server: encoding a result", "method", req.Method, "err", err)
				return nil, wire.Internal("")
			}
			return jsonrpc.RawValid(raw), nil // written by an encoder: not checked again
		}),
	})
	close(ready)
	defer g.close()
	select {
	case <-conn.Done():
	case <-ctx.Done():
		conn.Close()
		return ctx.Err()
	}
	if err := conn.Err(); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, jsonrpc.ErrConnClosed) {
		return err
	}
	return nil
}

// connGeneration tracks which generation a stream connection speaks. Once
// settled it is read without a lock, so that concurrent requests on a busy
// connection do not queue behind each other.
type connGeneration struct {
	mu      sync.Mutex              // serializes opening the session
	session atomic.Pointer[Session] // set by initialize: the connection is legacy
	modern  atomic.Bool             // a 2026-07-28 request succeeded: no handshake any more
}

func (g *connGeneration) handle(ctx context.Context, s *Server, req *jsonrpc.Request, notify NotifyFunc, call CallFunc) (any, error) {
	if sess := g.session.Load(); sess != nil {
		return sess.Handle(ctx, req, notify, call)
	}
	modern := g.modern.Load()
	if req.Method == mcp.MethodInitialize && !req.IsNotification() && !ClaimsEnvelope(req) {
		if modern && s.ServesLegacy() {
			return nil, wire.InvalidRequest("Invalid request: initialize after 2026-07-28 requests; a connection speaks one protocol generation")
		}
		if !modern {
			return g.initialize(ctx, s, req, notify, call)
		}
	}
	res, err := s.Handle(ctx, req, notify)
	if err == nil && res != nil && !modern {
		g.modern.Store(true)
	}
	return res, err
}

// initialize opens the connection's session, once: under the lock, two
// initialize requests racing cannot open two sessions.
func (g *connGeneration) initialize(ctx context.Context, s *Server, req *jsonrpc.Request, notify NotifyFunc, call CallFunc) (any, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if sess := g.session.Load(); sess != nil {
		return sess.Handle(ctx, req, notify, call) // "already initialized"
	}
	sess, res, err := s.Initialize(ctx, req, &SessionOptions{Notify: notify})
	if err != nil {
		return nil, err
	}
	g.session.Store(sess)
	return res, nil
}

func (g *connGeneration) close() {
	if sess := g.session.Load(); sess != nil {
		sess.Close()
	}
}
