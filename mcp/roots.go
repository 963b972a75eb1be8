package mcp

// Roots let a server ask which directories or files the client wants it to
// work within. Under 2026-07-28 the request travels inside an
// InputRequiredResult. The feature is deprecated but still functional.

// ListRootsRequest asks the client for its roots (roots/list). Under
// 2026-07-28 it is embedded in [InputRequests]: it has no jsonrpc or id
// member.
type ListRootsRequest struct {
	// Params are optional.
	Params *ListRootsRequestParams
}

// ListRootsRequestParams are the optional params of roots/list.
//
//mcp:json
type ListRootsRequestParams struct {
	// Meta is the params' _meta.
	Meta MetaObject `json:"_meta,omitempty"`
}

// NewListRootsRequest returns a roots/list request.
func NewListRootsRequest() *ListRootsRequest { return &ListRootsRequest{} }

// Method returns "roots/list".
func (*ListRootsRequest) Method() string { return MethodListRoots }

// Root is a directory or file the client lets the server work within.
//
//mcp:json
type Root struct {
	// URI identifies the root; it must be a file:// URI.
	URI string `json:"uri"`
	// Name is a display name.
	Name string `json:"name,omitempty"`
	// Meta is the root's _meta.
	Meta MetaObject `json:"_meta,omitempty"`
}

// ListRootsResult is the client's answer to roots/list. Under 2026-07-28 it
// travels in inputResponses and is not a Result (it has no resultType).
//
//mcp:json nonnil=Roots
type ListRootsResult struct {
	// Roots are the client's roots. A nil Roots is written as [].
	Roots []Root `json:"roots"`
	// Meta is the result's _meta (legacy sessions).
	Meta MetaObject `json:"_meta,omitempty"`
}
