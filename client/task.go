package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
)

// Tasks (io.modelcontextprotocol/tasks): a client that declares the
// extension (Options.Extensions) may be answered with a task instead of a
// tool's result. CallTool then waits for the task: it polls tasks/get,
// answers the task's questions through the same callbacks as a round's
// (tasks/update), and cancels the task (tasks/cancel) when the caller's
// context ends. The caller's code does not change.

// TaskPollsExceededError is returned by CallTool and Task.Wait when a
// task was polled LoopOptions.MaxTaskPolls times without finishing.
// CallTool cancels the task; Task.Wait leaves it running.
type TaskPollsExceededError struct {
	TaskID string
	Polls  int
	// Cancelled reports whether the client cancelled the task.
	Cancelled bool
}

func (e *TaskPollsExceededError) Error() string {
	if !e.Cancelled {
		return fmt.Sprintf("client: task %s did not finish in %d polls", e.TaskID, e.Polls)
	}
	return fmt.Sprintf("client: task %s did not finish in %d polls; it was cancelled", e.TaskID, e.Polls)
}

// ErrTaskCancelled is returned by CallTool for a task that ended
// cancelled (by another client of the same principal, or the server).
var ErrTaskCancelled = errors.New("client: the task was cancelled")

// declaresTasks reports whether the client declared the tasks extension.
func (s *Session) declaresTasks() bool {
	_, ok := s.client.opts.Capabilities.Extensions[mcp.ExtensionTasks]
	return ok
}

// awaitTask waits for the task t that answered call, and cancels it when
// the caller gives up: CallTool's caller never sees the task.
func (s *Session) awaitTask(ctx context.Context, call *Call, t *mcp.CreateTaskResult) (*mcp.CallToolResult, error) {
	return s.createdTask(call, t).wait(ctx, true)
}

// Task is a handle on a task of the tasks extension, for callers who want
// to hold it rather than wait inside CallTool: start one with StartTool,
// or take up one by its id with Session.Task (from another process, after
// a restart: the id is all a task needs, as long as the session
// authenticates as the principal that created it). Its methods are one
// request each, except Wait. A Task is safe for concurrent use.
//
// A Task remembers what it heard of the task: when the last word about it
// arrived (its creation, or the last answer to Status) and the server's
// pollIntervalMs, so that Wait's first poll keeps the interval the
// server asked for, and the questions it answered, so that Wait does not
// ask the person twice when a poll still shows one.
type Task struct {
	// ID is the task's id.
	ID string
	s  *Session
	// call is what the task answers, as the callbacks see it in a
	// Pending; a task taken up by id knows only that it is a tool call.
	call Call
	// st is shared by copies of the handle.
	st *taskState
}

// taskState is what a Task heard of its task.
type taskState struct {
	mu sync.Mutex
	// last is when the last word about the task arrived: the
	// CreateTaskResult, or the answer to a tasks/get. Zero for a task
	// taken up by id, until its first Status.
	last time.Time
	// interval is the server's latest pollIntervalMs; 0 when it gave none.
	interval time.Duration
	// seen holds the questions of the last input_required state the
	// handle read, each as its JSON encoding, by key.
	seen map[string]string
	// answered holds the questions this handle answered, as seen holds
	// them ("" for an answer to a question the handle never read). A poll
	// that shows one of them again (the server acknowledged the answer
	// before taking it in) asks nothing; a different question under a
	// key already answered is a new question.
	answered map[string]string
}

// StartTool calls tool name like CallTool, running any rounds the server
// asks for first, and returns the tool's result if the server answered
// with one, or a handle on the task it created instead (a server creates
// one only for a client that declared io.modelcontextprotocol/tasks in
// Options.Extensions). Exactly one of the two is non-nil without an
// error. Unlike CallTool, nothing waits for the task or cancels it.
func (s *Session) StartTool(ctx context.Context, name string, args any) (*mcp.CallToolResult, *Task, error) {
	call, err := ToolCall(name, args)
	if err != nil {
		return nil, nil, err
	}
	res, err := s.run(ctx, call)
	if err != nil {
		return nil, nil, err
	}
	switch r := res.(type) {
	case *mcp.CallToolResult:
		return r, nil, nil
	case *mcp.CreateTaskResult:
		if s.declaresTasks() {
			return nil, s.createdTask(call, r), nil
		}
	}
	rt := string(res.ResultHeader().ResultType)
	return nil, nil, &InvalidResponseError{Method: mcp.MethodCallTool,
		Err: fmt.Errorf("%w (the client did not declare %s)", &mcp.UnknownResultTypeError{Value: rt}, mcp.ExtensionTasks)}
}

// Task returns a handle on the task with id, such as one another process
// started; nothing is sent until its methods are called. The handle knows
// nothing of the task yet: Wait's first poll goes at once.
func (s *Session) Task(id string) *Task {
	return s.newTask(&Call{Method: mcp.MethodCallTool}, id)
}

