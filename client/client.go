package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
)

// Options configures a Client. A nil *Options means defaults.
type Options struct {
	// Capabilities are declared on every request. Default: what the
	// callbacks below can answer (elicitation for Elicit, sampling for
	// Sample, roots for ListRoots), or none ({}).
	Capabilities *mcp.ClientCapabilities
	// Elicit answers a server's elicitation requests (forms, URLs to open).
	Elicit ElicitFunc
	// Sample answers a server's sampling requests with the host's model.
	Sample SampleFunc
	// ListRoots tells a server the client's roots.
	ListRoots ListRootsFunc
	// Loop tunes the automatic multi-round-trip loop of CallTool,
	// GetPrompt and ReadResource: the round limit, the backoff on rounds
	// that carry only state, and a hook that sees every round.
	Loop *LoopOptions
	// ProtocolVersion pins the protocol version: every request carries it,
	// and a server that refuses it (-32022) makes the request fail with an
	// error wrapping ErrUnsupportedVersion instead of switching versions.
	// Default: the newest version Parley speaks, negotiated down if the
	// server asks for an older one that the client speaks too.
	ProtocolVersion mcp.ProtocolVersion
	// LogLevel, when set, asks the server for log messages of that level
	// and above on every request; they arrive at OnLog.
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
}

// spokenVersions returns the versions a client speaks, newest first: the
// modern ones Parley knows. A legacy server needs the initialize
// handshake, which this client does not speak yet.
func spokenVersions() []mcp.ProtocolVersion {
	var vs []mcp.ProtocolVersion
	for _, v := range mcp.KnownVersions() { // newest first
		if v.Era() == mcp.EraModern {
			vs = append(vs, v)
		}
	}
	return vs
}

// New returns a client that introduces itself as info.
func New(info mcp.Implementation, opts *Options) *Client {
	c := &Client{info: info}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.Capabilities == nil {
		c.opts.Capabilities = deriveCapabilities(&c.opts)
	}
	c.loop = newLoopPolicy(c.opts.Loop)
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
var ErrUnsupportedVersion = errors.New("client: no protocol version in common with the server")

// Connect opens a session over t and settles the protocol version: it asks
// server/discover with the preferred version and, if the server refuses it
// (-32022), retries once with the newest version both sides speak (unless
// Options.ProtocolVersion pins the version). When they share none, the
// error wraps ErrUnsupportedVersion. On failure the transport is closed.
func (c *Client) Connect(ctx context.Context, t transport.Transport) (*Session, error) {
	version, pinned := c.opts.ProtocolVersion, true
	if version == "" {
		version, pinned = c.versions[0], false
	}
	if !c.speaks(version) {
		return nil, fmt.Errorf("client: protocol version %q: %w", version, ErrUnsupportedVersion)
	}
	tc, err := t.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("client: connecting: %w", err)
	}
	s := newSession(c, tc, version, pinned)
	if _, err := s.Discover(ctx); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// mutualVersion picks the newest version in offered that this client
// speaks, or "".
func (c *Client) mutualVersion(offered []mcp.ProtocolVersion) mcp.ProtocolVersion {
	for _, v := range c.versions { // newest first
		if slices.Contains(offered, v) {
			return v
		}
	}
	return ""
}

// InvalidResponseError reports a response that breaks the protocol: a
// result that does not decode, an unknown resultType, or an
// input_required result on a method that cannot carry one.
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
