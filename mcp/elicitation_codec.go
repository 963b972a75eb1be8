package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The JSON coding of the types declared in elicitation.go, kept apart so that
// elicitation.go reads as the schema: the hand-written one-pass coders, which keep
// encoding/json's rules (see jsonscan.go), and the decoders that choose the
// Go type of a union's member.

// MarshalJSON writes {"method":"elicitation/create","params":...}.
func (r ElicitRequest) MarshalJSON() ([]byte, error) {
	if r.Params == nil {
		return nil, errors.New("mcp: ElicitRequest without Params")
	}
	return marshalEmbeddedRequest(MethodElicit, r.Params)
}

// UnmarshalJSON decodes the request, choosing the params' type by mode.
func (r *ElicitRequest) UnmarshalJSON(data []byte) error {
	*r = ElicitRequest{}
	params, err := unmarshalEmbeddedRequest(data, MethodElicit)
	if err != nil {
		return err
	}
	if params == nil {
		return errors.New("mcp: elicitation/create without params")
	}
	r.Params, err = DecodeElicitRequestParams(params)
	return err
}

// DecodeElicitRequestParams decodes elicitation params, choosing the Go type
// by "mode": absent or "form" for form, "url" for URL.
//
// The common form (a few plain text and boolean fields) is decoded in one
// pass; whatever that pass is not sure of goes through encoding/json (see
// inputrequired_fast.go), which decides and reports.
func DecodeElicitRequestParams(data []byte) (ElicitRequestParams, error) {
	if len(data) > 0 && data[0] == '{' {
		if p, ok := fastDecodeElicitForm(data, newArena(data)); ok {
			return p, nil
		}
	}
	return decodeElicitRequestParamsGeneric(data)
}

// decodeElicitRequestParamsGeneric is DecodeElicitRequestParams through
// encoding/json: the reference the one-pass decoder is checked against.
func decodeElicitRequestParamsGeneric(data []byte) (ElicitRequestParams, error) {
	mode, _, err := peekString(data, "mode")
	if err != nil {
		return nil, err
	}
	var p ElicitRequestParams
	switch ElicitMode(mode) {
	case "", ElicitModeForm:
		p = new(ElicitRequestFormParams)
	case ElicitModeURL:
		p = new(ElicitRequestURLParams)
	default:
		return nil, fmt.Errorf("mcp: elicitation mode %q: %w", mode, ErrUnknownElicitMode)
	}
	if err := json.Unmarshal(data, p); err != nil {
		return nil, err
	}
	return p, nil
}

// UnmarshalJSON decodes form params, rejecting any mode other than form.
func (p *ElicitRequestFormParams) UnmarshalJSON(data []byte) error {
	type plain ElicitRequestFormParams
	*p = ElicitRequestFormParams{}
	if err := json.Unmarshal(data, (*plain)(p)); err != nil {
		return err
	}
	if p.Mode != "" && p.Mode != ElicitModeForm {
		return fmt.Errorf("mcp: form params with mode %q: %w", p.Mode, ErrUnknownElicitMode)
	}
	return nil
}

// UnmarshalJSON decodes URL params, rejecting any mode other than url.
func (p *ElicitRequestURLParams) UnmarshalJSON(data []byte) error {
	type plain ElicitRequestURLParams
	*p = ElicitRequestURLParams{}
	mode, ok, err := peekString(data, "mode")
	if err != nil {
		return err
	}
	if ok && ElicitMode(mode) != ElicitModeURL {
		return fmt.Errorf("mcp: URL params with mode %q: %w", mode, ErrUnknownElicitMode)
	}
	return json.Unmarshal(data, (*plain)(p))
}

// UnmarshalJSON decodes the schema, choosing each property's type.
func (s *ElicitRequestedSchema) UnmarshalJSON(data []byte) error {
	type plain ElicitRequestedSchema
	*s = ElicitRequestedSchema{}
	w := struct {
		*plain
		Properties primitiveSchemaMap `json:"properties"`
	}{plain: (*plain)(s)}
	if err := unmarshalTagged(data, "object", &w, ErrUnknownSchemaType); err != nil {
		return err
	}
	s.Properties = w.Properties
	return nil
}

type primitiveSchemaMap map[string]PrimitiveSchemaDefinition

func (m *primitiveSchemaMap) UnmarshalJSON(data []byte) error {
	if isNullJSON(data) {
		*m = nil
		return nil
	}
	out := make(primitiveSchemaMap)
	it := newObjectIter(data)
	for it.Next() {
		d, err := DecodePrimitiveSchemaDefinition(it.Val)
		if err != nil {
			return fmt.Errorf("property %q: %w", it.Key, err)
		}
		out[string(it.Key)] = d
	}
	*m = out
	return it.Err
}

// UnmarshalJSON decodes the schema, rejecting types other than number and
// integer.
func (s *NumberSchema) UnmarshalJSON(data []byte) error {
	type plain NumberSchema
	*s = NumberSchema{}
	if err := json.Unmarshal(data, (*plain)(s)); err != nil {
		return err
	}
	if s.Type != "" && s.Type != TypeNumber && s.Type != TypeInteger {
		return fmt.Errorf("mcp: number schema of type %q: %w", s.Type, ErrUnknownSchemaType)
	}
	return nil
}

// DecodePrimitiveSchemaDefinition decodes one form field schema, choosing
// the Go type by "type" and by which members are present: for strings,
// "enumNames" (legacy titled), "oneOf" (titled), "enum" (untitled) or none
// (free text); for arrays, "anyOf" in "items" (titled) or not (untitled).
func DecodePrimitiveSchemaDefinition(data []byte) (PrimitiveSchemaDefinition, error) {
	var (
		typ                        string
		hasEnum, hasOneOf, hasName bool
		items                      []byte
	)
	it := newObjectIter(data)
	for it.Next() {
		switch string(it.Key) {
		case "type":
			s, err := decodeString(it.Val)
			if err != nil {
				return nil, fmt.Errorf("mcp: schema \"type\": %w", err)
			}
			typ = s
		case "enum":
			hasEnum = true
		case "oneOf":
			hasOneOf = true
		case "enumNames":
			hasName = true
		case "items":
			items = it.Val
		}
	}
	if it.Err != nil {
		return nil, it.Err
	}
	var d PrimitiveSchemaDefinition
	switch typ {
	case "string":
		switch {
		case hasName:
			d = new(LegacyTitledEnumSchema)
		case hasOneOf:
			d = new(TitledSingleSelectEnumSchema)
		case hasEnum:
			d = new(UntitledSingleSelectEnumSchema)
		default:
			d = new(StringSchema)
		}
	case "number", "integer":
		d = new(NumberSchema)
	case "boolean":
		d = new(BooleanSchema)
	case "array":
		anyOf, err := peekMember(items, "anyOf")
		if items != nil && err != nil {
			return nil, fmt.Errorf("mcp: schema \"items\": %w", err)
		}
		if anyOf != nil {
			d = new(TitledMultiSelectEnumSchema)
		} else {
			d = new(UntitledMultiSelectEnumSchema)
		}
	default:
		return nil, fmt.Errorf("mcp: field schema type %q: %w", typ, ErrUnknownSchemaType)
	}
	if err := json.Unmarshal(data, d); err != nil {
		return nil, err
	}
	return d, nil
}
