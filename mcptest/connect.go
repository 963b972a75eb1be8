package mcptest

import (
	"context"
	"encoding/json"
	"github.com/parley-mcp/parley/internal/questionkey"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/transport"
)

// Server is what Connect serves a session from: anything that serves one
// stream connection until its peer closes it. *mcpserver.Server and the
// low-level *server.Server are both Servers.
type Server interface {
	ServeConn(ctx context.Context, conn transport.Conn) error
}

// Options configures Connect. A nil *Options means defaults: a session of
// the newest generation whose person answers nothing.
type Options struct {
	// Version is the protocol version the session speaks, pinned: the
	// client neither probes nor falls back, so a test of one generation
	// never runs in the other. Empty means mcp.LatestVersion (2026-07-28);
	// mcp.Version20251125 (or another legacy version) opens a legacy
	// session with initialize. Generations lists one of each.
	Version mcp.ProtocolVersion
	// Script is the person at the host: the answers to the server's
	// questions, by question key. A question it has no answer for fails
	// the test, and so does an answer no question asked for. nil: the
	// person answers nothing.
	Script Script
	// Tasks declares the tasks extension (io.modelcontextprotocol/tasks),
	// so that a task tool answers with a task (see Session.StartTask).
	Tasks bool
	// Golden, when set, is the path of a txtar file holding the session's
	// transcript. When the test ends the transcript is compared with it,
	// and a difference fails the test; with Update (or MCPTEST_UPDATE=1 in
	// the environment, or a boolean -update flag the test binary defines
	// and was given) the file is written instead. See Session.Transcript.
	Golden string
	// Update rewrites Golden instead of comparing, for a test that has a
	// flag of its own.
	Update bool
	// Volatile names more members whose values change from run to run
	// (an id the server makes up, a timestamp in structured content):
	// the transcript shows placeholders for them, as it does for the
	// members it knows (see Session.Transcript).
	Volatile []string
	// Timeout bounds each wait of the kit: connecting, every call made
	// through the Session's own methods (Call, StartTask, AwaitTask), and
	// the server's end after the session closes. Default: 30 seconds.
	Timeout time.Duration
	// Info is who the client says it is. Default: mcptest 1.0.0.
	Info mcp.Implementation
	// Client holds any other client options: Middleware, OnLog,
	// OnProgress, Loop, Capabilities and the rest. Its ProtocolVersion is
	// ignored (Version decides). Its Elicit, Sample and ListRoots
	// callbacks, when set, answer the questions of their kind the script
	// has no entry for, instead of failing the test. Capabilities, when
	// nil, declares everything the person can answer: elicitation in form
	// and URL mode, sampling with tools, and roots.
	Client *client.Options
}

// DefaultTimeout is Options.Timeout unless set.
const DefaultTimeout = 30 * time.Second

// Generations returns one protocol version of each generation, newest
// first: mcp.LatestVersion and mcp.Version20251125. A test that must hold
// in both runs once for each:
//
//	for _, v := range mcptest.Generations() {
//		t.Run(string(v), func(t *testing.T) {
//			sess := mcptest.Connect(t, srv, &mcptest.Options{Version: v, Script: script})
//			...
//		})
//	}
func Generations() []mcp.ProtocolVersion {
	return []mcp.ProtocolVersion{mcp.LatestVersion, mcp.Version20251125}
}

// Session is a client session connected to a server in memory: every
// method of *client.Session, and the kit's own. Connect makes one, and
// the test's cleanup closes it.
type Session struct {
	*client.Session

	t       testing.TB
	version mcp.ProtocolVersion
	timeout time.Duration
	person  *person
	pipe    *recorder
	golden  string
	update  bool

	stop   context.CancelFunc // ends the server's ServeConn, last
	served chan error         // what ServeConn returned

	logMu  sync.Mutex
	logEnd bool // the test is over: the client's log goes nowhere
}

// Connect returns a client session on srv, over an in-memory pipe, in the
// generation opts.Version pins; the test's cleanup closes it. A session
// that cannot be opened fails the test at once (t.Fatalf: call Connect
// from the test's goroutine).
//
// When the test ends, Connect's cleanup closes the session, waits for the
// server to finish serving it, and reports what went wrong on the way:
// every question the script had no answer for, every scripted answer no
// question asked for (unless the test had already failed), a server that
// does not finish, and a transcript that differs from opts.Golden.
func Connect(t testing.TB, srv Server, opts *Options) *Session {
	t.Helper()
	// A legacy server's questions name their keys to the kit's pipe from
	// now on (package questionkey; a program without the kit pays nothing).
	questionkey.Enable()
	var o Options
	if opts != nil {
		o = *opts
	}
	s := &Session{t: t, version: o.Version, timeout: o.Timeout, golden: o.Golden, update: o.Update}
	if s.version == "" {
		s.version = mcp.LatestVersion
	}
	if s.timeout <= 0 {
		s.timeout = DefaultTimeout
	}
	var copts client.Options
	if o.Client != nil {
		copts = *o.Client
	}
	s.person = newPerson(o.Script, copts.Elicit != nil, copts.Sample != nil, copts.ListRoots != nil)
	s.configure(&copts, &o)

	clientEnd, serverEnd := transport.NewMemoryPipe()
	s.pipe = newRecorder(serverEnd, o.Volatile)
	ctx, stop := context.WithCancel(context.Background())
	s.stop = stop
	s.served = make(chan error, 1)
	go func() { s.served <- srv.ServeConn(ctx, s.pipe) }()
	// The cleanup is registered before anything can fail, so that the
	// server's goroutine ends with the test whatever happens.
	t.Cleanup(func() { s.cleanup(clientEnd) })

	info := o.Info
	if info.Name == "" {
		info = mcp.Implementation{Name: "mcptest", Version: "1.0.0"}
	}
	cctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	cs, err := client.New(info, &copts).Connect(cctx, transport.NewMemoryTransport(clientEnd))
	if err != nil {
		t.Fatalf("mcptest: connecting with protocol version %s: %v", s.version, err)
	}
	s.Session = cs
	if got := cs.ProtocolVersion(); got.Era() != s.version.Era() {
		t.Fatalf("mcptest: the session speaks %s, not %s as pinned", got, s.version)
	}
	return s
}

