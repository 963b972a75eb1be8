package mcp

import (
	"encoding/json"
	"fmt"
)

// The JSON coding of the types declared in tools.go, kept apart so that
// tools.go reads as the schema: the hand-written one-pass coders, which keep
// encoding/json's rules (see jsonscan.go), and the decoders that choose the
// Go type of a union's member.

// emptyObjectSchema is the input schema of a tool that takes no arguments.
var emptyObjectSchema = json.RawMessage(`{"type":"object"}`)

// UnmarshalJSON decodes the params in one pass. Unknown members are
// ignored. When the params are small, their strings (name, requestState,
// those of _meta) share one copy of the text.
func (p *CallToolRequestParams) UnmarshalJSON(data []byte) error {
	*p = CallToolRequestParams{}
	if isNullJSON(data) {
		return nil
	}
	a := newArena(data)
	it := newObjectIter(data)
	stated := false // the last requestState member holds a string (not null)
	for it.Next() {
		var err error
		switch string(it.Key) {
		case "_meta":
			p.Meta, err = decodeRequestMetaField(it.Val, a)
		case "name":
			p.Name, err = a.str(it.Val)
		case "arguments":
			switch {
			case isObject(it.Val):
				p.Arguments = cloneRaw(it.Val)
			case !isNullJSON(it.Val):
				err = errNotObject(it.Val)
			}
		case "inputResponses":
			p.InputResponses, err = decodeInputResponses(it.Val)
		case "requestState":
			p.RequestState, err = a.str(it.Val)
			stated = it.Val[0] == '"'
		}
		if err != nil {
			return fmt.Errorf("mcp: tools/call params %q: %w", it.Key, err)
		}
	}
	p.ForceRequestState = stated && p.RequestState == ""
	return it.Err
}

// UnmarshalJSON decodes the result in one pass, choosing each content
// block's type and keeping structuredContent raw. It accepts what
// encoding/json accepted when it decoded the struct: member names match
// case-insensitively and a null member leaves its field alone (except
// _meta, content and structuredContent, which it clears).
func (r *CallToolResult) UnmarshalJSON(data []byte) error {
	*r = CallToolResult{}
	if isJSONNullText(data) {
		return nil
	}
	_, fieldErr, err := r.decode(data, nil)
	if err != nil {
		return err
	}
	return fieldErr
}

// callToolResultKeys are the members of a result, for foldKey.
var callToolResultKeys = []string{"_meta", "resultType", "content", "structuredContent", "isError"}

// callToolStore is room for what a decoded result commonly points to,
// allocated in one piece: its _meta with serverInfo and one text block.
type callToolStore struct {
	meta    ResultMetaObject
	info    Implementation
	content contentStore
}

// callToolResultBlock is a result with its room, allocated in one piece.
type callToolResultBlock struct {
	res   CallToolResult
	store callToolStore
}

// decode decodes r, which must be zero, from data in one pass. It returns
// the raw value of the last member named exactly "resultType" (nil when
// there is none) for the caller to classify, the first error found in a
// member's value (fieldErr), and the error that makes data malformed JSON
// (err), which takes precedence. After a field error it only scans on,
// checking the syntax. The pointed-to values go in store, allocated on
// first need when nil; the strings share one copy of data when it is small.
func (r *CallToolResult) decode(data []byte, store *callToolStore) (rt []byte, fieldErr, err error) {
	a := newArena(data)
	fieldErr, err = decodeMembers(data, "tools/call result", callToolResultKeys, &rt, func(key string, v []byte) (ferr error) {
		switch key {
		case "_meta":
			if v[0] != 'n' && store == nil {
				store = new(callToolStore)
			}
			if store == nil {
				r.Meta = nil
			} else {
				r.Meta, ferr = decodeResultMetaMember(v, a, &store.meta, &store.info)
			}
		case "resultType":
			ferr = decodeResultTypeMember(v, a, &r.ResultType)
		case "content":
			switch v[0] {
			case 'n':
				r.Content = nil
			case '[':
				if store == nil {
					store = new(callToolStore)
				}
				r.Content, ferr = decodeContentList(v, a, &store.content)
			default:
				ferr = errNotArray(v)
			}
		case "structuredContent":
			if v[0] == 'n' {
				r.StructuredContent = nil
			} else {
				r.StructuredContent = cloneRaw(v)
			}
		case "isError":
			switch string(v) {
			case "true":
				r.IsError = true
			case "false":
				r.IsError = false
			case "null":
			default:
				ferr = &json.UnmarshalTypeError{Value: describe(v), Type: boolType, Field: "isError"}
			}
		}
		return ferr
	})
	return rt, fieldErr, err
}
