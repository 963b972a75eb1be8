package streamhttp

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/parley-mcp/parley/internal/jsontext"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// Defaults of HandlerOptions.
const (
	// DefaultMaxBodyBytes is the largest request body the handler reads.
	DefaultMaxBodyBytes = 4 << 20
	// DefaultKeepAlive is how long an open event stream may stay quiet
	// before it gets a keep-alive comment.
	DefaultKeepAlive = 15 * time.Second
	// DefaultBodyTimeout is how long the handler waits for the whole body
	// of a POST, from the moment it starts reading it.
	DefaultBodyTimeout = 30 * time.Second
	// DefaultWriteTimeout is how long one write of a response (an event of
	// a stream, a keep-alive, a JSON response) may block on a client that
	// does not read.
	DefaultWriteTimeout = 30 * time.Second
)

// HandlerOptions configures the handler made by NewHandler. A nil
// *HandlerOptions means defaults.
type HandlerOptions struct {
	// MaxBodyBytes is the largest request body accepted; a larger one is
	// answered with 413 Request Entity Too Large. Zero or negative means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64

	// KeepAlive is how long an event stream may stay quiet before the
	// handler sends a ": keep-alive" comment on it, so that proxies and
	// clients do not take a quiet stream (in practice, a
	// subscriptions/listen stream, or the GET stream of a legacy session)
	// for a dead one. Zero means DefaultKeepAlive; negative turns
	// keep-alives off.
	KeepAlive time.Duration

	// BodyTimeout bounds the time the body of a POST may take to arrive,
	// counted from when the handler starts reading it (the headers have
	// arrived by then; http.Server.ReadHeaderTimeout bounds those). A body
	// that trickles in, or never finishes, is answered with 408 Request
	// Timeout and its connection closed, so a slow peer cannot hold a
	// goroutine and a connection for ever. It is a per-request read
	// deadline (http.ResponseController.SetReadDeadline), lifted once the
	// body is read: unlike http.Server.ReadTimeout, it does not also bound
	// a long-lived response, such as a subscriptions/listen stream. It
	// replaces any ReadTimeout of the server while the body is read. Zero
	// means DefaultBodyTimeout (30 s); negative sets no deadline, leaving
	// the http.Server's own.
	BodyTimeout time.Duration

	// WriteTimeout bounds each write of a response: an event of a stream,
	// a keep-alive comment, a JSON response. A write that a client does not
	// take (it stopped reading, and the buffers between are full) fails
	// after WriteTimeout, which ends the request: its context is cancelled
	// and its connection closed. It is a deadline per write
	// (http.ResponseController.SetWriteDeadline), renewed before each one,
	// so it never cuts a stream that is read, however long it lasts; unlike
	// http.Server.WriteTimeout, which bounds a whole response and would cut
	// every long stream (the handler lifts that one when a stream starts).
	// A client that stopped reading is noticed only once the buffers are
	// full, which on a quiet stream can take long: WriteTimeout bounds
	// what a stuck write costs, not how soon a dead reader is found (a
	// closed connection is found at once). Zero means DefaultWriteTimeout
	// (30 s); negative sets no deadline.
	WriteTimeout time.Duration

	// AllowedHosts lists the Host header values accepted, as "name" (any
	// port) or "name:port". When empty, the handler protects servers that
	// listen on a loopback address: a request that arrived on a loopback
	// address must name localhost, 127.0.0.1 or [::1] (any port). When
	// set, the list replaces that rule and applies whatever the listening
	// address. Requests with another Host get 403 Forbidden.
	AllowedHosts []string

	// AllowedOrigins lists the Origin header values accepted besides the
	// default ones, as "scheme://host[:port]". By default a request without
	// Origin is accepted; a request with one is accepted when it arrived on
	// a loopback address and the Origin is loopback too (any port), or, on
	// other addresses, when the Origin is the request's own Host or one of
	// AllowedHosts. Anything else gets 403 Forbidden.
	//
	// Ports are compared as they are meant: a missing port is the default
	// port of the Origin's scheme (80 for http, 443 for https), on the
	// Origin, on the Host and on the entries of this list alike. So
	// "https://mcp.example.com:443" and "https://mcp.example.com" are one
	// origin, and so are Origin "http://x:80" and Host "x", or Origin
	// "https://x" and Host "x:443"; any other difference in port makes a
	// different origin: Origin "https://mcp.example.com:8443" is not the
	// same origin as Host "mcp.example.com", nor "http://x" as Host "x:443".
	AllowedOrigins []string

	// DisableHostCheck turns off the Host and Origin checks entirely. Only
	// use it behind a proxy that does them.
	DisableHostCheck bool

	// FindTool returns the definition of the tool a tools/call names, whose
	// x-mcp-header annotations the handler enforces against the request's
	// Mcp-Param-* headers. It reports false for an unknown tool, which then
	// has no headers to check (its handler rejects the call anyway).
	//
	// When nil, the handler asks the server itself: on each tools/call
	// that has arguments or Mcp-Param-* headers, it runs tools/list (page
	// by page, through the server's middleware, with the call's _meta and
	// context) until it finds the tool. Set FindTool to skip that work
	// when the tool definitions are known in advance.
	FindTool func(ctx context.Context, name string) (*mcp.Tool, bool)

	// Logger receives the handler's diagnostics. Default: slog.Default().
	Logger *slog.Logger

	// Callers says who the caller of an unauthenticated request is, for
	// the limits per caller: its address, grouped by prefix, and, behind
	// proxies named here, the address they forward. Nil means defaults:
	// the connection's peer, IPv6 by /64, no forwarding header believed.
	// See CallerOptions.
	Callers *CallerOptions

	// Sessions configures how legacy clients (2025-11-25 and earlier),
	// which start with initialize, are served on the same endpoint: with
	// sessions (the default) or statelessly, and within which limits. Nil
	// means defaults. It has no effect when the server serves no legacy
	// version. See SessionOptions.
	Sessions *SessionOptions
}

