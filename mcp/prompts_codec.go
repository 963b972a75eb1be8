package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// The JSON coding of the types declared in prompts.go, kept apart so that
// prompts.go reads as the schema: the hand-written one-pass coders, which keep
// encoding/json's rules (see jsonscan.go), and the decoders that choose the
// Go type of a union's member.

// UnmarshalJSON decodes p as encoding/json decodes the struct, and sets
// ForceRequestState when the requestState it decoded is present and empty.
// An argument whose value is null is left out of Arguments, where
// encoding/json would store "" for it.
func (p *GetPromptRequestParams) UnmarshalJSON(data []byte) error {
	type plain GetPromptRequestParams
	if err := json.Unmarshal(data, (*plain)(p)); err != nil {
		return err
	}
	p.ForceRequestState = forceAfterDecode(data, p.RequestState, p.ForceRequestState)
	if len(p.Arguments) > 0 && bytes.Contains(data, []byte("null")) {
		dropNullArguments(data, p.Arguments)
	}
	return nil
}

// dropNullArguments deletes from args, which encoding/json has just
// decoded from the object data, the arguments whose last value in data is
// null. A null string argument means "not given": storing "" for it (as
// encoding/json does in a map) would let it pass for a given argument,
// and a required one would be satisfied by a value the client never sent.
// Every member encoding/json read into the arguments map (its name equal
// to "arguments" under case folding; later members merge into the same
// map) is walked in order, so a later string for the same name wins, as
// it does there.
func dropNullArguments(data []byte, args map[string]string) {
	var nulls map[string]bool
	it := newObjectIter(data)
	for it.Next() {
		if it.Val[0] != '{' || !bytes.EqualFold(it.Key, []byte("arguments")) {
			continue
		}
		inner := newObjectIter(it.Val)
		for inner.Next() {
			switch {
			case inner.Val[0] == 'n':
				if nulls == nil {
					nulls = make(map[string]bool)
				}
				nulls[string(inner.Key)] = true
			case nulls != nil:
				delete(nulls, string(inner.Key))
			}
		}
	}
	for name := range nulls {
		delete(args, name)
	}
}

// UnmarshalJSON decodes the message in one pass, choosing the content
// block's type. It accepts what encoding/json accepted when it decoded the
// struct: member names match case-insensitively, null decodes to the zero
// message, and a null role leaves the role alone.
func (m *PromptMessage) UnmarshalJSON(data []byte) error {
	if isJSONNullText(data) {
		*m = PromptMessage{}
		return nil
	}
	return m.decode(data, nil, nil)
}

// promptMessageKeys are the members of a message, for foldKey.
var promptMessageKeys = []string{"role", "content"}

// decode decodes m from the object data in one pass, taking strings from a
// (which may be nil) and decoding a text block into text when it is not
// nil.
func (m *PromptMessage) decode(data []byte, a *strArena, text *TextContent) error {
	*m = PromptMessage{}
	fieldErr, err := decodeMembers(data, "prompt message", promptMessageKeys, nil, func(key string, v []byte) (err error) {
		if key == "role" {
			switch string(v) {
			case `"user"`:
				m.Role = RoleUser
			case `"assistant"`:
				m.Role = RoleAssistant
			default:
				s := string(m.Role)
				err = decodeStringMember(v, a, &s, "role")
				m.Role = Role(s)
			}
		} else if v[0] == 'n' {
			m.Content = nil
		} else {
			m.Content, err = decodeContentBlock(v, a, text)
		}
		return err
	})
	if err != nil {
		return err
	}
	return fieldErr
}

// UnmarshalJSON decodes the result in one pass. It accepts what
// encoding/json accepted when it decoded the struct: member names match
// case-insensitively, and a null member leaves its field alone (except
// _meta and messages, which it clears).
func (r *GetPromptResult) UnmarshalJSON(data []byte) error {
	*r = GetPromptResult{}
	if isJSONNullText(data) {
		return nil
	}
	_, fieldErr, err := r.decode(data, nil)
	if err != nil {
		return err
	}
	return fieldErr
}

// getPromptResultKeys are the members of a result, for foldKey.
var getPromptResultKeys = []string{"_meta", "resultType", "description", "messages"}

// getPromptStore is room for what a decoded result commonly points to,
// allocated in one piece: its _meta with serverInfo and one message with a
// text block.
type getPromptStore struct {
	meta     ResultMetaObject
	info     Implementation
	msgs     [1]PromptMessage
	text     TextContent
	msgsUsed bool
	textUsed bool
}

// getPromptResultBlock is a result with its room, allocated in one piece.
type getPromptResultBlock struct {
	res   GetPromptResult
	store getPromptStore
}

// decode is CallToolResult.decode for a prompts/get result.
func (r *GetPromptResult) decode(data []byte, store *getPromptStore) (rt []byte, fieldErr, err error) {
	a := newArena(data)
	fieldErr, err = decodeMembers(data, "prompts/get result", getPromptResultKeys, &rt, func(key string, v []byte) (ferr error) {
		switch key {
		case "_meta":
			if v[0] != 'n' && store == nil {
				store = new(getPromptStore)
			}
			if store == nil {
				r.Meta = nil
			} else {
				r.Meta, ferr = decodeResultMetaMember(v, a, &store.meta, &store.info)
			}
		case "resultType":
			ferr = decodeResultTypeMember(v, a, &r.ResultType)
		case "description":
			ferr = decodeStringMember(v, a, &r.Description, "description")
		case "messages":
			switch v[0] {
			case 'n':
				r.Messages = nil
			case '[':
				if store == nil {
					store = new(getPromptStore)
				}
				r.Messages, ferr = decodePromptMessages(v, a, store)
			default:
				ferr = errNotArray(v)
			}
		}
		return ferr
	})
	return rt, fieldErr, err
}

// decodePromptMessages decodes a JSON array of messages, known to be an
// array, starting in store's room when it is unused.
func decodePromptMessages(data []byte, a *strArena, store *getPromptStore) ([]PromptMessage, error) {
	var out []PromptMessage
	if !store.msgsUsed {
		store.msgsUsed = true
		out = store.msgs[:0:len(store.msgs)]
	} else {
		out = []PromptMessage{}
	}
	it := newArrayIter(data)
	for i := 0; it.Next(); i++ {
		var text *TextContent
		if !store.textUsed {
			text = &store.text
		}
		var m PromptMessage
		if it.Val[0] != 'n' { // null is the zero message
			if err := m.decode(it.Val, a, text); err != nil {
				return nil, fmt.Errorf("messages[%d]: %w", i, err)
			}
		}
		if text != nil && m.Content == ContentBlock(text) {
			store.textUsed = true
		}
		out = append(out, m)
	}
	if it.Err != nil {
		return nil, it.Err
	}
	return out, nil
}
