package mcp

// Wire types of the legacy era (2025-11-25 and earlier) that 2026-07-28
// removed: the initialize handshake, logging/setLevel and resource
// subscriptions. A dual-era server serves them on legacy sessions; a
// dual-era client sends them when it talks to a legacy server. Every other
// method keeps its 2026-07-28 params and result types on a legacy session:
// their _meta then carries at most a progress token, and results carry no
// resultType.

// InitializeRequestParams are the params of initialize, the first request
// of a legacy session.
type InitializeRequestParams struct {
	// Meta is the request's _meta (a progress token at most).
	Meta *RequestMetaObject `json:"_meta,omitempty"`
	// ProtocolVersion is the newest version the client speaks. The server
	// answers with it, or with another version it prefers.
	ProtocolVersion ProtocolVersion `json:"protocolVersion"`
	// Capabilities are the client's capabilities for the whole session.
	Capabilities ClientCapabilities `json:"capabilities"`
	// ClientInfo identifies the client software.
	ClientInfo Implementation `json:"clientInfo"`
}

// RequestMeta returns the params' _meta, allocating it if needed.
func (p *InitializeRequestParams) RequestMeta() *RequestMetaObject { return requestMeta(&p.Meta) }

// InitializeResult is the server's answer to initialize: the version the
// session speaks and what the server offers.
type InitializeResult struct {
	Result
	// ProtocolVersion is the version the session speaks. A client that
	// does not speak it must disconnect.
	ProtocolVersion ProtocolVersion `json:"protocolVersion"`
	// Capabilities are the server's capabilities for the whole session.
	Capabilities ServerCapabilities `json:"capabilities"`
	// ServerInfo identifies the server software.
	ServerInfo Implementation `json:"serverInfo"`
	// Instructions tell the client how to use the server.
	Instructions string `json:"instructions,omitempty"`
}

// SetLevelRequestParams are the params of logging/setLevel: from now on,
// send the session notifications/message at Level and above.
type SetLevelRequestParams struct {
	// Meta is the request's _meta (a progress token at most).
	Meta *RequestMetaObject `json:"_meta,omitempty"`
	// Level is the least severe level the client wants.
	Level LoggingLevel `json:"level"`
}

// RequestMeta returns the params' _meta, allocating it if needed.
func (p *SetLevelRequestParams) RequestMeta() *RequestMetaObject { return requestMeta(&p.Meta) }

// SubscribeRequestParams are the params of resources/subscribe and
// resources/unsubscribe.
type SubscribeRequestParams struct {
	// Meta is the request's _meta (a progress token at most).
	Meta *RequestMetaObject `json:"_meta,omitempty"`
	// URI names the resource to (un)subscribe.
	URI string `json:"uri"`
}

// RequestMeta returns the params' _meta, allocating it if needed.
func (p *SubscribeRequestParams) RequestMeta() *RequestMetaObject { return requestMeta(&p.Meta) }

// UnsubscribeRequestParams are the params of resources/unsubscribe.
type UnsubscribeRequestParams = SubscribeRequestParams
