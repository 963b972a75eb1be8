package server

import (
	"context"

	"github.com/parley-mcp/parley/mcp"
)

// Handler serves one request after its params and _meta have been decoded
// and checked. Middleware wraps Handlers; see [Server.Use].
//
// The result is one of the mcp result types (for example
// *mcp.ListToolsResult, *mcp.CallToolResult or *mcp.InputRequiredResult).
type Handler func(ctx context.Context, req *Request) (mcp.AnyResult, error)

// Middleware wraps a Handler with behaviour around every request: logging,
// metrics, authorization, or the requestState boundary.
type Middleware func(next Handler) Handler

// The typed handler slots, one per method of protocol version 2026-07-28.
type (
	// ListToolsHandler serves tools/list.
	ListToolsHandler func(ctx context.Context, req *Request, p *mcp.PaginatedRequestParams) (*mcp.ListToolsResult, error)
	// CallToolHandler serves tools/call. It returns either a
	// *mcp.CallToolResult or an *mcp.InputRequiredResult.
	CallToolHandler func(ctx context.Context, req *Request, p *mcp.CallToolRequestParams) (mcp.CallToolOutcome, error)
	// ListPromptsHandler serves prompts/list.
	ListPromptsHandler func(ctx context.Context, req *Request, p *mcp.PaginatedRequestParams) (*mcp.ListPromptsResult, error)
	// GetPromptHandler serves prompts/get. It returns either a
	// *mcp.GetPromptResult or an *mcp.InputRequiredResult.
	GetPromptHandler func(ctx context.Context, req *Request, p *mcp.GetPromptRequestParams) (mcp.GetPromptOutcome, error)
	// ListResourcesHandler serves resources/list.
	ListResourcesHandler func(ctx context.Context, req *Request, p *mcp.PaginatedRequestParams) (*mcp.ListResourcesResult, error)
	// ListResourceTemplatesHandler serves resources/templates/list.
	ListResourceTemplatesHandler func(ctx context.Context, req *Request, p *mcp.PaginatedRequestParams) (*mcp.ListResourceTemplatesResult, error)
	// ReadResourceHandler serves resources/read. It returns either a
	// *mcp.ReadResourceResult or an *mcp.InputRequiredResult. An unknown
	// URI should be answered with [ResourceNotFound].
	ReadResourceHandler func(ctx context.Context, req *Request, p *mcp.ReadResourceRequestParams) (mcp.ReadResourceOutcome, error)
	// CompleteHandler serves completion/complete.
	CompleteHandler func(ctx context.Context, req *Request, p *mcp.CompleteRequestParams) (*mcp.CompleteResult, error)
)

type handlers struct {
	listTools             ListToolsHandler
	callTool              CallToolHandler
	listPrompts           ListPromptsHandler
	getPrompt             GetPromptHandler
	listResources         ListResourcesHandler
	listResourceTemplates ListResourceTemplatesHandler
	readResource          ReadResourceHandler
	complete              CompleteHandler
}

// set registers h under the lock and rebuilds the dispatch chain.
func (s *Server) set(f func(*handlers)) {
	s.mu.Lock()
	f(&s.handlers)
	s.mu.Unlock()
	s.rebuild()
}

// HandleListTools sets the tools/list handler. Registering it, or the
// tools/call handler, makes the server declare the tools capability.
func (s *Server) HandleListTools(h ListToolsHandler) { s.set(func(hs *handlers) { hs.listTools = h }) }

// HandleCallTool sets the tools/call handler.
func (s *Server) HandleCallTool(h CallToolHandler) { s.set(func(hs *handlers) { hs.callTool = h }) }

// HandleListPrompts sets the prompts/list handler. Registering it, or the
// prompts/get handler, makes the server declare the prompts capability.
func (s *Server) HandleListPrompts(h ListPromptsHandler) {
	s.set(func(hs *handlers) { hs.listPrompts = h })
}

// HandleGetPrompt sets the prompts/get handler.
func (s *Server) HandleGetPrompt(h GetPromptHandler) { s.set(func(hs *handlers) { hs.getPrompt = h }) }

// HandleListResources sets the resources/list handler. Registering any
// resources handler makes the server declare the resources capability.
func (s *Server) HandleListResources(h ListResourcesHandler) {
	s.set(func(hs *handlers) { hs.listResources = h })
}

// HandleListResourceTemplates sets the resources/templates/list handler.
func (s *Server) HandleListResourceTemplates(h ListResourceTemplatesHandler) {
	s.set(func(hs *handlers) { hs.listResourceTemplates = h })
}

// HandleReadResource sets the resources/read handler.
func (s *Server) HandleReadResource(h ReadResourceHandler) {
	s.set(func(hs *handlers) { hs.readResource = h })
}

// HandleComplete sets the completion/complete handler and makes the server
// declare the completions capability.
func (s *Server) HandleComplete(h CompleteHandler) { s.set(func(hs *handlers) { hs.complete = h }) }

// Use appends middleware. The first middleware added is the outermost: it
// sees every request first and every result last. A StateSealer's step
// (SealState) runs outside all of them, so every middleware sees plaintext
// requestState.
func (s *Server) Use(mw ...Middleware) {
	s.mu.Lock()
	s.middleware = append(s.middleware, mw...)
	s.mu.Unlock()
	s.rebuild()
}

// rebuild wraps the method router in the middleware chain, and the chain
// in the sealing step, which is outermost whatever the order of Use and
// SealState calls.
func (s *Server) rebuild() {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := Handler(s.route)
	for i := len(s.middleware) - 1; i >= 0; i-- {
		h = s.middleware[i](h)
	}
	if s.sealer != nil {
		h = s.sealStep(s.sealer, h)
	}
	s.chain = h
}

// capabilities derives what the server declares from its handlers.
func (s *Server) capabilities() *mcp.ServerCapabilities {
	if s.opts.Capabilities != nil {
		return s.opts.Capabilities
	}
	s.mu.RLock()
	hs := s.handlers
	s.mu.RUnlock()
	caps := &mcp.ServerCapabilities{Logging: &struct{}{}}
	if hs.listTools != nil || hs.callTool != nil {
		caps.Tools = &mcp.ToolsCapability{ListChanged: true}
	}
	if hs.listPrompts != nil || hs.getPrompt != nil {
		caps.Prompts = &mcp.PromptsCapability{ListChanged: true}
	}
	if hs.listResources != nil || hs.listResourceTemplates != nil || hs.readResource != nil {
		caps.Resources = &mcp.ResourcesCapability{ListChanged: true, Subscribe: true}
	}
	if hs.complete != nil {
		caps.Completions = &struct{}{}
	}
	caps.Extensions = s.declaredExtensions()
	return caps
}
