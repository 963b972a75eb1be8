package mcp

import (
	"encoding/json"
	"errors"
	"strconv"
)

// This file holds one-pass decoders and append-style encoders for the
// messages of a multi-round-trip call's extra round: the InputRequiredResult
// a server sends (with form elicitations, the common case), and the
// elicitation answer a client sends back. Without them an extra round costs
// about four times the allocations of a whole plain call, most of it in
// encoding/json's reflection and its re-validation of every nested
// UnmarshalJSON's input.
//
// Unlike the decoders of jsonscan.go, these do not reproduce every rule of
// encoding/json. They take the common shape, and decline (ok == false)
// whatever they are not sure to decode exactly as encoding/json would: a
// member name that matches a field only under case folding, a duplicate
// member whose handling differs, a _meta with extra keys, an unusual schema
// or value, and every error. The caller then runs the generic path, which
// decides and reports. So both paths accept the same inputs and produce
// equal values; jsonfast_test.go checks it, with a fuzz target per decoder.

// inputRequiredBlock allocates an InputRequiredResult together with what it
// commonly points to.
type inputRequiredBlock struct {
	res   InputRequiredResult
	meta  ResultMetaObject
	info  Implementation
	arena strArena
}

// fastDecodeInputRequired decodes an InputRequiredResult in one pass, or
// declines.
func fastDecodeInputRequired(raw []byte) (*InputRequiredResult, bool) {
	blk := new(inputRequiredBlock)
	r := &blk.res
	var a *strArena
	if len(raw) <= arenaMax {
		// In the block: the decoders it is passed to would move it to the
		// heap on its own.
		blk.arena.src = raw
		a = &blk.arena
	}
	it := newObjectIter(raw)
	stated := false // some requestState member held a string
	for it.Next() {
		var err error
		switch string(it.Key) {
		case "_meta":
			r.Meta, err = decodeResultMetaMember(it.Val, a, &blk.meta, &blk.info)
		case "resultType":
			err = decodeResultTypeMember(it.Val, a, &r.ResultType)
		case "requestState":
			err = decodeStringMember(it.Val, a, &r.RequestState, "requestState")
			stated = stated || it.Val[0] == '"' // null leaves the field alone
		case "inputRequests":
			if it.Val[0] == 'n' {
				r.InputRequests = nil
				continue
			}
			var ok bool
			if r.InputRequests, ok = fastDecodeInputRequests(it.Val, a); !ok {
				return nil, false
			}
		default:
			if foldKey(it.Key, inputRequiredFields) != "" {
				return nil, false
			}
		}
		if err != nil {
			return nil, false
		}
	}
	r.ForceRequestState = stated && r.RequestState == ""
	if it.Err != nil || r.Validate() != nil {
		return nil, false
	}
	return r, true
}

var inputRequiredFields = []string{"_meta", "resultType", "inputRequests", "requestState"}

func fastDecodeInputRequests(raw []byte, a *strArena) (InputRequests, bool) {
	return fastDecodeMap(raw, a, fastDecodeInputRequest, DecodeInputRequest)
}

// fastDecodeMap decodes an object whose values fast decodes, or, where fast
// declines, generic does.
func fastDecodeMap[V any](raw []byte, a *strArena, fast func([]byte, *strArena) (V, bool), generic func([]byte) (V, error)) (map[string]V, bool) {
	out := make(map[string]V, 1)
	it := newObjectIter(raw)
	for it.Next() {
		v, ok := fast(it.Val, a)
		if !ok {
			var err error
			if v, err = generic(it.Val); err != nil {
				return nil, false
			}
		}
		out[string(it.Key)] = v
	}
	return out, it.Err == nil
}

// fastDecodeInputRequest decodes a form elicitation; it declines the other
// kinds, which are rarer and take the generic decoder.
func fastDecodeInputRequest(raw []byte, a *strArena) (InputRequest, bool) {
	var params []byte
	methods := 0
	it := newObjectIter(raw)
	for it.Next() {
		switch string(it.Key) {
		case "method":
			methods++
			if methods > 1 || string(it.Val) != `"`+MethodElicit+`"` {
				return nil, false
			}
		case "params":
			params = it.Val
		}
	}
	if it.Err != nil || methods != 1 || params == nil || params[0] != '{' {
		return nil, false
	}
	p, ok := fastDecodeElicitForm(params, a)
	if !ok {
		return nil, false
	}
	return &ElicitRequest{Params: p}, true
}

var elicitFormFields = []string{"mode", "message", "requestedSchema", "_meta"}