// configure sets the client options the kit needs: the pinned version,
// the person's callbacks and middleware, the capabilities, the tasks
// extension and fast task polling.
func (s *Session) configure(copts *client.Options, o *Options) {
	copts.ProtocolVersion = s.version
	p := s.person
	if copts.Elicit == nil {
		copts.Elicit = p.unreachableElicit
	}
	if copts.Sample == nil {
		copts.Sample = p.unreachableSample
	}
	if copts.ListRoots == nil {
		copts.ListRoots = p.unreachableRoots
	}
	if copts.Capabilities == nil {
		copts.Capabilities = &mcp.ClientCapabilities{
			Elicitation: &mcp.ElicitationCapability{Form: &struct{}{}, URL: &struct{}{}},
			Sampling:    &mcp.SamplingCapability{Tools: &struct{}{}},
			Roots:       &mcp.RootsCapability{},
		}
	}
	if o.Tasks {
		copts.Extensions = maps.Clone(copts.Extensions)
		if copts.Extensions == nil {
			copts.Extensions = make(map[string]json.RawMessage, 1)
		}
		if _, ok := copts.Extensions[mcp.ExtensionTasks]; !ok {
			copts.Extensions[mcp.ExtensionTasks] = nil
		}
	}
	// The person is the innermost middleware: it stands where a host's UI
	// stands, so the caller's middleware sees every question and answer.
	copts.Middleware = append(slices.Clip(copts.Middleware), p.middleware)
	// A task's status is polled at the server's interval, at most this:
	// a test does not wait a second between polls.
	loop := client.LoopOptions{}
	if copts.Loop != nil {
		loop = *copts.Loop
	}
	if copts.Logger == nil {
		copts.Logger = slog.New(slog.NewTextHandler(testLog{s}, nil))
	}
	if loop.MaxPollInterval == 0 {
		loop.MaxPollInterval = taskPoll
	}
	copts.Loop = &loop
}

// taskPoll is the longest a session waits between two polls of a task.
const taskPoll = 10 * time.Millisecond

// Questions returns every question the server has asked so far, in the
// order they reached the person, whether the script answered them or not.
// Questions asked together (in one round, or at once over a legacy
// session's back-channel) may reach it in either order.
func (s *Session) Questions() []Question { return s.person.questions() }

// testLog writes the client's diagnostics to the test's log while the
// test runs (a callback that failed, a task that could not be
// cancelled), and nowhere after its cleanup: a late line would panic.
type testLog struct{ s *Session }

func (l testLog) Write(p []byte) (int, error) {
	l.s.logMu.Lock()
	defer l.s.logMu.Unlock()
	if !l.s.logEnd {
		l.s.t.Logf("client: %s", strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}

// cleanup ends the session and reports what went wrong.
func (s *Session) cleanup(clientEnd transport.Conn) {
	t := s.t
	t.Helper()
	defer func() {
		s.logMu.Lock()
		s.logEnd = true
		s.logMu.Unlock()
	}()
	failed := t.Failed()
	if s.Session != nil {
		s.Session.Close()
	} else {
		clientEnd.Close()
	}
	wait := time.NewTimer(s.timeout)
	select {
	case err := <-s.served:
		wait.Stop()
		if err != nil {
			t.Errorf("mcptest: the server's ServeConn: %v", err)
		}
	case <-wait.C:
		t.Errorf("mcptest: the server was still serving %v after the session closed (a handler that ignores its context?)", s.timeout)
	}
	s.stop()
	problems := s.person.problems()
	for _, p := range problems {
		t.Errorf("%s", p)
	}
	if failed || len(problems) > 0 {
		// The test stopped early, or a question went unanswered: the
		// unused answers and the transcript say nothing reliable.
		return
	}
	for _, u := range s.person.unused() {
		t.Errorf("%s", u)
	}
	if s.golden != "" && !t.Failed() {
		s.checkGolden()
	}
}
