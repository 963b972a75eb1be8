package mcp

import "errors"

// CompleteRequestParams are the params of completion/complete: suggest
// values for one argument of a prompt or resource template.
//
//mcp:json
type CompleteRequestParams struct {
	// Meta is the request's _meta: protocol version, client capabilities
	// and the rest. A 2026-07-28 request must carry it; legacy requests may
	// omit it (nil).
	Meta *RequestMetaObject `json:"_meta,omitempty"`
	// Ref names the prompt or resource template: *PromptReference or
	// *ResourceTemplateReference.
	Ref CompleteReference `json:"ref"`
	// Argument is the argument being completed and its partial value.
	Argument CompleteArgument `json:"argument"`
	// Context holds arguments already resolved, if any.
	Context *CompleteContext `json:"context,omitempty"`
}

// RequestMeta returns the params' _meta, allocating it if needed.
func (p *CompleteRequestParams) RequestMeta() *RequestMetaObject { return requestMeta(&p.Meta) }

// CompleteArgument is the argument being completed.
//
//mcp:json
type CompleteArgument struct {
	// Name is the argument's name.
	Name string `json:"name"`
	// Value is what the user has typed so far.
	Value string `json:"value"`
}

// CompleteContext carries arguments already resolved.
//
//mcp:json
type CompleteContext struct {
	// Arguments maps argument names to their values.
	Arguments map[string]string `json:"arguments,omitempty"`
}

// CompleteReference names what is being completed: *PromptReference or
// *ResourceTemplateReference. The interface is sealed.
type CompleteReference interface {
	isCompleteReference()
}

// PromptReference names a prompt. It writes its own "type":"ref/prompt".
//
//mcp:json type=ref/prompt unknown=ErrUnknownReference
type PromptReference struct {
	// Name is the prompt's name.
	Name string `json:"name"`
	// Title is a display name.
	Title string `json:"title,omitempty"`
}

// ResourceTemplateReference names a resource template. It writes its own
// "type":"ref/resource".
//
//mcp:json type=ref/resource unknown=ErrUnknownReference
type ResourceTemplateReference struct {
	// URI is the template, such as "file:///{path}".
	URI string `json:"uri"`
}

func (*PromptReference) isCompleteReference()           {}
func (*ResourceTemplateReference) isCompleteReference() {}

// ErrUnknownReference is matched by the error for a completion reference
// whose "type" is neither ref/prompt nor ref/resource.
var ErrUnknownReference = errors.New("mcp: unknown completion reference type")

// CompleteResult answers completion/complete.
//
//mcp:json
type CompleteResult struct {
	Result
	// Completion holds the suggestions.
	Completion Completion `json:"completion"`
}

// Completion holds completion suggestions.
//
//mcp:json nonnil=Values
type Completion struct {
	// Values are the suggestions, at most 100. A nil Values is written as [].
	Values []string `json:"values"`
	// Total is the number of suggestions available, when known (0 is not
	// sent).
	Total int `json:"total,omitempty"`
	// HasMore is set when there are more suggestions than Values holds.
	// False is not sent.
	HasMore bool `json:"hasMore,omitempty"`
}
