package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"

	"github.com/yosida95/uritemplate/v3"

	"github.com/parley-mcp/parley/jsonrpc/wire"
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
// Variables arrive percent-decoded: matching undoes the expansion, which
// percent-encodes. A simple {var} (and {/var}, {.var}, {;var}, {?var},
// {&var}) expands to unreserved characters only, so anything else in its
// value came encoded: "..%2F..%2Fetc%2Fpasswd" arrives as
// "../../etc/passwd", "%00" as a NUL. The reserved expansions {+var} and
// {#var} also pass reserved characters such as '/' as they are. A
// variable matched as a list (a raw comma, or an exploded {/var*} matching
// several segments) arrives as its elements joined by commas.
//
// So that a value cannot reach outside what the template names, a read is
// refused before any question is asked or the function runs, with
// -32602 naming the variable and the URI in data (as for an unknown
// resource), when a variable's decoded value (each element of a list):
//
//   - is not valid UTF-8;
//   - holds a control character, NUL among them;
//   - holds a backslash;
//   - holds a '/', unless the variable appears only in {+var} or {#var}
//     expansions; there, it may not start with one (an absolute path);
//   - has a "." or ".." segment (split at slashes and backslashes).
//
// A variable opts in to what its function handles safely with the mcp tag
// of its field: allow=slash, allow=backslash, allow=dots or allow=control
// (repeat the item for several); invalid UTF-8 is always refused. A map In
// takes the defaults for every variable. These checks are a floor, not a
// sandbox: a function that opens files should still keep names inside its
// root (os.Root, filepath.IsLocal). A field's other mcp tag items (enum,
// pattern, minLength, maxLength, default) are checked the same way; see
// the package documentation.
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
	args, err := newStringArgs(inType, true)
	if err != nil {
		return fmt.Errorf("mcpserver: %s: %w", owner, err)
	}
	varnames := slices.Clone(tmpl.Varnames())
	for i, name := range varnames {
		varnames[i] = varName(name)
	}
	for _, f := range args.fields {
		if !slices.Contains(varnames, f.name) {
			return fmt.Errorf("mcpserver: %s has no variable %q for field %s", owner, f.name, inType.Field(f.index).Name)
		}
	}
	guard := newVariableGuard(t.URITemplate, varnames, args)
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
		given, err := guard.values(vars)
		if err == nil {
			err = args.check(given)
		}
		if err != nil {
			s.log.LogAttrs(ctx, slog.LevelInfo, "mcpserver: refused a resource template variable",
				slog.String("owner", owner), slog.String("uri", p.URI), slog.String("reason", err.Error()))
			return nil, wire.InvalidParams("Invalid params: %s: variable %v", owner, err).WithData(struct {
				URI string `json:"uri"`
			}{p.URI})
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
		err = s.guard(ctx, owner, func() (err error) { out, err = h(ctx, c, in); return })
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

// A StaticResource is a static resource and the function that reads it,
// for [Server.ChangeResources].
type StaticResource struct {
	Resource mcp.Resource
	Read     ResourceHandler
}

// ChangeResources removes the static resources with the URIs in remove,
// then adds those in add (replacing any with the same URI), as one change:
// a resources/list or resources/read sees the resources as they were
// before it or after it, never in between, and listening clients are told
// once that the resource list changed, if anything was removed or added.
// It is how a set of resources that changes together (the files of a
// skill, say) is kept up to date. Every resource of add is checked as
// [Server.AddResource] checks one before anything changes. From its first
// call the server declares the resources capability, even when it adds
// nothing.
func (s *Server) ChangeResources(remove []string, add []StaticResource) error {
	for i, r := range add {
		if r.Resource.URI == "" || r.Resource.Name == "" || r.Read == nil {
			return fmt.Errorf("mcpserver: ChangeResources: resource %d (%q) needs a URI, a name and a read function", i, r.Resource.URI)
		}
	}
	s.installResources()
	s.mu.Lock()
	changed := s.resources.remove(remove...)
	for _, r := range add {
		s.resources.put(r.Resource.URI, &resourceEntry{resource: r.Resource, read: r.Read})
	}
	s.mu.Unlock()
	if changed || len(add) > 0 {
		s.low.NotifyResourceListChanged()
	}
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
		req.Route = p.URI // registered as it is
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
			req.Route = t.template.URITemplate
			return t.read(ctx, req, p, vars)
		}
	}
	return nil, server.ResourceNotFound(p.URI)
}

// variableGuard turns a template's match into the values its function
// receives, refusing those a variable may not hold (see templatevars.go).
type variableGuard struct {
	reserved map[string]bool     // variables expanded only with {+var} or {#var}
	allow    map[string]allowSet // the variables the function receives, and what each may hold
}

func newVariableGuard(uriTemplate string, varnames []string, args *stringArgs) *variableGuard {
	g := &variableGuard{reserved: reservedVars(uriTemplate), allow: map[string]allowSet{}}
	if args.typ == stringMapType {
		for _, name := range varnames {
			g.allow[name] = 0
		}
	}
	for _, f := range args.fields {
		g.allow[f.name] = f.allow
	}
	return g
}

// values returns the matched variables the function receives, decoded.
// A variable matched as a list (a raw comma, or an exploded variable
// matching several parts) is its elements joined by commas, each checked
// on its own.
func (g *variableGuard) values(vars uritemplate.Values) (map[string]string, error) {
	given := make(map[string]string, len(vars))
	for spec, v := range vars {
		name := varName(spec)
		allow, takes := g.allow[name]
		if !takes || !v.Valid() {
			continue
		}
		for _, elem := range v.V {
			if why := refuseVariable(elem, g.reserved[name], allow); why != "" {
				return nil, &argumentError{name, errors.New(why)}
			}
		}
		given[name] = strings.Join(v.V, ",")
	}
	return given, nil
}
