package mcp

import (
	"encoding/json"
	"fmt"
)

// The JSON coding of the types declared in completion.go, kept apart so that
// completion.go reads as the schema: the hand-written one-pass coders, which keep
// encoding/json's rules (see jsonscan.go), and the decoders that choose the
// Go type of a union's member.

// UnmarshalJSON decodes the params, choosing the reference's type.
func (p *CompleteRequestParams) UnmarshalJSON(data []byte) error {
	type plain CompleteRequestParams
	*p = CompleteRequestParams{}
	w := struct {
		*plain
		Ref json.RawMessage `json:"ref"`
	}{plain: (*plain)(p)}
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	if len(w.Ref) == 0 || isNullJSON(w.Ref) {
		return nil
	}
	ref, err := DecodeCompleteReference(w.Ref)
	p.Ref = ref
	return err
}

// DecodeCompleteReference decodes a completion reference by its "type".
func DecodeCompleteReference(data []byte) (CompleteReference, error) {
	typ, _, err := peekString(data, "type")
	if err != nil {
		return nil, err
	}
	var r CompleteReference
	switch typ {
	case "ref/prompt":
		r = new(PromptReference)
	case "ref/resource":
		r = new(ResourceTemplateReference)
	default:
		return nil, fmt.Errorf("mcp: reference type %q: %w", typ, ErrUnknownReference)
	}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, err
	}
	return r, nil
}
