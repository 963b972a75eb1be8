package mcpserver_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/parley-mcp/parley/client"
	"github.com/parley-mcp/parley/internal/testwait"
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

func addTools(t *testing.T, s *mcpserver.Server, names ...string) {
	t.Helper()
	for _, n := range names {
		mustOK(t, mcpserver.AddTool(s, &mcp.Tool{Name: n}, greetBody))
	}
}

func toolNames(tools []mcp.Tool) string {
	names := make([]string, len(tools))
	for i, tool := range tools {
		names[i] = tool.Name
	}
	return strings.Join(names, ",")
}

func TestListToolsRegistrationOrder(t *testing.T) {
	s, _ := newServer(t, nil)
	// Not alphabetical, so that a sorted list would show.
	addTools(t, s, "zeta", "alpha", "mu", "beta")
	sess := connect(t, s, nil)
	list, err := sess.ListTools(testwait.Context(t), "")
	mustOK(t, err)
	if got := toolNames(list.Tools); got != "zeta,alpha,mu,beta" {
		t.Errorf("tools = %s, want zeta,alpha,mu,beta", got)
	}
	if list.NextCursor != "" {
		t.Errorf("nextCursor = %q on the only page", list.NextCursor)
	}
}

func TestListPagination(t *testing.T) {
	ctx := testwait.Context(t)
	s, _ := newServer(t, &mcpserver.Options{PageSize: 2})
	addTools(t, s, "t1", "t2", "t3", "t4", "t5")
	sess := connect(t, s, nil)

	var pages []string
	cursor := ""
	for {
		list, err := sess.ListTools(ctx, cursor)
		mustOK(t, err)
		pages = append(pages, toolNames(list.Tools))
		if list.NextCursor == "" {
			break
		}
		cursor = string(list.NextCursor)
		if len(pages) > 5 {
			t.Fatal("pagination does not end")
		}
	}
	if got := strings.Join(pages, " | "); got != "t1,t2 | t3,t4 | t5" {
		t.Errorf("pages = %s, want t1,t2 | t3,t4 | t5", got)
	}

	// The session's iterator walks every page.
	var all []string
	for tool, err := range sess.Tools(ctx) {
		mustOK(t, err)
		all = append(all, tool.Name)
	}
	if got := strings.Join(all, ","); got != "t1,t2,t3,t4,t5" {
		t.Errorf("Tools() = %s", got)
	}

	_, err := sess.ListTools(ctx, "not-a-cursor")
	wantRPCError(t, err, jsonrpc.CodeInvalidParams, "")

	// Prompts, resources and templates page the same way.
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("p%d", i)
		mustOK(t, mcpserver.AddPrompt(s, &mcp.Prompt{Name: name}, func(ctx context.Context, c *mcpserver.Call, a map[string]string) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		}))
		mustOK(t, s.AddResource(&mcp.Resource{URI: "file:///r" + name, Name: name}, func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		}))
		mustOK(t, mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "t" + name + "://{x}", Name: name},
			func(ctx context.Context, c *mcpserver.Call, a map[string]string) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{}, nil
			}))
	}
	prompts, err := sess.ListPrompts(ctx, "")
	mustOK(t, err)
	if len(prompts.Prompts) != 2 || prompts.NextCursor == "" {
		t.Errorf("first prompts page = %+v next %q", prompts.Prompts, prompts.NextCursor)
	}
	prompts, err = sess.ListPrompts(ctx, string(prompts.NextCursor))
	mustOK(t, err)
	if len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "p3" || prompts.NextCursor != "" {
		t.Errorf("second prompts page = %+v next %q", prompts.Prompts, prompts.NextCursor)
	}
	resources, err := sess.ListResources(ctx, "")
	mustOK(t, err)
	if len(resources.Resources) != 2 || resources.NextCursor == "" {
		t.Errorf("first resources page = %+v next %q", resources.Resources, resources.NextCursor)
	}
	templates, err := sess.ListResourceTemplates(ctx, "")
	mustOK(t, err)
	if len(templates.ResourceTemplates) != 2 || templates.NextCursor == "" {
		t.Errorf("first templates page = %+v next %q", templates.ResourceTemplates, templates.NextCursor)
	}
}

func TestListNegativePageSizeIsOnePage(t *testing.T) {
	s, _ := newServer(t, &mcpserver.Options{PageSize: -1})
	names := make([]string, 150) // more than DefaultPageSize
	for i := range names {
		names[i] = fmt.Sprintf("tool%03d", i)
	}
	addTools(t, s, names...)
	sess := connect(t, s, nil)
	list, err := sess.ListTools(testwait.Context(t), "")
	mustOK(t, err)
	if len(list.Tools) != 150 || list.NextCursor != "" {
		t.Errorf("got %d tools and cursor %q, want all 150 on one page", len(list.Tools), list.NextCursor)
	}
}

func TestListDefaultPageSize(t *testing.T) {
	s, _ := newServer(t, nil)
	names := make([]string, mcpserver.DefaultPageSize+1)
	for i := range names {
		names[i] = fmt.Sprintf("tool%03d", i)
	}
	addTools(t, s, names...)
	sess := connect(t, s, nil)
	list, err := sess.ListTools(testwait.Context(t), "")
	mustOK(t, err)
	if len(list.Tools) != mcpserver.DefaultPageSize || list.NextCursor == "" {
		t.Fatalf("got %d tools and cursor %q, want a first page of %d", len(list.Tools), list.NextCursor, mcpserver.DefaultPageSize)
	}
	list, err = sess.ListTools(testwait.Context(t), string(list.NextCursor))
	mustOK(t, err)
	if got := toolNames(list.Tools); got != names[len(names)-1] {
		t.Errorf("second page = %s", got)
	}
}

