package tasks_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/tasks"
	"github.com/parley-mcp/parley/transport"
	"github.com/parley-mcp/parley/transport/stdio"
	"github.com/parley-mcp/parley/transport/streamhttp"
)

// Parley's client against Parley's server, each transport: a task that
// completes, fails, is cancelled by the caller, and asks two questions
// mid-task, the second worded from the first's answer. The caller's code
// is a plain CallTool throughout.

// e2eServer is an mcpserver with four task tools; hung receives the
// context of each "hang" body, so the test sees it end.
func e2eServer(t *testing.T, hung chan<- context.Context) *mcpserver.Server {
	t.Helper()
	s, err := mcpserver.New(mcp.Implementation{Name: "e2e", Version: "1"}, &mcpserver.Options{Tasks: &tasks.Options{PollInterval: 5 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	type none struct{}
	add := func(name string, h mcpserver.ToolHandler[none, string]) {
		if err := mcpserver.AddTaskTool(s, &mcp.Tool{Name: name}, mcpserver.TaskRequired, h); err != nil {
			t.Fatal(err)
		}
	}
	add("done", func(ctx context.Context, c *mcpserver.Call, _ none) (string, error) { return "ok", nil })
	add("fail", func(ctx context.Context, c *mcpserver.Call, _ none) (string, error) {
		return "", wire.InvalidParams("Invalid params: no such account")
	})
	add("hang", func(ctx context.Context, c *mcpserver.Call, _ none) (string, error) {
		hung <- ctx
		// The question makes the client show that it holds the task (its
		// callback runs) before the test gives up.
		return askText(ctx, tasks.FromContext(ctx), "Wait?")
	})
	add("two", func(ctx context.Context, c *mcpserver.Call, _ none) (string, error) {
		run := tasks.FromContext(ctx)
		name, err := askText(ctx, run, "Name?")
		if err != nil {
			return "", err
		}
		age, err := askText(ctx, run, "Hello "+name+", age?")
		if err != nil {
			return "", err
		}
		return name + " is " + age, nil
	})
	return s
}

var textSchema = mcp.ElicitRequestedSchema{
	Properties: map[string]mcp.PrimitiveSchemaDefinition{"v": &mcp.StringSchema{}},
	Required:   []string{"v"},
}

// askText asks one question and returns the accepted text, or an error
// for every other answer.
func askText(ctx context.Context, run *tasks.Run, q string) (string, error) {
	answers, err := run.Ask(ctx, mcp.InputRequests{"q": mcp.NewElicitFormRequest(q, textSchema)})
	if err != nil {
		return "", err
	}
	var form struct {
		V string `json:"v"`
	}
	r, err := answers.Elicit("q")
	if err != nil || !r.Accepted() || r.DecodeContent(&form) != nil {
		return "", wire.InvalidParams("Invalid params: %q was not answered", q)
	}
	return form.V, nil
}

// e2eClient answers "Name?" with Ada and "Hello Ada, age?" with 36, and
// counts the questions; "Wait?" it reports on waiting and answers only
// when its context ends.
func e2eClient(asked *atomic.Int32, waiting chan<- struct{}) *client.Client {
	return client.New(mcp.Implementation{Name: "e2e-client", Version: "1"}, &client.Options{
		Extensions: map[string]json.RawMessage{mcp.ExtensionTasks: nil},
		Elicit: func(ctx context.Context, p mcp.ElicitRequestParams) (*mcp.ElicitResult, error) {
			asked.Add(1)
			form, _ := p.(*mcp.ElicitRequestFormParams)
			switch {
			case form == nil:
			case form.Message == "Name?":
				return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"v": "Ada"}}, nil
			case form.Message == "Hello Ada, age?":
				return &mcp.ElicitResult{Action: mcp.ActionAccept, Content: map[string]any{"v": "36"}}, nil
			case form.Message == "Wait?":
				waiting <- struct{}{}
				<-ctx.Done()
				return nil, ctx.Err()
			}
			return &mcp.ElicitResult{Action: mcp.ActionDecline}, nil
		},
	})
}

// dial connects c to s over the transport named kind.
func dial(t *testing.T, kind string, s *mcpserver.Server, c *client.Client) *client.Session {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	var tr transport.Transport
	switch kind {
	case "memory", "stdio":
		var clientEnd, serverEnd transport.Conn
		if kind == "memory" {
			clientEnd, serverEnd = transport.NewMemoryPipe()
		} else {
			// Two pipes carry newline-delimited JSON, as a child's stdin
			// and stdout would.
			toServer, fromClient := io.Pipe()
			toClient, fromServer := io.Pipe()
			clientEnd = stdio.NewConn(toClient, fromClient, nil)
			serverEnd = stdio.NewConn(toServer, fromServer, nil)
		}
		done := make(chan struct{})
		go func() {
			defer close(done)
			s.ServeConn(ctx, serverEnd)
		}()
		t.Cleanup(func() { cancel(); serverEnd.Close(); <-done })
		tr = transport.NewMemoryTransport(clientEnd)
	case "http":
		hs := httptest.NewServer(s.HTTPHandler(nil))
		t.Cleanup(hs.Close)
		tr = streamhttp.NewClientTransport(hs.URL, nil)
	}
	sess, err := c.Connect(ctx, tr)
	if err != nil {
		t.Fatalf("connecting over %s: %v", kind, err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

func TestEndToEnd(t *testing.T) {
	for _, kind := range []string{"memory", "stdio", "http"} {
		t.Run(kind, func(t *testing.T) {
			hung := make(chan context.Context, 1)
			var asked atomic.Int32
			waiting := make(chan struct{}, 1)
			sess := dial(t, kind, e2eServer(t, hung), e2eClient(&asked, waiting))
			ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
			defer cancel()

			res, err := sess.CallTool(ctx, "done", nil)
			if err != nil || textOf(res) != "ok" {
				t.Errorf("done: %v %v", textOf(res), err)
			}
			// The stored result, as tasks/get carries it over this
			// transport, is a complete CallToolResult: resultType included.
			_, task, err := sess.StartTool(ctx, "done", nil)
			if err != nil || task == nil {
				t.Fatalf("StartTool: %v %v", task, err)
			}
			if _, err := task.Wait(ctx); err != nil {
				t.Fatal(err)
			}
			g, err := task.Status(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if want := `{"resultType":"complete","content":[{"type":"text","text":"ok"}]}`; string(g.ToolResult) != want {
				t.Errorf("tasks/get's result %s, want %s", g.ToolResult, want)
			}

			_, err = sess.CallTool(ctx, "fail", nil)
			var rpc *jsonrpc.Error
			if !errors.As(err, &rpc) || rpc.Code != jsonrpc.CodeInvalidParams || rpc.Message != "Invalid params: no such account" {
				t.Errorf("fail: %v", err)
			}

			res, err = sess.CallTool(ctx, "two", nil)
			if err != nil || textOf(res) != "Ada is 36" || asked.Load() != 2 {
				t.Errorf("two questions: %q %v, asked %d", textOf(res), err, asked.Load())
			}

			cctx, stop := context.WithCancel(ctx)
			errc := make(chan error, 1)
			go func() {
				_, err := sess.CallTool(cctx, "hang", nil)
				errc <- err
			}()
			body := testwait.Recv(t, hung, "the hang task's body to start")
			testwait.Recv(t, waiting, "the client to ask the person the task's question")
			stop()
			if err := testwait.Recv(t, errc, "CallTool to return after its context ended"); !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled call: %v", err)
			}
			testwait.Recv(t, body.Done(), "the task's body to end after the caller gave up")
		})
	}
}

func textOf(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) != 1 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return strings.TrimSpace(tc.Text)
	}
	return ""
}

// TestStatusNotifications: a listen stream that names a task the caller
// owns is granted it (an unknown id is not) and receives
// notifications/tasks, tagged with its subscription id, as the task waits,
// is answered and completes, the last one carrying the result; a client
// that did not declare the extension is refused -32021 for asking.
func TestStatusNotifications(t *testing.T) {
	hung := make(chan context.Context, 1)
	var asked atomic.Int32
	s := e2eServer(t, hung)
	sess := dial(t, "memory", s, e2eClient(&asked, nil))
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()

	_, task, err := sess.StartTool(ctx, "two", nil)
	if err != nil || task == nil {
		t.Fatalf("StartTool: %v %v", task, err)
	}
	sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{TaskIDs: []string{task.ID, "no-such-task"}})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if len(sub.Granted.TaskIDs) != 1 || sub.Granted.TaskIDs[0] != task.ID {
		t.Fatalf("granted %v, want only %s", sub.Granted.TaskIDs, task.ID)
	}
	res, err := task.Wait(ctx) // answers both questions through the callbacks
	if err != nil || textOf(res) != "Ada is 36" {
		t.Fatalf("Wait: %v %v", textOf(res), err)
	}
	var seen []mcp.TaskStatus
	for {
		ev := testwait.Recv(t, sub.Events(), "notifications/tasks up to the task's completion")
		if ev.Method != mcp.NotificationTasks {
			t.Fatalf("event %s", ev.Method)
		}
		var p mcp.TaskStatusNotificationParams
		if err := json.Unmarshal(ev.Params, &p); err != nil {
			t.Fatal(err)
		}
		if p.TaskID != task.ID || p.Meta == nil || p.Meta.SubscriptionID != sub.ID {
			t.Fatalf("notification %s", ev.Params)
		}
		seen = append(seen, p.Status)
		if p.Status == mcp.TaskInputRequired && len(p.InputRequests) == 1 && p.InputRequests["q"] == nil {
			t.Errorf("an input_required notification without its question: %s", ev.Params)
		}
		if p.Status.Terminal() {
			if p.Status != mcp.TaskCompleted || !strings.Contains(string(p.ToolResult), "Ada is 36") {
				t.Errorf("last notification %s", ev.Params)
			}
			break
		}
	}
	if !slices.Contains(seen, mcp.TaskInputRequired) || !slices.Contains(seen, mcp.TaskWorking) {
		t.Errorf("statuses notified %v, want input_required and working before completed", seen)
	}

	plain := dial(t, "memory", s, client.New(mcp.Implementation{Name: "plain", Version: "1"}, nil))
	_, err = plain.Listen(ctx, mcp.SubscriptionFilter{TaskIDs: []string{task.ID}})
	var rpc *jsonrpc.Error
	if !errors.As(err, &rpc) || int64(rpc.Code) != wire.CodeMissingRequiredClientCapability {
		t.Errorf("taskIds from a client without the extension: %v", err)
	}
}
