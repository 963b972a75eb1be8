package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/tasks"
	"github.com/parley-mcp/parley/transport"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// DefaultPageSize is how many entries one page of tools/list,
// prompts/list, resources/list or resources/templates/list holds when
// Options.PageSize is zero.
const DefaultPageSize = 100

// Options configures a Server. A nil *Options means defaults.
type Options struct {
	// Instructions is sent in server/discover to tell clients how to use
	// this server.
	Instructions string
	// Logger receives the server's diagnostics, among them the reason of
	// every refused requestState. Default: slog.Default().
	Logger *slog.Logger
	// RequestState says how requestState is sealed. Sealing is always on:
	// nil means [requeststate.ProcessLocal], a key made at start-up that
	// suits one process (stdio, in-memory, exactly one HTTP instance).
	// Several instances behind a load balancer, or flows that must
	// survive a restart, share a key ring here. A policy with Keys or a
	// Codec needs a server name (or Policy.Audience). Policy.SingleUse
	// makes each sealed round acceptable at most once.
	RequestState *requeststate.Policy
	// Tasks configures the tasks extension, which the server serves from
	// the first AddTaskTool on. Nil means tasks.Options' defaults.
	Tasks *tasks.Options
	// PageSize is the number of entries per page of the list methods.
	// Default: DefaultPageSize. Negative means one page with everything.
	PageSize int

	// SupportedVersions are the protocol versions the server serves,
	// preferred first. Default: 2026-07-28 and the legacy versions
	// 2025-11-25, 2025-06-18 and 2025-03-26, which clients reach through
	// the initialize handshake; list only 2026-07-28 to refuse legacy
	// clients. See server.Options.SupportedVersions.
	SupportedVersions []mcp.ProtocolVersion
	// Bridge, when not nil, lets a tool whose function returns a
	// hand-built InputRequiredResult serve legacy sessions, by asking over
	// their back-channel. Declared questions need no bridge. See
	// server.Options.Bridge.
	Bridge *server.BridgeOptions
	// DiscoverTTL is the ttlMs of the server/discover result: how long a
	// client may cache it. Default: 0 (do not cache).
	DiscoverTTL time.Duration
	// ListTTL is the ttlMs of list and read results: how long a client may
	// cache them. Default: 0 (do not cache).
	ListTTL time.Duration
	// CacheScope is the cacheScope of those results. Default:
	// mcp.CacheScopePrivate, since lists may depend on who asks.
	CacheScope mcp.CacheScope
	// Capabilities, when not nil, replaces the capabilities the server
	// derives from what is registered.
	Capabilities *mcp.ServerCapabilities
	// ListenBuffer is how many notifications may queue for one
	// subscriptions/listen stream before further ones are dropped (and
	// logged). Default: 64.
	ListenBuffer int
	// AnswerTimeout bounds how long a question asked over a legacy
	// session's back-channel waits for the client's answer. Default:
	// server.DefaultAnswerTimeout; negative means no bound. See
	// server.Options.AnswerTimeout.
	AnswerTimeout time.Duration
	// MaxInitializeSize bounds a legacy initialize's params, in bytes.
	// Default: server.DefaultMaxInitializeSize; negative means no bound.
	// See server.Options.MaxInitializeSize.
	MaxInitializeSize int
	// MaxStreamSubscriptions bounds the resource URIs one listen stream
	// may subscribe to. Default: server.DefaultMaxStreamSubscriptions;
	// negative means no bound. See server.Options.MaxStreamSubscriptions.
	MaxStreamSubscriptions int
	// MaxListenStreamsPerCaller bounds the listen streams one caller
	// holds open at once. Default: server.DefaultMaxListenStreamsPerCaller;
	// negative means no bound. See server.Options.MaxListenStreamsPerCaller.
	MaxListenStreamsPerCaller int
	// MaxListenStreams bounds the listen streams open at once, of all
	// callers, keeping its last eighth for callers that hold (almost)
	// none. Default: server.DefaultMaxListenStreams; negative means no
	// bound. See server.Options.MaxListenStreams.
	MaxListenStreams int

	// Server holds the low-level server's options.
	//
	// Deprecated: set the fields above, which are the same options in one
	// struct. A field set here is still used where the same field above is
	// left at its zero value.
	Server *server.Options
}

