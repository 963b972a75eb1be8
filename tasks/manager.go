package tasks

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/parley-mcp/parley/auth"
	"github.com/parley-mcp/parley/internal/jsontext"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/requeststate"
	"github.com/parley-mcp/parley/server"
)

// Options configure the tasks extension of a server. Nil means defaults.
type Options struct {
	// Store keeps the tasks. Default: a MemoryStore with its defaults.
	Store Store
	// TTL is how long a task stays readable after its creation (ttlMs on
	// the wire). Default one hour; negative means no limit (ttlMs null).
	TTL time.Duration
	// PollInterval is how long clients are asked to wait between polls
	// (pollIntervalMs). Default one second. StartOptions.PollInterval
	// sets it for one task (mcpserver.TaskToolOptions for one tool).
	PollInterval time.Duration
	// Principal binds a task to its creator: another principal's
	// tasks/get, tasks/update or tasks/cancel gets the answer an unknown
	// id gets. Default: requeststate.AuthPrincipal, the identity of the
	// validated access token. A request it names no principal for ("",
	// not authenticated) makes a task bound to nobody: its unguessable id
	// is all that protects it, from any address. The store's bounds count
	// such a task under the client's address (auth.CallerKey) instead.
	// A hook that fails refuses the tools/call (-32603) and stores
	// nothing.
	Principal func(ctx context.Context, req *server.Request) (string, error)
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Logger receives the tasks' diagnostics (a body's Go error, a
	// panic). Default: the server's logger.
	Logger *slog.Logger
	// Lease is how long the instance running a task may go without
	// renewing its claim on it; it renews every Lease/3 while the task
	// runs. A task whose lease ran out (its instance died, or lost the
	// store) is failed by the next instance that reads it, so no task
	// stays working for ever. Default: none with a MemoryStore (its tasks
	// end with the process that holds them), 30 seconds with any other
	// Store; negative means none.
	Lease time.Duration
	// Instance names this server instance in the records of the tasks it
	// runs (Record.Owner) and in logs. Default: a random name.
	Instance string
	// MaxAnswerBytes bounds one answer that tasks/update delivers (its
	// JSON, in bytes): an update carrying a larger answer to an open
	// question is refused with -32602 naming the limit, and changes
	// nothing. Default DefaultMaxAnswerBytes; negative means no bound.
	MaxAnswerBytes int64
	// MaxTaskAnswerBytes bounds the answers one task holds at once (a
	// task keeps the answers it has until its last question is
	// answered): an update that would make them larger is refused with
	// -32602 naming the limit. Default DefaultMaxTaskAnswerBytes;
	// negative means no bound. The answers of all of a caller's tasks
	// are bounded by the store (MemoryStoreOptions.MaxAnswerBytesPerCaller).
	MaxTaskAnswerBytes int64
}

// The defaults of Options' bounds on answers.
const (
	DefaultMaxAnswerBytes     = 1 << 20
	DefaultMaxTaskAnswerBytes = 2 << 20
)

// StartOptions tune one task. Nil means the manager's Options.
type StartOptions struct {
	// PollInterval is how long clients are asked to wait between polls of
	// this task; zero means Options.PollInterval.
	PollInterval time.Duration
}

// LostMessage is the message of the error (-32603) a task fails with
// when the instance running it stopped renewing its lease.
const LostMessage = "Internal error: the server instance running this task stopped"

// LostError is the old name of LostMessage.
//
// Deprecated: use LostMessage; this is a message, not an error type.
const LostError = LostMessage

// Manager serves the tasks extension for one server and runs its tasks.
type Manager struct {
	store     Store
	ttl       time.Duration
	poll      time.Duration
	maxAnswer int64 // per answer; 0: no bound
	maxTask   int64 // per task; 0: no bound
	principal func(ctx context.Context, req *server.Request) (string, error)
	now       func() time.Time
	log       *slog.Logger
	lease     time.Duration
	instance  string
	notifier  Notifier // nil when the store has none
	topic     *server.Topic

	mu     sync.Mutex
	runs   map[string]*Run    // the tasks running in this process
	keeper context.CancelFunc // stops the keeper; nil while no task runs here
}