// Handler serves a Streamable HTTP MCP endpoint; NewHandler makes one.
// Mount it (or any middleware around it) with an http.ServeMux, and keep
// the *Handler itself for Shutdown: a wrapper cannot lose it.
type Handler struct {
	s         *server.Server
	maxBody   int64
	keepAlive time.Duration
	bodyTime  time.Duration // HandlerOptions.BodyTimeout, resolved; <= 0: none
	writeTime time.Duration // HandlerOptions.WriteTimeout, resolved; <= 0: none
	origins   *originPolicy
	findTool  func(ctx context.Context, name string) (*mcp.Tool, bool)
	log       *slog.Logger
	callers   callerPolicy // HandlerOptions.Callers, resolved

	legacy   bool          // the server serves legacy versions: initialize is answered
	sessions *sessionStore // legacy sessions; nil when there are none (stateless legacy mode, or no legacy)

	shutdown shutdownState // see Shutdown
}

// NewHandler returns the handler of a Streamable HTTP MCP endpoint served
// by s. Mount it at the endpoint's path, and shut it down before the
// http.Server that serves it (see Handler.Shutdown):
//
//	h := streamhttp.NewHandler(s, nil)
//	mux.Handle("/mcp", h)
//	...
//	_ = h.Shutdown(ctx)   // ends its streams and sessions, waits for its requests
//	_ = srv.Shutdown(ctx)
//
// For 2026-07-28 the handler is stateless: every POST is served on its own
// and nothing is kept between them, so any number of handlers (in any
// number of processes) can serve one endpoint behind a load balancer. When
// s also serves legacy versions (the default), the same endpoint serves
// legacy clients too, with sessions kept in this handler's memory (a load
// balancer must then send a session's requests to the instance that
// opened it), or statelessly with SessionOptions.Stateless. See the package
// documentation for what it answers when.
func NewHandler(s *server.Server, opts *HandlerOptions) *Handler {
	var o HandlerOptions
	if opts != nil {
		o = *opts
	}
	h := &Handler{
		s:         s,
		maxBody:   o.MaxBodyBytes,
		keepAlive: o.KeepAlive,
		bodyTime:  o.BodyTimeout,
		writeTime: o.WriteTimeout,
		origins:   newOriginPolicy(&o),
		findTool:  o.FindTool,
		log:       o.Logger,
		callers:   newCallerPolicy(o.Callers),
	}
	if h.maxBody <= 0 {
		h.maxBody = DefaultMaxBodyBytes
	}
	if h.keepAlive == 0 {
		h.keepAlive = DefaultKeepAlive
	}
	if h.bodyTime == 0 {
		h.bodyTime = DefaultBodyTimeout
	}
	if h.writeTime == 0 {
		h.writeTime = DefaultWriteTimeout
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	h.legacy = s.ServesLegacy()
	if so := o.Sessions.resolved(); h.legacy && !so.Stateless {
		h.sessions = newSessionStore(h, so)
	}
	return h
}

// ServeHTTP serves one HTTP request: a POST of one JSON-RPC message (of
// 2026-07-28, or of a legacy client), or a legacy session's GET or DELETE.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if why := h.origins.check(r); why != "" {
		h.log.Warn("streamhttp: refusing request (DNS rebinding protection)", "reason", why, "remote", r.RemoteAddr)
		writeError(w, http.StatusForbidden, jsonrpc.ID{}, wire.InvalidRequest("Forbidden: %s", why))
		return
	}
	switch r.Method {
	case http.MethodPost:
	case http.MethodGet:
		h.serveGet(w, r)
		return
	case http.MethodDelete:
		h.serveDelete(w, r)
		return
	default:
		h.methodNotAllowed(w)
		return
	}
	if ct := r.Header["Content-Type"]; len(ct) == 0 || mediaType(ct[0]) != "application/json" {
		got := "none"
		if len(ct) > 0 {
			got = echoHeader(ct[0])
		}
		writeError(w, http.StatusUnsupportedMediaType, jsonrpc.ID{}, wire.InvalidRequest("%s", "Unsupported Media Type: the body must be sent as Content-Type: application/json (got "+got+")"))
		return
	}
	if accept := r.Header["Accept"]; !acceptsJSON(accept) && !acceptsEventStream(accept) {
		// Every answer is JSON or an event stream: there is nothing this
		// client would take.
		writeError(w, http.StatusNotAcceptable, jsonrpc.ID{}, wire.InvalidRequest("Not Acceptable: the answer is application/json or text/event-stream; send Accept: application/json, text/event-stream"))
		return
	}
	body, err := h.readBody(w, r)
	if err != nil {
		switch {
		case errors.Is(err, errBodyTooLarge):
			writeError(w, http.StatusRequestEntityTooLarge, jsonrpc.ID{}, wire.InvalidRequest("Request body too large: the limit is %d bytes", h.maxBody))
		case errors.Is(err, os.ErrDeadlineExceeded):
			h.log.Debug("streamhttp: request body timed out", "remote", r.RemoteAddr, "limit", h.bodyTime)
			// The connection's read side is past its deadline: it cannot
			// carry another request.
			w.Header()["Connection"] = connectionClose
			writeError(w, http.StatusRequestTimeout, jsonrpc.ID{}, wire.InvalidRequest("Request Timeout: the request body did not arrive within %s", h.bodyTime))
		default:
			h.log.Debug("streamhttp: reading request body", "err", err)
			writeError(w, http.StatusBadRequest, jsonrpc.ID{}, wire.ParseError("Parse error: could not read the request body"))
		}
		return
	}

	msg, id, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		rpcErr := asRPCError(err)
		if jsontext.FirstByte(body) == '[' {
			rpcErr = wire.InvalidRequest("Invalid request: batches are not supported; POST one JSON-RPC message at a time")
		}
		writeError(w, http.StatusBadRequest, id, rpcErr)
		return
	}
	req, ok := msg.(*jsonrpc.Request)
	if h.legacy && (!ok || !speaks2026(r, req)) {
		// Legacy clients: a session's messages (its answers to the
		// server's requests among them), initialize, and in stateless
		// mode every legacy request.
		if h.sessions != nil {
			if sid := r.Header.Get(HeaderSessionID); sid != "" {
				ls := h.sessions.lookup(sid, r)
				if ls == nil {
					var rid jsonrpc.ID
					if ok {
						rid = req.ID
					}
					h.unknownSession(w, rid)
					return
				}
				h.serveSessionPost(w, r, ls, msg)
				return
			}
		}
		if ok && !req.IsNotification() {
			switch {
			case req.Method == mcp.MethodInitialize:
				h.serveInitialize(w, r, req)
				return
			case h.sessions == nil:
				h.serveStateless(w, r, req)
				return
			case protocolVersionHeader(r.Header) != "":
				// A legacy version in the header and no session: the
				// client lost it, or never had one.
				writeError(w, http.StatusBadRequest, req.ID, wire.InvalidRequest("%s", "Bad Request: "+
					HeaderSessionID+" header is required; send initialize to start a session (2026-07-28 requests carry _meta instead)"))
				return
			}
			// Neither a session nor a version: served as 2026-07-28,
			// whose answer names what is missing from _meta.
		}
	}
	if !ok {
		writeError(w, http.StatusBadRequest, jsonrpc.ID{}, wire.InvalidRequest("Invalid request: a client must not send JSON-RPC responses"))
		return
	}
	if req.IsNotification() {
		// Notifications need no headers (2026-07-28 leaves them undefined)
		// and have no answer. The core defines none a server acts on over
		// HTTP: cancellation is closing the request's stream.
		h.s.Handle(r.Context(), req, nil)
		w.WriteHeader(http.StatusAccepted)
		return
	}
	h.serveRequest(w, r, req)
}