func (s *Session) newTask(call *Call, id string) *Task {
	return &Task{ID: id, s: s, call: *call, st: &taskState{}}
}

// createdTask is the handle on the task t that the server created for
// call just now: the interval runs from here.
func (s *Session) createdTask(call *Call, t *mcp.CreateTaskResult) *Task {
	task := s.newTask(call, t.TaskID)
	task.st.heard(time.Now(), t.PollIntervalMs)
	return task
}

// heard records a word about the task that arrived at now with the
// server's interval ms (0: none given, the last one stands).
func (st *taskState) heard(now time.Time, ms int64) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.last = now
	if ms > 0 {
		st.interval = time.Duration(ms) * time.Millisecond
	}
}

// Status asks the server for the task's state (one tasks/get): its
// status, and the result (completed), error (failed) or questions
// (input_required) that go with it. TaskResult turns a finished state into
// what CallTool would return. Status sends at once, whatever the server's
// pollIntervalMs: keeping to it is the caller's part (Wait does).
func (t *Task) Status(ctx context.Context) (*mcp.GetTaskResult, error) {
	g, err := CallMethod[mcp.GetTaskResult](ctx, t.s, mcp.MethodGetTask, &mcp.GetTaskRequestParams{TaskID: t.ID}, &MethodOptions{Target: t.ID})
	if err != nil {
		return nil, err
	}
	t.st.heard(time.Now(), g.PollIntervalMs)
	if g.Status == mcp.TaskInputRequired {
		t.st.saw(g.InputRequests)
	}
	return g, nil
}

