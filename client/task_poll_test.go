package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/tasks"
)

// The client's side of the tasks extension against a fake server, whose
// every byte the test writes, in a synctest bubble: the times below are
// the bubble's, exact, never the wall clock's.

// taskJSON is task t1 in status with pollIntervalMs poll (none when 0) and
// the members extra (`"result":{…}` and the like), as resultType rt.
func taskJSON(rt, status string, poll int, extra string) string {
	s := fmt.Sprintf(`{"resultType":%q,"taskId":"t1","status":%q,"createdAt":"2026-12-04T10:00:00Z",`+
		`"lastUpdatedAt":"2026-12-04T10:00:00Z","ttlMs":3600000`, rt, status)
	if poll > 0 {
		s += fmt.Sprintf(`,"pollIntervalMs":%d`, poll)
	}
	if extra != "" {
		s += "," + extra
	}
	return s + "}"
}

const askName = `"inputRequests":{"name":{"method":"elicitation/create","params":{"mode":"form","message":"Who?",` +
	`"requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}}}`

// taskParam returns the taskId a tasks/* request names.
func taskParam(t *testing.T, m wireMsg) string {
	t.Helper()
	var id string
	m.param(t, "taskId", &id)
	return id
}

// TestTaskPollSchedule: CallTool's polls keep the server's pollIntervalMs,
// read as milliseconds, from the task's creation on: the first tasks/get
// goes one interval after the CreateTaskResult, each next one an interval
// after the last answer, and a tasks/update does not bring the next poll
// forward. A question the client answered is not asked again when a poll
// still shows it (the server had not taken the answer in yet); a completed
// task's result without its own resultType (older Parley servers) is the
// call's result.
func TestTaskPollSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var asked atomic.Int32
		c := taskClient(&client.Options{Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			asked.Add(1)
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": "Ada"}}, nil
		}})
		sess, f := dialFake(t, c)
		var res *mcp.CallToolResult
		done := async(func() (err error) { res, err = sess.CallTool(context.Background(), "job", nil); return err })
		m := f.expect(mcp.MethodCallTool)
		f.reply(m.ID, taskJSON("task", "working", 1500, ""))
		last := time.Now()
		poll := func(want time.Duration, what string) wireMsg {
			t.Helper()
			m := f.expect(mcp.MethodGetTask)
			if got := time.Since(last); got != want {
				t.Errorf("%s: polled %v after the last word, want %v", what, got, want)
			}
			if id := taskParam(t, m); id != "t1" {
				t.Errorf("%s: polled task %q", what, id)
			}
			return m
		}
		m = poll(1500*time.Millisecond, "first poll")
		f.reply(m.ID, taskJSON("complete", "working", 1500, ""))
		last = time.Now()
		m = poll(1500*time.Millisecond, "second poll")
		f.reply(m.ID, taskJSON("complete", "input_required", 1500, askName))
		last = time.Now()

		m = f.expect(mcp.MethodUpdateTask) // at once: answering is not polling
		if time.Since(last) != 0 || taskParam(t, m) != "t1" {
			t.Errorf("tasks/update %s after %v", m.Params, time.Since(last))
		}
		var responses mcp.InputResponses
		m.param(t, "inputResponses", &responses)
		if r, err := responses.Elicit("name"); err != nil || r.Content["name"] != "Ada" {
			t.Errorf("answer %s: %v", m.Params, err)
		}
		time.Sleep(200 * time.Millisecond) // the server takes its time to acknowledge
		f.reply(m.ID, `{"resultType":"complete"}`)

		m = poll(1500*time.Millisecond, "poll after the answer")
		f.reply(m.ID, taskJSON("complete", "input_required", 1500, askName)) // not taken in yet
		last = time.Now()
		m = poll(1500*time.Millisecond, "poll while the answer is on its way") // not a second tasks/update
		f.reply(m.ID, taskJSON("complete", "completed", 1500, `"result":{"content":[{"type":"text","text":"hello Ada"}]}`))
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if text(res) != "hello Ada" || asked.Load() != 1 {
			t.Errorf("result %q, asked %d times", text(res), asked.Load())
		}
		noMoreRequests(f, sess)
	})
}

