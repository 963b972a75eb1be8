package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The JSON coding of the types declared in roots.go, kept apart so that
// roots.go reads as the schema: the hand-written one-pass coders, which keep
// encoding/json's rules (see jsonscan.go), and the decoders that choose the
// Go type of a union's member.

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
