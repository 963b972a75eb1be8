package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"

	"github.com/parley-mcp/parley/mcp"
)

// ErrInputRequired matches the errors of a call whose server asked for
// input the client cannot give: a *MissingCallbackError or an
// *UndeclaredCapabilityError.
var ErrInputRequired = errors.New("client: the server asked for input (input_required)")

// decodeComplete decodes a result that must be complete: a missing
// resultType counts as complete, anything else but "complete" is an invalid
// response.
func decodeComplete[R any](method string, raw json.RawMessage) (*R, error) {
	rt, err := mcp.ParseResultType(raw)
	if err != nil {
		return nil, &InvalidResponseError{Method: method, Err: err}
	}
	if rt != mcp.ResultTypeComplete {
		return nil, &InvalidResponseError{Method: method, Err: fmt.Errorf("resultType %q is not allowed here", rt)}
	}
	r := new(R)
	if err := json.Unmarshal(raw, r); err != nil {
		return nil, &InvalidResponseError{Method: method, Err: err}
	}
	return r, nil
}

// Discover asks the server which protocol versions and capabilities it
// has (server/discover). The result also becomes what ServerInfo and
// ServerCapabilities report. A serverInfo sent at the top level of the
// result, where drafts of 2026-07-28 had it, is moved into its _meta.
//
// While a result the server marked cacheable (ttlMs) is fresh, Discover
// returns it from the session's cache without a request (Options.Cache).
//
// A legacy session sends nothing: a legacy server has no server/discover,
// and what it said in initialize holds for the whole session. Discover
// returns that answer in this shape instead: the session's version as the
// only supported one, the server's capabilities, instructions and info.
func (s *Session) Discover(ctx context.Context) (*mcp.DiscoverResult, error) {
	if s.legacy.Load() {
		return s.legacyDiscover()
	}
	p := &mcp.RequestParams{}
	raw, err := s.cachedCall(ctx, mcp.MethodDiscover, "", p, func(m *mcp.RequestMetaObject) { p.Meta = m })
	if err != nil {
		return nil, err
	}
	d, err := decodeComplete[mcp.DiscoverResult](mcp.MethodDiscover, raw)
	if err != nil {
		return nil, err
	}
	if d.Meta == nil || d.Meta.ServerInfo == nil {
		var legacy struct {
			ServerInfo *mcp.Implementation `json:"serverInfo"`
		}
		if json.Unmarshal(raw, &legacy) == nil && legacy.ServerInfo != nil {
			if d.Meta == nil {
				d.Meta = &mcp.ResultMetaObject{}
			}
			d.Meta.ServerInfo = legacy.ServerInfo
		}
	}
	s.discovered.Store(d)
	return d, nil
}

// ListTools returns one page of tools; cursor "" is the first page. On a
// legacy session, the tools' annotations decide which tool calls are sent
// again on a new session when the server loses this one (see
// Options.DisableRecovery).
func (s *Session) ListTools(ctx context.Context, cursor string) (*mcp.ListToolsResult, error) {
	r, err := list[mcp.ListToolsResult](ctx, s, mcp.MethodListTools, cursor)
	if err == nil && s.legacy.Load() {
		s.noteTools(r.Tools)
	}
	return r, err
}

// ListPrompts returns one page of prompts; cursor "" is the first page.
func (s *Session) ListPrompts(ctx context.Context, cursor string) (*mcp.ListPromptsResult, error) {
	return list[mcp.ListPromptsResult](ctx, s, mcp.MethodListPrompts, cursor)
}

// ListResources returns one page of resources; cursor "" is the first page.
func (s *Session) ListResources(ctx context.Context, cursor string) (*mcp.ListResourcesResult, error) {
	return list[mcp.ListResourcesResult](ctx, s, mcp.MethodListResources, cursor)
}

// ListResourceTemplates returns one page of resource templates; cursor ""
// is the first page.
func (s *Session) ListResourceTemplates(ctx context.Context, cursor string) (*mcp.ListResourceTemplatesResult, error) {
	return list[mcp.ListResourceTemplatesResult](ctx, s, mcp.MethodListResourceTemplates, cursor)
}

func list[R any](ctx context.Context, s *Session, method, cursor string) (*R, error) {
	p := &mcp.PaginatedRequestParams{Cursor: cursor}
	raw, err := s.cachedCall(ctx, method, cursor, p, func(m *mcp.RequestMetaObject) { p.Meta = m })
	if err != nil {
		return nil, err
	}
	return decodeComplete[R](method, raw)
}

// Tools iterates over every tool of every page. The iteration stops at the
// first error, which it yields.
func (s *Session) Tools(ctx context.Context) iter.Seq2[*mcp.Tool, error] {
	return pages(ctx, s.ListTools, func(r *mcp.ListToolsResult) ([]mcp.Tool, string) { return r.Tools, r.NextCursor })
}

// Prompts iterates over every prompt of every page.
func (s *Session) Prompts(ctx context.Context) iter.Seq2[*mcp.Prompt, error] {
	return pages(ctx, s.ListPrompts, func(r *mcp.ListPromptsResult) ([]mcp.Prompt, string) { return r.Prompts, r.NextCursor })
}

