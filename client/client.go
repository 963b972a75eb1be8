package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
)

// Options configures a Client. A nil *Options means defaults.
type Options struct {
	// Capabilities are what the client declares: on every request under
	// 2026-07-28, once in initialize on a legacy session. The client also
	// holds servers to them, in both generations: a request for input
	// they do not allow is refused without running a callback. Default:
	// what the callbacks below can answer (elicitation in form mode for
	// Elicit, sampling for Sample, roots for ListRoots), or none ({}).
	Capabilities *mcp.ClientCapabilities
	// Extensions are the MCP extensions the client supports, keyed by
	// identifier (such as "io.modelcontextprotocol/tasks"), each with its
	// settings as raw JSON (nil means {}). They are declared in the
	// client's capabilities beside what Capabilities says, or what the
	// callbacks derive; an extension in both takes its settings from here.
	Extensions map[string]json.RawMessage
	// Elicit answers a server's elicitation requests (forms, URLs to open):
	// the inputRequests of a 2026-07-28 round and a legacy server's
	// elicitation/create alike. URL mode reaches it only when Capabilities
	// declares elicitation.url.
	Elicit ElicitFunc
	// Sample answers a server's sampling requests with the host's model,
	// in either generation.
	Sample SampleFunc
	// ListRoots tells a server the client's roots, in either generation.
	ListRoots ListRootsFunc
	// Loop tunes the automatic multi-round-trip loop of CallTool,
	// GetPrompt and ReadResource: the round limit, the backoff on rounds
	// that carry only state, and a hook that sees every round. A legacy
	// session has no rounds, so none of it applies there.
	Loop *LoopOptions
	// ProtocolVersion chooses how Connect settles the protocol version.
	//
	// Empty (the default) is automatic: Connect asks server/discover with
	// the newest version Parley speaks, negotiating down to an older
	// 2026-07-28-style version both sides speak if the server asks for
	// one. A server that does not speak that generation gets the legacy
	// initialize handshake instead: one that answers with any error but
	// the few only 2026-07-28 defines (-32020, -32021, and a -32022 naming
	// a 2026-07-28-style version the client speaks), in-band or in the
	// body of an HTTP 400, 404, 405 or other 4xx (deployed legacy servers
	// say -32601, -32602, -32600 or -32000 to a request before
	// initialize, or send an empty body), and one whose connection fails
	// or closes before it answers (a stdio server that exits on an
	// unknown first request; Connect then calls the transport's Connect
	// once more and initializes on the new connection, which a transport
	// that spawns its server must support). An HTTP 401 or 403, a 5xx, a
	// POST that failed and a probe left unanswered are never taken for a
	// legacy server: Connect fails with them, so that authorization and
	// outages are not hidden by a downgrade (the status is in the error
	// as a *transport.HTTPStatusError). See
	// docs/design/014-detecting-legacy-servers.md.
	//
	// A 2026-07-28-generation version pins it: every request carries it,
	// nothing is ever initialized, and a server that refuses it (-32022)
	// makes the request fail with an error wrapping ErrUnsupportedVersion
	// instead of switching versions.
	//
	// A legacy version (2025-11-25, 2025-06-18 or 2025-03-26) pins the
	// legacy generation: Connect initializes at once, offering that
	// version, and accepts any legacy version the client speaks in the
	// server's answer (Session.ProtocolVersion reports it).
	ProtocolVersion mcp.ProtocolVersion
	// LogLevel, when set, asks the server for log messages of that level
	// and above; they arrive at OnLog. Under 2026-07-28 every request
	// carries it; on a legacy session Connect sends logging/setLevel once,
	// after initialize, if the server declared logging.
	LogLevel mcp.LoggingLevel
	// OnLog receives notifications/message. It runs on the connection's
	// read loop: return quickly, and do not wait for calls on the session
	// (nor call Session.Close) from it, since their responses arrive on
	// the same loop.
	OnLog func(ctx context.Context, p *mcp.LoggingMessageNotificationParams)
	// OnProgress receives progress for requests. When set, every request
	// carries a progress token, unique within the session. Progress for a
	// request arrives before the request returns. It runs on the
	// connection's read loop, like OnLog, with the same restrictions.
	OnProgress func(ctx context.Context, p *mcp.ProgressNotificationParams)
	// Logger receives the client's own diagnostics. Default: slog.Default().
	Logger *slog.Logger
	// RequestTimeout bounds the wait for the answer to each request the
	// client sends, so that a server that goes silent cannot hold a call
	// for ever: a request unanswered after RequestTimeout is cancelled and
	// fails with a *RequestTimeoutError (errors.Is(err,
	// context.DeadlineExceeded) holds). It applies to each request on its
	// own: every round of the multi-round-trip loop of CallTool, GetPrompt
	// and ReadResource is a request (the callbacks that answer a round's
	// input requests run between rounds, outside any timeout), as are the
	// lists, Complete, Discover and, on a legacy session, initialize and
	// every request; there, while a callback answers the server's request
	// for input, the timer waits for it. A subscriptions/listen stream
	// (Listen) is never cut: it lasts as long as its caller wants. The
	// context of a call still bounds it too; the earlier limit wins.
	// Zero means DefaultRequestTimeout (60 s); negative means none.
	RequestTimeout time.Duration
	// Cache configures the session's cache of the results the server
	// marks cacheable (ttlMs and cacheScope on server/discover, the lists
	// and resources/read): on by default, kept per session, so a new
	// session starts empty. See CacheOptions.
	Cache *CacheOptions
	// Middleware wraps every request the client sends (whatever the
	// transport), every input request it answers (the inputRequests of a
	// 2026-07-28 round and a legacy server's requests alike) and every
	// logical call of CallTool, GetPrompt and ReadResource, in the order
	// given: the first is outermost. See [Middleware]. nil: none, at no
	// cost.
	Middleware []Middleware
	// DisableRecovery turns off what a legacy session does when a
	// request fails in a way it can recover from. By default:
	//
	//   - When the server has lost the session (a Streamable HTTP server
	//     that restarted, expired it, or sits behind a load balancer that
	//     sent the request elsewhere answers its Mcp-Session-Id with 404,
	//     or with 400 and a refused ping), the session opens a new one
	//     with initialize, once however many requests found the loss,
	//     offering the version it offered first and setting LogLevel
	//     again, and sends the request that found it again on the new
	//     session when it is safe to repeat: a ping, a list,
	//     resources/read, prompts/get, completion/complete, or a
	//     tools/call of a tool the server annotated readOnlyHint or
	//     idempotentHint in the session's tools/list. Any other request
	//     fails with a *SessionEndedError whose Reinitialized is true: the
	//     server did not act on it, and the caller decides whether to send
	//     it again. A request is sent again at most once, so a server that
	//     keeps losing sessions cannot keep the client initializing. The
	//     loss, and the new session with what its server declares
	//     differently, go to Logger; middleware sees the requests sent
	//     because of it (Request.Reinitialization, Request.Repeat).
	//   - When a request's POST failed without an answer (a connection the
	//     server closed or reset, as a restarted server's pooled
	//     connections are), a request safe to repeat is sent once more.
	//
	// Open Listen streams of a lost session end with an error matching
	// ErrSessionEnded either way. With DisableRecovery set, every request
	// fails with a *SessionEndedError once the server has lost the
	// session, until the caller connects again. A session of the
	// 2026-07-28 generation has no session to lose. See
	// docs/design/041-lost-sessions.md.
	DisableRecovery bool
}

