package mcp

// Prompt describes a prompt template a server offers, as listed by
// prompts/list.
//
//mcp:json
type Prompt struct {
	// Name identifies the prompt in prompts/get.
	Name string `json:"name"`
	// Title is a display name.
	Title string `json:"title,omitempty"`
	// Description says what the prompt is for.
	Description string `json:"description,omitempty"`
	// Arguments are the arguments the template takes.
	Arguments []PromptArgument `json:"arguments,omitempty"`
	// Icons may be shown with the prompt.
	Icons []Icon `json:"icons,omitempty"`
	// Meta is the prompt's _meta.
	Meta MetaObject `json:"_meta,omitempty"`
}

// PromptArgument is one argument of a prompt template.
//
//mcp:json
type PromptArgument struct {
	// Name identifies the argument.
	Name string `json:"name"`
	// Title is a display name.
	Title string `json:"title,omitempty"`
	// Description says what the argument means.
	Description string `json:"description,omitempty"`
	// Required is set if the argument must be given.
	Required bool `json:"required,omitempty"`
}

// PromptMessage is one message of a rendered prompt.
//
//mcp:json
type PromptMessage struct {
	// Role is who says it.
	Role Role `json:"role"`
	// Content is what is said.
	Content ContentBlock `json:"content"`
}

// GetPromptRequestParams are the params of prompts/get, one of the three
// requests that may be answered with an [InputRequiredResult].
//
//mcp:json present=RequestState:ForceRequestState
type GetPromptRequestParams struct {
	// Meta is the request's _meta: protocol version, client capabilities
	// and the rest. A 2026-07-28 request must carry it; legacy requests may
	// omit it (nil).
	Meta *RequestMetaObject `json:"_meta,omitempty"`
	// Name is the prompt to render.
	Name string `json:"name"`
	// Arguments are the template's arguments. An argument sent as JSON
	// null decodes as absent, not as "": the schema allows only strings,
	// and a null cannot satisfy a required argument.
	Arguments map[string]string `json:"arguments,omitempty"`
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
func (p *GetPromptRequestParams) RequestMeta() *RequestMetaObject { return requestMeta(&p.Meta) }

// Continuation returns pointers to the params' inputResponses and
// requestState; see [InputResponseParams]. The *string cannot say that an
// empty state is present: use LookupRequestState and SetRequestState.
func (p *GetPromptRequestParams) Continuation() (*InputResponses, *string) {
	return &p.InputResponses, &p.RequestState
}

// LookupRequestState returns the requestState and whether it is present;
// see [RequestStateParams].
func (p *GetPromptRequestParams) LookupRequestState() (string, bool) {
	return lookupState(p.RequestState, p.ForceRequestState)
}

// SetRequestState sets or removes the requestState; see
// [RequestStateParams].
func (p *GetPromptRequestParams) SetRequestState(state string, present bool) {
	setState(&p.RequestState, &p.ForceRequestState, state, present)
}

// GetPromptResult is the complete answer to prompts/get.
//
//mcp:json nonnil=Messages
type GetPromptResult struct {
	Result
	// Description describes the rendered prompt.
	Description string `json:"description,omitempty"`
	// Messages are the rendered messages. A nil Messages is written as [].
	Messages []PromptMessage `json:"messages"`
}

// ListPromptsResult is a page of prompts/list. It is cacheable.
//
//mcp:json nonnil=Prompts
type ListPromptsResult struct {
	CacheableResult
	// Prompts are this page's prompts.
	Prompts []Prompt `json:"prompts"`
	// NextCursor, when not empty, fetches the next page.
	NextCursor Cursor `json:"nextCursor,omitempty"`
}
