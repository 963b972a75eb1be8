package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/tasks"
)

// The fixtures of the tasks-* scenarios (io.modelcontextprotocol/tasks,
// SEP-2663). Each body runs as a task for a client that declared the
// extension; the suite names the tools and what they do.

type (
	greetArgs struct {
		Name string `json:"name"`
	}
	computeArgs struct {
		Seconds float64 `json:"seconds" mcp:"minimum=0,maximum=600"`
		Label   string  `json:"label,omitempty"`
	}
	deleteArgs struct {
		Filename string `json:"filename"`
	}
)

// registerTaskTools registers the task fixtures.
func (f *fixture) registerTaskTools() error {
	s := f.srv
	return errors.Join(
		mcpserver.AddTool(s, &mcp.Tool{Name: "greet", Description: "Says hello; never a task"}, greet),
		mcpserver.AddTaskTool(s, &mcp.Tool{Name: "slow_compute", Description: "Works for the given seconds, as a task when the client can take one"},
			mcpserver.TaskOptional, slowCompute),
		mcpserver.AddTaskTool(s, &mcp.Tool{Name: "failing_job", Description: "Runs as a task and ends in a tool error", InputSchema: noArgs},
			mcpserver.TaskRequired, failingJob),
		mcpserver.AddTaskTool(s, &mcp.Tool{Name: "protocol_error_job", Description: "Runs as a task and ends in a protocol error", InputSchema: noArgs},
			mcpserver.TaskOptional, protocolErrorJob),
		mcpserver.AddTaskTool(s, &mcp.Tool{Name: "confirm_delete", Description: "Runs as a task and asks for a confirmation before it deletes"},
			mcpserver.TaskOptional, confirmDelete),
		mcpserver.AddTaskTool(s, &mcp.Tool{Name: "multi_input", Description: "Runs as a task and asks two questions at once", InputSchema: noArgs},
			mcpserver.TaskOptional, multiInput),
		mcpserver.AddTaskTool(s, &mcp.Tool{Name: "test_tool_with_task", Description: "Asks for a name in a round, then runs as a task", InputSchema: noArgs},
			mcpserver.TaskRequired, func(ctx context.Context, c *mcpserver.Call, _ none) (string, error) {
				return "Hello, " + userName.Get(c).Name + ", from a task.", nil
			}, userName),
	)
}

func greet(ctx context.Context, c *mcpserver.Call, a greetArgs) (string, error) {
	return "Hello, " + a.Name + "!", nil
}

func slowCompute(ctx context.Context, c *mcpserver.Call, a computeArgs) (string, error) {
	t := time.NewTimer(time.Duration(a.Seconds * float64(time.Second)))
	defer t.Stop()
	select {
	case <-t.C:
		return fmt.Sprintf("computed %s after %gs", a.Label, a.Seconds), nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func failingJob(ctx context.Context, c *mcpserver.Call, _ none) (string, error) {
	return "", errors.New("the job failed: its input was rejected")
}

func protocolErrorJob(ctx context.Context, c *mcpserver.Call, _ none) (string, error) {
	panic("protocol_error_job fails by design")
}

// askInTask asks requests through the task running ctx, or fails outside
// one (a client without the extension).
func askInTask(ctx context.Context, requests mcp.InputRequests) (mcp.InputResponses, error) {
	run := tasks.FromContext(ctx)
	if run == nil {
		return nil, errors.New("this tool asks while it runs, which needs the tasks extension")
	}
	return run.Ask(ctx, requests)
}

func confirmDelete(ctx context.Context, c *mcpserver.Call, a deleteArgs) (string, error) {
	answers, err := askInTask(ctx, mcp.InputRequests{
		"confirm": mcp.NewElicitFormRequest("Delete "+a.Filename+"?", confirmSchema),
	})
	if err != nil {
		return "", err
	}
	r, err := answers.Elicit("confirm")
	switch {
	case err != nil:
		return "", err
	case r.Action != mcp.ActionAccept:
		return "Kept " + a.Filename + " (" + string(r.Action) + ").", nil
	}
	return "Deleted " + a.Filename + ".", nil
}

func multiInput(ctx context.Context, c *mcpserver.Call, _ none) (string, error) {
	answers, err := askInTask(ctx, mcp.InputRequests{
		"first":  mcp.NewElicitFormRequest("First: what is your name?", nameSchema),
		"second": mcp.NewElicitFormRequest("Second: your favourite colour?", colorSchema),
	})
	if err != nil {
		return "", err
	}
	var got []string
	for _, k := range []string{"first", "second"} {
		r, err := answers.Elicit(k)
		if err != nil {
			return "", err
		}
		got = append(got, k+"="+string(r.Action))
	}
	return fmt.Sprint(got), nil
}
