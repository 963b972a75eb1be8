package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/tasks"
)

type jobArgs struct {
	Name string `json:"name"`
}

// tasksClient declares the tasks extension.
var tasksClient = &client.Options{
	Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}},
	Extensions:   map[string]json.RawMessage{mcp.ExtensionTasks: nil},
}

func getTask(t *testing.T, sess *client.Session, id string) *mcp.GetTaskResult {
	t.Helper()
	g, err := client.CallMethod[mcp.GetTaskResult](context.Background(), sess, mcp.MethodGetTask, &mcp.GetTaskRequestParams{TaskID: id}, &client.MethodOptions{Target: id})
	mustOK(t, err)
	return g
}

// TestTaskTool: a task tool answers a client that declared the extension
// with a task whose tasks/get inlines the body's result once it is done;
// an optional one runs at once for a client that did not; a required one
// refuses that client with -32021; declared questions are asked in
// ordinary rounds before the task starts, and the task's result sees the
// answers.
func TestTaskTool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := newServer(t, nil)
		release := make(chan struct{})
		name := mcpserver.Elicit[struct {
			Name string `json:"name"`
		}]("who", func(any, *mcpserver.Call) string { return "Who?" })
		mustOK(t, mcpserver.AddTaskTool(s, &mcp.Tool{Name: "job"}, mcpserver.TaskOptional, func(ctx context.Context, c *mcpserver.Call, a jobArgs) (string, error) {
			<-release
			return "done " + a.Name, nil
		}))
		mustOK(t, mcpserver.AddTaskTool(s, &mcp.Tool{Name: "must"}, mcpserver.TaskRequired, func(ctx context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
			return "hello " + name.Get(c).Name, nil
		}, name))
		if err := mcpserver.AddTaskTool(s, &mcp.Tool{Name: "bad"}, mcpserver.TaskMode(0), func(ctx context.Context, c *mcpserver.Call, _ struct{}) (string, error) { return "", nil }); err == nil {
			t.Error("a task tool without a mode was accepted")
		}
		ctx := context.Background()

		tasksSess := connect(t, s, tasksClient)
		call, err := client.ToolCall("job", map[string]any{"name": "x"})
		mustOK(t, err)
		res, p, err := tasksSess.Begin(ctx, call)
		mustOK(t, err)
		created, ok := res.(*mcp.CreateTaskResult)
		if !ok || p != nil || created.Status != mcp.TaskWorking {
			t.Fatalf("tools/call answered %#v", res)
		}
		if g := getTask(t, tasksSess, created.TaskID); g.Status != mcp.TaskWorking {
			t.Errorf("before the body ends: %s", g.Status)
		}
		close(release)
		synctest.Wait()
		if g := getTask(t, tasksSess, created.TaskID); g.Status != mcp.TaskCompleted || string(g.ToolResult) != `{"resultType":"complete","content":[{"type":"text","text":"done x"}]}` {
			t.Errorf("after: %s %s", g.Status, g.ToolResult)
		}

		plain := connect(t, s, nil)
		r, err := plain.CallTool(ctx, "job", map[string]any{"name": "y"})
		mustOK(t, err)
		if r.Content[0].(*mcp.TextContent).Text != "done y" {
			t.Errorf("optional task tool without the extension: %v", r.Content)
		}
		_, err = plain.CallTool(ctx, "must", nil)
		var rpcErr *jsonrpc.Error
		if !errors.As(err, &rpcErr) || rpcErr.Code != -32021 {
			t.Errorf("required task tool without the extension: %v", err)
		}

		// Questions first, in a round; then the task.
		call, err = client.ToolCall("must", nil)
		mustOK(t, err)
		res, p, err = tasksSess.Begin(ctx, call)
		mustOK(t, err)
		if p == nil || p.InputRequests["who"] == nil {
			t.Fatalf("round 1: %#v", res)
		}
		answer, _ := json.Marshal(mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": "Ada"}})
		res, _, err = tasksSess.Continue(ctx, p, mcp.InputResponses{"who": answer})
		mustOK(t, err)
		created, ok = res.(*mcp.CreateTaskResult)
		if !ok {
			t.Fatalf("round 2: %#v", res)
		}
		synctest.Wait()
		if g := getTask(t, tasksSess, created.TaskID); g.Status != mcp.TaskCompleted || string(g.ToolResult) != `{"resultType":"complete","content":[{"type":"text","text":"hello Ada"}]}` {
			t.Errorf("composed: %s %s", g.Status, g.ToolResult)
		}
	})
}