// Enable makes s serve the tasks extension: it declares
// io.modelcontextprotocol/tasks in the server's capabilities and serves
// tasks/get, tasks/update and tasks/cancel (each requiring the client to
// have declared the extension, with Mcp-Name carrying params.taskId).
// Tools then turn their calls into tasks with [Manager.Start].
func Enable(s *server.Server, opts *Options) (*Manager, error) {
	m := &Manager{
		ttl: time.Hour, poll: time.Second, principal: requeststate.AuthPrincipal, now: time.Now, log: s.Logger(), runs: map[string]*Run{},
		maxAnswer: DefaultMaxAnswerBytes, maxTask: DefaultMaxTaskAnswerBytes,
	}
	if opts != nil {
		m.maxAnswer = bound(opts.MaxAnswerBytes, DefaultMaxAnswerBytes)
		m.maxTask = bound(opts.MaxTaskAnswerBytes, DefaultMaxTaskAnswerBytes)
		if opts.TTL != 0 {
			m.ttl = opts.TTL
		}
		if opts.PollInterval > 0 {
			m.poll = opts.PollInterval
		}
		if opts.Principal != nil {
			m.principal = opts.Principal
		}
		if opts.Now != nil {
			m.now = opts.Now
		}
		if opts.Logger != nil {
			m.log = opts.Logger
		}
		m.store = opts.Store
		m.lease = opts.Lease
		m.instance = opts.Instance
	}
	if m.store == nil {
		m.store = NewMemoryStore(&MemoryStoreOptions{Now: m.now})
	}
	if _, mem := m.store.(*MemoryStore); m.lease == 0 && !mem {
		m.lease = 30 * time.Second
	}
	if m.lease < 0 {
		m.lease = 0
	}
	if m.instance == "" {
		m.instance = "instance-" + newID()[:8]
	}
	m.notifier, _ = m.store.(Notifier)
	if err := s.DeclareExtension(mcp.ExtensionTasks, nil); err != nil {
		return nil, err
	}
	method := &server.MethodOptions{Extension: mcp.ExtensionTasks, Target: "taskId"}
	if err := server.HandleMethod(s, mcp.MethodGetTask, method, m.get); err != nil {
		return nil, err
	}
	if err := server.HandleMethod(s, mcp.MethodUpdateTask, method, m.update); err != nil {
		return nil, err
	}
	if err := server.HandleMethod(s, mcp.MethodCancelTask, method, m.cancel); err != nil {
		return nil, err
	}
	if err := m.listenTopic(s); err != nil {
		return nil, err
	}
	return m, nil
}

// bound is a size bound as Options gives it: zero means def, negative
// none (0).
func bound(v, def int64) int64 {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 0
	}
	return v
}

// Declared reports whether the client that sent req declared the tasks
// extension (on this request, or in its legacy session's initialize).
// Only such a client may be answered with a task.
func Declared(req *server.Request) bool {
	if req == nil || req.Meta == nil || req.Meta.ClientCapabilities == nil {
		return false
	}
	_, ok := req.Meta.ClientCapabilities.Extensions[mcp.ExtensionTasks]
	return ok
}

// RequiredError returns the error that answers a tools/call of a tool
// that must run as a task, from a client that did not declare the
// extension: -32021 naming it.
func RequiredError() error {
	return mcp.NewMissingRequiredClientCapabilityError(&mcp.ClientCapabilities{
		Extensions: map[string]json.RawMessage{mcp.ExtensionTasks: json.RawMessage("{}")},
	})
}

// Required returns RequiredError().
//
// Deprecated: use RequiredError; Required reads as a question, and it
// returns an error.
func Required() error { return RequiredError() }

// Body is the work of a task. It runs in its own goroutine with a context
// that ends when the client sends tasks/cancel, or when the task expires
// (its TTL passed: nobody could read what it returns).
//
// How it ends decides the task's status:
//
//   - a result completes the task, a tool error (IsError) too: the
//     model that called the tool reads it;
//   - an error fails the task: a *jsonrpc.Error (package jsonrpc/wire
//     builds them) is what tasks/get shows, any other error becomes
//     -32603 without its text, which is logged.
//
// (mcpserver.AddTaskTool's bodies follow the rule of its tools instead:
// a Go error that is not a *jsonrpc.Error completes the task with an
// isError result carrying its text.)
type Body func(ctx context.Context, run *Run) (*mcp.CallToolResult, error)

// Start turns the tools/call req into a task that runs body, and returns
// the result to answer the call with. The task is stored before Start
// returns, so a tasks/get for its id succeeds at once. The caller must
// have checked Declared.
func (m *Manager) Start(ctx context.Context, req *server.Request, body Body) (*mcp.CreateTaskResult, error) {
	return m.StartWith(ctx, req, nil, body)
}