// Server is the high-level MCP server: register typed tools, prompts,
// resources and resource templates, and serve them on any transport. A
// Server is safe for concurrent use; registrations may change while it
// serves, and every change is announced to the subscriptions/listen
// streams that asked for it. (The server declares a kind of list only once
// something of that kind is registered, so a stream opened before the
// first tool, say, was not granted tool-list changes: register before
// serving.)
type Server struct {
	low      *server.Server
	log      *slog.Logger
	pageSize int

	mu          sync.RWMutex
	tools       registry[*toolEntry]
	prompts     registry[*promptEntry]
	resources   registry[*resourceEntry]
	templates   registry[*templateEntry]
	completions map[completionKey]CompleteFunc

	slots sync.Map // the low-level handler slots, by name: a *sync.Once each

	taskOpts *tasks.Options // Options.Tasks
	tasksMu  sync.Mutex
	tasks    *tasks.Manager // the tasks extension, from the first task tool on

	apps appsState // the apps extension (apps.go)
}

// enableTasks serves the tasks extension, once.
func (s *Server) enableTasks() error {
	s.tasksMu.Lock()
	defer s.tasksMu.Unlock()
	if s.tasks != nil {
		return nil
	}
	m, err := tasks.Enable(s.low, s.taskOpts)
	if err != nil {
		return fmt.Errorf("mcpserver: enabling tasks: %w", err)
	}
	s.tasks = m
	return nil
}

// New returns a server that introduces itself as info. It seals every
// requestState it issues and verifies every one a client echoes (see
// Options.RequestState); the only error is a policy that cannot be used,
// such as one with a short key, or an explicit policy on a server
// without a name.
func New(info mcp.Implementation, opts *Options) (*Server, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	s := &Server{
		low:         server.New(info, o.lowLevel()),
		pageSize:    o.PageSize,
		completions: map[completionKey]CompleteFunc{},
		taskOpts:    o.Tasks,
	}
	s.log = s.low.Logger()
	if s.pageSize == 0 {
		s.pageSize = DefaultPageSize
	}
	if err := requeststate.Protect(s.low, o.RequestState); err != nil {
		return nil, fmt.Errorf("mcpserver: %w", err)
	}
	return s, nil
}

// lowLevel returns the low-level server's options: the fields of o, and
// those of the deprecated o.Server where o leaves the same field zero.
func (o *Options) lowLevel() *server.Options {
	var low server.Options
	if o.Server != nil {
		low = *o.Server
	}
	if o.Instructions != "" {
		low.Instructions = o.Instructions
	}
	if o.Logger != nil {
		low.Logger = o.Logger
	}
	if o.SupportedVersions != nil {
		low.SupportedVersions = o.SupportedVersions
	}
	if o.Bridge != nil {
		low.Bridge = o.Bridge
	}
	if o.DiscoverTTL != 0 {
		low.DiscoverTTL = o.DiscoverTTL
	}
	if o.ListTTL != 0 {
		low.ListTTL = o.ListTTL
	}
	if o.CacheScope != "" {
		low.CacheScope = o.CacheScope
	}
	if o.Capabilities != nil {
		low.Capabilities = o.Capabilities
	}
	if o.ListenBuffer != 0 {
		low.ListenBuffer = o.ListenBuffer
	}
	if o.AnswerTimeout != 0 {
		low.AnswerTimeout = o.AnswerTimeout
	}
	if o.MaxInitializeSize != 0 {
		low.MaxInitializeSize = o.MaxInitializeSize
	}
	if o.MaxStreamSubscriptions != 0 {
		low.MaxStreamSubscriptions = o.MaxStreamSubscriptions
	}
	if o.MaxListenStreamsPerCaller != 0 {
		low.MaxListenStreamsPerCaller = o.MaxListenStreamsPerCaller
	}
	if o.MaxListenStreams != 0 {
		low.MaxListenStreams = o.MaxListenStreams
	}
	return &low
}

// MustNew is [New] for start-up code: it panics where New returns an
// error, which is a configuration error to fix before serving.
func MustNew(info mcp.Implementation, opts *Options) *Server {
	s, err := New(info, opts)
	if err != nil {
		panic(err)
	}
	return s
}

// LowLevel returns the low-level server underneath, for what the
// high-level API does not cover: middleware ([server.Server.Use]; it sees
// plaintext requestState), resource update notifications, ending listen
// streams. Do not set its tools, prompts or resources handlers: the
// high-level server owns them.
func (s *Server) LowLevel() *server.Server { return s.low }