// TestTaskProgress: Call.Progress in a task body is the task's
// statusMessage while it works, worded from the figures or the message;
// after a cancel it changes nothing.
func TestTaskProgress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := newServer(t, nil)
		next := make(chan struct{})
		mustOK(t, mcpserver.AddTaskTool(s, &mcp.Tool{Name: "copy"}, mcpserver.TaskRequired, func(ctx context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
			for _, p := range []struct {
				n, of float64
				msg   string
			}{{1, 2, ""}, {2, 2, "copying the last file"}, {7, 0, ""}, {8, 0, "after the end"}} {
				if err := c.Progress(ctx, p.n, p.of, p.msg); err != nil {
					return "", err
				}
				<-next
			}
			return "copied", nil
		}))
		sess := connect(t, s, tasksClient)
		ctx := context.Background()
		_, task, err := sess.StartTool(ctx, "copy", nil)
		if err != nil || task == nil {
			t.Fatalf("StartTool: %v %v", task, err)
		}
		for _, want := range []string{"1 of 2", "copying the last file", "7"} {
			synctest.Wait()
			if g := getTask(t, sess, task.ID); g.Status != mcp.TaskWorking || g.StatusMessage != want {
				t.Errorf("statusMessage %q (%s), want %q", g.StatusMessage, g.Status, want)
			}
			if want == "7" {
				mustOK(t, task.Cancel(ctx))
			}
			next <- struct{}{}
		}
		synctest.Wait()
		if g := getTask(t, sess, task.ID); g.Status != mcp.TaskCancelled || g.StatusMessage != "7" {
			t.Errorf("progress after a cancel: %q (%s)", g.StatusMessage, g.Status)
		}
		close(next)
	})
}

// TestTaskAsk: Call.Ask and Call.AskAll ask mid-body in a task (the task
// waits in input_required until the client answers), on a legacy session
// (the back-channel), and in an ordinary 2026-07-28 call say there is no
// way to (server.ErrNoBackChannel), so one TaskOptional body serves them
// all without asking whether it runs as a task.
func TestTaskAsk(t *testing.T) {
	s, _ := newServer(t, &mcpserver.Options{Tasks: &tasks.Options{PollInterval: time.Millisecond}})
	mustOK(t, mcpserver.AddTaskTool(s, &mcp.Tool{Name: "greet"}, mcpserver.TaskOptional, func(ctx context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
		raw, err := c.Ask(ctx, mcp.NewElicitFormRequest("Name?", mcp.ElicitRequestedSchema{
			Properties: map[string]mcp.PrimitiveSchemaDefinition{"name": &mcp.StringSchema{}},
		}))
		if errors.Is(err, server.ErrNoBackChannel) {
			return "hello, whoever you are", nil
		}
		if err != nil {
			return "", err
		}
		var form struct {
			Name string `json:"name"`
		}
		r, err := mcp.InputResponses{"k": raw}.Elicit("k")
		if err != nil || !r.Accepted() || r.DecodeContent(&form) != nil {
			return "no name", nil
		}
		return "hello " + form.Name, nil
	}))
	mustOK(t, mcpserver.AddTaskTool(s, &mcp.Tool{Name: "greet2"}, mcpserver.TaskOptional, func(ctx context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
		schema := mcp.ElicitRequestedSchema{Properties: map[string]mcp.PrimitiveSchemaDefinition{"name": &mcp.StringSchema{}}}
		answers, err := c.AskAll(ctx, mcp.InputRequests{
			"first": mcp.NewElicitFormRequest("First name?", schema),
			"last":  mcp.NewElicitFormRequest("Last name?", schema),
		})
		if errors.Is(err, server.ErrNoBackChannel) {
			return "hello, whoever you are", nil
		}
		if err != nil {
			return "", err
		}
		var names []string
		for _, k := range []string{"first", "last"} {
			var form struct {
				Name string `json:"name"`
			}
			if r, err := answers.Elicit(k); err != nil || !r.Accepted() || r.DecodeContent(&form) != nil {
				return "no name", nil
			}
			names = append(names, form.Name)
		}
		return "hello " + strings.Join(names, " "), nil
	}))
	var mu sync.Mutex
	asked := 0
	elicit := func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
		mu.Lock()
		asked++
		mu.Unlock()
		name := "Ada"
		if form, _ := p.(*mcp.ElicitRequestFormParams); form != nil && form.Message == "Last name?" {
			name = "Lovelace"
		}
		return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"name": name}}, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	caps := &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{}}
	for _, c := range []struct {
		name string
		opts *client.Options
		want string
		task bool
	}{
		{"task", &client.Options{Capabilities: caps, Elicit: elicit, Extensions: map[string]json.RawMessage{mcp.ExtensionTasks: nil}}, "hello Ada", true},
		{"legacy", &client.Options{Capabilities: caps, Elicit: elicit, ProtocolVersion: mcp.Version20251125}, "hello Ada", false},
		{"2026 call", &client.Options{Capabilities: caps, Elicit: elicit}, "hello, whoever you are", false},
	} {
		sess := connect(t, s, c.opts)
		for tool, want := range map[string]struct {
			text  string
			asked int
		}{
			"greet":  {c.want, 1},
			"greet2": {strings.Replace(c.want, "Ada", "Ada Lovelace", 1), 2},
		} {
			mu.Lock()
			asked = 0
			mu.Unlock()
			res, task, err := sess.StartTool(ctx, tool, nil)
			if err != nil {
				t.Fatalf("%s %s: %v", c.name, tool, err)
			}
			if (task != nil) != c.task {
				t.Errorf("%s %s: task %v", c.name, tool, task)
			}
			if task != nil {
				res, err = task.Wait(ctx)
				mustOK(t, err)
			}
			if got := onlyText(t, res); got != want.text {
				t.Errorf("%s %s: %q, want %q", c.name, tool, got, want.text)
			}
			if !strings.Contains(want.text, "Ada") {
				want.asked = 0
			}
			mu.Lock()
			if asked != want.asked {
				t.Errorf("%s %s: the person was asked %d times, want %d", c.name, tool, asked, want.asked)
			}
			mu.Unlock()
		}
	}
}

