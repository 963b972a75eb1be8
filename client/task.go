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

// TaskPollsExceededError is returned by CallTool when a task was polled
// LoopOptions.MaxTaskPolls times without finishing. The client cancelled
// the task.
type TaskPollsExceededError struct {
	TaskID string
	Polls  int
}

func (e *TaskPollsExceededError) Error() string {
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

// awaitTask waits for the task t that answered call.
func (s *Session) awaitTask(ctx context.Context, call *Call, t *mcp.CreateTaskResult) (*mcp.CallToolResult, error) {
	pol := s.client.loop
	id := t.TaskID
	interval := t.PollIntervalMs
	for polls := 0; ; polls++ {
		if polls >= pol.maxTaskPolls {
			s.cancelTask(id)
			return nil, &TaskPollsExceededError{TaskID: id, Polls: polls}
		}
		if polls > 0 {
			if err := sleep(ctx, s.pollWait(interval)); err != nil {
				s.cancelTask(id)
				return nil, err
			}
		}
		g, err := CallMethod[mcp.GetTaskResult](ctx, s, mcp.MethodGetTask, &mcp.GetTaskRequestParams{TaskID: id}, &MethodOptions{Target: id})
		if err != nil {
			if ctx.Err() != nil {
				s.cancelTask(id)
			}
			return nil, err
		}
		if g.PollIntervalMs > 0 {
			interval = g.PollIntervalMs
		}
		switch g.Status {
		case mcp.TaskCompleted:
			res, err := mcp.DecodeCallToolOutcome(g.ToolResult)
			if err != nil {
				return nil, &InvalidResponseError{Method: mcp.MethodGetTask, Err: err}
			}
			r, ok := res.(*mcp.CallToolResult)
			if !ok {
				return nil, &InvalidResponseError{Method: mcp.MethodGetTask, Err: fmt.Errorf("a completed task's result is a %T", res)}
			}
			return r, nil
		case mcp.TaskFailed:
			var e jsonrpc.Error
			if err := json.Unmarshal(g.Error, &e); err != nil || e.Message == "" && e.Code == 0 {
				return nil, &InvalidResponseError{Method: mcp.MethodGetTask, Err: fmt.Errorf("a failed task without its error object: %s", g.Error)}
			}
			return nil, &e
		case mcp.TaskCancelled:
			return nil, ErrTaskCancelled
		case mcp.TaskInputRequired:
			if len(g.InputRequests) == 0 {
				continue // answered meanwhile: poll again
			}
			responses, err := s.Fulfil(ctx, &Pending{Call: *call, InputRequests: g.InputRequests})
			if err != nil {
				if ctx.Err() != nil {
					s.cancelTask(id)
				}
				return nil, err
			}
			if _, err := CallMethod[mcp.EmptyResult](ctx, s, mcp.MethodUpdateTask, &mcp.UpdateTaskRequestParams{TaskID: id, InputResponses: responses}, &MethodOptions{Target: id}); err != nil {
				return nil, err
			}
			polls-- // an answer is not a poll: ask again at once
		case mcp.TaskWorking:
		default:
			return nil, &InvalidResponseError{Method: mcp.MethodGetTask, Err: fmt.Errorf("unknown task status %q", g.Status)}
		}
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
