package client_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// fixture is the server most tests talk to. Every list pages with
// server.Paginate, two items a page, so that the iterators cross pages:
//
//   - tools t1..t5 in the list; tools/call serves "echo" (returns its text
//     argument), "work" (two progress steps, an info and a debug log line)
//     and "ask" (answers input_required);
//   - prompts p1..p3, and prompts/get of "greeting" and "ask";
//   - resources r1..r3 and templates tpl1..tpl3, and resources/read of
//     file:///readme.txt and file:///ask;
//   - completion/complete offering Alice and Bob.
func fixture(opts *server.Options) *server.Server {
	s := newServer(opts)
	var tools []mcp.Tool
	for i := 1; i <= 5; i++ {
		tools = append(tools, tool(fmt.Sprintf("t%d", i)))
	}
	var prompts []mcp.Prompt
	var resources []mcp.Resource
	var templates []mcp.ResourceTemplate
	for i := 1; i <= 3; i++ {
		prompts = append(prompts, mcp.Prompt{Name: fmt.Sprintf("p%d", i)})
		resources = append(resources, mcp.Resource{URI: fmt.Sprintf("file:///r%d", i), Name: fmt.Sprintf("r%d", i)})
		templates = append(templates, mcp.ResourceTemplate{URITemplate: fmt.Sprintf("file:///tpl%d/{x}", i), Name: fmt.Sprintf("tpl%d", i)})
	}
	s.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		page, next, err := server.Paginate(tools, p.Cursor, 2)
		if err != nil {
			return nil, err
		}
		return &mcp.ListToolsResult{Tools: page, NextCursor: next}, nil
	})
	s.HandleListPrompts(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListPromptsResult, error) {
		page, next, err := server.Paginate(prompts, p.Cursor, 2)
		if err != nil {
			return nil, err
		}
		return &mcp.ListPromptsResult{Prompts: page, NextCursor: next}, nil
	})
	s.HandleListResources(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListResourcesResult, error) {
		page, next, err := server.Paginate(resources, p.Cursor, 2)
		if err != nil {
			return nil, err
		}
		return &mcp.ListResourcesResult{Resources: page, NextCursor: next}, nil
	})
	s.HandleListResourceTemplates(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListResourceTemplatesResult, error) {
		page, next, err := server.Paginate(templates, p.Cursor, 2)
		if err != nil {
			return nil, err
		}
		return &mcp.ListResourceTemplatesResult{ResourceTemplates: page, NextCursor: next}, nil
	})
	s.HandleCallTool(func(ctx context.Context, req *server.Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error) {
		switch p.Name {
		case "echo":
			var args struct {
				Text string `json:"text"`
			}
			if err := p.DecodeArguments(&args); err != nil {
				return nil, wire.InvalidParams("Invalid params: %v", err)
			}
			return mcp.TextResult(args.Text), nil
		case "work":
			for i := 1; i <= 2; i++ {
				if err := req.Progress(ctx, float64(i), 2, fmt.Sprintf("step %d", i)); err != nil {
					return nil, err
				}
			}
			if err := req.Log(ctx, mcp.LevelInfo, "work", "halfway"); err != nil {
				return nil, err
			}
			if err := req.Log(ctx, mcp.LevelDebug, "work", "details"); err != nil {
				return nil, err
			}
			return mcp.TextResult("done"), nil
		case "ask":
			return &mcp.InputRequiredResult{RequestState: "round-1"}, nil
		}
		return nil, wire.InvalidParams("Unknown tool: %s", p.Name)
	})
	s.HandleGetPrompt(func(ctx context.Context, req *server.Request, p *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error) {
		switch p.Name {
		case "greeting":
			return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "Say hello to " + p.Arguments["name"]}}}}, nil
		case "ask":
			return &mcp.InputRequiredResult{RequestState: "round-1"}, nil
		}
		return nil, wire.InvalidParams("Unknown prompt: %s", p.Name)
	})
	s.HandleReadResource(func(ctx context.Context, req *server.Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		switch p.URI {
		case "file:///readme.txt":
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: p.URI, MIMEType: "text/plain", Text: "hello"}}}, nil
		case "file:///ask":
			return &mcp.InputRequiredResult{RequestState: "round-1"}, nil
		}
		return nil, server.ResourceNotFound(p.URI)
	})
	s.HandleComplete(func(ctx context.Context, req *server.Request, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
		return &mcp.CompleteResult{Completion: mcp.Completion{Values: []string{"Alice", "Bob"}, Total: 2}}, nil
	})
	return s
}

// echoArgs are the arguments of the fixture's echo tool.
func echoArgs(text string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"text": text})
	return b
}

// text returns the text of a tool result's only content block.
func text(r *mcp.CallToolResult) string {
	if len(r.Content) != 1 {
		return fmt.Sprintf("<%d content blocks>", len(r.Content))
	}
	if tc, ok := r.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return fmt.Sprintf("<%T>", r.Content[0])
}
