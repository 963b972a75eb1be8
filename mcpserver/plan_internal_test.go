package mcpserver

import (
	"context"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/mcp"
)

// Questions can only depend on questions made before them, so a cycle
// cannot be built through the API; registration still refuses one.
func TestPlanRefusesCycle(t *testing.T) {
	type form struct {
		OK bool `json:"ok"`
	}
	msg := func(any, *Call) string { return "?" }
	a := Elicit[form]("a", msg)
	b := Elicit[form]("b", msg, a)
	c := Elicit[form]("c", msg, b)
	a.q.after = append(a.q.after, c.q) // a -> c -> b -> a

	s := MustNew(mcp.Implementation{Name: "cycle", Version: "1"}, nil)
	body := func(ctx context.Context, call *Call, in map[string]any) (string, error) { return "", nil }
	err := AddTool(s, &mcp.Tool{Name: "loop"}, body, b)
	if err == nil {
		t.Fatal("a cycle of questions registered")
	}
	const want = `mcpserver: tool "loop": questions depend on each other in a cycle: [b a c b]`
	if err.Error() != want {
		t.Errorf("error = %q\nwant    %q", err, want)
	}

	self := Elicit[form]("self", msg)
	self.q.after = append(self.q.after, self.q)
	err = AddPrompt(s, &mcp.Prompt{Name: "p"}, func(ctx context.Context, call *Call, in map[string]string) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	}, self)
	if err == nil || !strings.Contains(err.Error(), `prompt "p": questions depend on each other in a cycle: [self self]`) {
		t.Errorf("self-dependency: %v", err)
	}
	// Nothing was registered.
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.tools.list()) != 0 || len(s.prompts.list()) != 0 {
		t.Error("a refused registration was kept")
	}
}