// Resources iterates over every resource of every page.
func (s *Session) Resources(ctx context.Context) iter.Seq2[*mcp.Resource, error] {
	return pages(ctx, s.ListResources, func(r *mcp.ListResourcesResult) ([]mcp.Resource, string) { return r.Resources, r.NextCursor })
}

// ResourceTemplates iterates over every resource template of every page.
func (s *Session) ResourceTemplates(ctx context.Context) iter.Seq2[*mcp.ResourceTemplate, error] {
	return pages(ctx, s.ListResourceTemplates, func(r *mcp.ListResourceTemplatesResult) ([]mcp.ResourceTemplate, string) {
		return r.ResourceTemplates, r.NextCursor
	})
}

// maxPages bounds a list iteration, so a server that hands out cursors
// forever cannot keep a caller looping.
const maxPages = 10000

// pages iterates over the items of every page, fetching a page only when the
// previous one has been consumed. A cursor the server hands out a second
// time would start a cycle, so it ends the iteration with an error.
func pages[R any, T any](ctx context.Context, fetch func(context.Context, string) (*R, error), items func(*R) ([]T, string)) iter.Seq2[*T, error] {
	return func(yield func(*T, error) bool) {
		var zero *T
		cursor := ""
		seen := make(map[string]struct{})
		for range maxPages {
			page, err := fetch(ctx, cursor)
			if err != nil {
				yield(zero, err)
				return
			}
			list, next := items(page)
			for i := range list {
				if !yield(&list[i], nil) {
					return
				}
			}
			if next == "" {
				return
			}
			if _, dup := seen[next]; dup {
				yield(zero, &InvalidResponseError{Method: listMethod[R](), Err: fmt.Errorf("the server returned cursor %q a second time", next)})
				return
			}
			seen[next] = struct{}{}
			cursor = next
		}
		yield(zero, fmt.Errorf("client: %s: more than %d pages", listMethod[R](), maxPages))
	}
}

// listMethod names the list method whose result type is R.
func listMethod[R any]() string {
	switch any((*R)(nil)).(type) {
	case *mcp.ListToolsResult:
		return mcp.MethodListTools
	case *mcp.ListPromptsResult:
		return mcp.MethodListPrompts
	case *mcp.ListResourcesResult:
		return mcp.MethodListResources
	case *mcp.ListResourceTemplatesResult:
		return mcp.MethodListResourceTemplates
	}
	return "list"
}

// CallTool calls a tool and returns its complete result. args is anything
// that encodes as a JSON object (a map or a struct), or nil for none. A tool
// that failed reports it in the result (IsError), not as an error.
//
// When the server needs input first, CallTool runs the multi-round-trip
// loop: it answers each round's input requests with the client's callbacks
// (Options.Elicit, Sample, ListRoots), repeats the call with the answers and
// the server's requestState, and returns only the final result. See
// Options.Loop for its limits, and Begin/Continue to drive it yourself.
//
// On a legacy session the server asks with requests of its own while the
// call is in flight, and the same callbacks answer them: the caller sees
// the same final result. An input_required result there is a protocol
// violation (*InvalidResponseError).
func (s *Session) CallTool(ctx context.Context, name string, args any) (*mcp.CallToolResult, error) {
	call, err := ToolCall(name, args)
	if err != nil {
		return nil, err
	}
	res, err := s.run(ctx, call)
	if err != nil {
		return nil, err
	}
	if t, ok := res.(*mcp.CreateTaskResult); ok && s.declaresTasks() {
		return s.awaitTask(ctx, call, t)
	}
	r, ok := res.(*mcp.CallToolResult)
	if !ok {
		// A task: the server created one although this client declared
		// no tasks extension, which the extension forbids.
		rt := string(res.ResultHeader().ResultType)
		return nil, &InvalidResponseError{Method: mcp.MethodCallTool,
			Err: fmt.Errorf("%w (the client did not declare %s)", &mcp.UnknownResultTypeError{Value: rt}, mcp.ExtensionTasks)}
	}
	return r, nil
}

// GetPrompt gets a prompt with its arguments, running the multi-round-trip
// loop like CallTool when the server needs input first.
func (s *Session) GetPrompt(ctx context.Context, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	res, err := s.run(ctx, PromptCall(name, args))
	if err != nil {
		return nil, err
	}
	return res.(*mcp.GetPromptResult), nil
}

// ReadResource reads a resource, running the multi-round-trip loop like
// CallTool when the server needs input first.
func (s *Session) ReadResource(ctx context.Context, uri string) (*mcp.ReadResourceResult, error) {
	res, err := s.run(ctx, ResourceCall(uri))
	if err != nil {
		return nil, err
	}
	return res.(*mcp.ReadResourceResult), nil
}

// Complete asks for completions of a prompt or resource-template argument.
func (s *Session) Complete(ctx context.Context, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error) {
	if p == nil {
		return nil, errors.New("client: Complete needs params")
	}
	c := *p
	raw, err := s.call(ctx, mcp.MethodComplete, &c, func(m *mcp.RequestMetaObject) { c.Meta = m })
	if err != nil {
		return nil, err
	}
	return decodeComplete[mcp.CompleteResult](mcp.MethodComplete, raw)
}
