package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/transport"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// Options configures a bridge. A nil *Options means defaults.
type Options struct {
	// HTTPClient sends the requests to the remote server of ServeURL. Put
	// an OAuth client's RoundTripper (auth/oauthclient) in its Transport
	// to reach a protected server. Default: http.DefaultClient.
	HTTPClient *http.Client
	// Header holds headers added to every request to the remote server of
	// ServeURL.
	Header http.Header
	// ClientInfo is how the bridge introduces itself to the remote server.
	// Default: {Name: "parley-bridge", Version: "1.0.0"}.
	ClientInfo *mcp.Implementation
	// ProtocolVersion pins the protocol version spoken to the remote
	// server, as client.Options.ProtocolVersion does. Default: negotiated.
	ProtocolVersion mcp.ProtocolVersion
	// MaxRounds bounds how many rounds of questions one call may take: the
	// input_required results of a 2026-07-28 server relayed to a legacy
	// host, and the questions of a legacy server relayed to a 2026-07-28
	// host. Default: 10.
	MaxRounds int
	// AnswerTimeout bounds how long the bridge waits for the host to
	// answer one question: a legacy host's answer to a server-to-client
	// request, or a 2026-07-28 host's next round of a call whose legacy
	// server waits for an answer. Default: server.DefaultAnswerTimeout
	// (10 minutes, long enough for a person to fill a form).
	AnswerTimeout time.Duration
	// RequestTimeout bounds each request sent to the remote server.
	// Default: none; the host's cancellation ends a request, and a tool may
	// run as long as the host waits for it.
	RequestTimeout time.Duration
	// Logger receives the bridge's diagnostics. Default: slog.Default().
	// On stdio, stdout is the host's: log to stderr.
	Logger *slog.Logger
}

// defaultClientInfo is how a bridge introduces itself to the remote server
// unless Options.ClientInfo says otherwise.
var defaultClientInfo = mcp.Implementation{Name: "parley-bridge", Version: "1.0.0"}

// ServeURL is Serve with a Streamable HTTP transport to the MCP endpoint
// at url, sending its requests with Options.HTTPClient and Options.Header.
func ServeURL(ctx context.Context, host transport.Conn, url string, opts *Options) error {
	var o Options
	if opts != nil {
		o = *opts
	}
	return Serve(ctx, host, streamhttp.NewClientTransport(url, &streamhttp.ClientOptions{
		HTTPClient: o.HTTPClient,
		Header:     o.Header,
		Logger:     o.Logger,
	}), opts)
}

// Serve bridges a host, which speaks to the bridge as to a server over the
// stream connection host (stdio.ServerConn for a desktop host), to the
// remote server that remote connects to, until the host closes the
// connection (Serve then returns nil) or ctx ends.
//
// The host may speak any protocol version Parley serves: a legacy host
// opens a session with initialize, a 2026-07-28 host sends requests with
// the _meta envelope. The bridge connects to the remote server when the
// host's first request arrives, declaring the host's capabilities, and
// speaks whichever generation the remote server offers. It answers the
// host with the remote server's identity, capabilities and instructions,
// and forwards every request of the core protocol, the host's progress
// tokens, log levels and cancellations; progress, log messages, list
// changes and resource updates come back. Questions cross generations:
// see the package documentation.
func Serve(ctx context.Context, host transport.Conn, remote transport.Transport, opts *Options) error {
	b := newBridge(remote, opts)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b.ctx, b.cancel = ctx, cancel
	ready := make(chan struct{}) // b.conn is set: the read loop starts before NewConn returns
	b.conn = jsonrpc.NewConn(host, &jsonrpc.ConnOptions{
		Logger: b.log,
		Handler: jsonrpc.HandlerFunc(func(ctx context.Context, req *jsonrpc.Request) (any, error) {
			<-ready
			res, err := b.handle(ctx, req)
			if err != nil || res == nil {
				return res, err
			}
			raw, err := mcp.Marshal(res)
			if err != nil {
				b.log.Error("bridge: encoding a result", "method", req.Method, "err", err)
				return nil, wire.Internal("")
			}
			return jsonrpc.RawValid(raw), nil
		}),
	})
	close(ready)
	defer b.close()
	select {
	case <-b.conn.Done():
	case <-ctx.Done():
		b.conn.Close()
		return ctx.Err()
	}
	if err := b.conn.Err(); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, jsonrpc.ErrConnClosed) {
		return err
	}
	return nil
}