// saw records the questions of an input_required state.
func (st *taskState) saw(requests mcp.InputRequests) {
	seen := make(map[string]string, len(requests))
	for k, r := range requests {
		seen[k] = questionKey(r)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	st.seen = seen
}

// questionKey is what tells two questions under one key apart: the
// request's encoding ("" when it has none, which nothing else matches).
func questionKey(r mcp.InputRequest) string {
	b, err := json.Marshal(r)
	if err != nil {
		return ""
	}
	return string(b)
}

// Answer delivers answers to the task's open questions (one tasks/update),
// keyed as the questions were and already encoded, as Session.Fulfil
// returns them; Respond takes them typed. Answers to questions the task
// no longer waits on are dropped by the server. The questions answered
// (as the handle's last Status showed them) are not asked again by Wait.
func (t *Task) Answer(ctx context.Context, responses mcp.InputResponses) error {
	_, err := CallMethod[mcp.EmptyResult](ctx, t.s, mcp.MethodUpdateTask, &mcp.UpdateTaskRequestParams{TaskID: t.ID, InputResponses: responses}, &MethodOptions{Target: t.ID})
	if err != nil {
		return err
	}
	t.st.mu.Lock()
	defer t.st.mu.Unlock()
	if t.st.answered == nil {
		t.st.answered = make(map[string]string, len(responses))
	}
	for k := range responses {
		t.st.answered[k] = t.st.seen[k]
	}
	return nil
}

// Respond is Answer with typed answers: each is what the question under
// its key asked for, an *mcp.ElicitResult, *mcp.CreateMessageResult or
// *mcp.ListRootsResult. An answer that cannot be encoded fails Respond
// before anything is sent, with an error naming its key.
func (t *Task) Respond(ctx context.Context, answers map[string]mcp.InputResponse) error {
	responses := make(mcp.InputResponses, len(answers))
	for k, a := range answers {
		if a == nil {
			return fmt.Errorf("client: the answer to input %q of task %s is nil", k, t.ID)
		}
		if err := responses.Set(k, a); err != nil {
			return fmt.Errorf("client: encoding the answer to input %q of task %s: %w", k, t.ID, err)
		}
	}
	return t.Answer(ctx, responses)
}

// Cancel asks the server to stop the task (one tasks/cancel). Cancelling
// a finished task changes nothing and is not an error.
func (t *Task) Cancel(ctx context.Context) error {
	_, err := CallMethod[mcp.EmptyResult](ctx, t.s, mcp.MethodCancelTask, &mcp.CancelTaskRequestParams{TaskID: t.ID}, &MethodOptions{Target: t.ID})
	return err
}

// Wait polls the task until it finishes, answering its questions with the
// client's callbacks as CallTool does, and returns its result (or the
// failed task's *jsonrpc.Error, or ErrTaskCancelled). When ctx ends first
// it returns ctx's error and leaves the task running: Cancel stops it.
//
// Polls keep the server's pollIntervalMs (capped by
// LoopOptions.MaxPollInterval; a second when the server gave none),
// counted from the last word about the task: a task from StartTool is
// first polled one interval after its creation, one taken up by id at
// once. Answering a question does not hasten the next poll.
func (t *Task) Wait(ctx context.Context) (*mcp.CallToolResult, error) {
	return t.wait(ctx, false)
}

// TaskResult returns what a finished task's state g means to a caller:
// the tool's result (completed; a tool error is a result with IsError),
// the task's error as a *jsonrpc.Error (failed), or ErrTaskCancelled.
// done is false while the task is working or waiting for input. A
// completed task's result is read with or without its own resultType
// "complete" (older Parley servers stored it without).
func TaskResult(g *mcp.GetTaskResult) (res *mcp.CallToolResult, done bool, err error) {
	switch g.Status {
	case mcp.TaskCompleted:
		out, err := mcp.DecodeCallToolOutcome(g.ToolResult)
		if err != nil {
			return nil, true, &InvalidResponseError{Method: mcp.MethodGetTask, Err: err}
		}
		r, ok := out.(*mcp.CallToolResult)
		if !ok {
			return nil, true, &InvalidResponseError{Method: mcp.MethodGetTask, Err: fmt.Errorf("a completed task's result is a %T", out)}
		}
		return r, true, nil
	case mcp.TaskFailed:
		var e jsonrpc.Error
		if err := json.Unmarshal(g.Error, &e); err != nil || e.Message == "" && e.Code == 0 {
			return nil, true, &InvalidResponseError{Method: mcp.MethodGetTask, Err: fmt.Errorf("a failed task without its error object: %s", g.Error)}
		}
		return nil, true, &e
	case mcp.TaskCancelled:
		return nil, true, ErrTaskCancelled
	case mcp.TaskWorking, mcp.TaskInputRequired:
		return nil, false, nil
	}
	return nil, true, &InvalidResponseError{Method: mcp.MethodGetTask, Err: fmt.Errorf("unknown task status %q", g.Status)}
}

// Result is TaskResult.
//
// Deprecated: use TaskResult, whose name says what it reads.
func Result(g *mcp.GetTaskResult) (res *mcp.CallToolResult, done bool, err error) {
	return TaskResult(g)
}

// wait polls until the task finishes; cancelOnEnd cancels the task when
// the wait ends without its end.
func (t *Task) wait(ctx context.Context, cancelOnEnd bool) (*mcp.CallToolResult, error) {
	s := t.s
	giveUp := func() {
		if cancelOnEnd {
			s.cancelTask(t.ID)
		}
	}
	// polls counts tasks/get only: answering is not polling.
	for polls := 0; ; {
		if polls >= s.client.loop.maxTaskPolls {
			giveUp()
			return nil, &TaskPollsExceededError{TaskID: t.ID, Polls: polls, Cancelled: cancelOnEnd}
		}
		if err := sleep(ctx, t.untilNextPoll()); err != nil {
			giveUp()
			return nil, err
		}
		g, err := t.Status(ctx)
		polls++
		if err != nil {
			if ctx.Err() != nil {
				giveUp()
			}
			return nil, err
		}
		if res, done, err := TaskResult(g); done {
			return res, err
		}
		open := t.unanswered(g)
		if g.Status != mcp.TaskInputRequired || len(open) == 0 {
			continue // working, or waiting on answers already sent: poll again
		}
		responses, err := s.Fulfil(ctx, &Pending{Call: t.call, InputRequests: open})
		if err == nil {
			err = t.Answer(ctx, responses)
		}
		if err != nil {
			if ctx.Err() != nil {
				giveUp()
			}
			return nil, err
		}
	}
}

// unanswered returns the questions of g that this handle has not
// answered: a key it answered counts only with the question it answered
// under it (a server may not reuse a key for another question, but one
// that does is asked, not ignored for ever).
func (t *Task) unanswered(g *mcp.GetTaskResult) mcp.InputRequests {
	t.st.mu.Lock()
	defer t.st.mu.Unlock()
	open := make(mcp.InputRequests, len(g.InputRequests))
	for k, r := range g.InputRequests {
		q, ok := t.st.answered[k]
		if !ok || q != "" && q != questionKey(r) {
			open[k] = r
		}
	}
	return open
}

// untilNextPoll is how long to wait before the next tasks/get: the
// server's interval, or a second, capped by LoopOptions.MaxPollInterval,
// counted from the last word about the task; nothing before the first
// word a handle taken up by id hears.
func (t *Task) untilNextPoll() time.Duration {
	t.st.mu.Lock()
	last, d := t.st.last, t.st.interval
	t.st.mu.Unlock()
	if last.IsZero() {
		return 0
	}
	if d <= 0 {
		d = time.Second
	}
	return time.Until(last.Add(min(d, t.s.client.loop.maxPollInterval)))
}

// cancelTask tells the server to stop task id, best effort, when the
// caller gave up on it: the caller's context may be over, so the request
// gets a short one of its own.
func (s *Session) cancelTask(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := CallMethod[mcp.EmptyResult](ctx, s, mcp.MethodCancelTask, &mcp.CancelTaskRequestParams{TaskID: id}, &MethodOptions{Target: id}); err != nil {
		s.client.log.Debug("client: cancelling a task failed", "task", id, "err", err)
	}
}
