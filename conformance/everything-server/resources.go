package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// The static resources, in listing order.
var resources = []mcp.Resource{
	{
		URI:         "test://static-text",
		Name:        "static-text",
		Title:       "Static Text Resource",
		Description: "A static text resource for testing",
		MIMEType:    "text/plain",
	},
	{
		URI:         "test://static-binary",
		Name:        "static-binary",
		Title:       "Static Binary Resource",
		Description: "A static binary resource (a PNG image) for testing",
		MIMEType:    "image/png",
	},
	{
		URI:         "test://watched-resource",
		Name:        "watched-resource",
		Title:       "Watched Resource",
		Description: "A resource that can be subscribed to with subscriptions/listen",
		MIMEType:    "text/plain",
	},
}

var templates = []mcp.ResourceTemplate{{
	URITemplate: "test://template/{id}/data",
	Name:        "template-data",
	Title:       "Template Resource",
	Description: "A resource template whose {id} is substituted into the data",
	MIMEType:    "application/json",
}}

// templateURI matches the one template; the group is {id}.
var templateURI = regexp.MustCompile(`^test://template/([^/]+)/data$`)

// registerResources fills the resources slots.
func (f *fixture) registerResources() {
	f.srv.HandleListResources(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListResourcesResult, error) {
		page, next, err := server.Paginate(resources, p.Cursor, 0)
		if err != nil {
			return nil, err
		}
		return &mcp.ListResourcesResult{Resources: page, NextCursor: next}, nil
	})
	f.srv.HandleListResourceTemplates(func(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListResourceTemplatesResult, error) {
		page, next, err := server.Paginate(templates, p.Cursor, 0)
		if err != nil {
			return nil, err
		}
		return &mcp.ListResourceTemplatesResult{ResourceTemplates: page, NextCursor: next}, nil
	})
	f.srv.HandleReadResource(func(ctx context.Context, req *server.Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
		c := readResource(p.URI)
		if c == nil {
			// Never an empty contents list (SEP-2164): -32602 with the URI.
			return nil, server.ResourceNotFound(p.URI)
		}
		return &mcp.ReadResourceResult{Contents: []mcp.ResourceContents{c}}, nil
	})
}

// readResource returns the contents of uri, or nil if there is no such
// resource.
func readResource(uri string) mcp.ResourceContents {
	switch uri {
	case "test://static-text":
		return &mcp.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: "This is the content of the static text resource."}
	case "test://static-binary":
		return &mcp.BlobResourceContents{URI: uri, MIMEType: "image/png", Blob: redPixelPNG}
	case "test://watched-resource":
		return &mcp.TextResourceContents{URI: uri, MIMEType: "text/plain", Text: "This is the content of the watched resource."}
	}
	if m := templateURI.FindStringSubmatch(uri); m != nil {
		data, _ := json.Marshal(map[string]any{
			"id":           m[1],
			"templateTest": true,
			"data":         "Data for ID: " + m[1],
		})
		return &mcp.TextResourceContents{URI: uri, MIMEType: "application/json", Text: string(data)}
	}
	return nil
}

// Completion candidates, by argument.
var completions = map[string][]string{
	"arg1": {"paris", "park", "party", "test", "testing"},
	"arg2": {"hello", "help", "world"},
	"id":   {"1", "2", "3", "123"},
}

// registerCompletion fills the completion/complete slot: values for the
// arguments of test_prompt_with_arguments and of the resource template,
// filtered by the prefix typed so far.
func (f *fixture) registerCompletion() {
	f.srv.HandleComplete(func(ctx context.Context, req *server.Request, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
		switch ref := p.Ref.(type) {
		case *mcp.PromptReference:
			if ref.Name != "test_prompt_with_arguments" || (p.Argument.Name != "arg1" && p.Argument.Name != "arg2") {
				return &mcp.CompleteResult{}, nil
			}
		case *mcp.ResourceTemplateReference:
			if ref.URI != templates[0].URITemplate || p.Argument.Name != "id" {
				return &mcp.CompleteResult{}, nil
			}
		default:
			return nil, server.InvalidParams("Invalid params: ref must be ref/prompt or ref/resource")
		}
		var values []string
		for _, v := range completions[p.Argument.Name] {
			if strings.HasPrefix(v, p.Argument.Value) {
				values = append(values, v)
			}
		}
		return &mcp.CompleteResult{Completion: mcp.Completion{Values: values, Total: len(values)}}, nil
	})
}
