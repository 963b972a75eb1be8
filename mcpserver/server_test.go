package mcpserver_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
	"github.com/parley-mcp/parley/server"
)

func TestServerDiscoverAndCapabilities(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, &mcpserver.Options{Instructions: "Use provision to create databases."})
	sess := connect(t, s, nil)
	d, err := sess.Discover(ctx)
	mustOK(t, err)
	if d.Instructions != "Use provision to create databases." {
		t.Errorf("instructions = %q", d.Instructions)
	}
	if si := d.ServerInfo(); si == nil || si.Name != serverInfo.Name {
		t.Errorf("serverInfo = %+v", d.ServerInfo())
	}
	caps := d.Capabilities
	if caps.Tools != nil || caps.Prompts != nil || caps.Resources != nil || caps.Completions != nil {
		t.Errorf("an empty server declares %+v", caps)
	}

	// Each kind is declared from its first registration on.
	addGreet(t, s)
	d, err = sess.Discover(ctx)
	mustOK(t, err)
	if d.Capabilities.Tools == nil || !d.Capabilities.Tools.ListChanged || d.Capabilities.Prompts != nil || d.Capabilities.Resources != nil {
		t.Errorf("after a tool: %+v", d.Capabilities)
	}
	mustOK(t, mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "x://{id}", Name: "x"},
		func(ctx context.Context, c *mcpserver.Call, v map[string]string) (*mcp.ReadResourceResult, error) {
			return textContents("x://"+v["id"], v["id"]), nil
		}))
	d, err = sess.Discover(ctx)
	mustOK(t, err)
	if d.Capabilities.Resources == nil || d.Capabilities.Prompts != nil {
		t.Errorf("after a template: %+v", d.Capabilities)
	}
	// resources/list is served even with templates only.
	list, err := sess.ListResources(ctx, "")
	mustOK(t, err)
	if len(list.Resources) != 0 {
		t.Errorf("resources = %+v", list.Resources)
	}
}

// Middleware added with Use runs inside the requestState boundary: it
// sees the plaintext state the handler wrote.
func TestServerUseSeesPlaintextState(t *testing.T) {
	s, _ := newServer(t, nil)
	mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: "ask"}, func(ctx context.Context, c *mcpserver.Call, a struct{}) (mcp.CallToolOutcome, error) {
		if c.RequestState() == "" {
			return &mcp.InputRequiredResult{InputRequests: mcp.InputRequests{"r": mcp.NewListRootsRequest()}, RequestState: "plain-1"}, nil
		}
		return mcp.TextResult("done"), nil
	}))
	var mu sync.Mutex
	var seen []string
	s.Use(func(next server.Handler) server.Handler {
		return func(ctx context.Context, req *server.Request) (mcp.AnyResult, error) {
			res, err := next(ctx, req)
			if p, ok := req.Params.(*mcp.CallToolRequestParams); ok {
				out := ""
				if ir, ok := res.(*mcp.InputRequiredResult); ok {
					out = ir.RequestState
				}
				mu.Lock()
				seen = append(seen, fmt.Sprintf("in=%q out=%q", p.RequestState, out))
				mu.Unlock()
			}
			return res, err
		}
	})
	sess := connect(t, s, &client.Options{ListRoots: func(ctx context.Context) (*mcp.ListRootsResult, error) { return &mcp.ListRootsResult{}, nil }})
	res, err := sess.CallTool(context.Background(), "ask", nil)
	mustOK(t, err)
	wantText(t, res, false, "done")
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != `in="" out="plain-1"` || seen[1] != `in="plain-1" out=""` {
		t.Errorf("middleware saw %q", seen)
	}
}

// Registrations may change while the server serves: every registration
// that returned is callable at once, from any goroutine.
func TestServerConcurrentRegistration(t *testing.T) {
	ctx := context.Background()
	s, _ := newServer(t, nil)
	sess := connect(t, s, &client.Options{Elicit: (&elicitor{answer: func(string) *mcp.ElicitResult {
		return accept(map[string]any{"region": "eu"})
	}}).elicit})
	region := regionQuestion()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprintf("tool%02d", i)
			err := mcpserver.AddTool(s, &mcp.Tool{Name: name}, func(ctx context.Context, c *mcpserver.Call, a dbArgs) (string, error) {
				return name + " " + a.Name + " " + region.Get(c).Region, nil
			}, region)
			if err != nil {
				errs <- err
				return
			}
			pname := fmt.Sprintf("prompt%02d", i)
			err = mcpserver.AddPrompt(s, &mcp.Prompt{Name: pname}, func(ctx context.Context, c *mcpserver.Call, a map[string]string) (*mcp.GetPromptResult, error) {
				return userSays(pname), nil
			})
			if err != nil {
				errs <- err
				return
			}
			res, err := sess.CallTool(ctx, name, map[string]any{"name": "db"})
			if err != nil {
				errs <- fmt.Errorf("%s: %w", name, err)
				return
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != name+" db eu" {
				errs <- fmt.Errorf("%s answered %q", name, got)
			}
			pres, err := sess.GetPrompt(ctx, pname, nil)
			if err != nil {
				errs <- fmt.Errorf("%s: %w", pname, err)
				return
			}
			if got := pres.Messages[0].Content.(*mcp.TextContent).Text; got != pname {
				errs <- fmt.Errorf("%s answered %q", pname, got)
			}
			if i%2 == 0 {
				s.RemoveTools(name)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	list, err := sess.ListTools(ctx, "")
	mustOK(t, err)
	if len(list.Tools) != 8 {
		t.Errorf("%d tools left, want 8", len(list.Tools))
	}
}
