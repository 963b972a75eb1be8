package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The JSON coding of the types declared in inputrequired.go, kept apart so that
// inputrequired.go reads as the schema: the hand-written one-pass coders, which keep
// encoding/json's rules (see jsonscan.go), and the decoders that choose the
// Go type of a union's member.

// UnmarshalJSON decodes p as encoding/json decodes the struct, and sets
// ForceRequestState when the requestState it decoded is present and empty.
func (p *InputResponseRequestParams) UnmarshalJSON(data []byte) error {
	type plain InputResponseRequestParams
	if err := json.Unmarshal(data, (*plain)(p)); err != nil {
		return err
	}
	p.ForceRequestState = forceAfterDecode(data, p.RequestState, p.ForceRequestState)
	return nil
}

// DecodeInputRequest decodes one embedded request, choosing the Go type by
// its "method".
func DecodeInputRequest(data []byte) (InputRequest, error) {
	method, _, err := peekString(data, "method")
	if err != nil {
		return nil, err
	}
	var r InputRequest
	switch method {
	case MethodElicit:
		r = new(ElicitRequest)
	case MethodCreateMessage:
		r = new(CreateMessageRequest)
	case MethodListRoots:
		r = new(ListRootsRequest)
	default:
		return nil, fmt.Errorf("mcp: input request method %q: %w", method, ErrUnknownInputRequest)
	}
	if err := json.Unmarshal(data, r); err != nil {
		return nil, err
	}
	return r, nil
}

// UnmarshalJSON decodes each request by its method.
func (m *InputRequests) UnmarshalJSON(data []byte) error {
	if isNullJSON(data) {
		*m = nil
		return nil
	}
	out := make(InputRequests)
	it := newObjectIter(data)
	for it.Next() {
		r, err := DecodeInputRequest(it.Val)
		if err != nil {
			return fmt.Errorf("mcp: input request %q: %w", it.Key, err)
		}
		out[string(it.Key)] = r
	}
	if it.Err != nil {
		return it.Err
	}
	*m = out
	return nil
}

// UnmarshalJSON decodes the answers, each kept raw. Every answer must be an
// object (whatever kind it answers); null gives nil.
func (m *InputResponses) UnmarshalJSON(data []byte) error {
	r, err := decodeInputResponses(data)
	if err != nil {
		return err
	}
	*m = r
	return nil
}

// decodeInputResponses decodes an inputResponses member: an object whose
// members are all objects, or null.
func decodeInputResponses(raw []byte) (InputResponses, error) {
	m, err := decodeRawMap(raw)
	if err != nil {
		return nil, err
	}
	for k, v := range m {
		if !isObject(v) {
			return nil, fmt.Errorf("mcp: input response %q: %w", k, errNotObject(v))
		}
	}
	return m, nil
}

// decodeInputRequired decodes and validates an InputRequiredResult.
func decodeInputRequired(raw json.RawMessage) (*InputRequiredResult, error) {
	if r, ok := fastDecodeInputRequired(raw); ok {
		return r, nil
	}
	return decodeInputRequiredGeneric(raw)
}

// decodeInputRequiredGeneric is the reference decoder, through
// encoding/json.
func decodeInputRequiredGeneric(raw json.RawMessage) (*InputRequiredResult, error) {
	r := new(InputRequiredResult)
	if err := r.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	if err := r.Validate(); err != nil {
		return nil, err
	}
	return r, nil
}

// UnmarshalJSON decodes r as encoding/json decodes the struct, and sets
// ForceRequestState when the requestState it decoded is present and empty.
// It does not validate r; [DecodeCallToolOutcome] and its kin do.
func (r *InputRequiredResult) UnmarshalJSON(data []byte) error {
	type plain InputRequiredResult
	if err := json.Unmarshal(data, (*plain)(r)); err != nil {
		return err
	}
	r.ForceRequestState = forceAfterDecode(data, r.RequestState, r.ForceRequestState)
	return nil
}

// DecodeCallToolOutcome decodes the result of tools/call by its resultType:
// absent or "complete" gives *CallToolResult, "input_required" gives
// *InputRequiredResult, the tasks extension's "task" *CreateTaskResult, and
// anything else an [*UnknownResultTypeError].
//
// A complete result is decoded in one pass over raw, which also finds the
// resultType; the result and what it commonly points to (its _meta and
// serverInfo, one text block) are allocated together, and its strings share
// one copy of raw when raw is small.
func DecodeCallToolOutcome(raw json.RawMessage) (CallToolOutcome, error) {
	o, err := decodeOutcome[CallToolOutcome, callToolResultBlock](raw)
	if err != nil {
		// The tasks extension's answer: rare, so looked for only once the
		// core types did not match.
		if unknown := (*UnknownResultTypeError)(nil); errors.As(err, &unknown) && unknown.Value == string(ResultTypeTask) {
			t := new(CreateTaskResult)
			if err := json.Unmarshal(raw, t); err != nil {
				return nil, err
			}
			if t.TaskID == "" || t.Status == "" {
				return nil, fmt.Errorf("mcp: a task result without taskId or status: %w", err)
			}
			return t, nil
		}
	}
	return o, err
}

// DecodeGetPromptOutcome decodes the result of prompts/get by its
// resultType, like [DecodeCallToolOutcome].
func DecodeGetPromptOutcome(raw json.RawMessage) (GetPromptOutcome, error) {
	return decodeOutcome[GetPromptOutcome, getPromptResultBlock](raw)
}

// DecodeReadResourceOutcome decodes the result of resources/read by its
// resultType, like [DecodeCallToolOutcome].
func DecodeReadResourceOutcome(raw json.RawMessage) (ReadResourceOutcome, error) {
	return decodeOutcome[ReadResourceOutcome, readResourceResultBlock](raw)
}

// outcomeBlock is a carrier's complete result allocated together with its
// room (callToolResultBlock and the like).
type outcomeBlock[O any] interface {
	// decodeOnePass decodes the complete result as its decode method does.
	decodeOnePass(raw []byte) (rt []byte, fieldErr, err error)
	// complete returns the decoded result.
	complete() O
}

func (b *callToolResultBlock) decodeOnePass(raw []byte) ([]byte, error, error) {
	return b.res.decode(raw, &b.store)
}

func (b *callToolResultBlock) complete() CallToolOutcome { return &b.res }

func (b *getPromptResultBlock) decodeOnePass(raw []byte) ([]byte, error, error) {
	return b.res.decode(raw, &b.store)
}

func (b *getPromptResultBlock) complete() GetPromptOutcome { return &b.res }

func (b *readResourceResultBlock) decodeOnePass(raw []byte) ([]byte, error, error) {
	return b.res.decode(raw, &b.store)
}

func (b *readResourceResultBlock) complete() ReadResourceOutcome { return &b.res }

// decodeOutcome decodes a carrier's result in one pass as the complete
// result B holds, and then, by the resultType that pass found, returns it
// or decodes raw again as an InputRequiredResult.
func decodeOutcome[O any, B any, PB interface {
	*B
	outcomeBlock[O]
}](raw json.RawMessage) (O, error) {
	var none O
	blk := PB(new(B))
	rt, fieldErr, err := blk.decodeOnePass(raw)
	if err != nil {
		return none, err
	}
	switch ir, err := onePassOutcome(raw, rt, fieldErr); {
	case err != nil:
		return none, err
	case ir != nil:
		return any(ir).(O), nil
	}
	return blk.complete(), nil
}
