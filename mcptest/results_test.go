package mcptest_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcptest"
	"github.com/parley-mcp/parley/server"
)

// TestResults: the text of a result, a tool error's message, structured
// content decoded into a type.
func TestResults(t *testing.T) {
	sess := mcptest.Connect(t, newFixture(t), nil)
	if got := mcptest.ToolError(t, sess.Call("fail", nil)); got != "no such city" {
		t.Errorf("ToolError = %q", got)
	}
	f := mcptest.Structured[Forecast](t, sess.Call("forecast", map[string]any{"city": "Oslo"}))
	if f != (Forecast{City: "Oslo", TempC: 21.5}) {
		t.Errorf("Structured = %+v", f)
	}
	if got := mcptest.Text(t, &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
		{Role: mcp.RoleUser, Content: mcp.NewTextContent("a")}, {Role: mcp.RoleAssistant, Content: mcp.NewTextContent("b")},
	}}); got != "a\nb" {
		t.Errorf("Text of a prompt = %q", got)
	}
	if got := mcptest.Text(t, &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: "file:///a", Text: "A"}}}); got != "A" {
		t.Errorf("Text of a resource = %q", got)
	}
}

// TestResultFailures: each helper fails the test, saying what it found.
func TestResultFailures(t *testing.T) {
	for _, c := range []struct {
		name string
		body func(t testing.TB, sess *mcptest.Session)
		want string
	}{
		{"Text of a tool error", func(t testing.TB, sess *mcptest.Session) {
			mcptest.Text(t, sess.Call("fail", nil))
		}, "mcptest: the tool failed: no such city"},
		{"Text of nil", func(t testing.TB, sess *mcptest.Session) {
			mcptest.Text(t, (*mcp.CallToolResult)(nil))
		}, "mcptest: Text of a nil tool result"},
		{"ToolError of a success", func(t testing.TB, sess *mcptest.Session) {
			mcptest.ToolError(t, mcp.TextResult("fine"))
		}, "mcptest: the tool succeeded, want a tool error; its result: fine"},
		{"Structured of a tool error", func(t testing.TB, sess *mcptest.Session) {
			mcptest.Structured[Forecast](t, sess.Call("fail", nil))
		}, "mcptest: the tool failed: no such city"},
		{"Structured without content", func(t testing.TB, sess *mcptest.Session) {
			mcptest.Structured[Forecast](t, mcp.TextResult("warm"))
		}, "mcptest: the result has no structured content; its text: warm"},
		{"Structured of the wrong type", func(t testing.TB, sess *mcptest.Session) {
			mcptest.Structured[[]string](t, sess.Call("forecast", map[string]any{"city": "Oslo"}))
		}, "mcptest: the structured content does not decode into a []string"},
		{"Call of an unknown tool", func(t testing.TB, sess *mcptest.Session) {
			sess.Call("nope", nil)
		}, "mcptest: calling nope:"},
		{"StartTask of a tool that is no task", func(t testing.TB, sess *mcptest.Session) {
			sess.StartTask("fail", nil)
		}, "mcptest: fail answered with a result, not a task"},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := runFake(t, func(ft testing.TB) {
				sess := mcptest.Connect(ft, newFixture(t), &mcptest.Options{Tasks: true})
				c.body(ft, sess)
				ft.Errorf("the helper returned")
			})
			f.only(t, c.want)
		})
	}
}

// TestTask: a task started and awaited to its end, its question answered
// from the script by key, in its own round of tasks/get and tasks/update.
func TestTask(t *testing.T) {
	sess := mcptest.Connect(t, newFixture(t), &mcptest.Options{
		Tasks:  true,
		Script: mcptest.Script{"include": mcptest.Accept(map[string]any{"include": true})},
	})
	task := sess.StartTask("report", nil)
	if task.ID == "" {
		t.Fatal("a task without an id")
	}
	if got := mcptest.Text(t, sess.AwaitTask(task)); got != "report with last year" {
		t.Errorf("the task's result: %q", got)
	}
	// CallTool waits for a task by itself.
	if got := mcptest.Text(t, sess.Call("report", nil)); got != "report with last year" {
		t.Errorf("the called task's result: %q", got)
	}
}

// TestLowLevelServer: the kit serves a low-level *server.Server too.
func TestLowLevelServer(t *testing.T) {
	s := server.New(mcp.Implementation{Name: "hello", Version: "1.0.0"}, nil)
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		var args struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(p.Arguments, &args); err != nil {
			return nil, wire.InvalidParams("bad arguments")
		}
		return mcp.TextResult("Hello, " + args.Name + "!"), nil
	})
	for _, v := range mcptest.Generations() {
		sess := mcptest.Connect(t, s, &mcptest.Options{Version: v})
		if got := mcptest.Text(t, sess.Call("greet", map[string]any{"name": "Ada"})); got != "Hello, Ada!" {
			t.Errorf("%s: greet said %q", v, got)
		}
	}
}
