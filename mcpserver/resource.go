package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/yosida95/uritemplate/v3"

	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// ResourceHandler reads a static resource. It gets no Call and returns
// only a *mcp.ReadResourceResult: a static resource cannot ask the client
// anything, since it could never read the answer. Only resource templates
// take part in multi-round-trip requests.
type ResourceHandler func(ctx context.Context, uri string) (*mcp.ReadResourceResult, error)

// ResourceTemplateHandler reads a resource matched by a template. In is
// map[string]string or a struct of string fields (the template's
// variables, by name); Out is *mcp.ReadResourceResult, or
// mcp.ReadResourceOutcome for a template that builds its
// InputRequiredResult by hand.
type ResourceTemplateHandler[In, Out any] func(ctx context.Context, call *Call, in In) (Out, error)

type resourceEntry struct {
	resource mcp.Resource
	read     ResourceHandler
}

type templateEntry struct {
	template mcp.ResourceTemplate
	match    *uritemplate.Template
	read     func(ctx context.Context, req *server.Request, p *mcp.ReadResourceRequestParams, vars uritemplate.Values) (mcp.ReadResourceOutcome, error)
}

var (
	readResultType  = reflect.TypeFor[*mcp.ReadResourceResult]()
	readOutcomeType = reflect.TypeFor[mcp.ReadResourceOutcome]()
)

// AddResource registers a static resource, or replaces the resource with
// the same URI, and tells listening clients the resource list changed.
func (s *Server) AddResource(r *mcp.Resource, h ResourceHandler) error {
	if r == nil || h == nil || r.URI == "" || r.Name == "" {
		return errors.New("mcpserver: AddResource needs a resource with a URI and a name, and a handler")
	}
	s.mu.Lock()
	s.resources.put(r.URI, &resourceEntry{resource: *r, read: h})
	s.mu.Unlock()
	s.installResources()
	s.low.NotifyResourceListChanged()
	return nil
}

// AddResourceTemplate registers a resource template (RFC 6570), or
// replaces the template with the same uriTemplate. A resources/read whose
// URI no static resource has is matched against the templates in the
// order they were registered; the first match serves it, with the
// template's variables decoded into In.
//
// questions are asked before the body runs, exactly as for a tool (see
// [AddTool]); a template that declares them returns
// *mcp.ReadResourceResult, and one that returns mcp.ReadResourceOutcome
// cannot declare them. A declined question, or an answer that does not
// fit, fails the read with an invalid-params error naming the question.
func AddResourceTemplate[In, Out any](s *Server, t *mcp.ResourceTemplate, h ResourceTemplateHandler[In, Out], questions ...Dependency) error {
	if t == nil || h == nil || t.URITemplate == "" || t.Name == "" {
		return errors.New("mcpserver: AddResourceTemplate needs a template with a uriTemplate and a name, and a handler")
	}
	owner := fmt.Sprintf("resource template %q", t.URITemplate)
	tmpl, err := uritemplate.New(t.URITemplate)
	if err != nil {
		return fmt.Errorf("mcpserver: %s: %w", owner, err)
	}
	outType := reflect.TypeFor[Out]()
	if outType != readResultType && outType != readOutcomeType {
		return fmt.Errorf("mcpserver: %s returns %s; a resource template returns *mcp.ReadResourceResult or mcp.ReadResourceOutcome", owner, outType)
	}
	inType := reflect.TypeFor[In]()
	args, err := newStringArgs(inType)
	if err != nil {
		return fmt.Errorf("mcpserver: %s: %w", owner, err)
	}
	for _, f := range args.fields {
		if !slices.Contains(tmpl.Varnames(), f.name) {
			return fmt.Errorf("mcpserver: %s has no variable %q for field %s", owner, f.name, inType.Field(f.index).Name)
		}
	}
	pl, err := newPlan(owner, inType, questions)
	if err != nil {
		return err
	}
	if pl != nil && outType == readOutcomeType {
		return fmt.Errorf("mcpserver: %s declares questions and returns mcp.ReadResourceOutcome, which can hold an InputRequiredResult; "+
			"a request has one inputResponses/requestState channel: return *mcp.ReadResourceResult", owner)
	}
	e := &templateEntry{template: *t, match: tmpl}
	e.read = func(ctx context.Context, req *server.Request, p *mcp.ReadResourceRequestParams, vars uritemplate.Values) (mcp.ReadResourceOutcome, error) {
		given := make(map[string]string, len(vars))
		for name, v := range vars {
			if v.Valid() {
				given[name] = v.String()
			}
		}
		v := args.decode(given)
		in := v.Interface().(In)
		c := s.newCall(ctx, req, owner)
		if ir, err := prepare(ctx, c, pl, in, p); err != nil {
			return nil, requestQuestionError(err)
		} else if ir != nil {
			return ir, nil
		}
		var out Out
		err := s.guard(ctx, owner, func() (err error) { out, err = h(ctx, c, in); return })
		if err != nil {
			return nil, requestError(err)
		}
		o, _ := any(out).(mcp.ReadResourceOutcome)
		if o == nil || reflect.ValueOf(o).IsNil() {
			return nil, fmt.Errorf("mcpserver: %s returned a nil result and no error", owner)
		}
		return o, nil
	}
	s.mu.Lock()
	s.templates.put(t.URITemplate, e)
	s.mu.Unlock()
	s.installResources()
	s.low.NotifyResourceListChanged()
	return nil
}