// StartWith is Start with options for this one task.
func (m *Manager) StartWith(ctx context.Context, req *server.Request, opts *StartOptions, body Body) (*mcp.CreateTaskResult, error) {
	principal, err := m.principalOf(ctx, req)
	if err != nil {
		m.log.Error("tasks: principal hook failed", "err", err)
		return nil, wire.Internal("")
	}
	now := m.now().UTC()
	r := &Record{ID: newID(), Principal: principal, Caller: callerOf(ctx, principal), Status: mcp.TaskWorking, Created: now, Updated: now, Owner: m.instance}
	if opts != nil && opts.PollInterval > 0 {
		r.PollInterval = opts.PollInterval
	}
	if m.ttl > 0 {
		r.Expires = now.Add(m.ttl)
	}
	if m.lease > 0 {
		r.LeaseUntil = now.Add(m.lease)
	}
	if err := m.store.Create(ctx, r); err != nil {
		if errors.Is(err, ErrStoreFull) {
			return nil, wire.InvalidRequest("Invalid request: %v", err)
		}
		m.log.Error("tasks: storing a new task failed", "err", err)
		return nil, wire.Internal("")
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	if !r.Expires.IsZero() {
		// Past its expiry the task is gone for every reader: its body
		// works for nobody.
		expCtx, stop := context.WithTimeout(runCtx, r.Expires.Sub(now))
		end := cancel
		runCtx, cancel = expCtx, func() { stop(); end() }
	}
	run := &Run{m: m, id: r.ID, cancel: cancel, answered: make(chan struct{}, 1)}
	runCtx = context.WithValue(runCtx, runKey{}, run)
	m.mu.Lock()
	m.runs[r.ID] = run
	m.startKeeper()
	m.mu.Unlock()
	go m.execute(runCtx, run, body)
	return &mcp.CreateTaskResult{Result: mcp.Result{ResultType: mcp.ResultTypeTask}, Task: m.task(r)}, nil
}

// execute runs body and records how it ended, unless the task already
// ended (cancelled): a terminal status never changes.
func (m *Manager) execute(ctx context.Context, run *Run, body Body) {
	defer func() {
		m.mu.Lock()
		delete(m.runs, run.id)
		if len(m.runs) == 0 && m.keeper != nil {
			m.keeper()
			m.keeper = nil
		}
		m.mu.Unlock()
		run.cancel()
	}()
	res, err := guard(body, ctx, run)
	finish := func(r *Record) error {
		if r.Status.Terminal() {
			return nil
		}
		r.Pending, r.Answers = nil, nil
		r.Updated = m.now().UTC()
		switch {
		case err != nil:
			r.Status, r.Error = mcp.TaskFailed, m.errorObject(run.id, err)
		case res == nil:
			m.log.Error("tasks: a body returned neither a result nor an error", "task", run.id)
			r.Status, r.Error = mcp.TaskFailed, m.errorObject(run.id, wire.Internal(""))
		default:
			// The result is kept as a complete 2026-07-28 CallToolResult,
			// which carries its resultType (clients validate it as one).
			done := *res
			done.ResultType = mcp.ResultTypeComplete
			b, merr := json.Marshal(&done)
			if merr != nil {
				m.log.Error("tasks: encoding a task's result failed", "task", run.id, "err", merr)
				r.Status, r.Error = mcp.TaskFailed, m.errorObject(run.id, wire.Internal(""))
				return nil
			}
			r.Status, r.Result = mcp.TaskCompleted, b
		}
		return nil
	}
	// The task's own context may be cancelled by now; recording its end
	// must not be.
	if _, uerr := m.write(context.WithoutCancel(ctx), run.id, finish); uerr != nil && !errors.Is(uerr, ErrNotFound) {
		m.log.Error("tasks: recording a task's end failed", "task", run.id, "err", uerr)
	}
}

// guard runs body, turning a panic into an error.
func guard(body Body, ctx context.Context, run *Run) (res *mcp.CallToolResult, err error) {
	defer func() {
		if p := recover(); p != nil {
			run.m.log.Error("tasks: a task's body panicked", "task", run.id, "panic", fmt.Sprint(p))
			res, err = nil, wire.Internal("")
		}
	}()
	return body(ctx, run)
}

// errorObject is the JSON-RPC error object a failed task reports.
func (m *Manager) errorObject(id string, err error) json.RawMessage {
	var rpc *wire.Error
	if !errors.As(err, &rpc) {
		m.log.Error("tasks: a task failed", "task", id, "err", err)
		rpc = wire.Internal("")
	}
	b, _ := json.Marshal(rpc)
	return b
}

// task is the wire form of r's state.
func (m *Manager) task(r *Record) mcp.Task {
	poll := m.poll
	if r.PollInterval > 0 {
		poll = r.PollInterval
	}
	t := mcp.Task{
		TaskID: r.ID, Status: r.Status, StatusMessage: r.StatusMessage,
		CreatedAt: r.Created.Format(time.RFC3339Nano), LastUpdatedAt: r.Updated.Format(time.RFC3339Nano),
		PollIntervalMs: poll.Milliseconds(),
	}
	if m.ttl > 0 {
		ms := m.ttl.Milliseconds()
		t.TTLMs = &ms
	}
	return t
}

// principalOf hashes the request's principal, so the store never holds an
// identity.
func (m *Manager) principalOf(ctx context.Context, req *server.Request) (string, error) {
	p, err := m.principal(ctx, req)
	if err != nil || p == "" {
		return "", err
	}
	sum := sha256.Sum256([]byte("parley tasks principal\x00" + p))
	return hex.EncodeToString(sum[:]), nil
}

// callerOf is what the store's bounds count a new task of principal (a
// hash, or "") under: the principal itself, else the hashed caller key of
// the request (the client's address), else "" (stdio). The hashes of a
// principal and of a caller key never meet: their domains differ.
func callerOf(ctx context.Context, principal string) string {
	if principal != "" {
		return principal
	}
	key := auth.CallerKey(ctx)
	if key == "" {
		return ""
	}
	sum := sha256.Sum256([]byte("parley tasks caller\x00" + key))
	return hex.EncodeToString(sum[:])
}

// unknownTask is the one answer to an id that does not exist, has
// expired, or belongs to another principal: nothing tells them apart.
func unknownTask() error { return wire.InvalidParams("Invalid params: unknown taskId") }

// lookup returns the task id names if req's principal owns it.
func (m *Manager) lookup(ctx context.Context, req *server.Request, id string) (*Record, error) {
	principal, err := m.principalOf(ctx, req)
	if err != nil {
		m.log.Error("tasks: principal hook failed", "err", err)
		return nil, unknownTask()
	}
	r, err := m.store.Get(ctx, id)
	if errors.Is(err, ErrNotFound) || err == nil && r.Principal != principal {
		return nil, unknownTask()
	}
	if err != nil {
		m.log.Error("tasks: reading a task failed", "task", id, "err", err)
		return nil, wire.Internal("")
	}
	if m.lapsed(r) {
		// Its instance is gone: record that, once, for every reader.
		r, err = m.write(ctx, id, func(r *Record) error {
			m.expireLease(r)
			return nil
		})
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				return nil, unknownTask()
			}
			m.log.Error("tasks: failing a task whose lease ran out failed", "task", id, "err", err)
			return nil, wire.Internal("")
		}
	}
	return r, nil
}