// bridge is one host connection and what it reaches of the remote server.
type bridge struct {
	opts   Options
	info   mcp.Implementation
	log    *slog.Logger
	remote transport.Transport
	ctx    context.Context // Serve's: remote sessions and streams live within it
	cancel context.CancelFunc
	conn   *jsonrpc.Conn // the host's connection

	mu sync.Mutex // serializes connecting and the host's initialize
	up atomic.Pointer[upstream]

	hostSession atomic.Pointer[server.Session] // set by a legacy host's initialize
	modernHost  atomic.Bool                    // a 2026-07-28 request succeeded: no initialize any more

	relays relays  // calls of a legacy server waiting for a 2026-07-28 host's next round
	watch  watches // resource subscriptions forwarded to the remote server
}

func newBridge(remote transport.Transport, opts *Options) *bridge {
	b := &bridge{remote: remote}
	if opts != nil {
		b.opts = *opts
	}
	b.log = b.opts.Logger
	if b.log == nil {
		b.log = slog.Default()
	}
	b.info = defaultClientInfo
	if b.opts.ClientInfo != nil {
		b.info = *b.opts.ClientInfo
	}
	if b.opts.MaxRounds <= 0 {
		b.opts.MaxRounds = 10
	}
	if b.opts.AnswerTimeout <= 0 {
		b.opts.AnswerTimeout = server.DefaultAnswerTimeout
	}
	if b.opts.RequestTimeout <= 0 {
		b.opts.RequestTimeout = -1 // client: none
	}
	b.relays.init()
	b.watch.init()
	return b
}

// upstream is the remote side: the bridge's session with the remote
// server, and the server the host talks to, which mirrors it.
type upstream struct {
	sess   *client.Session
	srv    *server.Server
	legacy bool // the remote server speaks a legacy version
}

// handle serves one message of the host, as server.ServeConn would, with
// the server made once the remote server is reached.
func (b *bridge) handle(ctx context.Context, req *jsonrpc.Request) (any, error) {
	if ss := b.hostSession.Load(); ss != nil {
		res, err := ss.Handle(ctx, req, b.notify, b.call)
		if err == nil && !req.IsNotification() {
			b.afterLegacy(req)
		}
		return res, err
	}
	if req.Method == mcp.MethodInitialize && !req.IsNotification() && !server.ClaimsEnvelope(req) && !b.modernHost.Load() {
		return b.initialize(ctx, req)
	}
	if req.IsNotification() {
		// notifications/cancelled is obeyed by the connection; a
		// 2026-07-28 host sends no other.
		return nil, nil
	}
	// A 2026-07-28 host declares its capabilities on each request, and
	// the bridge forwards them with each: the session itself declares
	// none (see connect).
	up, err := b.connect(&mcp.ClientCapabilities{}, false)
	if err != nil {
		return nil, b.unreachable(err)
	}
	res, err := up.srv.Handle(ctx, req, b.notify)
	if err == nil {
		b.modernHost.Store(true)
	}
	return res, err
}

// initialize opens the legacy host's session, once, after connecting to
// the remote server with the capabilities the host declared.
func (b *bridge) initialize(ctx context.Context, req *jsonrpc.Request) (any, error) {
	var p mcp.InitializeRequestParams
	_ = json.Unmarshal(req.Params, &p) // server.Initialize reports bad params
	up, err := b.connect(&p.Capabilities, true)
	if err != nil {
		return nil, b.unreachable(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if ss := b.hostSession.Load(); ss != nil {
		return ss.Handle(ctx, req, b.notify, b.call) // "already initialized"
	}
	ss, res, err := up.srv.Initialize(ctx, req, &server.SessionOptions{Notify: b.notify})
	if err != nil {
		return nil, err
	}
	b.hostSession.Store(ss)
	return res, nil
}

// unreachable is what the host hears when the remote server cannot be
// reached: one message, with the HTTP status when there was one (a 401
// says where to look); the cause (a refused connection, an OAuth failure,
// the server's own error) is logged, since its Go text names addresses
// and types that are nobody's business on the wire.
func (b *bridge) unreachable(err error) error {
	b.log.Error("bridge: cannot reach the remote server", "err", err)
	var status *transport.HTTPStatusError
	if errors.As(err, &status) {
		return wire.Internal("Internal error: the bridge cannot reach the remote server (HTTP %d)", status.StatusCode)
	}
	return wire.Internal("Internal error: the bridge cannot reach the remote server")
}

// notify sends a notification to the host.
func (b *bridge) notify(ctx context.Context, method string, params any) error {
	return b.conn.Notify(ctx, method, params)
}

// call sends a request to the host: a legacy host's back-channel.
func (b *bridge) call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return b.conn.CallRaw(ctx, method, params)
}

// close ends what the bridge holds of the remote server, and waits for
// the relayed calls to close their sessions, so that none is left open on
// the remote server.
func (b *bridge) close() {
	b.cancel()
	b.relays.closeAll()
	b.relays.running.Wait()
	if ss := b.hostSession.Load(); ss != nil {
		ss.Close()
	}
	if up := b.up.Load(); up != nil {
		_ = up.sess.Close()
	}
}
