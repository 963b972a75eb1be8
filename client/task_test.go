package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"testing/synctest"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/tasks"
)

// taskServer serves one tool whose call becomes a task running body.
func taskServer(t *testing.T, body tasks.Body) *server.Server {
	t.Helper()
	s := newServer(nil)
	m, err := tasks.Enable(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		if !tasks.Declared(req) {
			return nil, tasks.RequiredError()
		}
		return m.Start(ctx, req, body)
	})
	return s
}

func taskClient(opts *client.Options) *client.Client {
	if opts == nil {
		opts = &client.Options{}
	}
	opts.Extensions = map[string]json.RawMessage{mcp.ExtensionTasks: nil}
	return newClient(opts)
}

// TestCallToolWaitsForTask: CallTool polls a task to its end and returns
// its result; the task's questions go to the same callbacks as a round's
// and their answers reach the body; the caller's code is what it is for
// a plain call.
func TestCallToolWaitsForTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := taskServer(t, func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			answers, err := run.Ask(ctx, mcp.InputRequests{"name": mcp.NewElicitFormRequest("Who?", mcp.ElicitRequestedSchema{})})
			if err != nil {
				return nil, err
			}
			r, err := answers.Elicit("name")
			if err != nil || r.Action != mcp.ActionAccept {
				return mcp.ErrorResult("no name"), nil
			}
			return mcp.TextResult("hello " + r.Content["name"].(string)), nil
		})
		asked := 0
		c := taskClient(&client.Options{Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			asked++
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": "Ada"}}, nil
		}})
		sess, w := connect(t, c, s)
		res, err := sess.CallTool(context.Background(), "job", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Content[0].(*mcp.TextContent).Text; got != "hello Ada" || asked != 1 {
			t.Errorf("result %q, asked %d times", got, asked)
		}
		if len(w.Requests(mcp.MethodUpdateTask)) != 1 || len(w.Requests(mcp.MethodGetTask)) < 2 {
			t.Errorf("sent %d tasks/update and %d tasks/get", len(w.Requests(mcp.MethodUpdateTask)), len(w.Requests(mcp.MethodGetTask)))
		}
	})
}

// TestCallToolTaskEnds: a failed task is the server's *jsonrpc.Error; the
// caller's context ending cancels the task on the server; too many polls
// end in a *TaskPollsExceededError and cancel the task too.
func TestCallToolTaskEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		failing := taskServer(t, func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			return nil, wire.InvalidParams("Invalid params: bad input")
		})
		sess, _ := connect(t, taskClient(nil), failing)
		_, err := sess.CallTool(context.Background(), "job", nil)
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != jsonrpc.CodeInvalidParams || rpcErr.Message != "Invalid params: bad input" {
			t.Errorf("failed task: %v", err)
		}

		cancelled := make(chan struct{})
		waiting := taskServer(t, func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			close(cancelled)
			return nil, ctx.Err()
		})
		sess, _ = connect(t, taskClient(nil), waiting)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			_, err := sess.CallTool(ctx, "job", nil)
			done <- err
		}()
		synctest.Wait()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("CallTool after cancel: %v", err)
		}
		synctest.Wait()
		select {
		case <-cancelled:
		default:
			t.Error("the caller gave up but the task runs on")
		}

		cancelled = make(chan struct{})
		sess, _ = connect(t, taskClient(&client.Options{Loop: &client.LoopOptions{MaxTaskPolls: 3}}), waiting)
		_, err = sess.CallTool(context.Background(), "job", nil)
		var polls *client.TaskPollsExceededError
		if !errors.As(err, &polls) || polls.Polls != 3 || !polls.Cancelled {
			t.Errorf("poll limit: %v", err)
		}
		synctest.Wait()
		select {
		case <-cancelled:
		default:
			t.Error("the poll limit did not cancel the task")
		}
	})
}