// Client is an MCP client. One Client may open any number of sessions.
type Client struct {
	info mcp.Implementation
	opts Options
	log  *slog.Logger

	// versions are the protocol versions the client speaks, newest
	// (preferred) first.
	versions []mcp.ProtocolVersion

	loop loopPolicy

	requestTimeout time.Duration // Options.RequestTimeout, resolved; 0: none

	chain Handler // Options.Middleware around the terminal handler; nil: none
}

// spokenVersions returns the versions a client speaks, newest first: the
// modern ones Parley knows, then the legacy ones it can initialize.
func spokenVersions() []mcp.ProtocolVersion { return mcp.SpokenVersions() }

// isLegacy reports whether v is spoken over an initialize handshake. Any
// other version the client speaks is spoken the 2026-07-28 way, with the
// envelope on every request (a newer version than Parley knows, as the
// tests play one, included).
func isLegacy(v mcp.ProtocolVersion) bool { return v.Era() == mcp.EraLegacy }

// New returns a client that introduces itself as info.
func New(info mcp.Implementation, opts *Options) *Client {
	c := &Client{info: info}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.Capabilities == nil {
		c.opts.Capabilities = deriveCapabilities(&c.opts)
	}
	if len(c.opts.Extensions) > 0 {
		caps := *c.opts.Capabilities // the caller's value is not written
		caps.Extensions = maps.Clone(caps.Extensions)
		if caps.Extensions == nil {
			caps.Extensions = make(map[string]json.RawMessage, len(c.opts.Extensions))
		}
		for id, settings := range c.opts.Extensions {
			if settings == nil {
				settings = json.RawMessage("{}")
			}
			caps.Extensions[id] = settings
		}
		c.opts.Capabilities = &caps
	}
	c.loop = newLoopPolicy(c.opts.Loop)
	c.chain = buildChain(c.opts.Middleware)
	c.requestTimeout = resolveRequestTimeout(c.opts.RequestTimeout)
	c.log = c.opts.Logger
	if c.log == nil {
		c.log = slog.Default()
	}
	c.versions = spokenVersions()
	return c
}