// TestTaskKeyReusedForAnotherQuestion: a server that asks a new question
// under a key already answered (the extension forbids it, but a body
// that asks twice with one key does it) is answered again: only the very
// question answered counts as answered.
func TestTaskKeyReusedForAnotherQuestion(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var asked []string
		c := taskClient(&client.Options{Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			form := p.(*mcp.ElicitRequestFormParams)
			asked = append(asked, form.Message)
			return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": "Ada"}}, nil
		}})
		sess, f := dialFake(t, c)
		done := async(func() error { _, err := sess.CallTool(context.Background(), "job", nil); return err })
		m := f.expect(mcp.MethodCallTool)
		f.reply(m.ID, taskJSON("task", "working", 100, ""))
		m = f.expect(mcp.MethodGetTask)
		f.reply(m.ID, taskJSON("complete", "input_required", 100, askName))
		m = f.expect(mcp.MethodUpdateTask)
		f.reply(m.ID, `{"resultType":"complete"}`)
		m = f.expect(mcp.MethodGetTask)
		f.reply(m.ID, taskJSON("complete", "input_required", 100, strings.Replace(askName, "Who?", "How old?", 1)))
		m = f.expect(mcp.MethodUpdateTask)
		f.reply(m.ID, `{"resultType":"complete"}`)
		m = f.expect(mcp.MethodGetTask)
		f.reply(m.ID, taskJSON("complete", "completed", 100, `"result":{"content":[]}`))
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if strings.Join(asked, ",") != "Who?,How old?" {
			t.Errorf("asked %q, want both questions once", asked)
		}
		noMoreRequests(f, sess)
	})
}

// TestTaskMaxPollInterval: LoopOptions.MaxPollInterval caps the server's
// pollIntervalMs, the first poll's wait included; a server that gives no
// interval is polled every second. A completed task's result that carries
// resultType "complete" (what the extension's own client requires) is the
// call's result as well.
func TestTaskMaxPollInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := taskClient(&client.Options{Loop: &client.LoopOptions{MaxPollInterval: 2 * time.Second}})
		sess, f := dialFake(t, c)
		var res *mcp.CallToolResult
		done := async(func() (err error) { res, err = sess.CallTool(context.Background(), "job", nil); return err })
		m := f.expect(mcp.MethodCallTool)
		f.reply(m.ID, taskJSON("task", "working", 60_000, ""))
		start := time.Now()
		m = f.expect(mcp.MethodGetTask)
		if got := time.Since(start); got != 2*time.Second {
			t.Errorf("first poll after %v, want the cap of 2s over the server's minute", got)
		}
		f.reply(m.ID, taskJSON("complete", "working", 60_000, ""))
		start = time.Now()
		m = f.expect(mcp.MethodGetTask)
		if got := time.Since(start); got != 2*time.Second {
			t.Errorf("second poll after %v, want 2s", got)
		}
		f.reply(m.ID, taskJSON("complete", "completed", 0, `"result":{"resultType":"complete","content":[{"type":"text","text":"done"}]}`))
		if err := <-done; err != nil || text(res) != "done" {
			t.Fatalf("result %v, %v", res, err)
		}

		// No interval from the server: a second.
		done = async(func() (err error) { res, err = sess.CallTool(context.Background(), "job", nil); return err })
		m = f.expect(mcp.MethodCallTool)
		f.reply(m.ID, taskJSON("task", "working", 0, ""))
		start = time.Now()
		m = f.expect(mcp.MethodGetTask)
		if got := time.Since(start); got != time.Second {
			t.Errorf("poll after %v without an interval, want 1s", got)
		}
		f.reply(m.ID, taskJSON("complete", "completed", 0, `"result":{"content":[]}`))
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		noMoreRequests(f, sess)
	})
}

// TestTaskAnswerIsNotAPoll: LoopOptions.MaxTaskPolls counts tasks/get
// only; the tasks/update between two polls does not use one up, nor does
// it bring the next poll forward when it answers the first.
func TestTaskAnswerIsNotAPoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := taskClient(&client.Options{
			Loop: &client.LoopOptions{MaxTaskPolls: 2},
			Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
			},
		})
		sess, f := dialFake(t, c)
		done := async(func() error { _, err := sess.CallTool(context.Background(), "job", nil); return err })
		m := f.expect(mcp.MethodCallTool)
		f.reply(m.ID, taskJSON("task", "working", 100, ""))
		m = f.expect(mcp.MethodGetTask)
		f.reply(m.ID, taskJSON("complete", "input_required", 100, askName))
		last := time.Now()
		m = f.expect(mcp.MethodUpdateTask)
		f.reply(m.ID, `{"resultType":"complete"}`)
		m = f.expect(mcp.MethodGetTask) // the second poll, within the limit of two
		if got := time.Since(last); got != 100*time.Millisecond {
			t.Errorf("the poll after the answer came %v after the first, want the interval of 100ms", got)
		}
		f.reply(m.ID, taskJSON("complete", "completed", 100, `"result":{"content":[]}`))
		if err := <-done; err != nil {
			t.Fatalf("two polls and an answer within MaxTaskPolls 2: %v", err)
		}
		noMoreRequests(f, sess)
	})
}