func (m *Manager) get(ctx context.Context, req *server.Request, p *mcp.GetTaskRequestParams) (*mcp.GetTaskResult, error) {
	r, err := m.lookup(ctx, req, p.TaskID)
	if err != nil {
		return nil, err
	}
	return m.detailed(r), nil
}

// detailed is the task r as tasks/get shows it: with the result
// (completed), the error (failed) or the questions still open
// (input_required).
func (m *Manager) detailed(r *Record) *mcp.GetTaskResult {
	res := &mcp.GetTaskResult{Task: m.task(r)}
	switch r.Status {
	case mcp.TaskCompleted:
		res.ToolResult = withResultType(r.Result)
	case mcp.TaskFailed:
		res.Error = r.Error
	case mcp.TaskInputRequired:
		res.InputRequests = make(mcp.InputRequests, len(r.Pending))
		for k, q := range r.Pending {
			if _, answered := r.Answers[k]; !answered {
				res.InputRequests[k] = q
			}
		}
	}
	return res
}

// withResultType returns the stored result res with resultType
// "complete" when it has none: a task completed before stored results
// carried it is served as one completed since.
func withResultType(res json.RawMessage) json.RawMessage {
	has := false
	jsontext.Members(res, func(key, _ []byte) {
		if string(key) == "resultType" {
			has = true
		}
	})
	i := bytes.IndexByte(res, '{')
	if has || i < 0 {
		return res
	}
	rest := bytes.TrimLeft(res[i+1:], " \t\r\n")
	out := make(json.RawMessage, 0, len(res)+len(`"resultType":"complete",`)+1)
	out = append(out, `{"resultType":"complete"`...)
	if len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, rest...)
}