// RemoveResources removes the static resources with the given URIs and
// the templates with the given uriTemplates, and tells listening clients
// the resource list changed if anything was removed.
func (s *Server) RemoveResources(uris ...string) {
	s.mu.Lock()
	removed := s.resources.remove(uris...)
	removed = s.templates.remove(uris...) || removed
	s.mu.Unlock()
	if removed {
		s.low.NotifyResourceListChanged()
	}
}

func (s *Server) installResources() {
	s.installOnce("resources", func() {
		s.low.HandleListResources(s.listResources)
		s.low.HandleListResourceTemplates(s.listTemplates)
		s.low.HandleReadResource(s.readResource)
	})
}

func (s *Server) listResources(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListResourcesResult, error) {
	resources, next, err := listPage(s, &s.resources, p.Cursor, func(e *resourceEntry) mcp.Resource { return e.resource })
	if err != nil {
		return nil, err
	}
	return &mcp.ListResourcesResult{Resources: resources, NextCursor: next}, nil
}

func (s *Server) listTemplates(ctx context.Context, req *server.Request, p *mcp.PaginatedRequestParams) (*mcp.ListResourceTemplatesResult, error) {
	templates, next, err := listPage(s, &s.templates, p.Cursor, func(e *templateEntry) mcp.ResourceTemplate { return e.template })
	if err != nil {
		return nil, err
	}
	return &mcp.ListResourceTemplatesResult{ResourceTemplates: templates, NextCursor: next}, nil
}

// readResource serves a static resource by its exact URI, else the first
// template that matches; a URI neither knows is the 2026-07-28
// resource-not-found error (-32602 with the URI in data).
func (s *Server) readResource(ctx context.Context, req *server.Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error) {
	s.mu.RLock()
	r, ok := s.resources.get(p.URI)
	var templates []*templateEntry
	if !ok {
		templates = s.templates.list()
	}
	s.mu.RUnlock()
	if ok {
		var res *mcp.ReadResourceResult
		err := s.guard(ctx, fmt.Sprintf("resource %q", p.URI), func() (err error) { res, err = r.read(ctx, p.URI); return })
		if err != nil {
			return nil, err
		}
		if res == nil {
			return nil, fmt.Errorf("mcpserver: resource %q returned a nil result and no error", p.URI)
		}
		return res, nil
	}
	for _, t := range templates {
		if vars := t.match.Match(p.URI); vars != nil {
			return t.read(ctx, req, p, vars)
		}
	}
	return nil, server.ResourceNotFound(p.URI)
}
