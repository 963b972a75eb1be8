package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
)

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
type ListRootsRequestParams struct {
	// Meta is the params' _meta.
	Meta MetaObject `json:"_meta,omitempty"`
}

// NewListRootsRequest returns a roots/list request.
func NewListRootsRequest() *ListRootsRequest { return &ListRootsRequest{} }

// Method returns "roots/list".
func (*ListRootsRequest) Method() string { return MethodListRoots }

// MarshalJSON writes {"method":"roots/list"} and params when set.
func (r ListRootsRequest) MarshalJSON() ([]byte, error) {
	if r.Params == nil {
		return marshalEmbeddedRequest(MethodListRoots, nil)
	}
	return marshalEmbeddedRequest(MethodListRoots, r.Params)
}

// UnmarshalJSON decodes the request, rejecting any other method.
func (r *ListRootsRequest) UnmarshalJSON(data []byte) error {
	*r = ListRootsRequest{}
	params, err := unmarshalEmbeddedRequest(data, MethodListRoots)
	if err != nil || params == nil {
		return err
	}
	r.Params = new(ListRootsRequestParams)
	return json.Unmarshal(params, r.Params)
}

// Root is a directory or file the client lets the server work within.
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
type ListRootsResult struct {
	// Roots are the client's roots. A nil Roots is written as [].
	Roots []Root `json:"roots"`
	// Meta is the result's _meta (legacy sessions).
	Meta MetaObject `json:"_meta,omitempty"`
}

// MarshalJSON writes a nil Roots as [].
func (r ListRootsResult) MarshalJSON() ([]byte, error) {
	type plain ListRootsResult
	if r.Roots == nil {
		r.Roots = []Root{}
	}
	return json.Marshal(plain(r))
}

// decodeListRootsResponse decodes and checks a roots answer: it must have a
// roots array whose entries have URIs.
func decodeListRootsResponse(raw []byte) (*ListRootsResult, error) {
	rootsRaw, err := peekMember(raw, "roots")
	if err != nil {
		return nil, err
	}
	if jsonKind(rootsRaw) != '[' {
		return nil, errors.New("no roots array")
	}
	r := new(ListRootsResult)
	if err := json.Unmarshal(raw, r); err != nil {
		return nil, err
	}
	for i, root := range r.Roots {
		if root.URI == "" {
			return nil, fmt.Errorf("roots[%d] has no uri", i)
		}
	}
	return r, nil
}
