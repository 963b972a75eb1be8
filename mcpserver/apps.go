package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/parley-mcp/parley/apps"
	"github.com/parley-mcp/parley/mcp"
	"github.com/parley-mcp/parley/server"
)

// This file is the MCP Apps extension (package apps, design record 047)
// in the high-level server: views, app tools, and the check that every
// app tool's view exists.

// DefaultViewTTL is how long a host may keep a view's page without
// reading it again, when View.TTL is zero. A page changes only with the
// server's code, and its content version tells a host that it did.
const DefaultViewTTL = time.Hour

// ErrUnknownView is matched (errors.Is) by the error for an app tool that
// names a view no AddView registered.
var ErrUnknownView = errors.New("mcpserver: the tool names a view that is not registered")

// ErrViewExists is matched by the error for a view registered on a URI
// that already serves a resource: two views on one URI.
var ErrViewExists = errors.New("mcpserver: a resource with this URI is already registered")

// View describes a view resource: the page an app tool's results are
// shown in.
type View struct {
	// URI is the view's ui:// URI, which app tools name
	// (apps.ToolMeta.ResourceURI).
	URI string
	// Name is the resource's programmatic name.
	Name string
	// Title is a display name.
	Title string
	// Description says what the view shows.
	Description string
	// MIMEType is the page's type. Default: apps.MIMEType, the only type
	// the extension defines.
	MIMEType string
	// UI is the view's _meta.ui: the origins its Content Security Policy
	// must allow, the browser permissions it asks for, a dedicated domain,
	// a border. It is sent on both the resources/list entry and the
	// resources/read contents. The zero value sends none (the host's
	// restrictive defaults).
	UI apps.ResourceMeta
	// TTL is how long a host may cache the page (the read's ttlMs).
	// Default: DefaultViewTTL. Negative means not at all (ttlMs 0).
	TTL time.Duration
	// CacheScope is who may reuse the cached page. Default:
	// mcp.CacheScopePublic: the page is the same for every caller.
	CacheScope mcp.CacheScope
}

// AddView registers a view resource whose page is page (a string or a
// []byte, such as a //go:embed variable), and makes the server declare the
// apps extension. The page is served as it is, with the view's _meta.ui
// and its content version (apps.VersionMetaKey, a digest of the page)
// beside it, cacheable for View.TTL.
//
// It refuses, with an error naming the mistake, a URI that is not ui://
// (wrapping apps.ErrNotUIURI), a view without a name, and a URI that
// already serves a resource (ErrViewExists): unlike AddResource, a view is
// not replaced; remove it first with RemoveResources.
func AddView[Page string | []byte](s *Server, v *View, page Page) error {
	return addView(s, v, []byte(page))
}

// AddViewFile registers a view like [AddView] whose page is the file name
// of fsys, read once, now: with //go:embed the page is part of the
// program.
//
//	//go:embed table.html
//	var views embed.FS
//	err := mcpserver.AddViewFile(s, &mcpserver.View{URI: "ui://records/table.html", Name: "records"}, views, "table.html")
func AddViewFile(s *Server, v *View, fsys fs.FS, name string) error {
	if v == nil || fsys == nil {
		return errors.New("mcpserver: AddViewFile needs a view and a file system")
	}
	page, err := fs.ReadFile(fsys, name)
	if err != nil {
		return fmt.Errorf("mcpserver: view %q: %w", v.URI, err)
	}
	return addView(s, v, page)
}

func addView(s *Server, v *View, page []byte) error {
	if v == nil {
		return errors.New("mcpserver: AddView needs a view")
	}
	if err := apps.CheckURI(v.URI); err != nil {
		return fmt.Errorf("mcpserver: view: %w", err)
	}
	if v.Name == "" {
		return fmt.Errorf("mcpserver: view %q needs a name", v.URI)
	}
	mime := v.MIMEType
	if mime == "" {
		mime = apps.MIMEType
	}
	ttl := v.TTL
	switch {
	case ttl == 0:
		ttl = DefaultViewTTL
	case ttl < 0:
		ttl = 0
	}
	scope := v.CacheScope
	if scope == "" {
		scope = mcp.CacheScopePublic
	}
	meta := mcp.MetaObject{apps.VersionMetaKey: apps.ContentVersion(page)}
	if !reflect.ValueOf(v.UI).IsZero() {
		meta[apps.MetaKey] = v.UI
	}
	uri, text := v.URI, string(page)
	res := &mcp.ReadResourceResult{
		CacheableResult: mcp.CacheableResult{TTLMs: ttl.Milliseconds(), CacheScope: scope},
		Contents:        []mcp.ResourceContents{&mcp.TextResourceContents{URI: uri, MIMEType: mime, Text: text, Meta: meta}},
	}
	entry := &resourceEntry{
		resource: mcp.Resource{URI: uri, Name: v.Name, Title: v.Title, Description: v.Description, MIMEType: mime, Size: int64(len(page)), Meta: meta},
		read: func(ctx context.Context, _ string) (*mcp.ReadResourceResult, error) {
			// A copy per read: the server stamps the result's header.
			r := *res
			return &r, nil
		},
	}
	if err := s.enableApps(); err != nil {
		return err
	}
	s.mu.Lock()
	if _, taken := s.resources.get(uri); taken {
		s.mu.Unlock()
		return fmt.Errorf("%w: view %q (two views cannot share a URI; RemoveResources first to replace one)", ErrViewExists, uri)
	}
	s.resources.put(uri, entry)
	s.mu.Unlock()
	s.installResources()
	s.low.NotifyResourceListChanged()
	return nil
}

