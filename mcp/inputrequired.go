package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
)

// Multi-round-trip requests (MRTR). A server that needs input from the
// client (an elicitation, a sampling, the roots) to finish tools/call,
// prompts/get or resources/read answers with an InputRequiredResult. The
// client fulfils its InputRequests and sends the same request again, with a
// new id, the answers in InputResponses and the RequestState echoed
// unchanged.

// Sentinel errors of this file, matchable with errors.Is.
var (
	// ErrUnknownInputRequest: an input request whose method is not
	// elicitation/create, sampling/createMessage or roots/list.
	ErrUnknownInputRequest = errors.New("mcp: unknown input request method")
	// ErrInputResponseMissing: no answer under the key asked for.
	ErrInputResponseMissing = errors.New("mcp: input response missing")
	// ErrInputResponseShape: an answer that is not a valid result of the
	// kind asked for.
	ErrInputResponseShape = errors.New("mcp: input response has the wrong shape")
	// ErrInvalidInputRequiredResult: an InputRequiredResult with neither
	// inputRequests nor requestState (an empty requestState counts), or
	// with a nil request.
	ErrInvalidInputRequiredResult = errors.New("mcp: invalid input_required result")
	// ErrInputRequiredNotAllowed: input_required on a method other than
	// tools/call, prompts/get and resources/read.
	ErrInputRequiredNotAllowed = errors.New("mcp: input_required is not allowed for this method")
)

// InputRequest is one request a server embeds in an InputRequiredResult:
// *ElicitRequest, *CreateMessageRequest or *ListRootsRequest. The interface
// is sealed. Decode one with [DecodeInputRequest].
type InputRequest interface {
	// Method returns the request's method, such as "elicitation/create".
	Method() string
	isInputRequest()
}

func (*ElicitRequest) isInputRequest()        {}
func (*CreateMessageRequest) isInputRequest() {}
func (*ListRootsRequest) isInputRequest()     {}

// InputRequests maps server-chosen keys to the requests the client must
// fulfil. The client answers each under the same key in [InputResponses].
type InputRequests map[string]InputRequest

// Keys returns the keys in sorted order.
func (m InputRequests) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// InputResponse is one answer a client sends in [InputResponses]:
// *ElicitResult, *CreateMessageResult or *ListRootsResult. The interface is
// sealed. The wire value carries no kind: a server decodes it as what it
// asked for, with [InputResponses.Elicit], [InputResponses.Sample] or
// [InputResponses.Roots].
type InputResponse interface {
	isInputResponse()
}

func (*ElicitResult) isInputResponse()        {}
func (*CreateMessageResult) isInputResponse() {}
func (*ListRootsResult) isInputResponse()     {}

// InputResponses maps the keys of the previous round's [InputRequests] to
// the client's answers, kept raw: an answer says nothing about its kind, so
// it is decoded by the accessor for the kind that was asked for.
type InputResponses map[string]json.RawMessage

// InputResponseError reports a missing or malformed answer. Err wraps
// ErrInputResponseMissing or ErrInputResponseShape.
type InputResponseError struct {
	// Key is the answer's key.
	Key string
	// Method is the kind asked for, such as "elicitation/create".
	Method string
	// Err says what is wrong.
	Err error
}

// Error describes the answer's key, kind and fault.
func (e *InputResponseError) Error() string {
	return fmt.Sprintf("mcp: input response %q (%s): %v", e.Key, e.Method, e.Err)
}

// Unwrap returns e.Err.
func (e *InputResponseError) Unwrap() error { return e.Err }

// Has reports whether there is an answer under key.
func (m InputResponses) Has(key string) bool {
	_, ok := m[key]
	return ok
}

func (m InputResponses) lookup(key, method string) ([]byte, error) {
	raw, ok := m[key]
	if !ok {
		return nil, &InputResponseError{Key: key, Method: method, Err: ErrInputResponseMissing}
	}
	if !isObject(raw) {
		return nil, &InputResponseError{Key: key, Method: method,
			Err: fmt.Errorf("%w: expected an object, found %s", ErrInputResponseShape, describe(raw))}
	}
	return raw, nil
}

func shapeError(key, method string, err error) error {
	return &InputResponseError{Key: key, Method: method, Err: fmt.Errorf("%w: %v", ErrInputResponseShape, err)}
}

// Elicit decodes the answer under key as an elicitation result. It fails
// with an *InputResponseError when the answer is missing or is not an
// object with a valid action and form values.
func (m InputResponses) Elicit(key string) (*ElicitResult, error) {
	raw, err := m.lookup(key, MethodElicit)
	if err != nil {
		return nil, err
	}
	r, ok := fastDecodeElicitResult(raw)
	if !ok {
		r = new(ElicitResult)
		if err := json.Unmarshal(raw, r); err != nil {
			return nil, shapeError(key, MethodElicit, err)
		}
	}
	if err := r.validate(); err != nil {
		return nil, shapeError(key, MethodElicit, err)
	}
	return r, nil
}

