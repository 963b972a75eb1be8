package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

// The name of the prompt that test_trigger_prompt_change adds and removes.
const dynamicPromptName = "test_dynamic_prompt"

// registerPrompts registers the prompts, in prompts/list order;
// test_dynamic_prompt joins the end of the list while
// test_trigger_prompt_change has added it. mcpserver refuses a prompts/get
// that lacks a required argument with -32602.
func (f *fixture) registerPrompts() error {
	s := f.srv
	return errors.Join(
		mcpserver.AddPrompt(s, &mcp.Prompt{Name: "test_simple_prompt", Description: "A simple prompt without arguments"}, simplePrompt),
		mcpserver.AddPrompt(s, &mcp.Prompt{
			Name:        "test_prompt_with_arguments",
			Description: "A prompt whose text substitutes two arguments",
			Arguments: []mcp.PromptArgument{
				{Name: "arg1", Description: "First test argument", Required: true},
				{Name: "arg2", Description: "Second test argument", Required: true},
			},
		}, promptWithArguments),
		mcpserver.AddPrompt(s, &mcp.Prompt{
			Name:        "test_prompt_with_embedded_resource",
			Description: "A prompt that embeds a resource",
			Arguments: []mcp.PromptArgument{
				{Name: "resourceUri", Description: "URI of the resource to embed", Required: true},
			},
		}, promptWithEmbeddedResource),
		mcpserver.AddPrompt(s, &mcp.Prompt{Name: "test_prompt_with_image", Description: "A prompt that includes an image"}, promptWithImage),
		registerMRTRPrompt(s),
	)
}

func simplePrompt(ctx context.Context, c *mcpserver.Call, _ map[string]string) (*mcp.GetPromptResult, error) {
	return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
		{Role: mcp.RoleUser, Content: mcp.NewTextContent("This is a simple prompt for testing.")},
	}}, nil
}

func promptWithArguments(ctx context.Context, c *mcpserver.Call, args map[string]string) (*mcp.GetPromptResult, error) {
	text := fmt.Sprintf("Prompt with arguments: arg1='%s', arg2='%s'", args["arg1"], args["arg2"])
	return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
		{Role: mcp.RoleUser, Content: mcp.NewTextContent(text)},
	}}, nil
}

func promptWithEmbeddedResource(ctx context.Context, c *mcpserver.Call, args map[string]string) (*mcp.GetPromptResult, error) {
	return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
		{Role: mcp.RoleUser, Content: mcp.NewEmbeddedResource(&mcp.TextResourceContents{
			URI:      args["resourceUri"],
			MIMEType: "text/plain",
			Text:     "Embedded resource content for testing.",
		})},
		{Role: mcp.RoleUser, Content: mcp.NewTextContent("Please process the embedded resource above.")},
	}}, nil
}

func promptWithImage(ctx context.Context, c *mcpserver.Call, _ map[string]string) (*mcp.GetPromptResult, error) {
	return &mcp.GetPromptResult{Messages: []mcp.PromptMessage{
		{Role: mcp.RoleUser, Content: mcp.NewImageContent(redPixelPNG, "image/png")},
		{Role: mcp.RoleUser, Content: mcp.NewTextContent("Please analyze the image above.")},
	}}, nil
}
