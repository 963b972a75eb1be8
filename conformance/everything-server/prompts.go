package main

import (
	"context"
	"fmt"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// promptHandler serves one prompt.
type promptHandler func(ctx context.Context, req *server.Request, p *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error)

// promptDef is a prompt's listing and its handler.
type promptDef struct {
	prompt mcp.Prompt
	get    promptHandler
}

// The name of the prompt that test_trigger_prompt_change adds and removes.
const dynamicPromptName = "test_dynamic_prompt"

// registerPrompts fills the prompts/list and prompts/get slots.
func (f *fixture) registerPrompts() {
	defs := []promptDef{
		{mcp.Prompt{Name: "test_simple_prompt", Description: "A simple prompt without arguments"}, simplePrompt},
		{mcp.Prompt{
			Name:        "test_prompt_with_arguments",
			Description: "A prompt whose text substitutes two arguments",
			Arguments: []mcp.PromptArgument{
				{Name: "arg1", Description: "First test argument", Required: true},
				{Name: "arg2", Description: "Second test argument", Required: true},
			},
		}, promptWithArguments},
		{mcp.Prompt{
			Name:        "test_prompt_with_embedded_resource",
			Description: "A prompt that embeds a resource",
			Arguments: []mcp.PromptArgument{
				{Name: "resourceUri", Description: "URI of the resource to embed", Required: true},
			},
		}, promptWithEmbeddedResource},
		{mcp.Prompt{Name: "test_prompt_with_image", Description: "A prompt that includes an image"}, promptWithImage},
		f.mrtrPrompt(),
	}
	f.prompts = make(map[string]promptDef, len(defs))
	order := make([]string, 0, len(defs))
	for _, d := range defs {
		f.prompts[d.prompt.Name] = d
		order = append(order, d.prompt.Name)
	}
	dynamic := promptDef{mcp.Prompt{Name: dynamicPromptName, Description: "Exists only while test_trigger_prompt_change has added it"}, simplePrompt}

	f.srv.HandleListPrompts(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListPromptsResult, error) {
		list := make([]mcp.Prompt, 0, len(order)+1)
		for _, name := range order {
			list = append(list, f.prompts[name].prompt)
		}
		if f.hasDynamicPrompt() {
			list = append(list, dynamic.prompt)
		}
		page, next, err := server.Paginate(list, p.Cursor, 0)
		if err != nil {
			return nil, err
		}
		return &mcp.ListPromptsResult{Prompts: page, NextCursor: next}, nil
	})
	f.srv.HandleGetPrompt(func(ctx context.Context, req *server.Request, p *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error) {
		d, ok := f.prompts[p.Name]
		if !ok && p.Name == dynamicPromptName && f.hasDynamicPrompt() {
			d, ok = dynamic, true
		}
		if !ok {
			return nil, server.InvalidParams("Unknown prompt: %s", p.Name)
		}
		for _, a := range d.prompt.Arguments {
			if _, set := p.Arguments[a.Name]; a.Required && !set {
				return nil, server.InvalidParams("Invalid params: prompt %s needs argument %q", p.Name, a.Name)
			}
		}
		return d.get(ctx, req, p)
	})
}

func (f *fixture) hasDynamicPrompt() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dynamicPrompt
}

func simplePrompt(ctx context.Context, req *server.Request, p *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error) {
	return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
		{Role: mcp.RoleUser, Content: mcp.NewTextContent("This is a simple prompt for testing.")},
	}}, nil
}

func promptWithArguments(ctx context.Context, req *server.Request, p *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error) {
	text := fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", p.Arguments["arg1"], p.Arguments["arg2"])
	return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
		{Role: mcp.RoleUser, Content: mcp.NewTextContent(text)},
	}}, nil
}

func promptWithEmbeddedResource(ctx context.Context, req *server.Request, p *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error) {
	return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
		{Role: mcp.RoleUser, Content: mcp.NewEmbeddedResource(&mcp.TextResourceContents{
			URI:      p.Arguments["resourceUri"],
			MIMEType: "text/plain",
			Text:     "Embedded resource content for testing.",
		})},
		{Role: mcp.RoleUser, Content: mcp.NewTextContent("Please process the embedded resource above.")},
	}}, nil
}

func promptWithImage(ctx context.Context, req *server.Request, p *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error) {
	return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
		{Role: mcp.RoleUser, Content: mcp.NewImageContent(redPixelPNG, "image/png")},
		{Role: mcp.RoleUser, Content: mcp.NewTextContent("Please analyze the image above.")},
	}}, nil
}