// nextEvent returns the next notification of a listen stream.
func nextEvent(t *testing.T, sub *client.Subscription) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testwait.FailAfter)
	defer cancel()
	select {
	case ev, ok := <-sub.Events():
		if !ok {
			t.Fatalf("the listen stream ended: %v", sub.Err())
		}
		return ev.Method
	case <-ctx.Done():
		t.Fatalf("waited %v for a notification on the listen stream", testwait.FailAfter)
	}
	return ""
}

func TestListChangedNotifications(t *testing.T) {
	ctx := testwait.Context(t)
	s, _ := newServer(t, nil)
	// Every kind is registered once, so the server declares its
	// listChanged capabilities before the client listens.
	addTools(t, s, "first")
	mustOK(t, mcpserver.AddPrompt(s, &mcp.Prompt{Name: "p"}, func(ctx context.Context, c *mcpserver.Call, a map[string]string) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	}))
	readNothing := func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{}, nil
	}
	mustOK(t, s.AddResource(&mcp.Resource{URI: "file:///a", Name: "a"}, readNothing))
	sess := connect(t, s, nil)

	sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true, PromptsListChanged: true, ResourcesListChanged: true})
	mustOK(t, err)
	defer sub.Close()
	if !sub.Granted.ToolsListChanged || !sub.Granted.PromptsListChanged || !sub.Granted.ResourcesListChanged {
		t.Fatalf("granted = %+v", sub.Granted)
	}

	addTools(t, s, "second")
	if got := nextEvent(t, sub); got != mcp.NotificationToolListChanged {
		t.Errorf("after AddTool: %s", got)
	}
	s.RemoveTools("second")
	if got := nextEvent(t, sub); got != mcp.NotificationToolListChanged {
		t.Errorf("after RemoveTools: %s", got)
	}
	// Removing nothing announces nothing: the next event is the prompt's.
	s.RemoveTools("never-registered")
	mustOK(t, mcpserver.AddPrompt(s, &mcp.Prompt{Name: "q"}, func(ctx context.Context, c *mcpserver.Call, a map[string]string) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	}))
	if got := nextEvent(t, sub); got != mcp.NotificationPromptListChanged {
		t.Errorf("after RemoveTools of an unknown name and AddPrompt: %s, want only the prompt change", got)
	}
	s.RemovePrompts("nope")
	s.RemovePrompts("q")
	if got := nextEvent(t, sub); got != mcp.NotificationPromptListChanged {
		t.Errorf("after RemovePrompts: %s", got)
	}
	s.RemoveResources("file:///nope")
	mustOK(t, s.AddResource(&mcp.Resource{URI: "file:///b", Name: "b"}, readNothing))
	if got := nextEvent(t, sub); got != mcp.NotificationResourceListChanged {
		t.Errorf("after AddResource: %s", got)
	}
	mustOK(t, mcpserver.AddResourceTemplate(s, &mcp.ResourceTemplate{URITemplate: "x://{id}", Name: "x"},
		func(ctx context.Context, c *mcpserver.Call, a map[string]string) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{}, nil
		}))
	if got := nextEvent(t, sub); got != mcp.NotificationResourceListChanged {
		t.Errorf("after AddResourceTemplate: %s", got)
	}
	s.RemoveResources("file:///b", "x://{id}")
	if got := nextEvent(t, sub); got != mcp.NotificationResourceListChanged {
		t.Errorf("after RemoveResources: %s", got)
	}
	// The one RemoveResources call above announced one change.
	addTools(t, s, "third")
	if got := nextEvent(t, sub); got != mcp.NotificationToolListChanged {
		t.Errorf("after the last AddTool: %s (a removal was announced twice?)", got)
	}

	// The listing reflects every change.
	list, err := sess.ListTools(ctx, "")
	mustOK(t, err)
	if got := toolNames(list.Tools); got != "first,third" {
		t.Errorf("tools = %s", got)
	}
}

// A stream that asked only for tool changes does not hear of prompts.
func TestListChangedFiltered(t *testing.T) {
	ctx := testwait.Context(t)
	s, _ := newServer(t, nil)
	addTools(t, s, "first")
	mustOK(t, mcpserver.AddPrompt(s, &mcp.Prompt{Name: "p"}, func(ctx context.Context, c *mcpserver.Call, a map[string]string) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	}))
	sess := connect(t, s, nil)
	sub, err := sess.Listen(ctx, mcp.SubscriptionFilter{ToolsListChanged: true})
	mustOK(t, err)
	defer sub.Close()
	mustOK(t, mcpserver.AddPrompt(s, &mcp.Prompt{Name: "q"}, func(ctx context.Context, c *mcpserver.Call, a map[string]string) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{}, nil
	}))
	addTools(t, s, "second")
	ev := testwait.Recv(t, sub.Events(), "the tool list change")
	if ev.Method != mcp.NotificationToolListChanged {
		t.Errorf("first event = %s, want only the tool change", ev.Method)
	}
}