func fastDecodeElicitForm(raw []byte, a *strArena) (*ElicitRequestFormParams, bool) {
	p := new(ElicitRequestFormParams)
	modes := 0
	it := newObjectIter(raw)
	for it.Next() {
		v := it.Val
		switch string(it.Key) {
		case "mode":
			modes++
			switch {
			case modes > 1:
				return nil, false
			case string(v) == `"form"`:
				p.Mode = ElicitModeForm
			case v[0] != 'n':
				return nil, false
			}
		case "message":
			if decodeStringMember(v, a, &p.Message, "message") != nil {
				return nil, false
			}
		case "requestedSchema":
			if v[0] != '{' || !fastDecodeRequestedSchema(v, a, &p.RequestedSchema) {
				return nil, false
			}
		case "_meta":
			if v[0] != 'n' {
				return nil, false
			}
		default:
			if foldKey(it.Key, elicitFormFields) != "" {
				return nil, false
			}
		}
	}
	return p, it.Err == nil
}

var requestedSchemaFields = []string{"$schema", "properties", "required"}

func fastDecodeRequestedSchema(raw []byte, a *strArena, s *ElicitRequestedSchema) bool {
	types := 0
	it := newObjectIter(raw)
	for it.Next() {
		v := it.Val
		switch string(it.Key) {
		case "type":
			types++
			if types > 1 || string(v) != `"object"` {
				return false
			}
		case "$schema":
			if decodeStringMember(v, a, &s.Schema, "$schema") != nil {
				return false
			}
		case "properties":
			if v[0] == 'n' {
				s.Properties = nil
				continue
			}
			props, ok := fastDecodeProperties(v, a)
			if !ok {
				return false
			}
			s.Properties = props
		case "required":
			if v[0] == 'n' {
				s.Required = nil
				continue
			}
			req, ok := fastDecodeStrings(v, a)
			if !ok {
				return false
			}
			s.Required = req
		default:
			if foldKey(it.Key, requestedSchemaFields) != "" {
				return false
			}
		}
	}
	return it.Err == nil
}

func fastDecodeProperties(raw []byte, a *strArena) (map[string]PrimitiveSchemaDefinition, bool) {
	return fastDecodeMap(raw, a, fastDecodeFieldSchema, DecodePrimitiveSchemaDefinition)
}

func fastDecodeFieldSchema(raw []byte, a *strArena) (PrimitiveSchemaDefinition, bool) {
	if s, ok := fastDecodeStringSchema(raw, a); ok {
		return s, true
	}
	if s, ok := fastDecodeBooleanSchema(raw, a); ok {
		return s, true
	}
	return nil, false
}

// fastDecodeStrings decodes an array of strings; it declines nulls inside,
// which encoding/json decodes as "".
func fastDecodeStrings(raw []byte, a *strArena) ([]string, bool) {
	out := make([]string, 0, 2)
	it := newArrayIter(raw)
	for it.Next() {
		if it.Val[0] != '"' {
			return nil, false
		}
		s, err := a.str(it.Val)
		if err != nil {
			return nil, false
		}
		out = append(out, s)
	}
	return out, it.Err == nil
}

// fastDecodeSchemaMembers walks the members of a field schema whose
// "type" must be quoted (say `"string"`), handing each member named
// exactly as one of fields to member. It declines (false) a "type" that is
// missing, repeated or another, the members that make a field one of the
// enum kinds, a member that names one of fields only under case folding
// (encoding/json would take it), malformed JSON, and any member that
// member declines.
func fastDecodeSchemaMembers(raw []byte, quoted string, fields []string, member func(key string, v []byte) bool) bool {
	if raw[0] != '{' {
		return false
	}
	types := 0
	it := newObjectIter(raw)
	for it.Next() {
		switch string(it.Key) {
		case "type":
			types++
			if types > 1 || string(it.Val) != quoted {
				return false
			}
			continue
		case "enum", "oneOf", "enumNames", "items":
			return false
		}
		if key := exactKey(it.Key, fields); key != "" {
			if !member(key, it.Val) {
				return false
			}
		} else if foldKey(it.Key, fields) != "" {
			return false
		}
	}
	return it.Err == nil && types == 1
}

var stringSchemaFields = []string{"title", "description", "minLength", "maxLength", "format", "default"}