// Sample decodes the answer under key as a sampling result. It fails with
// an *InputResponseError when the answer is missing or lacks a valid role or
// content.
func (m InputResponses) Sample(key string) (*CreateMessageResult, error) {
	raw, err := m.lookup(key, MethodCreateMessage)
	if err != nil {
		return nil, err
	}
	r := new(CreateMessageResult)
	if err := json.Unmarshal(raw, r); err != nil {
		return nil, shapeError(key, MethodCreateMessage, err)
	}
	if err := r.validate(); err != nil {
		return nil, shapeError(key, MethodCreateMessage, err)
	}
	return r, nil
}

// Roots decodes the answer under key as a roots result. It fails with an
// *InputResponseError when the answer is missing or has no roots array.
func (m InputResponses) Roots(key string) (*ListRootsResult, error) {
	raw, err := m.lookup(key, MethodListRoots)
	if err != nil {
		return nil, err
	}
	r, err := decodeListRootsResponse(raw)
	if err != nil {
		return nil, shapeError(key, MethodListRoots, err)
	}
	return r, nil
}

// Set stores the JSON encoding of an answer under key, allocating the map
// if needed.
func (m *InputResponses) Set(key string, r InputResponse) error {
	b, err := Marshal(r)
	if err != nil {
		return err
	}
	if *m == nil {
		*m = make(InputResponses)
	}
	(*m)[key] = b
	return nil
}