// serveRequest checks a request against its headers and serves it.
func (h *Handler) serveRequest(w http.ResponseWriter, r *http.Request, msg *jsonrpc.Request) {
	req, err := h.s.Prepare(msg)
	if err != nil {
		rpcErr := asRPCError(err)
		if rpcErr.Code == mcp.CodeUnsupportedProtocolVersion {
			// A header that disagrees with the body is the more basic
			// problem: report it rather than the version.
			if mm := checkVersionHeader(r.Header, msg); mm != nil {
				rpcErr = mm
			}
		}
		status := http.StatusBadRequest
		if rpcErr.Code == jsonrpc.CodeMethodNotFound {
			status = http.StatusNotFound
		}
		writeError(w, status, msg.ID, rpcErr)
		return
	}
	if mm := h.checkHeaders(r, req); mm != nil {
		writeError(w, http.StatusBadRequest, msg.ID, mm)
		return
	}
	streamOK := acceptsEventStream(r.Header.Values("Accept"))
	if req.Method == mcp.MethodSubscriptionsListen && !streamOK {
		writeError(w, http.StatusNotAcceptable, msg.ID, wire.InvalidRequest("Not Acceptable: subscriptions/listen answers with an event stream; send Accept: text/event-stream"))
		return
	}

	if req.Method == mcp.MethodSubscriptionsListen {
		if !h.shutdown.enter() {
			shuttingDown(w, msg.ID)
			return
		}
		defer h.shutdown.leave()
	}
	rs := newResponder(w, r, msg.ID, streamOK, h.keepAlive, h.writeTime, h.log)
	req.SetNotify(rs.notify)
	res, err := h.s.Serve(h.callerContext(r), req)
	rs.finish(res, err)
}

