package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
	return s.newTask(call, t.TaskID).wait(ctx, t.PollIntervalMs, true)
}

// Task is a handle on a task of the tasks extension, for callers who want
// to hold it rather than wait inside CallTool: start one with StartTool,
// or take up one by its id with Session.Task (from another process, after
// a restart: the id is all a task needs, as long as the session
// authenticates as the principal that created it). Its methods are one
// request each, except Wait. A Task is safe for concurrent use.
type Task struct {
	// ID is the task's id.
	ID string
	s  *Session
	// call is what the task answers, as the callbacks see it in a
	// Pending; a task taken up by id knows only that it is a tool call.
	call Call
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
			return nil, s.newTask(call, r.TaskID), nil
		}
	}
	rt := string(res.ResultHeader().ResultType)
	return nil, nil, &InvalidResponseError{Method: mcp.MethodCallTool,
		Err: fmt.Errorf("%w (the client did not declare %s)", &mcp.UnknownResultTypeError{Value: rt}, mcp.ExtensionTasks)}
}

// Task returns a handle on the task with id, such as one another process
// started; nothing is sent until its methods are called.
func (s *Session) Task(id string) *Task {
	return s.newTask(&Call{Method: mcp.MethodCallTool}, id)
}

func (s *Session) newTask(call *Call, id string) *Task {
	return &Task{ID: id, s: s, call: *call}
}

// Status asks the server for the task's state (one tasks/get): its
// status, and the result (completed), error (failed) or questions
// (input_required) that go with it. Result turns a finished state into
// what CallTool would return.
func (t *Task) Status(ctx context.Context) (*mcp.GetTaskResult, error) {
	return CallMethod[mcp.GetTaskResult](ctx, t.s, mcp.MethodGetTask, &mcp.GetTaskRequestParams{TaskID: t.ID}, &MethodOptions{Target: t.ID})
}

// Answer delivers answers to the task's open questions (one tasks/update),
// keyed as the questions were. Answers to questions the task no longer
// waits on are dropped by the server.
func (t *Task) Answer(ctx context.Context, responses mcp.InputResponses) error {
	_, err := CallMethod[mcp.EmptyResult](ctx, t.s, mcp.MethodUpdateTask, &mcp.UpdateTaskRequestParams{TaskID: t.ID, InputResponses: responses}, &MethodOptions{Target: t.ID})
	return err
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
func (t *Task) Wait(ctx context.Context) (*mcp.CallToolResult, error) {
	return t.wait(ctx, 0, false)
}

// Result returns what a finished task's state g means to a caller: the
// tool's result (completed; a tool error is a result with IsError), the
// task's error as a *jsonrpc.Error (failed), or ErrTaskCancelled. done is
// false while the task is working or waiting for input.
func Result(g *mcp.GetTaskResult) (res *mcp.CallToolResult, done bool, err error) {
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

// wait polls until the task finishes, starting with the server's interval
// ms; cancelOnEnd cancels the task when the wait ends without its end.
func (t *Task) wait(ctx context.Context, interval int64, cancelOnEnd bool) (*mcp.CallToolResult, error) {
	s := t.s
	giveUp := func() {
		if cancelOnEnd {
			s.cancelTask(t.ID)
		}
	}
	for polls := 0; ; polls++ {
		if polls >= s.client.loop.maxTaskPolls {
			giveUp()
			return nil, &TaskPollsExceededError{TaskID: t.ID, Polls: polls, Cancelled: cancelOnEnd}
		}
		if polls > 0 {
			if err := sleep(ctx, s.pollWait(interval)); err != nil {
				giveUp()
				return nil, err
			}
		}
		g, err := t.Status(ctx)
		if err != nil {
			if ctx.Err() != nil {
				giveUp()
			}
			return nil, err
		}
		if g.PollIntervalMs > 0 {
			interval = g.PollIntervalMs
		}
		if res, done, err := Result(g); done {
			return res, err
		}
		if g.Status != mcp.TaskInputRequired || len(g.InputRequests) == 0 {
			continue // working, or answered meanwhile: poll again
		}
		responses, err := s.Fulfil(ctx, &Pending{Call: t.call, InputRequests: g.InputRequests})
		if err != nil {
			if ctx.Err() != nil {
				giveUp()
			}
			return nil, err
		}
		if err := t.Answer(ctx, responses); err != nil {
			return nil, err
		}
		polls-- // an answer is not a poll: ask again at once
	}
}

// pollWait is the wait before the next poll: the server's interval, or a
// second, capped by LoopOptions.MaxPollInterval.
func (s *Session) pollWait(ms int64) time.Duration {
	d := time.Second
	if ms > 0 {
		d = time.Duration(ms) * time.Millisecond
	}
	return min(d, s.client.loop.maxPollInterval)
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
