package mcp

import "errors"

// Resource is a piece of data a server exposes under a URI, as listed by
// resources/list.
//
//mcp:json
type Resource struct {
	// URI identifies the resource.
	URI string `json:"uri"`
	// Name is the resource's programmatic name.
	Name string `json:"name"`
	// Title is a display name.
	Title string `json:"title,omitempty"`
	// Description says what the resource is.
	Description string `json:"description,omitempty"`
	// MIMEType is the resource's type, if known.
	MIMEType string `json:"mimeType,omitempty"`
	// Size is the raw size in bytes, if known (0 is not sent).
	Size int64 `json:"size,omitempty"`
	// Annotations are optional display hints.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Icons may be shown with the resource.
	Icons []Icon `json:"icons,omitempty"`
	// Meta is the resource's _meta.
	Meta MetaObject `json:"_meta,omitempty"`
}

// ResourceTemplate describes a family of resources by an RFC 6570 URI
// template, as listed by resources/templates/list.
//
//mcp:json
type ResourceTemplate struct {
	// URITemplate is the template, such as "file:///{path}".
	URITemplate string `json:"uriTemplate"`
	// Name is the template's programmatic name.
	Name string `json:"name"`
	// Title is a display name.
	Title string `json:"title,omitempty"`
	// Description says what the resources are.
	Description string `json:"description,omitempty"`
	// MIMEType is the type of every matching resource, if they share one.
	MIMEType string `json:"mimeType,omitempty"`
	// Annotations are optional display hints.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Icons may be shown with the template.
	Icons []Icon `json:"icons,omitempty"`
	// Meta is the template's _meta.
	Meta MetaObject `json:"_meta,omitempty"`
}

// ResourceContents is the contents of a resource, as read or embedded:
// *TextResourceContents or *BlobResourceContents (the schema's
// ResourceContents is their common part). The interface is sealed. Decode
// one with [DecodeResourceContents].
type ResourceContents interface {
	// ResourceURI returns the URI of the resource the contents belong to.
	ResourceURI() string
	isResourceContents()
}

// TextResourceContents is the contents of a text resource.
//
//mcp:json
type TextResourceContents struct {
	// URI identifies the resource.
	URI string `json:"uri"`
	// MIMEType is the resource's type, if known.
	MIMEType string `json:"mimeType,omitempty"`
	// Text is the contents.
	Text string `json:"text"`
	// Meta is the contents' _meta.
	Meta MetaObject `json:"_meta,omitempty"`
}

// BlobResourceContents is the contents of a binary resource.
//
//mcp:json
type BlobResourceContents struct {
	// URI identifies the resource.
	URI string `json:"uri"`
	// MIMEType is the resource's type, if known.
	MIMEType string `json:"mimeType,omitempty"`
	// Blob is the contents; it travels base64-encoded.
	Blob []byte `json:"blob"`
	// Meta is the contents' _meta.
	Meta MetaObject `json:"_meta,omitempty"`
}

// ResourceURI returns c.URI.
func (c *TextResourceContents) ResourceURI() string { return c.URI }

// ResourceURI returns c.URI.
func (c *BlobResourceContents) ResourceURI() string { return c.URI }

func (*TextResourceContents) isResourceContents() {}
func (*BlobResourceContents) isResourceContents() {}

// ErrUnknownResourceContents is matched by the error for resource contents
// that have neither "text" nor "blob".
var ErrUnknownResourceContents = errors.New("mcp: resource contents have neither text nor blob")

// ResourceRequestParams are the params of a request about one resource.
//
//mcp:json
type ResourceRequestParams struct {
	// Meta is the request's _meta: protocol version, client capabilities
	// and the rest. A 2026-07-28 request must carry it; legacy requests may
	// omit it (nil).
	Meta *RequestMetaObject `json:"_meta,omitempty"`
	// URI identifies the resource.
	URI string `json:"uri"`
}

