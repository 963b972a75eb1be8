package mcp

import "encoding/json"

// DiscoverResult answers server/discover: the versions the server speaks,
// its capabilities and instructions. It is cacheable. The server's identity
// travels in _meta (io.modelcontextprotocol/serverInfo), not in the body.
//
//mcp:json nonnil=SupportedVersions
type DiscoverResult struct {
	CacheableResult
	// SupportedVersions lists every protocol version the server accepts,
	// possibly including legacy ones.
	SupportedVersions []ProtocolVersion `json:"supportedVersions"`
	// Capabilities says which optional features the server offers.
	Capabilities ServerCapabilities `json:"capabilities"`
	// Instructions tell a model how to use the server.
	Instructions string `json:"instructions,omitempty"`
}

// ClientCapabilities are the optional features a client supports. Under
// 2026-07-28 they are declared on every request (in _meta) and hold for that
// request only. A nil pointer field means "not supported"; a pointer to an
// empty struct is sent as {} and means "supported".
//
//mcp:json
type ClientCapabilities struct {
	// Experimental holds non-standard capabilities, raw.
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	// Roots is present if the client can list roots (deprecated feature).
	Roots *RootsCapability `json:"roots,omitempty"`
	// Sampling is present if the client can sample an LLM (deprecated
	// feature).
	Sampling *SamplingCapability `json:"sampling,omitempty"`
	// Elicitation is present if the client can ask its user for input.
	Elicitation *ElicitationCapability `json:"elicitation,omitempty"`
	// Extensions lists the MCP extensions the client supports, keyed by
	// extension id (such as "io.modelcontextprotocol/ui"), with each
	// extension's settings raw; {} means "supported, no settings".
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// RootsCapability declares support for roots/list.
//
//mcp:json
type RootsCapability struct {
	// ListChanged is the legacy (2025-11-25 and earlier) flag for
	// notifications/roots/list_changed; 2026-07-28 has no such notification.
	ListChanged bool `json:"listChanged,omitempty"`
}

// SamplingCapability declares support for sampling/createMessage.
//
//mcp:json
type SamplingCapability struct {
	// Context is present if the client honours includeContext values other
	// than "none" (deprecated).
	Context *struct{} `json:"context,omitempty"`
	// Tools is present if the client accepts tools and toolChoice.
	Tools *struct{} `json:"tools,omitempty"`
}

// ElicitationCapability declares support for elicitation/create. An empty
// value ({}) means form mode only.
//
//mcp:json
type ElicitationCapability struct {
	// Form is present if the client supports form mode.
	Form *struct{} `json:"form,omitempty"`
	// URL is present if the client supports URL mode.
	URL *struct{} `json:"url,omitempty"`
}

// SupportsForm reports whether form mode is declared: explicitly, or by an
// elicitation capability that names no mode at all.
func (e *ElicitationCapability) SupportsForm() bool {
	return e != nil && (e.Form != nil || e.URL == nil)
}

// SupportsURL reports whether URL mode is declared.
func (e *ElicitationCapability) SupportsURL() bool { return e != nil && e.URL != nil }

func isObject(raw []byte) bool { return jsonKind(raw) == '{' }

// ServerCapabilities are the optional features a server offers, returned by
// server/discover (and by initialize on legacy sessions).
//
//mcp:json
type ServerCapabilities struct {
	// Experimental holds non-standard capabilities, raw.
	Experimental map[string]json.RawMessage `json:"experimental,omitempty"`
	// Logging is present if the server sends notifications/message
	// (deprecated feature).
	Logging *struct{} `json:"logging,omitempty"`
	// Completions is present if the server answers completion/complete.
	Completions *struct{} `json:"completions,omitempty"`
	// Prompts is present if the server offers prompts.
	Prompts *PromptsCapability `json:"prompts,omitempty"`
	// Resources is present if the server offers resources.
	Resources *ResourcesCapability `json:"resources,omitempty"`
	// Tools is present if the server offers tools.
	Tools *ToolsCapability `json:"tools,omitempty"`
	// Extensions lists the MCP extensions the server supports, keyed by
	// extension id (such as "io.modelcontextprotocol/tasks"), settings raw.
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// PromptsCapability declares that a server offers prompts.
//
//mcp:json
type PromptsCapability struct {
	// ListChanged is set if the server sends
	// notifications/prompts/list_changed.
	ListChanged bool `json:"listChanged,omitempty"`
}

// ResourcesCapability declares that a server offers resources.
//
//mcp:json
type ResourcesCapability struct {
	// Subscribe is set if the server sends notifications/resources/updated
	// for resources named in a subscription filter.
	Subscribe bool `json:"subscribe,omitempty"`
	// ListChanged is set if the server sends
	// notifications/resources/list_changed.
	ListChanged bool `json:"listChanged,omitempty"`
}

// ToolsCapability declares that a server offers tools.
//
//mcp:json
type ToolsCapability struct {
	// ListChanged is set if the server sends notifications/tools/list_changed.
	ListChanged bool `json:"listChanged,omitempty"`
}
