package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
)

// Options configures a Client. A nil *Options means defaults.
type Options struct {
	// Capabilities are declared on every request. Default: none ({}).
	Capabilities *mcp.ClientCapabilities
	// ProtocolVersion pins the protocol version. Default: the newest
	// version Parley speaks, negotiated down if the server asks.
	ProtocolVersion mcp.ProtocolVersion
	// LogLevel, when set, asks the server for log messages of that level
	// and above on every request; they arrive at OnLog.
	LogLevel mcp.LoggingLevel
	// OnLog receives notifications/message. It runs on the connection's
	// read loop: return quickly.
	OnLog func(ctx context.Context, p *mcp.LoggingMessageNotificationParams)
	// OnProgress receives progress for requests. When set, every request
	// carries a progress token. It runs on the connection's read loop.
	OnProgress func(ctx context.Context, p *mcp.ProgressNotificationParams)
	// Logger receives the client's own diagnostics. Default: slog.Default().
	Logger *slog.Logger
}

// Client is an MCP client. One Client may open any number of sessions.
type Client struct {
	info mcp.Implementation
	opts Options
	log  *slog.Logger
}

// New returns a client that introduces itself as info.
func New(info mcp.Implementation, opts *Options) *Client {
	c := &Client{info: info}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.Capabilities == nil {
		c.opts.Capabilities = &mcp.ClientCapabilities{}
	}
	c.log = c.opts.Logger
	if c.log == nil {
		c.log = slog.Default()
	}
	return c
}

// ErrUnsupportedVersion is wrapped by Connect's error when the client and
// server share no protocol version.
var ErrUnsupportedVersion = errors.New("client: no protocol version in common with the server")

// Connect opens a session over t and settles the protocol version: it asks
// server/discover with the preferred version and, if the server refuses it
// (-32022), retries with the newest version both sides speak.
func (c *Client) Connect(ctx context.Context, t transport.Transport) (*Session, error) {
	tc, err := t.Connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("client: connecting: %w", err)
	}
	version := c.opts.ProtocolVersion
	if version == "" {
		version = mcp.LatestVersion
	}
	if version.Era() != mcp.EraModern {
		tc.Close()
		return nil, fmt.Errorf("client: protocol version %q: %w", version, ErrUnsupportedVersion)
	}
	s := newSession(c, tc, version)
	d, err := s.Discover(ctx)
	if err != nil {
		s.Close()
		return nil, err
	}
	s.discovered.Store(d)
	return s, nil
}

// mutualVersion picks the newest version in offered that this client can
// speak, or "".
func mutualVersion(offered []mcp.ProtocolVersion) mcp.ProtocolVersion {
	var best mcp.ProtocolVersion
	for _, v := range offered {
		// Only modern versions: a legacy server needs the initialize
		// handshake, which this client does not speak yet.
		if v.Era() == mcp.EraModern && v > best {
			best = v
		}
	}
	return best
}

// InvalidResponseError reports a response that breaks the protocol: a
// result that does not decode, an unknown resultType, or an
// input_required result on a method that cannot carry one.
type InvalidResponseError struct {
	Method string
	Err    error
}

func (e *InvalidResponseError) Error() string {
	return fmt.Sprintf("client: invalid response to %s: %v", e.Method, e.Err)
}

func (e *InvalidResponseError) Unwrap() error { return e.Err }

// asRPCError returns the peer's error object if err is one.
func asRPCError(err error) (*jsonrpc.Error, bool) {
	var e *jsonrpc.Error
	ok := errors.As(err, &e)
	return e, ok
}