// change applies f to the task id names, in one store update, if req's
// principal owns it: another principal's task is an unknown one.
func (m *Manager) change(ctx context.Context, req *server.Request, id string, f func(*Record) error) error {
	principal, err := m.principalOf(ctx, req)
	if err != nil {
		m.log.Error("tasks: principal hook failed", "err", err)
		return unknownTask()
	}
	lapsed := false
	stored, err := m.write(ctx, id, func(r *Record) error {
		if r.Principal != principal {
			return ErrNotFound
		}
		if lapsed = m.expireLease(r); lapsed {
			return nil // store the failure; f answers below
		}
		return f(r)
	})
	var rpc *wire.Error
	switch {
	case err == nil && lapsed:
		// The task failed just now: f says what that means to this
		// request (an update is refused, a cancel is a no-op), on a copy.
		return f(stored)
	case err == nil:
		return nil
	case errors.Is(err, ErrNotFound):
		return unknownTask()
	case errors.Is(err, ErrAnswersFull):
		return wire.InvalidRequest("Invalid request: %v", err)
	case errors.As(err, &rpc):
		return err
	}
	m.log.Error("tasks: updating a task failed", "task", id, "err", err)
	return wire.Internal("")
}

func (m *Manager) update(ctx context.Context, req *server.Request, p *mcp.UpdateTaskRequestParams) (*mcp.EmptyResult, error) {
	err := m.change(ctx, req, p.TaskID, func(r *Record) error {
		if r.Status != mcp.TaskInputRequired {
			return wire.InvalidParams("Invalid params: task %s is %s, not waiting for input", r.ID, r.Status)
		}
		// Answers to questions the task does not wait on (never asked, or
		// answered already) are dropped, not refused: the protocol's rule
		// for inputResponses, which the conformance suite holds tasks/update
		// to as well. (Decoding the params refused answers that are not
		// objects.)
		if r.Answers == nil {
			r.Answers = mcp.InputResponses{}
		}
		var held int64
		for _, a := range r.Answers {
			held += int64(len(a))
		}
		for k, v := range p.InputResponses {
			if _, open := r.Pending[k]; !open {
				continue
			}
			if _, done := r.Answers[k]; done {
				continue
			}
			if m.maxAnswer > 0 && int64(len(v)) > m.maxAnswer {
				return wire.InvalidParams("Invalid params: the answer to %q is %d bytes; the limit is %d bytes per answer", k, len(v), m.maxAnswer)
			}
			r.Answers[k] = v
			held += int64(len(v))
		}
		if m.maxTask > 0 && held > m.maxTask {
			return wire.InvalidParams("Invalid params: the task's answers would be %d bytes; the limit is %d bytes per task", held, m.maxTask)
		}
		r.Updated = m.now().UTC()
		return nil
	})
	if err != nil {
		return nil, err
	}
	m.wake(p.TaskID)
	m.notify(ctx, p.TaskID)
	return &mcp.EmptyResult{}, nil
}

func (m *Manager) cancel(ctx context.Context, req *server.Request, p *mcp.CancelTaskRequestParams) (*mcp.EmptyResult, error) {
	err := m.change(ctx, req, p.TaskID, func(r *Record) error {
		if r.Status.Terminal() {
			return nil // idempotent: a finished task stays as it finished
		}
		r.Status, r.Pending, r.Answers = mcp.TaskCancelled, nil, nil
		r.Updated = m.now().UTC()
		return nil
	})
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	run := m.runs[p.TaskID]
	m.mu.Unlock()
	if run != nil {
		run.cancel()
	} else {
		m.notify(ctx, p.TaskID)
	}
	return &mcp.EmptyResult{}, nil
}

// wake tells the body of task id, if it runs here, that answers came.
func (m *Manager) wake(id string) {
	m.mu.Lock()
	run := m.runs[id]
	m.mu.Unlock()
	if run != nil {
		run.wake()
	}
}

// newID returns an unguessable task id: 128 random bits.
func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