// TestTaskContextEndsDuringPoll: when the caller's context ends while a
// tasks/get is in flight, CallTool returns the context's error and
// cancels the task on the server (tasks/cancel naming it), though its own
// context is over.
func TestTaskContextEndsDuringPoll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sess, f := dialFake(t, taskClient(nil))
		ctx, cancel := context.WithCancel(context.Background())
		done := async(func() error { _, err := sess.CallTool(ctx, "job", nil); return err })
		m := f.expect(mcp.MethodCallTool)
		f.reply(m.ID, taskJSON("task", "working", 100, ""))
		f.expect(mcp.MethodGetTask) // never answered
		cancel()
		// The tasks/cancel, and around it the notifications/cancelled of
		// the abandoned tasks/get; nothing else.
		cancelled := false
		for !cancelled {
			m := f.next()
			switch {
			case m.Method == mcp.MethodCancelTask && m.isRequest() && taskParam(t, m) == "t1":
				cancelled = true
				f.reply(m.ID, `{"resultType":"complete"}`)
			case m.Method != "notifications/cancelled":
				t.Fatalf("client sent %s, want tasks/cancel of t1", m.Raw)
			}
		}
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("CallTool: %v, want context.Canceled", err)
		}
		sess.Close()
		for {
			raw, err := f.conn.Read(context.Background())
			if err != nil {
				break
			}
			if m := decodeWire(t, raw); m.Method != "notifications/cancelled" {
				t.Errorf("client sent %s", m.Raw)
			}
		}
	})
}

// TestStartToolRefusesUndeclaredTask: a client that did not declare the
// extension refuses a task a server sends anyway (the extension forbids
// it): StartTool and CallTool fail with an *InvalidResponseError naming
// the extension, hand out no handle, and poll nothing.
func TestStartToolRefusesUndeclaredTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sess, f := dialFake(t, newClient(nil))
		for _, start := range []func() (*client.Task, error){
			func() (*client.Task, error) {
				_, task, err := sess.StartTool(context.Background(), "job", nil)
				return task, err
			},
			func() (*client.Task, error) {
				_, err := sess.CallTool(context.Background(), "job", nil)
				return nil, err
			},
		} {
			var task *client.Task
			done := async(func() (err error) { task, err = start(); return err })
			m := f.expect(mcp.MethodCallTool)
			f.reply(m.ID, taskJSON("task", "working", 100, ""))
			err := <-done
			var ire *client.InvalidResponseError
			if !errors.As(err, &ire) || !strings.Contains(err.Error(), mcp.ExtensionTasks) || task != nil {
				t.Errorf("a task for a client without the extension: %v (%T), handle %v", err, err, task)
			}
		}
		noMoreRequests(f, sess)
	})
}

// TestTaskRequestsNameTheirTask: tasks/get, tasks/update and tasks/cancel
// are written with the task id as their target, which Streamable HTTP
// sends as Mcp-Name (the extension requires it, for routing).
func TestTaskRequestsNameTheirTask(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		s := taskServer(t, func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			if _, err := run.Ask(ctx, mcp.InputRequests{"go": mcp.NewElicitFormRequest("Go?", mcp.ElicitRequestedSchema{})}); err != nil {
				return nil, err
			}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return mcp.TextResult("done"), nil
		})
		sess, w := connect(t, taskClient(nil), s)
		ctx := context.Background()
		_, task, err := sess.StartTool(ctx, "job", nil)
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if _, err := task.Status(ctx); err != nil {
			t.Fatal(err)
		}
		if err := task.Respond(ctx, map[string]mcp.InputResponse{"go": &mcp.ElicitResult{Action: mcp.ActionAccept}}); err != nil {
			t.Fatal(err)
		}
		if err := task.Cancel(ctx); err != nil {
			t.Fatal(err)
		}
		for _, method := range []string{mcp.MethodGetTask, mcp.MethodUpdateTask, mcp.MethodCancelTask} {
			if got := w.Targets(method); len(got) != 1 || got[0] != task.ID {
				t.Errorf("%s written with targets %q, want [%s]", method, got, task.ID)
			}
		}
		close(release)
	})
}