// InputResponseRequestParams is the schema's common part of the params of
// the three requests that may be answered with input_required. Parley's
// params types have the fields directly and implement
// [InputResponseParams].
//
//mcp:json present=RequestState:ForceRequestState
type InputResponseRequestParams struct {
	// Meta is the request's _meta: protocol version, client capabilities
	// and the rest. A 2026-07-28 request must carry it; legacy requests may
	// omit it (nil).
	Meta *RequestMetaObject `json:"_meta,omitempty"`
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
func (p *InputResponseRequestParams) RequestMeta() *RequestMetaObject { return requestMeta(&p.Meta) }

// Continuation returns pointers to the params' inputResponses and
// requestState; see [InputResponseParams]. The *string cannot say that an
// empty state is present: use LookupRequestState and SetRequestState.
func (p *InputResponseRequestParams) Continuation() (*InputResponses, *string) {
	return &p.InputResponses, &p.RequestState
}

// LookupRequestState returns the requestState and whether it is present;
// see [RequestStateParams].
func (p *InputResponseRequestParams) LookupRequestState() (string, bool) {
	return lookupState(p.RequestState, p.ForceRequestState)
}

// SetRequestState sets or removes the requestState; see
// [RequestStateParams].
func (p *InputResponseRequestParams) SetRequestState(state string, present bool) {
	setState(&p.RequestState, &p.ForceRequestState, state, present)
}

// InputResponseParams is implemented by the params of tools/call,
// prompts/get and resources/read. Continuation returns pointers to the
// inputResponses and requestState, so that code handling any of the three
// (a client's retry loop, a server's state verifier) reads and writes them
// in one place. The *string cannot say that an empty requestState is
// present; [RequestStateParams] adds the methods that can.
type InputResponseParams interface {
	AnyRequestParams
	Continuation() (*InputResponses, *string)
}

// InputRequiredResult is the interim answer to tools/call, prompts/get or
// resources/read: the server needs the client to fulfil InputRequests
// and/or to send RequestState back before it can finish. At least one of
// the two must be present (an empty requestState is present when
// ForceRequestState is set). It always encodes
// "resultType":"input_required" and never carries the fields of a complete
// result.
type InputRequiredResult struct {
	Result
	// InputRequests are the requests to fulfil, by key.
	InputRequests InputRequests `json:"inputRequests,omitempty"`
	// RequestState is opaque to the client, which echoes it exactly. An
	// empty one is sent only with ForceRequestState.
	RequestState string `json:"requestState,omitempty"`
	// ForceRequestState makes an empty RequestState present:
	// "requestState":"" is a state the client must echo, not none.
	// Decoding sets it exactly when the member is present and empty.
	ForceRequestState bool `json:"-"`
}

// LookupRequestState returns the requestState and whether it is present;
// like os.LookupEnv, an empty state may be present.
func (r *InputRequiredResult) LookupRequestState() (string, bool) {
	return lookupState(r.RequestState, r.ForceRequestState)
}

// SetRequestState makes the requestState state, present even when it is
// empty; when present is false it removes it and state is ignored.
func (r *InputRequiredResult) SetRequestState(state string, present bool) {
	setState(&r.RequestState, &r.ForceRequestState, state, present)
}

// Validate checks what the protocol requires of an InputRequiredResult: at
// least one of InputRequests and RequestState (empty or not), and no nil
// request.
func (r *InputRequiredResult) Validate() error {
	if _, ok := r.LookupRequestState(); len(r.InputRequests) == 0 && !ok {
		return fmt.Errorf("%w: neither inputRequests nor requestState", ErrInvalidInputRequiredResult)
	}
	for k, v := range r.InputRequests {
		if v == nil {
			return fmt.Errorf("%w: input request %q is nil", ErrInvalidInputRequiredResult, k)
		}
	}
	return nil
}

// CallToolOutcome is the answer to tools/call: *CallToolResult or
// *InputRequiredResult. The interface is sealed. Decode one with
// [DecodeCallToolOutcome].
type CallToolOutcome interface {
	AnyResult
	isCallToolOutcome()
}

// GetPromptOutcome is the answer to prompts/get: *GetPromptResult or
// *InputRequiredResult. The interface is sealed.
type GetPromptOutcome interface {
	AnyResult
	isGetPromptOutcome()
}

// ReadResourceOutcome is the answer to resources/read: *ReadResourceResult
// or *InputRequiredResult. The interface is sealed.
type ReadResourceOutcome interface {
	AnyResult
	isReadResourceOutcome()
}

func (*CallToolResult) isCallToolOutcome()          {}
func (*InputRequiredResult) isCallToolOutcome()     {}
func (*GetPromptResult) isGetPromptOutcome()        {}
func (*InputRequiredResult) isGetPromptOutcome()    {}
func (*ReadResourceResult) isReadResourceOutcome()  {}
func (*InputRequiredResult) isReadResourceOutcome() {}

// RequiredCapabilities returns the client capabilities a client must declare
// for a server to send r: elicitation (with url for URL mode), sampling
// (with tools when the request uses tools, with context when it asks for
// context beyond "none"), or roots.
func RequiredCapabilities(r InputRequest) *ClientCapabilities {
	switch r := r.(type) {
	case *ElicitRequest:
		if r.Mode() == ElicitModeURL {
			return &ClientCapabilities{Elicitation: &ElicitationCapability{URL: &struct{}{}}}
		}
		return &ClientCapabilities{Elicitation: &ElicitationCapability{}}
	case *CreateMessageRequest:
		s := &SamplingCapability{}
		if r.Params.UsesTools() {
			s.Tools = &struct{}{}
		}
		if r.Params.IncludeContext != "" && r.Params.IncludeContext != IncludeContextNone {
			s.Context = &struct{}{}
		}
		return &ClientCapabilities{Sampling: s}
	case *ListRootsRequest:
		return &ClientCapabilities{Roots: &RootsCapability{}}
	}
	return &ClientCapabilities{}
}

// Allows reports whether capabilities c (possibly nil) permit a server to
// send r.
func (c *ClientCapabilities) Allows(r InputRequest) bool {
	if c == nil {
		return false
	}
	switch r := r.(type) {
	case *ElicitRequest:
		if r.Mode() == ElicitModeURL {
			return c.Elicitation.SupportsURL()
		}
		return c.Elicitation.SupportsForm()
	case *CreateMessageRequest:
		if c.Sampling == nil {
			return false
		}
		if r.Params.UsesTools() && c.Sampling.Tools == nil {
			return false
		}
		if r.Params.IncludeContext != "" && r.Params.IncludeContext != IncludeContextNone && c.Sampling.Context == nil {
			return false
		}
		return true
	case *ListRootsRequest:
		return c.Roots != nil
	}
	return false
}

// MissingFor returns the capabilities that reqs need and c (possibly nil)
// does not declare, merged into one value fit for the requiredCapabilities
// of a -32021 error, or nil when c allows every request.
func (c *ClientCapabilities) MissingFor(reqs InputRequests) *ClientCapabilities {
	var missing *ClientCapabilities
	for _, k := range reqs.Keys() {
		r := reqs[k]
		if r == nil || c.Allows(r) {
			continue
		}
		if missing == nil {
			missing = &ClientCapabilities{}
		}
		missing.merge(RequiredCapabilities(r))
	}
	return missing
}

// merge adds the capabilities of o to c.
func (c *ClientCapabilities) merge(o *ClientCapabilities) {
	if o.Roots != nil && c.Roots == nil {
		c.Roots = &RootsCapability{}
	}
	if o.Sampling != nil {
		if c.Sampling == nil {
			c.Sampling = &SamplingCapability{}
		}
		if o.Sampling.Tools != nil {
			c.Sampling.Tools = &struct{}{}
		}
		if o.Sampling.Context != nil {
			c.Sampling.Context = &struct{}{}
		}
	}
	if o.Elicitation != nil {
		// {} alone means form; once url is named, form must be named too.
		wantsForm := o.Elicitation.SupportsForm()
		hadForm := c.Elicitation.SupportsForm()
		if c.Elicitation == nil {
			c.Elicitation = &ElicitationCapability{}
		}
		if o.Elicitation.URL != nil {
			c.Elicitation.URL = &struct{}{}
		}
		if c.Elicitation.URL != nil && (wantsForm || hadForm) {
			c.Elicitation.Form = &struct{}{}
		}
	}
}