// fastDecodeStringSchema decodes a free-text field; it declines every other
// kind of field, including the string enums.
func fastDecodeStringSchema(raw []byte, a *strArena) (*StringSchema, bool) {
	s := new(StringSchema)
	ok := fastDecodeSchemaMembers(raw, `"string"`, stringSchemaFields, func(key string, v []byte) bool {
		var err error
		switch key {
		case "title":
			err = decodeStringMember(v, a, &s.Title, "title")
		case "description":
			err = decodeStringMember(v, a, &s.Description, "description")
		case "format":
			err = decodeStringMember(v, a, (*string)(&s.Format), "format")
		case "default":
			err = decodeStringMember(v, a, &s.Default, "default")
		case "minLength":
			s.MinLength, err = fastDecodeIntPtr(v, s.MinLength)
		case "maxLength":
			s.MaxLength, err = fastDecodeIntPtr(v, s.MaxLength)
		}
		return err == nil
	})
	if !ok {
		return nil, false
	}
	return s, true
}

var booleanSchemaFields = []string{"title", "description", "default"}

// fastDecodeBooleanSchema decodes a yes/no field; it declines every other
// kind of field, and a default that is not a JSON boolean or null.
func fastDecodeBooleanSchema(raw []byte, a *strArena) (*BooleanSchema, bool) {
	s := new(BooleanSchema)
	ok := fastDecodeSchemaMembers(raw, `"boolean"`, booleanSchemaFields, func(key string, v []byte) bool {
		switch key {
		case "title":
			return decodeStringMember(v, a, &s.Title, "title") == nil
		case "description":
			return decodeStringMember(v, a, &s.Description, "description") == nil
		}
		switch string(v) { // "default"
		case "null":
			s.Default = nil
		case "true", "false":
			b := v[0] == 't'
			s.Default = &b
		default:
			return false
		}
		return true
	})
	if !ok {
		return nil, false
	}
	return s, true
}

// errDecline makes a fast decoder give up; it never reaches a caller.
var errDecline = errors.New("mcp: fast decoder declined")

// fastDecodeIntPtr decodes a plain integer into a *int, as encoding/json
// does (null gives nil); it declines fractions and exponents.
func fastDecodeIntPtr(v []byte, old *int) (*int, error) {
	if v[0] == 'n' {
		return nil, nil
	}
	n, err := strconv.Atoi(string(v))
	if err != nil {
		return old, errDecline
	}
	return &n, nil
}

// MarshalJSON writes the result with "resultType":"input_required".
func (r InputRequiredResult) MarshalJSON() ([]byte, error) {
	bp := getEncBuf()
	b, err := r.appendJSON((*bp)[:0])
	if err != nil {
		encBufPool.Put(bp)
		return r.marshalGeneric()
	}
	return finishEncBuf(bp, b), nil
}

// marshalGeneric is the reference encoding, through encoding/json.
func (r InputRequiredResult) marshalGeneric() ([]byte, error) {
	type plain InputRequiredResult
	r.ResultType = ResultTypeInputRequired
	return json.Marshal(struct {
		plain
		RequestState *string `json:"requestState,omitempty"`
	}{plain(r), stateRef(r.RequestState, r.ForceRequestState)})
}

// appendJSON appends r as encoding/json encodes it (through
// marshalGeneric). Requests other than form elicitations without _meta are
// encoded by their own MarshalJSON.
func (r *InputRequiredResult) appendJSON(dst []byte) ([]byte, error) {
	if r == nil {
		return append(dst, "null"...), nil
	}
	w := objAppender{buf: dst}
	if r.Meta != nil {
		if err := w.value("_meta", r.Meta); err != nil {
			return w.buf, err
		}
	}
	w.str("resultType", string(ResultTypeInputRequired))
	if len(r.InputRequests) > 0 {
		w.key("inputRequests")
		var err error
		if w.buf, err = appendSortedMap(w.buf, r.InputRequests, appendInputRequest); err != nil {
			return w.buf, err
		}
	}
	if r.RequestState != "" || r.ForceRequestState {
		w.key("requestState")
		w.buf = appendJSONString(w.buf, r.RequestState)
	}
	return w.finish(), nil
}

func appendInputRequest(dst []byte, r InputRequest) ([]byte, error) {
	if e, ok := r.(*ElicitRequest); ok && e != nil {
		if p, ok := e.Params.(*ElicitRequestFormParams); ok && p != nil && len(p.Meta) == 0 {
			dst = append(dst, `{"method":"elicitation/create","params":`...)
			w := objAppender{buf: dst}
			w.str("mode", string(p.Mode))
			w.key("message")
			w.buf = appendJSONString(w.buf, p.Message)
			if err := w.value("requestedSchema", &p.RequestedSchema); err != nil {
				return w.buf, err
			}
			return append(w.finish(), '}'), nil
		}
	}
	return appendMarshal(dst, r)
}