// TestTaskHandle: StartTool hands over the task instead of waiting; its
// state is read, its question answered by hand and its result read with
// TaskResult; Wait whose context ends leaves the task running, and a second
// session takes it up by id and waits for it with its callbacks; Cancel
// stops a task and is a no-op on a finished one.
func TestTaskHandle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ask := func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			answers, err := run.Ask(ctx, mcp.InputRequests{"name": mcp.NewElicitFormRequest("Who?", mcp.ElicitRequestedSchema{})})
			if err != nil {
				return nil, err
			}
			r, err := answers.Elicit("name")
			if err != nil || !r.Accepted() {
				return mcp.ErrorResult("no name"), nil
			}
			return mcp.TextResult("hello " + r.Content["name"].(string)), nil
		}
		s := taskServer(t, ask)
		ctx := context.Background()
		sess, _ := connect(t, taskClient(nil), s)
		res, task, err := sess.StartTool(ctx, "job", nil)
		if err != nil || res != nil || task == nil || task.ID == "" {
			t.Fatalf("StartTool: %v %v %v", res, task, err)
		}
		synctest.Wait()
		g, err := task.Status(ctx)
		if err != nil || g.Status != mcp.TaskInputRequired || g.InputRequests["name"] == nil {
			t.Fatalf("Status: %+v %v", g, err)
		}
		if _, done, err := client.TaskResult(g); done || err != nil {
			t.Errorf("Result of a waiting task: done %v, %v", done, err)
		}
		if err := task.Answer(ctx, mcp.InputResponses{"name": json.RawMessage(`{"action":"accept","content":{"name":"Ada"}}`)}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		g, _ = task.Status(ctx)
		res, done, err := client.TaskResult(g)
		if !done || err != nil || res.Content[0].(*mcp.TextContent).Text != "hello Ada" {
			t.Fatalf("Result: %+v %v %v", res, done, err)
		}
		if err := task.Cancel(ctx); err != nil {
			t.Errorf("cancelling a finished task: %v", err)
		}
		if g, _ := task.Status(ctx); g.Status != mcp.TaskCompleted {
			t.Errorf("a cancel changed a finished task: %s", g.Status)
		}

		// Wait gives up with its context and leaves the task to another
		// session, which answers through its Elicit callback.
		_, task, err = sess.StartTool(ctx, "job", nil)
		if err != nil {
			t.Fatal(err)
		}
		wctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := task.Wait(wctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Wait with an ended context: %v", err)
		}
		synctest.Wait()
		if g, _ := task.Status(ctx); g.Status != mcp.TaskInputRequired {
			t.Fatalf("Wait's end touched the task: %s", g.Status)
		}
		other, _ := connect(t, taskClient(&client.Options{Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": "Grace"}}, nil
		}}), s)
		res, err = other.Task(task.ID).Wait(ctx)
		if err != nil || res.Content[0].(*mcp.TextContent).Text != "hello Grace" {
			t.Fatalf("taken up by id: %+v %v", res, err)
		}

		// Cancel stops a running task; Wait then reports it.
		_, task, _ = sess.StartTool(ctx, "job", nil)
		if err := task.Cancel(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := task.Wait(ctx); !errors.Is(err, client.ErrTaskCancelled) {
			t.Errorf("Wait on a cancelled task: %v", err)
		}
		// Too many polls: Wait says so and does not cancel.
		slow := taskServer(t, func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			<-ctx.Done()
			return nil, ctx.Err()
		})
		few, _ := connect(t, taskClient(&client.Options{Loop: &client.LoopOptions{MaxTaskPolls: 2}}), slow)
		_, task, _ = few.StartTool(ctx, "job", nil)
		var pe *client.TaskPollsExceededError
		if _, err := task.Wait(ctx); !errors.As(err, &pe) || pe.Cancelled || pe.Polls != 2 {
			t.Fatalf("Wait past its polls: %v", err)
		}
		if g, _ := task.Status(ctx); g.Status != mcp.TaskWorking {
			t.Errorf("Wait past its polls touched the task: %s", g.Status)
		}
		task.Cancel(ctx)
		synctest.Wait()

		// A client without the extension gets the result itself.
		plain := newServer(nil)
		plain.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
			return mcp.TextResult("now"), nil
		})
		ps, _ := connect(t, newClient(nil), plain)
		if res, task, err := ps.StartTool(ctx, "job", nil); err != nil || task != nil || res.Content[0].(*mcp.TextContent).Text != "now" {
			t.Errorf("StartTool without a task: %v %v %v", res, task, err)
		}
	})
}
