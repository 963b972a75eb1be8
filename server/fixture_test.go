package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/parley-mcp/parley/jsonrpc/wire"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// newFixture returns the server the golden and behaviour tests talk to: a
// few tools (one reporting progress and logs), prompts, resources and a
// template, completion, and pagination over three tools. One more tool,
// "survey", is served but not listed (so that the pages of tools/list stay
// as they are): on a legacy session it sends the client one request of
// each kind over the back-channel and answers with what the client said.
func newFixture(opts *server.Options) *server.Server {
	s := server.New(mcp.Implementation{Name: "fixture", Version: "0.1.0"}, opts)
	tools := []mcp.Tool{
		{Name: "echo", Description: "Echo the text argument.", InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`)},
		{Name: "work", Description: "Report progress and log while working.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "fail", Description: "Fail with an internal error.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "ask", Description: "Ask which region, then answer.", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}
	s.HandleListTools(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error) {
		page, next, err := server.Paginate(tools, p.Cursor, 2)
		if err != nil {
			return nil, err
		}
		return &mcp.ListToolsResult{Tools: page, NextCursor: next}, nil
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
		case "fail":
			return nil, fmt.Errorf("database password is hunter2")
		case "survey":
			// A fixed elicitationId: the golden files must not depend on
			// the random one Ask would give the URL elicitation.
			var answers []string
			for _, q := range []mcp.InputRequest{
				mcp.NewListRootsRequest(),
				mcp.NewCreateMessageRequest(mcp.CreateMessageRequestParams{
					Messages:  []mcp.SamplingMessage{{Role: mcp.RoleUser, Content: mcp.SamplingContent{&mcp.TextContent{Text: "Name a region."}}}},
					MaxTokens: 16,
				}),
				mcp.NewElicitFormRequest("Which region?", mcp.ElicitRequestedSchema{
					Properties: map[string]mcp.PrimitiveSchemaDefinition{"region": &mcp.StringSchema{Title: "Region"}},
					Required:   []string{"region"},
				}),
				&mcp.ElicitRequest{Params: &mcp.ElicitRequestURLParams{Message: "Sign in to the region.", URL: "https://example.com/login", ElicitationID: "login-1"}},
			} {
				raw, err := req.Ask(ctx, q)
				if err != nil {
					return nil, err
				}
				answers = append(answers, string(raw))
			}
			return mcp.TextResult(strings.Join(answers, "\n")), nil
		case "ask":
			// Two rounds: a form elicitation with plaintext state (the
			// golden files must not depend on a random key), then the answer.
			if !p.InputResponses.Has("region") {
				return &mcp.InputRequiredResult{
					InputRequests: mcp.InputRequests{"region": mcp.NewElicitFormRequest("Which region?", mcp.ElicitRequestedSchema{
						Properties: map[string]mcp.PrimitiveSchemaDefinition{"region": &mcp.StringSchema{Title: "Region"}},
						Required:   []string{"region"},
					})},
					RequestState: "ask-1",
				}, nil
			}
			answer, err := p.InputResponses.Elicit("region")
			if err != nil {
				return nil, wire.InvalidParams("Invalid params: %v", err)
			}
			region, _ := answer.Content["region"].(string)
			return mcp.TextResult(string(answer.Action) + " " + region + " state=" + p.RequestState), nil
		}
		return nil, wire.InvalidParams("Unknown tool: %s", p.Name)
	})
	s.HandleListPrompts(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListPromptsResult, error) {
		return &mcp.ListPromptsResult{Prompts: []mcp.Prompt{{Name: "greeting", Arguments: []mcp.PromptArgument{{Name: "name", Required: true}}}}}, nil
	})
	s.HandleGetPrompt(func(ctx context.Context, req *server.Request, p *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error) {
		if p.Name != "greeting" {
			return nil, wire.InvalidParams("Unknown prompt: %s", p.Name)
		}
		return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{{Role: mcp.RoleUser, Content: &mcp.TextContent{Text: "Say hello to " + p.Arguments["name"]}}}}, nil
	})
	s.HandleListResources(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListResourcesResult, error) {
		return &mcp.ListResourcesResult{Resources: []mcp.Resource{{URI: "file:///readme.txt", Name: "readme", MIMEType: "text/plain"}}}, nil
	})
	s.HandleListResourceTemplates(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListResourceTemplatesResult, error) {
		return &mcp.ListResourceTemplatesResult{ResourceTemplates: []mcp.ResourceTemplate{{URITemplate: "file:///notes/{name}", Name: "note"}}}, nil
	})
	s.HandleReadResource(func(ctx context.Context, req *server.Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		if p.URI != "file:///readme.txt" {
			return nil, server.ResourceNotFound(p.URI)
		}
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{&mcp.TextResourceContents{URI: p.URI, MIMEType: "text/plain", Text: "hello"}}}, nil
	})
	s.HandleComplete(func(ctx context.Context, req *server.Request, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
		return &mcp.CompleteResult{Completion: mcp.Completion{Values: []string{"Alice", "Bob"}, Total: 2}}, nil
	})
	return s
}