// appendStrings appends a list of strings; nil is an empty list (callers
// that must write null for nil check first).
func appendStrings(dst []byte, list []string) []byte {
	dst = append(dst, '[')
	for i, v := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, v)
	}
	return append(dst, ']')
}

// appendJSON appends r as its MarshalJSON writes it, so that AppendJSON
// encodes a form elicitation without encoding/json (a boundary digests
// every question it seals).
func (r *ElicitRequest) appendJSON(dst []byte) ([]byte, error) {
	if r == nil {
		return append(dst, "null"...), nil
	}
	return appendInputRequest(dst, r)
}

var elicitResultFields = []string{"action", "content", "_meta"}

// fastDecodeElicitResult decodes an elicitation answer whose form values
// are strings, booleans, numbers, nulls or lists of strings, or declines.
func fastDecodeElicitResult(raw []byte) (*ElicitResult, bool) {
	r := new(ElicitResult)
	contents := 0
	it := newObjectIter(raw)
	for it.Next() {
		v := it.Val
		switch string(it.Key) {
		case "action":
			if decodeStringMember(v, nil, (*string)(&r.Action), "action") != nil {
				return nil, false
			}
		case "content":
			contents++
			if contents > 1 {
				// encoding/json merges the two maps.
				return nil, false
			}
			if v[0] == 'n' {
				continue
			}
			c, ok := fastDecodeFormValues(v)
			if !ok {
				return nil, false
			}
			r.Content = c
		case "_meta":
			if v[0] != 'n' {
				return nil, false
			}
		default:
			if foldKey(it.Key, elicitResultFields) != "" {
				return nil, false
			}
		}
	}
	return r, it.Err == nil
}

func fastDecodeFormValues(raw []byte) (map[string]any, bool) {
	if raw[0] != '{' {
		return nil, false
	}
	a := newArena(raw)
	out := make(map[string]any, 2)
	it := newObjectIter(raw)
	for it.Next() {
		v := it.Val
		var val any
		switch c := v[0]; {
		case c == '"':
			s, err := a.str(v)
			if err != nil {
				return nil, false
			}
			val = s
		case c == 't':
			val = true
		case c == 'f':
			val = false
		case c == 'n':
			val = nil
		case c == '[':
			list := make([]any, 0, 2)
			ai := newArrayIter(v)
			for ai.Next() {
				if ai.Val[0] != '"' {
					return nil, false
				}
				s, err := a.str(ai.Val)
				if err != nil {
					return nil, false
				}
				list = append(list, s)
			}
			if ai.Err != nil {
				return nil, false
			}
			val = list
		case c == '-' || isDigit(c):
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil {
				return nil, false
			}
			val = f
		default:
			return nil, false
		}
		out[string(it.Key)] = val
	}
	return out, it.Err == nil
}

// MarshalJSON writes the answer as its struct tags say, without
// encoding/json's reflection for the common form values.
func (r ElicitResult) MarshalJSON() ([]byte, error) {
	bp := getEncBuf()
	b, err := r.appendJSON((*bp)[:0])
	if err != nil {
		encBufPool.Put(bp)
		return r.marshalGeneric()
	}
	return finishEncBuf(bp, b), nil
}

func (r ElicitResult) marshalGeneric() ([]byte, error) {
	type plain ElicitResult
	return json.Marshal(plain(r))
}

// appendJSON appends r as marshalGeneric encodes it.
func (r *ElicitResult) appendJSON(dst []byte) ([]byte, error) {
	if r == nil {
		return append(dst, "null"...), nil
	}
	if len(r.Meta) > 0 {
		b, err := r.marshalGeneric()
		if err != nil {
			return dst, err
		}
		return append(dst, b...), nil
	}
	w := objAppender{buf: dst}
	w.key("action")
	w.buf = appendJSONString(w.buf, string(r.Action))
	if len(r.Content) > 0 {
		w.key("content")
		var err error
		if w.buf, err = appendSortedMap(w.buf, r.Content, appendFormValue); err != nil {
			return w.buf, err
		}
	}
	return w.finish(), nil
}

func appendFormValue(dst []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case string:
		return appendJSONString(dst, v), nil
	case bool:
		return strconv.AppendBool(dst, v), nil
	case nil:
		return append(dst, "null"...), nil
	case []string:
		if v == nil {
			return append(dst, "null"...), nil
		}
		return appendStrings(dst, v), nil
	}
	return appendMarshal(dst, v)
}