// speaks reports whether the client can speak v.
func (c *Client) speaks(v mcp.ProtocolVersion) bool { return slices.Contains(c.versions, v) }

// ErrUnsupportedVersion is wrapped by the error of Connect, or of any later
// request, when the server refuses the session's protocol version (-32022)
// and it cannot switch: the client and server share no version, the version
// is pinned, or the server refused the version it had just offered. The
// server's error stays in the chain (see mcp.AsUnsupportedProtocolVersion).
// Connect's error wraps it too when the legacy handshake finds nothing in
// common: the server has no initialize (-32601), or answers it with a
// version the client does not speak.
var ErrUnsupportedVersion = errors.New("client: no protocol version in common with the server")

// Connect opens a session over t and settles the protocol version as
// Options.ProtocolVersion says (see there): by default it asks
// server/discover, switching once to an older version both sides speak if
// the server refuses the newest (-32022), and falls back to the legacy
// initialize handshake for a server that does not speak 2026-07-28 at all.
// When client and server share no version, the error wraps
// ErrUnsupportedVersion. On failure the transport is closed.
func (c *Client) Connect(ctx context.Context, t transport.Transport) (*Session, error) {
	version := c.opts.ProtocolVersion
	if version != "" && !c.speaks(version) {
		return nil, fmt.Errorf("client: protocol version %q: %w", version, ErrUnsupportedVersion)
	}
	auto := version == ""
	if auto {
		version = c.mutualVersion(c.versions, false)
		if version == "" {
			// A client that speaks only legacy versions has nothing to
			// probe with: it initializes at once.
			version = c.mutualVersion(c.versions, true)
		}
		if version == "" {
			return nil, fmt.Errorf("client: the client speaks no protocol version: %w", ErrUnsupportedVersion)
		}
	}
	tc, err := t.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("client: connecting: %w", err)
	}
	if isLegacy(version) {
		s := newSession(c, tc, version, !auto)
		if err := s.initialize(ctx, version, nil); err != nil {
			s.Close()
			return nil, err
		}
		return s, nil
	}
	s := newSession(c, tc, version, !auto)
	_, err = s.Discover(ctx)
	if err == nil {
		return s, nil
	}
	var (
		offer mcp.ProtocolVersion
		ok    bool
	)
	if auto {
		offer, ok = c.legacyFallback(ctx, err)
	}
	if !ok {
		s.Close()
		return nil, err
	}
	return c.connectLegacy(ctx, t, s, offer, err)
}

// mutualVersion picks the newest version in offered that this client
// speaks, of the legacy generation or of the 2026-07-28 one, or "".
func (c *Client) mutualVersion(offered []mcp.ProtocolVersion, legacy bool) mcp.ProtocolVersion {
	for _, v := range c.versions { // newest first
		if isLegacy(v) == legacy && slices.Contains(offered, v) {
			return v
		}
	}
	return ""
}

// InvalidResponseError reports a response that breaks the protocol: a
// result that does not decode, an unknown resultType, or an
// input_required result on a method that cannot carry one or on a legacy
// session, whose servers ask with requests instead.
type InvalidResponseError struct {
	Method string
	Err    error
}

// Error names the method and what was wrong with its response.
func (e *InvalidResponseError) Error() string {
	return fmt.Sprintf("client: invalid response to %s: %v", e.Method, e.Err)
}

// Unwrap returns the decoding error.
func (e *InvalidResponseError) Unwrap() error { return e.Err }

// asRPCError returns the peer's error object if err is one.
func asRPCError(err error) (*jsonrpc.Error, bool) {
	var e *jsonrpc.Error
	ok := errors.As(err, &e)
	return e, ok
}
