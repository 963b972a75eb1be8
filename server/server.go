package server

import (
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/parley-mcp/parley/mcp"
)

// Options configures a Server. A nil *Options means defaults.
type Options struct {
	// Instructions is sent in server/discover to tell clients how to use
	// this server.
	Instructions string
	// SupportedVersions are the protocol versions the server serves,
	// preferred first. Default: [mcp.LatestVersion].
	SupportedVersions []mcp.ProtocolVersion
	// DiscoverTTL is the ttlMs of the server/discover result: how long a
	// client may cache it. Default: 0 (do not cache).
	DiscoverTTL time.Duration
	// ListTTL is the ttlMs stamped on a list or read result whose handler
	// left the caching fields empty. Default: 0 (do not cache).
	ListTTL time.Duration
	// CacheScope is the cacheScope stamped where a handler left it empty.
	// Default: mcp.CacheScopePrivate, since lists may depend on who asks.
	CacheScope mcp.CacheScope
	// Capabilities, when not nil, replaces the capabilities the server
	// derives from its registered handlers.
	Capabilities *mcp.ServerCapabilities
	// Logger receives the server's own diagnostics. Default: slog.Default().
	Logger *slog.Logger
	// ListenBuffer is how many notifications may queue for one
	// subscriptions/listen stream before further ones are dropped (and
	// logged). Default: 64.
	ListenBuffer int
}

// Server is a low-level MCP server. Register handlers before serving; a
// Server is safe for concurrent use once it serves.
type Server struct {
	info mcp.Implementation
	opts Options
	log  *slog.Logger

	mu         sync.RWMutex
	handlers   handlers
	middleware []Middleware
	chain      Handler // handlers wrapped in middleware, rebuilt on change

	hub hub

	resultMeta *mcp.ResultMetaObject // the _meta of results that set none
}

// New returns a server that introduces itself as info.
func New(info mcp.Implementation, opts *Options) *Server {
	s := &Server{info: info}
	if opts != nil {
		s.opts = *opts
	}
	if len(s.opts.SupportedVersions) == 0 {
		s.opts.SupportedVersions = []mcp.ProtocolVersion{mcp.LatestVersion}
	} else {
		s.opts.SupportedVersions = slices.Clone(s.opts.SupportedVersions)
	}
	if s.opts.CacheScope == "" {
		s.opts.CacheScope = mcp.CacheScopePrivate
	}
	if s.opts.ListenBuffer <= 0 {
		s.opts.ListenBuffer = 64
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.Default()
	}
	s.resultMeta = &mcp.ResultMetaObject{ServerInfo: &s.info}
	s.hub.init()
	s.rebuild()
	return s
}

// Info returns the implementation info the server sends as serverInfo.
func (s *Server) Info() mcp.Implementation { return s.info }

// Logger returns the logger the server writes to: Options.Logger, or
// slog.Default(). Middleware that logs (such as the requestState boundary)
// uses it, so that a server's lines all go to one place.
func (s *Server) Logger() *slog.Logger { return s.log }

// SupportedVersions returns the protocol versions the server serves.
func (s *Server) SupportedVersions() []mcp.ProtocolVersion {
	return slices.Clone(s.opts.SupportedVersions)
}

func (s *Server) supports(v mcp.ProtocolVersion) bool {
	return slices.Contains(s.opts.SupportedVersions, v)
}