// methodNotAllowed answers a method the endpoint does not serve, and a GET
// or DELETE that names no session (all a 2026-07-28 client could send).
func (h *Handler) methodNotAllowed(w http.ResponseWriter) {
	w.Header().Set("Allow", http.MethodPost)
	msg := "Method Not Allowed: this MCP endpoint accepts only POST (2026-07-28 has no GET stream and no sessions)"
	if h.sessions != nil {
		msg = "Method Not Allowed: this MCP endpoint accepts POST, and GET and DELETE with the " + HeaderSessionID +
			" of a legacy session (2026-07-28 has no GET stream and no sessions)"
	}
	writeError(w, http.StatusMethodNotAllowed, jsonrpc.ID{}, wire.InvalidRequest("%s", msg))
}

// errBodyTooLarge reports a request body over MaxBodyBytes.
var errBodyTooLarge = errors.New("request body too large")

// readBody reads the whole request body, up to the limit and within
// BodyTimeout, and closes it once read: net/http then knows it is done
// with, where otherwise the first write of the response drains the rest
// of it (io.CopyN into io.Discard, from deep in a stream's first flush,
// which grew an idle listen stream's goroutine stack from 8 to 16 KiB).
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	if r.ContentLength > h.maxBody {
		return nil, errBodyTooLarge
	}
	if h.bodyTime > 0 && setReadDeadline(w, time.Now().Add(h.bodyTime)) == nil {
		// (A writer that cannot take deadlines, such as a test recorder,
		// reads without one.) The deadline is lifted once the body is
		// in: left in place, it would end the request (net/http cancels
		// its context when the connection's background read fails),
		// cutting every long stream. After a failure it stays, so that
		// net/http's draining of the rest of the body fails too, at once.
		body, err := h.readBodyNow(r)
		if err == nil {
			setReadDeadline(w, time.Time{})
			r.Body.Close()
		}
		return body, err
	}
	body, err := h.readBodyNow(r)
	if err != nil {
		return nil, err
	}
	r.Body.Close()
	return body, nil
}