// TestTaskRespond: Respond takes typed answers and delivers them as
// Answer does (the body reads them); a nil answer fails before anything
// is sent.
func TestTaskRespond(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := taskServer(t, func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			answers, err := run.Ask(ctx, mcp.InputRequests{
				"name":  mcp.NewElicitFormRequest("Who?", mcp.ElicitRequestedSchema{}),
				"roots": &mcp.ListRootsRequest{},
			})
			if err != nil {
				return nil, err
			}
			e, err := answers.Elicit("name")
			if err != nil {
				return nil, err
			}
			r, err := answers.Roots("roots")
			if err != nil {
				return nil, err
			}
			return mcp.TextResult(fmt.Sprintf("%v in %s", e.Content["name"], r.Roots[0].URI)), nil
		})
		sess, w := connect(t, taskClient(nil), s)
		ctx := context.Background()
		_, task, err := sess.StartTool(ctx, "job", nil)
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if err := task.Respond(ctx, map[string]mcp.InputResponse{"name": nil}); err == nil || !strings.Contains(err.Error(), `"name"`) {
			t.Errorf("a nil answer: %v", err)
		}
		if n := len(w.Requests(mcp.MethodUpdateTask)); n != 0 {
			t.Errorf("a nil answer sent %d tasks/update", n)
		}
		err = task.Respond(ctx, map[string]mcp.InputResponse{
			"name":  &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": "Ada"}},
			"roots": &mcp.ListRootsResult{Roots: []mcp.Root{{URI: "file:///work"}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		g, err := task.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		res, done, err := client.TaskResult(g)
		if !done || err != nil || text(res) != "Ada in file:///work" {
			t.Errorf("TaskResult: %v %v %v", res, done, err)
		}
	})
}

// TestTaskResultForms: a completed task's stored result is read with its
// own resultType "complete" and without it; any other resultType there is
// an invalid response; a failed task's error is the *jsonrpc.Error.
func TestTaskResultForms(t *testing.T) {
	for _, tc := range []struct {
		name, stored string
		ok           bool
	}{
		{"with resultType", `{"resultType":"complete","content":[{"type":"text","text":"x"}]}`, true},
		{"without resultType", `{"content":[{"type":"text","text":"x"}]}`, true},
		{"input_required", `{"resultType":"input_required","inputRequests":{}}`, false},
		{"task", `{"resultType":"task","taskId":"t2"}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &mcp.GetTaskResult{Task: mcp.Task{TaskID: "t1", Status: mcp.TaskCompleted}, ToolResult: json.RawMessage(tc.stored)}
			res, done, err := client.TaskResult(g)
			var ire *client.InvalidResponseError
			switch {
			case !done:
				t.Error("a completed task is not done")
			case tc.ok && (err != nil || text(res) != "x"):
				t.Errorf("TaskResult: %v, %v", res, err)
			case !tc.ok && !errors.As(err, &ire):
				t.Errorf("TaskResult: %v, want an *InvalidResponseError", err)
			}
		})
	}
	g := &mcp.GetTaskResult{Task: mcp.Task{TaskID: "t1", Status: mcp.TaskFailed}, Error: json.RawMessage(`{"code":-32602,"message":"bad"}`)}
	var rpcErr *jsonrpc.Error
	if _, done, err := client.TaskResult(g); !done || !errors.As(err, &rpcErr) || rpcErr.Code != -32602 {
		t.Errorf("failed task: %v %v", done, err)
	}
}

// TestTaskHandleKeepsTheSchedule: a handle from StartTool keeps the
// interval from the task's creation (Wait's first poll is an interval
// after it, Status in between counts as the last word); a handle taken up
// by id polls at once, then keeps the interval.
func TestTaskHandleKeepsTheSchedule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sess, f := dialFake(t, taskClient(nil))
		ctx := context.Background()
		var task *client.Task
		done := async(func() (err error) { _, task, err = sess.StartTool(ctx, "job", nil); return err })
		m := f.expect(mcp.MethodCallTool)
		f.reply(m.ID, taskJSON("task", "working", 3000, ""))
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second)
		last := time.Now()
		done = async(func() error { _, err := task.Status(ctx); return err })
		m = f.expect(mcp.MethodGetTask)
		f.reply(m.ID, taskJSON("complete", "working", 3000, ""))
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		done = async(func() error { _, err := task.Wait(ctx); return err })
		m = f.expect(mcp.MethodGetTask)
		if got := time.Since(last); got != 3*time.Second {
			t.Errorf("Wait polled %v after Status, want 3s", got)
		}
		f.reply(m.ID, taskJSON("complete", "completed", 3000, `"result":{"content":[]}`))
		if err := <-done; err != nil {
			t.Fatal(err)
		}

		start := time.Now()
		done = async(func() error { _, err := sess.Task("t1").Wait(ctx); return err })
		m = f.expect(mcp.MethodGetTask)
		if got := time.Since(start); got != 0 {
			t.Errorf("a handle taken up by id polled after %v, want at once", got)
		}
		f.reply(m.ID, taskJSON("complete", "working", 500, ""))
		start = time.Now()
		m = f.expect(mcp.MethodGetTask)
		if got := time.Since(start); got != 500*time.Millisecond {
			t.Errorf("then after %v, want 500ms", got)
		}
		f.reply(m.ID, taskJSON("complete", "cancelled", 500, ""))
		if err := <-done; !errors.Is(err, client.ErrTaskCancelled) {
			t.Errorf("Wait on a cancelled task: %v", err)
		}
		noMoreRequests(f, sess)
	})
}