// TestTaskFailureRule: a task body's *jsonrpc.Error fails the task (the
// error is what tasks/get shows); any other Go error completes it with an
// isError result carrying the error's text.
func TestTaskFailureRule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := newServer(t, nil)
		mustOK(t, mcpserver.AddTaskTool(s, &mcp.Tool{Name: "rpc"}, mcpserver.TaskRequired, func(ctx context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
			return "", wire.InvalidParams("Invalid params: no such account")
		}))
		mustOK(t, mcpserver.AddTaskTool(s, &mcp.Tool{Name: "plain"}, mcpserver.TaskRequired, func(ctx context.Context, c *mcpserver.Call, _ struct{}) (string, error) {
			return "", errors.New("the disk is full")
		}))
		sess := connect(t, s, tasksClient)
		ctx := context.Background()
		_, task, err := sess.StartTool(ctx, "rpc", nil)
		mustOK(t, err)
		synctest.Wait()
		if g := getTask(t, sess, task.ID); g.Status != mcp.TaskFailed || !strings.Contains(string(g.Error), `"code":-32602`) || !strings.Contains(string(g.Error), "no such account") {
			t.Errorf("a *jsonrpc.Error: %s %s", g.Status, g.Error)
		}
		_, task, err = sess.StartTool(ctx, "plain", nil)
		mustOK(t, err)
		synctest.Wait()
		if g := getTask(t, sess, task.ID); g.Status != mcp.TaskCompleted || !strings.Contains(string(g.ToolResult), `"isError":true`) || !strings.Contains(string(g.ToolResult), "the disk is full") {
			t.Errorf("a Go error: %s %s", g.Status, g.ToolResult)
		}
	})
}

// TestTaskToolPollInterval: AddTaskToolWith's PollInterval is the
// pollIntervalMs of that tool's tasks; other tools keep the server's.
func TestTaskToolPollInterval(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, _ := newServer(t, &mcpserver.Options{Tasks: &tasks.Options{PollInterval: 2 * time.Second}})
		body := func(ctx context.Context, c *mcpserver.Call, _ struct{}) (string, error) { return "done", nil }
		mustOK(t, mcpserver.AddTaskToolWith(s, &mcp.Tool{Name: "report"}, &mcpserver.TaskToolOptions{Mode: mcpserver.TaskRequired, PollInterval: time.Minute}, body))
		mustOK(t, mcpserver.AddTaskToolWith(s, &mcp.Tool{Name: "quick"}, nil, body))
		sess := connect(t, s, tasksClient)
		for name, want := range map[string]int64{"report": 60000, "quick": 2000} {
			call, err := client.ToolCall(name, nil)
			mustOK(t, err)
			res, _, err := sess.Begin(context.Background(), call)
			mustOK(t, err)
			created, ok := res.(*mcp.CreateTaskResult)
			if !ok {
				t.Fatalf("%s: %#v", name, res)
			}
			synctest.Wait()
			if g := getTask(t, sess, created.TaskID); created.PollIntervalMs != want || g.PollIntervalMs != want {
				t.Errorf("%s: pollIntervalMs %d, then %d; want %d", name, created.PollIntervalMs, g.PollIntervalMs, want)
			}
		}
	})
}
