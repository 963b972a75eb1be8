package mcpserver_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/server"
)

// TestRoute: a middleware sees, once the handler has returned, what the
// server registered that served the request: the tool's and the prompt's
// name, a static resource's URI, the template a URI matched; and "" for
// a name or URI nothing registered matches, so that what a client makes
// up never reaches telemetry keyed by it.
func TestRoute(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	var mu sync.Mutex
	var routes []string
	s.Use(func(next server.Handler) server.Handler {
		return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
			res, err := next(ctx, req)
			mu.Lock()
			routes = append(routes, req.Method+" "+req.Route)
			mu.Unlock()
			return res, err
		}
	})
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "echo"}, func(ctx context.Context, c *mcpserver.Call, a map[string]any) (string, error) {
		return "ok", nil
	}))
	mustOK(t, mcpserver.AddPrompt(s, &mcp.Prompt{Name: "review"}, func(ctx context.Context, c *mcpserver.Call, a map[string]string) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "hi"}}}}, nil
	}))
	mustOK(t, s.AddResource(&mcp.Resource{URI: "notes:///index", Name: "index"}, func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
		return textContents(uri, "index"), nil
	}))
	type noteVars struct {
		Name string `json:"name"`
	}
	mustOK(t, mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "notes:///n/{name}", Name: "note"},
		func(ctx context.Context, c *mcpserver.Call, v noteVars) (*mcp.ReadResourceResult, error) {
			return textContents(c.ResourceURI(), v.Name), nil
		}))
	sess := connect(t, s, nil)

	if _, err := sess.CallTool(ctx, "echo", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.CallTool(ctx, "made-up", nil); err == nil {
		t.Fatal("an unknown tool was served")
	}
	if _, err := sess.GetPrompt(ctx, "review", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.GetPrompt(ctx, "made-up", nil); err == nil {
		t.Fatal("an unknown prompt was served")
	}
	if _, err := sess.ReadResource(ctx, "notes:///index"); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.ReadResource(ctx, "notes:///n/shopping"); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.ReadResource(ctx, "other:///made-up"); err == nil {
		t.Fatal("an unknown resource was served")
	}

	want := []string{
		"tools/call echo", "tools/call ",
		"prompts/get review", "prompts/get ",
		"resources/read notes:///index", "resources/read notes:///n/{name}", "resources/read ",
	}
	mu.Lock()
	defer mu.Unlock()
	var served []string // lists the client sends for discovery may come between
	for _, r := range routes {
		if strings.HasPrefix(r, "tools/call ") || strings.HasPrefix(r, "prompts/get ") || strings.HasPrefix(r, "resources/read ") {
			served = append(served, r)
		}
	}
	if len(served) != len(want) {
		t.Fatalf("routes %q, want %q", served, want)
	}
	for i := range want {
		if served[i] != want[i] {
			t.Errorf("request %d: route %q, want %q", i+1, served[i], want[i])
		}
	}
}