// readBodyNow reads the body: readBody without the deadline.
func (h *Handler) readBodyNow(r *http.Request) ([]byte, error) {
	if r.ContentLength > 0 {
		// The usual case: read exactly what was announced, in one buffer.
		buf := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	var b bytes.Buffer
	n, err := b.ReadFrom(io.LimitReader(r.Body, h.maxBody+1))
	if err != nil {
		return nil, err
	}
	if n > h.maxBody {
		return nil, errBodyTooLarge
	}
	return b.Bytes(), nil
}

// deadliner is what net/http's own ResponseWriters implement; asserting it
// directly spares the allocation of an http.ResponseController on every
// request.
type deadliner interface {
	SetReadDeadline(time.Time) error
	SetWriteDeadline(time.Time) error
}

// setReadDeadline sets the read deadline of w's connection (or HTTP/2
// stream).
func setReadDeadline(w http.ResponseWriter, t time.Time) error {
	if d, ok := w.(deadliner); ok {
		return d.SetReadDeadline(t)
	}
	return http.NewResponseController(w).SetReadDeadline(t)
}

// writeDeadline returns the deadline of a write starting now: zero (none)
// when WriteTimeout is off.
func writeDeadline(d time.Duration) time.Time {
	if d <= 0 {
		return time.Time{}
	}
	return time.Now().Add(d)
}

// asRPCError returns err as a JSON-RPC error object: itself when it is one,
// otherwise an internal error (server.Prepare and Serve only return
// *jsonrpc.Error).
func asRPCError(err error) *jsonrpc.Error {
	var e *jsonrpc.Error
	if errors.As(err, &e) && e != nil {
		return e
	}
	return wire.Internal("")
}

// statusOf is the HTTP status of a JSON response carrying a handler's
// error: the codes the specification pins get their status, the rest
// travel in-band with 200.
func statusOf(code int64) int {
	switch code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case mcp.CodeHeaderMismatch, mcp.CodeMissingRequiredClientCapability, mcp.CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// writeError writes a JSON-RPC error response as application/json.
func writeError(w http.ResponseWriter, status int, id jsonrpc.ID, e *jsonrpc.Error) {
	msg, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: e})
	if err != nil { // error data that is not JSON
		bare := *e
		bare.Data = nil
		msg, _ = jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id, Error: &bare})
	}
	writeJSON(w, status, msg)
}

func writeJSON(w http.ResponseWriter, status int, msg []byte) {
	hdr := w.Header()
	hdr["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	w.Write(msg)
}

var (
	jsonContentType  = []string{"application/json"}
	sseContentType   = []string{"text/event-stream"}
	noCache          = []string{"no-cache"}
	noAccelBuffering = []string{"no"}
	connectionClose  = []string{"close"}
)
