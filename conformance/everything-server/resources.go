package main

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/mcpserver"
)

// The static resources, in listing order, with their contents.
var resources = []struct {
	mcp.Resource
	contents mcp.ResourceContents
}{
	{
		mcp.Resource{
			URI:         "test://static-text",
			Name:        "static-text",
			Title:       "Static Text Resource",
			Description: "A static text resource for testing",
			MIMEType:    "text/plain",
		},
		&mcp.TextResourceContents{URI: "test://static-text", MIMEType: "text/plain", Text: "This is the content of the static text resource."},
	},
	{
		mcp.Resource{
			URI:         "test://static-binary",
			Name:        "static-binary",
			Title:       "Static Binary Resource",
			Description: "A static binary resource (a PNG image) for testing",
			MIMEType:    "image/png",
		},
		&mcp.BlobResourceContents{URI: "test://static-binary", MIMEType: "image/png", Blob: redPixelPNG},
	},
	{
		mcp.Resource{
			URI:         "test://watched-resource",
			Name:        "watched-resource",
			Title:       "Watched Resource",
			Description: "A resource that can be subscribed to with subscriptions/listen",
			MIMEType:    "text/plain",
		},
		&mcp.TextResourceContents{URI: "test://watched-resource", MIMEType: "text/plain", Text: "This is the content of the watched resource."},
	},
}

var dataTemplate = mcp.ResourceTemplate{
	URITemplate: "test://template/{id}/data",
	Name:        "template-data",
	Title:       "Template Resource",
	Description: "A resource template whose {id} is substituted into the data",
	MIMEType:    "application/json",
}

// templateVars are the variables of dataTemplate.
type templateVars struct {
	ID string `json:"id"`
}

// registerResources registers the static resources and the template. A URI
// that neither knows is mcpserver's resource-not-found error (-32602 with
// the URI, never an empty contents list: SEP-2164).
func (f *fixture) registerResources() error {
	var errs []error
	for _, r := range resources {
		contents := r.contents
		errs = append(errs, f.srv.AddResource(&r.Resource, func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{contents}}, nil
		}))
	}
	errs = append(errs, mcpserver.AddResourceTemplate(f.srv, &dataTemplate, readTemplate))
	return errors.Join(errs...)
}

// readTemplate serves test://template/{id}/data.
func readTemplate(ctx context.Context, c *mcpserver.Call, v templateVars) (*mcp.ReadResourceResult, error) {
	data, err := json.Marshal(map[string]any{
		"id":           v.ID,
		"templateTest": true,
		"data":         "Data for ID: " + v.ID,
	})
	if err != nil {
		return nil, err
	}
	// The contents carry the URI exactly as the client sent it; the Call's
	// low-level request holds it.
	uri := "test://template/" + v.ID + "/data"
	if p, ok := c.Params.(*mcp.ReadResourceRequestParams); ok {
		uri = p.URI
	}
	return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{
		&mcp.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(data)},
	}}, nil
}

// Completion candidates, by argument.
var completions = map[string][]string{
	"arg1": {"paris", "park", "party", "test", "testing"},
	"arg2": {"hello", "help", "world"},
	"id":   {"1", "2", "3", "123"},
}

// registerCompletion registers the completions: values for the arguments
// of test_prompt_with_arguments and of the resource template, filtered by
// the prefix typed so far. Anything else gets no suggestions.
func (f *fixture) registerCompletion() error {
	f.srv.CompletePromptArgument("test_prompt_with_arguments", "arg1", complete("arg1"))
	f.srv.CompletePromptArgument("test_prompt_with_arguments", "arg2", complete("arg2"))
	f.srv.CompleteTemplateVariable(dataTemplate.URITemplate, "id", complete("id"))
	return nil
}

// complete suggests the candidates of arg that start with what was typed.
func complete(arg string) mcpserver.CompleteFunc {
	return func(ctx context.Context, c *mcpserver.Call, value string, resolved map[string]string) ([]string, error) {
		var values []string
		for _, v := range completions[arg] {
			if strings.HasPrefix(v, value) {
				values = append(values, v)
			}
		}
		return values, nil
	}
}
