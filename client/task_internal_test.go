package client

import (
	"encoding/json"
	"testing"

	"github.com/parley-mcp/parley/mcp"
)

// TestResultIsTaskResult: the deprecated Result keeps working, as
// TaskResult.
func TestResultIsTaskResult(t *testing.T) {
	g := &mcp.GetTaskResult{Task: mcp.Task{TaskID: "t1", Status: mcp.TaskCompleted}, ToolResult: json.RawMessage(`{"content":[{"type":"text","text":"x"}]}`)}
	res, done, err := Result(g)
	if !done || err != nil || len(res.Content) != 1 {
		t.Errorf("Result: %v %v %v", res, done, err)
	}
	if _, done, err := Result(&mcp.GetTaskResult{Task: mcp.Task{Status: mcp.TaskWorking}}); done || err != nil {
		t.Errorf("Result of a working task: %v %v", done, err)
	}
}