// AddAppTool registers a typed tool like [AddTool] whose _meta.ui is ui:
// the view its results are shown in (ui.ResourceURI) and who may call it
// (ui.Visibility; nil means the model and the app). The deprecated flat
// key ui/resourceUri is written beside _meta.ui for hosts that read only
// it, and the server declares the apps extension.
//
// It refuses, with an error naming the mistake, a view URI that is not
// ui:// (wrapping apps.ErrNotUIURI), a visibility the specification does
// not define (apps.ErrVisibility), and a ui that names neither a view nor
// a visibility. That the view is registered is checked when the server
// starts serving (see [Server.Check]), so that tools and views may be
// registered in any order; once it serves, here.
//
// The tool's result should keep both audiences: return an [AppResult],
// whose Text is what the model reads (and all a host without apps shows)
// and whose Data is the structuredContent the view renders.
//
// An app-only tool (ui.Visibility is [apps.VisibilityApp]) is listed to
// clients that render apps, whose host keeps it from the model and lets
// the view call it, and left out of the tools/list of clients that do not
// (they have no view to call it from, and would show it to their model);
// a tools/call of it is served whoever sends it.
func AddAppTool[In, Out any](s *Server, t *mcp.Tool, ui apps.ToolMeta, h ToolHandler[In, Out], questions ...Dependency) error {
	if t == nil {
		return errors.New("mcpserver: AddAppTool needs a tool")
	}
	if err := ui.Check(); err != nil {
		return fmt.Errorf("mcpserver: app tool %q: %w", t.Name, err)
	}
	if ui.ResourceURI == "" && ui.Visibility == nil {
		return fmt.Errorf("mcpserver: app tool %q names neither a view (ResourceURI) nor a visibility; register it with AddTool", t.Name)
	}
	ui.Visibility = slices.Clone(ui.Visibility)
	def := *t
	def.Meta = apps.SetToolMeta(t.Meta, ui)
	if s.apps.serving.Load() && ui.ResourceURI != "" {
		if err := s.checkView(def.Name, ui.ResourceURI); err != nil {
			return err
		}
	}
	if err := s.enableApps(); err != nil {
		return err
	}
	return addTool(s, &def, taskNever, nil, h, questions)
}

// AppResult is the result of an app tool for its two audiences: Text for
// the model (and for hosts that do not render apps), Data for the view,
// as structuredContent. A tool that returns AppResult[T] advertises the
// output schema inferred from T.
type AppResult[T any] struct {
	// Text is the result's text content. Empty means Data's JSON, which
	// a model can read but seldom reads well: say what the view shows.
	Text string
	// Data is the result's structuredContent, the view's input. It should
	// encode as a JSON object (a struct or a map).
	Data T
}

// appResult is implemented by every AppResult[T].
type appResult interface {
	callToolResult() (*mcp.CallToolResult, error)
	dataType() reflect.Type
}

var appResultType = reflect.TypeFor[appResult]()

func (r AppResult[T]) callToolResult() (*mcp.CallToolResult, error) {
	raw, err := json.Marshal(r.Data)
	if err != nil {
		return nil, fmt.Errorf("encoding its structured content: %w", err)
	}
	text := r.Text
	if text == "" {
		text = string(raw)
	}
	res := &mcp.CallToolResult{Content: []mcp.ContentBlock{&mcp.TextContent{Text: text}}}
	if string(raw) != "null" {
		res.StructuredContent = json.RawMessage(raw)
	}
	return res, nil
}

func (AppResult[T]) dataType() reflect.Type { return reflect.TypeFor[T]() }