// Use appends middleware to the low-level server. It runs inside the
// requestState boundary, so it sees plaintext state.
func (s *Server) Use(mw ...server.Middleware) { s.low.Use(mw...) }

// ServeConn serves one stream connection (stdio, in-memory, a socket)
// until the peer closes it or ctx ends:
//
//	err := s.ServeConn(ctx, stdio.ServerConn(nil))
//
// It first runs [Server.Check], and returns its error instead of serving.
func (s *Server) ServeConn(ctx context.Context, conn transport.Conn) error {
	if err := s.startServing(); err != nil {
		return err
	}
	return s.low.ServeConn(ctx, conn)
}

// HTTPHandler returns the Streamable HTTP endpoint of the server. Mount it
// at the endpoint's path:
//
//	mux.Handle("/mcp", s.HTTPHandler(nil))
//
// The handler checks Mcp-Param-* headers against the registered tools'
// definitions directly (opts.FindTool is set to the registry). It serves
// both protocol generations: 2026-07-28 requests statelessly, so that any
// number of instances sharing a RequestState key ring can serve them
// behind a plain load balancer, and 2025-era clients in sessions, which
// live in the memory of the instance that opened them (route them there,
// or set opts.Sessions.Stateless; see docs/guide/two-generations.md).
//
// It panics with the error of [Server.Check], a registration mistake to
// fix before serving (an app tool whose view is not registered); call
// Check first to handle it as an error.
func (s *Server) HTTPHandler(opts *streamhttp.HandlerOptions) *streamhttp.Handler {
	if checkErr := s.startServing(); checkErr != nil {
		panic(checkErr)
	}
	var o streamhttp.HandlerOptions
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = s.log
	}
	o.FindTool = s.findTool
	return streamhttp.NewHandler(s.low, &o)
}

// InMemoryTransport returns a client transport that reaches this server in
// the same process: each Connect opens an in-memory pipe and serves the
// server's end until the client closes it. It is the one-call way to test
// a server or to embed one:
//
//	sess, err := client.New(info, nil).Connect(ctx, s.InMemoryTransport())
func (s *Server) InMemoryTransport() transport.Transport { return memoryTransport{s} }

type memoryTransport struct{ s *Server }

func (t memoryTransport) Connect(ctx context.Context) (transport.Conn, error) {
	if err := t.s.startServing(); err != nil {
		return nil, err
	}
	clientEnd, serverEnd := transport.NewMemoryPipe()
	// The server end lives until the client closes its end (the pipe then
	// reports EOF), not as long as the Connect context, which may be a
	// dial timeout.
	go t.s.low.ServeConn(context.WithoutCancel(ctx), serverEnd)
	return clientEnd, nil
}

// installOnce installs a low-level handler slot the first time something
// of its kind is registered, so that the server declares only the
// capabilities it has. A caller that finds another one installing the
// slot waits for it, so that every registration that returned is served.
func (s *Server) installOnce(slot string, install func()) {
	once, ok := s.slots.Load(slot)
	if !ok {
		once, _ = s.slots.LoadOrStore(slot, new(sync.Once))
	}
	once.(*sync.Once).Do(install)
}

// listPage returns the page of a registry that cursor points at, each
// entry as the list method shows it, and the next cursor.
func listPage[E, T any](s *Server, r *registry[E], cursor mcp.Cursor, show func(E) T) ([]T, mcp.Cursor, error) {
	return listKept(s, r, cursor, nil, show)
}

// listKept is listPage of the entries keep keeps (all when keep is nil):
// the pages are cut from those, so that each is full.
func listKept[E, T any](s *Server, r *registry[E], cursor mcp.Cursor, keep func(E) bool, show func(E) T) ([]T, mcp.Cursor, error) {
	s.mu.RLock()
	entries := r.list()
	s.mu.RUnlock()
	if keep != nil {
		entries = slices.DeleteFunc(entries, func(e E) bool { return !keep(e) })
	}
	size := s.pageSize
	if size < 0 {
		size = 0
	}
	pg, next, err := server.Paginate(entries, string(cursor), size)
	if err != nil {
		return nil, "", err
	}
	out := make([]T, len(pg))
	for i, e := range pg {
		out[i] = show(e)
	}
	return out, mcp.Cursor(next), nil
}
