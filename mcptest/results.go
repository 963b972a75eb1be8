package mcptest

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
)

// The helpers below fail the test with t.Fatalf, as t.Fatal does: call
// them from the test's goroutine.

// Text returns the text of a result, its text blocks joined by newlines:
// a tool's result (*mcp.CallToolResult), a prompt's messages
// (*mcp.GetPromptResult) or a resource's text contents
// (*mcp.ReadResourceResult). A nil result, or a tool error, fails the
// test, naming the error's message; use ToolError to read one.
func Text(t testing.TB, res mcp.AnyResult) string {
	t.Helper()
	var parts []string
	switch r := res.(type) {
	case *mcp.CallToolResult:
		if r == nil {
			t.Fatalf("mcptest: Text of a nil tool result")
		}
		if r.IsError {
			t.Fatalf("mcptest: the tool failed: %s", blocksText(r.Content))
		}
		return blocksText(r.Content)
	case *mcp.GetPromptResult:
		if r == nil {
			t.Fatalf("mcptest: Text of a nil prompt result")
		}
		for _, m := range r.Messages {
			if tc, ok := m.Content.(*mcp.TextContent); ok {
				parts = append(parts, tc.Text)
			}
		}
	case *mcp.ReadResourceResult:
		if r == nil {
			t.Fatalf("mcptest: Text of a nil resource result")
		}
		for _, c := range r.Contents {
			if tc, ok := c.(*mcp.TextResourceContents); ok {
				parts = append(parts, tc.Text)
			}
		}
	case nil:
		t.Fatalf("mcptest: Text of no result")
	default:
		t.Fatalf("mcptest: Text of a %T, which holds no text", res)
	}
	return strings.Join(parts, "\n")
}

func blocksText(blocks []mcp.ContentBlock) string {
	var parts []string
	for _, b := range blocks {
		if tc, ok := b.(*mcp.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// ToolError returns the message of a tool error (a result with isError
// set): its text blocks joined by newlines. A result that is not an error
// fails the test, naming its text.
func ToolError(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	switch {
	case res == nil:
		t.Fatalf("mcptest: ToolError of a nil tool result")
	case !res.IsError:
		t.Fatalf("mcptest: the tool succeeded, want a tool error; its result: %s", blocksText(res.Content))
	}
	return blocksText(res.Content)
}

// Structured decodes a tool result's structured content into a T. A tool
// error, a result without structured content, and content that does not
// decode into a T fail the test. Members T has no field for are ignored,
// as encoding/json ignores them.
func Structured[T any](t testing.TB, res *mcp.CallToolResult) T {
	t.Helper()
	var v T
	switch {
	case res == nil:
		t.Fatalf("mcptest: Structured of a nil tool result")
	case res.IsError:
		t.Fatalf("mcptest: the tool failed: %s", blocksText(res.Content))
	}
	ok, err := res.DecodeStructuredContent(&v)
	switch {
	case !ok:
		t.Fatalf("mcptest: the result has no structured content; its text: %s", blocksText(res.Content))
	case err != nil:
		raw, _ := json.Marshal(res.StructuredContent)
		t.Fatalf("mcptest: the structured content does not decode into a %T: %v\n%s", v, err, raw)
	}
	return v
}

// Call calls the tool name with args, as CallTool does (running every
// round, answering every question from the script, waiting for a task),
// bounded by Options.Timeout. An error fails the test; a tool error is a
// result (see ToolError).
func (s *Session) Call(name string, args any) *mcp.CallToolResult {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	res, err := s.CallTool(ctx, name, args)
	if err != nil {
		s.t.Fatalf("mcptest: calling %s: %v", name, err)
	}
	return res
}

// StartTask calls the tool name with args and returns the task the server
// answered with (Options.Tasks declares the extension), after running any
// rounds first, bounded by Options.Timeout. An error, or a result instead
// of a task, fails the test.
func (s *Session) StartTask(name string, args any) *client.Task {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	res, task, err := s.StartTool(ctx, name, args)
	switch {
	case err != nil:
		s.t.Fatalf("mcptest: starting %s: %v", name, err)
	case task == nil:
		s.t.Fatalf("mcptest: %s answered with a result, not a task (is Options.Tasks set?): %s", name, blocksText(res.Content))
	}
	return task
}

// AwaitTask waits for task to end, answering its questions from the
// script, and returns its result (a tool error is a result), bounded by
// Options.Timeout. A task that fails, is cancelled or does not end in
// time fails the test.
func (s *Session) AwaitTask(task *client.Task) *mcp.CallToolResult {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	res, err := task.Wait(ctx)
	if err != nil {
		s.t.Fatalf("mcptest: waiting for task %s: %v", task.ID, err)
	}
	return res
}