// structuredType is the type whose output schema a tool returning t
// advertises: t itself, or T for an AppResult[T].
func structuredType(t reflect.Type) reflect.Type {
	if !t.Implements(appResultType) {
		return t
	}
	if t.Kind() == reflect.Pointer {
		return reflect.New(t.Elem()).Interface().(appResult).dataType()
	}
	return reflect.Zero(t).Interface().(appResult).dataType()
}

// appOutcome is the result of a body that returned an AppResult (or a
// pointer to one).
func appOutcome(name string, r appResult) (mcp.CallToolOutcome, error) {
	if rv := reflect.ValueOf(r); rv.Kind() == reflect.Pointer && rv.IsNil() {
		return nil, errNilResult(name)
	}
	res, err := r.callToolResult()
	if err != nil {
		return nil, fmt.Errorf("mcpserver: tool %q: %w", name, err)
	}
	return res, nil
}

// RendersApps reports whether the client that sent this call renders app
// views: under 2026-07-28 by the capabilities on the request, on a
// 2025-era session by those of its initialize (apps.RendersApps). A body
// that finds false may skip work only its view would show; its result's
// text is all such a client shows.
func (c *Call) RendersApps() bool { return apps.RendersApps(c.Request) }

// appsState is the apps extension's part of a Server.
type appsState struct {
	once    sync.Once
	err     error
	enabled atomic.Bool // the extension is declared: a view or an app tool was registered
	serving atomic.Bool // Check ran for a transport: app tools are checked as they come
}

// enableApps makes the server declare the extension, once.
func (s *Server) enableApps() error {
	s.apps.once.Do(func() {
		if err := apps.Enable(s.low); err != nil {
			s.apps.err = fmt.Errorf("mcpserver: enabling apps: %w", err)
			return
		}
		s.apps.enabled.Store(true)
	})
	return s.apps.err
}

// toolApp returns the _meta.ui of a tool definition, or nil: the typed
// value AddAppTool puts there, or one written by hand (a map) that
// decodes and checks.
func toolApp(t *mcp.Tool) *apps.ToolMeta {
	switch v := t.Meta[apps.MetaKey].(type) {
	case nil:
		return nil
	case apps.ToolMeta:
		return &v
	}
	m, ok, err := apps.ToolMetaOf(t)
	if !ok || err != nil {
		return nil
	}
	return &m
}

// toolFilter returns what tools/list keeps for req: all but the app-only
// tools, for a client that does not render apps; nil when it keeps all
// (and on a server without apps, at no cost).
func (s *Server) toolFilter(req *server.Request) func(*toolEntry) bool {
	if !s.apps.enabled.Load() || apps.RendersApps(req) {
		return nil
	}
	return func(e *toolEntry) bool { return e.app == nil || !e.app.AppOnly() }
}

// Check reports the registration mistakes that only the whole server
// shows: an app tool whose view (apps.ToolMeta.ResourceURI) is not a
// registered resource, or one that is not a view (its MIME type is not
// apps.MIMEType). Each wraps [ErrUnknownView]; all are joined.
//
// ServeConn and the transport of InMemoryTransport return its error
// instead of serving, and HTTPHandler panics with it, as http.ServeMux
// panics on a conflicting pattern: call Check first to handle it. From
// then on, AddAppTool checks each tool's view as it registers the tool.
func (s *Server) Check() error {
	if !s.apps.enabled.Load() {
		return nil // no app tool: nothing to check, at no cost
	}
	s.mu.RLock()
	tools := s.tools.list()
	s.mu.RUnlock()
	var errs []error
	for _, e := range tools {
		if e.app != nil && e.app.ResourceURI != "" {
			if err := s.checkView(e.tool.Name, e.app.ResourceURI); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// checkView reports whether the view uri of the tool name is registered.
func (s *Server) checkView(name, uri string) error {
	s.mu.RLock()
	r, ok := s.resources.get(uri)
	s.mu.RUnlock()
	switch {
	case !ok:
		return fmt.Errorf("%w: tool %q names the view %q; register it with AddView", ErrUnknownView, name, uri)
	case !strings.EqualFold(r.resource.MIMEType, apps.MIMEType):
		return fmt.Errorf("%w: tool %q names %q, a resource of MIME type %q, not a view (%s)", ErrUnknownView, name, uri, r.resource.MIMEType, apps.MIMEType)
	}
	return nil
}

// startServing runs Check before a transport serves, and from then on
// has AddAppTool check each tool's view at once.
func (s *Server) startServing() error {
	if err := s.Check(); err != nil {
		return err
	}
	s.apps.serving.Store(true)
	return nil
}
