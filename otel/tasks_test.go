package otel_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
	"github.com/parley-mcp/parley/tasks"
)

// TestTaskTransitions: a task that asks for input once and completes
// enters working, input_required, working again and completed, each
// counted by status.
func TestTaskTransitions(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), failAfter)
	defer cancel()
	tel := newTelemetry(t)
	s := server.New(mcp.Implementation{Name: "tasks", Version: "1"}, nil)
	s.Use(tel.ServerMiddleware)
	m, err := tasks.Enable(s, &tasks.Options{Store: tel.TaskStore(tasks.NewMemoryStore(nil))})
	if err != nil {
		t.Fatal(err)
	}
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		req.Route = p.Name
		if !tasks.Declared(req) {
			return nil, tasks.RequiredError()
		}
		return m.Start(ctx, req, func(ctx context.Context, run *tasks.Run) (*mcp.CallToolResult, error) {
			if _, err := run.Ask(ctx, mcp.InputRequests{"region": regionForm()}); err != nil {
				return nil, err
			}
			return mcp.TextResult("done"), nil
		})
	})
	opts := accepting(tel)
	opts.Extensions = map[string]json.RawMessage{mcp.ExtensionTasks: nil}
	opts.Loop = &client.LoopOptions{MaxPollInterval: 1}
	sess := connect(t, serve(t, s), opts)
	res, err := sess.CallTool(ctx, "long", nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("tool error: %v", res.Content)
	}
	got := tel.metrics(t)["mcp.server.task.transitions"]
	if got == nil {
		t.Fatal("no task transitions recorded")
	}
	for status, want := range map[string]int64{"working": 2, "input_required": 1, "completed": 1} {
		if n := sumWhere(t, got, map[string]string{"mcp.task.status": status}); n != want {
			t.Errorf("%s entered %d times, want %d", status, n, want)
		}
	}
}
