package server

import (
	"encoding/json"
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
	// preferred first. Default: 2026-07-28 and the legacy versions
	// 2025-11-25, 2025-06-18 and 2025-03-26, which clients reach through
	// the initialize handshake. List only 2026-07-28 versions to refuse
	// legacy clients. Versions the server cannot serve (unknown ones, and
	// 2024-11-05) are dropped, with a warning in the log.
	SupportedVersions []mcp.ProtocolVersion
	// Bridge, when not nil, lets handlers that return an
	// InputRequiredResult serve legacy sessions too: the server sends its
	// input requests to the client as server-to-client requests and calls
	// the handler again with the answers, as a 2026-07-28 client would.
	// When nil (the default), such a result on a legacy session is a
	// server error (-32603), as the protocol requires; handlers built with
	// mcpserver's questions need no bridge.
	Bridge *BridgeOptions
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
	// AnswerTimeout bounds how long a legacy session's server-to-client
	// request (Request.Ask: an elicitation, a sampling, the roots) waits
	// for the client's answer; a client that keeps its connection but
	// never answers would otherwise hold the call, its goroutine and its
	// session for ever. The call's own context may end it sooner.
	// Default: 10 minutes, long enough for a person to fill a form;
	// negative means no bound.
	AnswerTimeout time.Duration
	// MaxInitializeSize bounds the params of a legacy initialize, in
	// bytes. A session keeps the client's declared capabilities and
	// identity for its whole life, so their size is what one session
	// costs; an initialize over the limit is refused with -32602 naming
	// it. Default: DefaultMaxInitializeSize; negative means no bound.
	MaxInitializeSize int
	// MaxStreamSubscriptions bounds the resource URIs one
	// subscriptions/listen stream may subscribe to, and one legacy
	// session through resources/subscribe; a request over it is refused
	// with -32602 naming the limit. Default:
	// DefaultMaxStreamSubscriptions; negative means no bound.
	MaxStreamSubscriptions int
	// MaxListenStreamsPerCaller bounds the subscriptions/listen streams
	// one caller (its principal, else its client address; see
	// auth.CallerKey) holds open at once, so that one client cannot pin
	// the server's memory and publish time with streams; one more is
	// refused with -32600 naming the limit. A caller the transport says
	// nothing about (stdio) is not bounded. Default:
	// DefaultMaxListenStreamsPerCaller; negative means no bound (and no
	// reserve in MaxListenStreams).
	MaxListenStreamsPerCaller int
	// MaxListenStreams bounds the subscriptions/listen streams open at
	// once, of all callers: one more is refused with -32603 naming the
	// limit. Its last eighth is kept for callers holding fewer than a
	// sixty-fourth of MaxListenStreamsPerCaller (at least one) open: a
	// caller that holds that many is refused there with -32600, so that
	// callers each at their share cannot fill it for a new one (design
	// record 039). Default: DefaultMaxListenStreams; negative means no
	// bound.
	MaxListenStreams int
}

// DefaultMaxListenStreams is Options.MaxListenStreams' default. A stream
// costs a few KiB (its goroutine, its queue of ListenBuffer changes, its
// connection) and about 60 bytes in the subscription index for each URI
// it subscribes to: 4,096 streams of the default 1,000 URIs hold about
// 250 MiB of index.
const DefaultMaxListenStreams = 4096

// DefaultMaxListenStreamsPerCaller is Options.MaxListenStreamsPerCaller's
// default: a client needs one listen stream, a few while it reconnects.
const DefaultMaxListenStreamsPerCaller = 16

// DefaultMaxStreamSubscriptions is Options.MaxStreamSubscriptions'
// default.
const DefaultMaxStreamSubscriptions = 1000

// DefaultMaxInitializeSize is Options.MaxInitializeSize's default: far
// more than any client's capabilities and identity need.
const DefaultMaxInitializeSize = 64 << 10

// DefaultAnswerTimeout is Options.AnswerTimeout's default.
const DefaultAnswerTimeout = 10 * time.Minute

// BridgeOptions configures the legacy bridge; see Options.Bridge.
type BridgeOptions struct {
	// MaxRounds bounds how many times one request's handler is called
	// again with answers. Default: 10.
	MaxRounds int
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
	sealer     StateSealer                // see SealState; nil: requestState passes as it is
	ext        map[string]*extMethod      // extension methods, by name (HandleMethod)
	extensions map[string]json.RawMessage // declared extensions (DeclareExtension)
	chain      Handler                    // handlers wrapped in middleware and the sealing step, rebuilt on change

	hub hub

	resultMeta *mcp.ResultMetaObject // the _meta of results that set none
}

// New returns a server that introduces itself as info.
func New(info mcp.Implementation, opts *Options) *Server {
	s := &Server{info: info}
	if opts != nil {
		s.opts = *opts
	}
	s.log = s.opts.Logger
	if s.log == nil {
		s.log = slog.Default()
	}
	if len(s.opts.SupportedVersions) == 0 {
		s.opts.SupportedVersions = mcp.SpokenVersions()
	} else {
		s.opts.SupportedVersions = slices.DeleteFunc(slices.Clone(s.opts.SupportedVersions), func(v mcp.ProtocolVersion) bool {
			if !v.Spoken() {
				s.log.Warn("server: dropping a protocol version the server cannot serve", "version", v)
				return true
			}
			return false
		})
	}
	if s.opts.Bridge != nil {
		b := *s.opts.Bridge
		if b.MaxRounds <= 0 {
			b.MaxRounds = 10
		}
		s.opts.Bridge = &b
	}
	if s.opts.CacheScope == "" {
		s.opts.CacheScope = mcp.CacheScopePrivate
	}
	if s.opts.ListenBuffer <= 0 {
		s.opts.ListenBuffer = 64
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

// modernVersions returns the supported versions a request without a
// handshake may use.
func (s *Server) modernVersions() []mcp.ProtocolVersion {
	var vs []mcp.ProtocolVersion
	for _, v := range s.opts.SupportedVersions {
		if v.Era() == mcp.EraModern {
			vs = append(vs, v)
		}
	}
	return vs
}
