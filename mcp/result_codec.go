package mcp

import (
	"encoding/json"
	"fmt"
	"reflect"
)

// The JSON coding of the types declared in result.go, kept apart so that
// result.go reads as the schema: the hand-written one-pass coders, which keep
// encoding/json's rules (see jsonscan.go), and the decoders that choose the
// Go type of a union's member.

// DecodeResult decodes the raw result of a request to method into its Go
// type: *DiscoverResult for server/discover, a [CallToolOutcome] for
// tools/call, and so on; *Result for methods it does not know. It enforces
// resultType: absent means complete, input_required is accepted only for
// tools/call, prompts/get and resources/read, and any other value is an
// [*UnknownResultTypeError].
func DecodeResult(method string, raw json.RawMessage) (ServerResult, error) {
	switch method {
	case MethodCallTool:
		return DecodeCallToolOutcome(raw)
	case MethodGetPrompt:
		return DecodeGetPromptOutcome(raw)
	case MethodReadResource:
		return DecodeReadResourceOutcome(raw)
	}
	rt, err := ParseResultType(raw)
	if err != nil {
		return nil, err
	}
	if rt == ResultTypeInputRequired {
		return nil, fmt.Errorf("mcp: %s cannot answer input_required: %w", method, ErrInputRequiredNotAllowed)
	}
	var r AnyResult
	switch method {
	case MethodDiscover:
		r = new(DiscoverResult)
	case MethodListTools:
		r = new(ListToolsResult)
	case MethodListPrompts:
		r = new(ListPromptsResult)
	case MethodListResources:
		r = new(ListResourcesResult)
	case MethodListResourceTemplates:
		r = new(ListResourceTemplatesResult)
	case MethodComplete:
		r = new(CompleteResult)
	case MethodSubscriptionsListen:
		r = new(SubscriptionsListenResult)
	default:
		r = new(Result)
	}
	if err := json.Unmarshal(raw, r); err != nil {
		return nil, err
	}
	return r, nil
}

// decodeResultMetaMember decodes the value v of a result's _meta member
// into meta, with serverInfo in info; null gives nil.
func decodeResultMetaMember(v []byte, a *strArena, meta *ResultMetaObject, info *Implementation) (*ResultMetaObject, error) {
	if v[0] == 'n' {
		return nil, nil
	}
	if info == nil {
		return meta, meta.decode(v, a, info)
	}
	return meta, decodeResultMetaCached(v, a, meta, info)
}

var resultTypeType = reflect.TypeFor[ResultType]()

// decodeResultTypeMember decodes the value v of a resultType member into
// *rt, as encoding/json decodes a string field: null leaves *rt alone.
func decodeResultTypeMember(v []byte, a *strArena, rt *ResultType) error {
	switch {
	case v[0] == 'n':
	case v[0] != '"':
		return &json.UnmarshalTypeError{Value: describe(v), Type: resultTypeType, Field: "resultType"}
	case string(v) == `"complete"`:
		*rt = ResultTypeComplete
	case string(v) == `"input_required"`:
		*rt = ResultTypeInputRequired
	default:
		s, err := a.str(v)
		if err != nil {
			return err
		}
		*rt = ResultType(s)
	}
	return nil
}

// decodeStringMember decodes the value v of a string member into *s, as
// encoding/json decodes a string field: null leaves *s alone.
func decodeStringMember(v []byte, a *strArena, s *string, field string) error {
	switch v[0] {
	case 'n':
		return nil
	case '"':
		var err error
		*s, err = a.str(v)
		return err
	}
	return &json.UnmarshalTypeError{Value: describe(v), Type: stringType, Field: field}
}

// onePassOutcome finishes the decoding of a carrier's result by its
// resultType (rt, the raw value of the last resultType member): as an
// InputRequiredResult, or as the complete result already decoded in one
// pass (with fieldErr, its first error in a member's value).
func onePassOutcome(raw, rt []byte, fieldErr error) (*InputRequiredResult, error) {
	typ, err := classifyResultType(rt)
	if err != nil {
		return nil, err
	}
	if typ == ResultTypeInputRequired {
		return decodeInputRequired(raw)
	}
	return nil, fieldErr
}