// RequestMeta returns the params' _meta, allocating it if needed.
func (p *ResourceRequestParams) RequestMeta() *RequestMetaObject { return requestMeta(&p.Meta) }

// ReadResourceRequestParams are the params of resources/read, one of the
// three requests that may be answered with an [InputRequiredResult].
//
//mcp:json present=RequestState:ForceRequestState
type ReadResourceRequestParams struct {
	// Meta is the request's _meta: protocol version, client capabilities
	// and the rest. A 2026-07-28 request must carry it; legacy requests may
	// omit it (nil).
	Meta *RequestMetaObject `json:"_meta,omitempty"`
	// URI identifies the resource to read.
	URI string `json:"uri"`
	// InputResponses answer the inputRequests of the previous round.
	InputResponses InputResponses `json:"inputResponses,omitempty"`
	// RequestState echoes the previous round's requestState, byte for byte.
	// An empty one is sent only with ForceRequestState.
	RequestState string `json:"requestState,omitempty"`
	// ForceRequestState makes an empty RequestState present:
	// "requestState":"" is a state, not none. Decoding sets it exactly when
	// the member is present and empty. Read the state with
	// LookupRequestState to tell the two apart.
	ForceRequestState bool `json:"-"`
}

// RequestMeta returns the params' _meta, allocating it if needed.
func (p *ReadResourceRequestParams) RequestMeta() *RequestMetaObject { return requestMeta(&p.Meta) }

// Continuation returns pointers to the params' inputResponses and
// requestState; see [InputResponseParams]. The *string cannot say that an
// empty state is present: use LookupRequestState and SetRequestState.
func (p *ReadResourceRequestParams) Continuation() (*InputResponses, *string) {
	return &p.InputResponses, &p.RequestState
}

// LookupRequestState returns the requestState and whether it is present;
// see [RequestStateParams].
func (p *ReadResourceRequestParams) LookupRequestState() (string, bool) {
	return lookupState(p.RequestState, p.ForceRequestState)
}

// SetRequestState sets or removes the requestState; see
// [RequestStateParams].
func (p *ReadResourceRequestParams) SetRequestState(state string, present bool) {
	setState(&p.RequestState, &p.ForceRequestState, state, present)
}

// ReadResourceResult is the complete answer to resources/read. It is
// cacheable.
//
//mcp:json nonnil=Contents
type ReadResourceResult struct {
	CacheableResult
	// Contents are the resource's contents (a template read may yield
	// several).
	Contents []ResourceContents `json:"contents"`
}

// ListResourcesResult is a page of resources/list. It is cacheable.
//
//mcp:json nonnil=Resources
type ListResourcesResult struct {
	CacheableResult
	// Resources are this page's resources.
	Resources []Resource `json:"resources"`
	// NextCursor, when not empty, fetches the next page.
	NextCursor Cursor `json:"nextCursor,omitempty"`
}

// ListResourceTemplatesResult is a page of resources/templates/list. It is
// cacheable.
//
//mcp:json nonnil=ResourceTemplates
type ListResourceTemplatesResult struct {
	CacheableResult
	// ResourceTemplates are this page's templates.
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
	// NextCursor, when not empty, fetches the next page.
	NextCursor Cursor `json:"nextCursor,omitempty"`
}

// PaginatedRequestParams are the params of the list methods.
//
//mcp:json
type PaginatedRequestParams struct {
	// Meta is the request's _meta: protocol version, client capabilities
	// and the rest. A 2026-07-28 request must carry it; legacy requests may
	// omit it (nil).
	Meta *RequestMetaObject `json:"_meta,omitempty"`
	// Cursor, when not empty, asks for the page after the one whose
	// nextCursor it is.
	Cursor Cursor `json:"cursor,omitempty"`
}

// RequestMeta returns the params' _meta, allocating it if needed.
func (p *PaginatedRequestParams) RequestMeta() *RequestMetaObject { return requestMeta(&p.Meta) }
