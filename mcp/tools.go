package mcp

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/parley-mcp/parley/internal/jsontext"
)

// Tool describes a tool a server offers, as listed by tools/list.
type Tool struct {
	// Name identifies the tool in tools/call (1–128 of A-Z a-z 0-9 _ . -).
	Name string `json:"name"`
	// Title is a display name.
	Title string `json:"title,omitempty"`
	// Description tells a model what the tool does and when to use it.
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema (2020-12 unless $schema says
	// otherwise) of the arguments; its root must have "type":"object". The
	// bytes are kept as they are. A nil InputSchema is written as
	// {"type":"object"}.
	InputSchema json.RawMessage `json:"inputSchema"`
	// OutputSchema, when set, is the JSON Schema of structuredContent.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Annotations are behavioural hints for clients.
	Annotations *ToolAnnotations `json:"annotations,omitempty"`
	// Icons may be shown with the tool.
	Icons []Icon `json:"icons,omitempty"`
	// Meta is the tool's _meta.
	Meta MetaObject `json:"_meta,omitempty"`
}

// emptyObjectSchema is the input schema of a tool that takes no arguments.
var emptyObjectSchema = json.RawMessage(`{"type":"object"}`)

// MarshalJSON writes a nil InputSchema as {"type":"object"}.
func (t Tool) MarshalJSON() ([]byte, error) {
	type plain Tool
	if len(t.InputSchema) == 0 {
		t.InputSchema = emptyObjectSchema
	}
	return json.Marshal(plain(t))
}

// ToolAnnotations are hints about a tool's behaviour. They are not
// guarantees: clients must not trust them from untrusted servers. A nil hint
// means "unspecified", which is not the same as false (DestructiveHint and
// OpenWorldHint default to true).
type ToolAnnotations struct {
	// Title is a display name.
	Title string `json:"title,omitempty"`
	// ReadOnlyHint: the tool does not modify its environment.
	ReadOnlyHint *bool `json:"readOnlyHint,omitempty"`
	// DestructiveHint: the tool may perform destructive updates.
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	// IdempotentHint: calling the tool again with the same arguments has no
	// further effect.
	IdempotentHint *bool `json:"idempotentHint,omitempty"`
	// OpenWorldHint: the tool interacts with an open world of external
	// entities.
	OpenWorldHint *bool `json:"openWorldHint,omitempty"`
}

// CallToolRequestParams are the params of tools/call, one of the three
// requests that may be answered with an [InputRequiredResult].
//
// Its decoder makes one pass and keeps Arguments raw: the handler decodes
// them once, into its own type, with [CallToolRequestParams.DecodeArguments].
type CallToolRequestParams struct {
	// Meta is the request's _meta: protocol version, client capabilities
	// and the rest. A 2026-07-28 request must carry it; legacy requests may
	// omit it (nil).
	Meta *RequestMetaObject `json:"_meta,omitempty"`
	// Name is the tool to call.
	Name string `json:"name"`
	// Arguments is the JSON object of arguments, raw; nil when absent.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// InputResponses answer the inputRequests of the previous round.
	InputResponses InputResponses `json:"inputResponses,omitempty"`
	// RequestState echoes the previous round's requestState, byte for byte.
	RequestState string `json:"requestState,omitempty"`
}

// RequestMeta returns the params' _meta, allocating it if needed.
func (p *CallToolRequestParams) RequestMeta() *RequestMetaObject { return requestMeta(&p.Meta) }

// Continuation returns pointers to the params' inputResponses and
// requestState; see [InputResponseParams].
func (p *CallToolRequestParams) Continuation() (*InputResponses, *string) {
	return &p.InputResponses, &p.RequestState
}

// DecodeArguments decodes the arguments into v with encoding/json. Absent
// arguments decode as an empty object.
//
// Arguments that decoders read differently are refused with an error
// matching [ErrAmbiguousArguments] (answer it with -32602): two members of
// one object whose names are equal, or equal under case folding
// ("amount" and "Amount", which encoding/json would both store into one
// field, the last one winning), invalid UTF-8 and escaped lone surrogates.
// The sealed requestState's argument digest and the HTTP Mcp-Param-*
// check read names exactly, so a value they vouch for is the value decoded
// here.
func (p *CallToolRequestParams) DecodeArguments(v any) error {
	raw := p.Arguments
	if len(raw) == 0 || isNullJSON(raw) {
		raw = json.RawMessage("{}")
	}
	if err := jsontext.CheckUnambiguous(raw); err != nil && json.Valid(raw) {
		return fmt.Errorf("mcp: tool %q arguments: %w: %w", p.Name, ErrAmbiguousArguments, err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("mcp: tool %q arguments: %w", p.Name, err)
	}
	return nil
}

// ErrAmbiguousArguments is matched (errors.Is) by the error of
// [CallToolRequestParams.DecodeArguments] for arguments that decoders read
// differently.
var ErrAmbiguousArguments = errors.New("arguments are ambiguous")

// SetArguments sets the arguments to the JSON encoding of v, which must be
// an object (a struct or a map); nil clears them.
func (p *CallToolRequestParams) SetArguments(v any) error {
	if v == nil {
		p.Arguments = nil
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if isNullJSON(b) {
		p.Arguments = nil
		return nil
	}
	if !isObject(b) {
		return fmt.Errorf("mcp: tool arguments must be a JSON object, not %s", describe(b))
	}
	p.Arguments = b
	return nil
}

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
		}
		if err != nil {
			return fmt.Errorf("mcp: tools/call params %q: %w", it.Key, err)
		}
	}
	return it.Err
}

// MarshalJSON writes the params as their struct tags say, without
// encoding/json's reflection.
func (p CallToolRequestParams) MarshalJSON() ([]byte, error) {
	bp := getEncBuf()
	b, err := p.appendJSON((*bp)[:0])
	if err != nil {
		encBufPool.Put(bp)
		type plain CallToolRequestParams
		return json.Marshal(plain(p))
	}
	return finishEncBuf(bp, b), nil
}

// appendJSON appends p as json.Marshal encodes the struct.
func (p *CallToolRequestParams) appendJSON(dst []byte) ([]byte, error) {
	if p == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '{')
	var err error
	if p.Meta != nil {
		dst = append(dst, `"_meta":`...)
		if dst, err = p.Meta.appendJSON(dst); err != nil {
			return dst, err
		}
		dst = append(dst, ',')
	}
	dst = append(dst, `"name":`...)
	dst = appendJSONString(dst, p.Name)
	if len(p.Arguments) > 0 {
		dst = append(dst, `,"arguments":`...)
		if dst, err = appendCompactJSON(dst, p.Arguments); err != nil {
			return dst, err
		}
	}
	if len(p.InputResponses) > 0 {
		dst = append(dst, `,"inputResponses":`...)
		if dst, err = appendRawMap(dst, p.InputResponses); err != nil {
			return dst, err
		}
	}
	if p.RequestState != "" {
		dst = append(dst, `,"requestState":`...)
		dst = appendJSONString(dst, p.RequestState)
	}
	return append(dst, '}'), nil
}

// CallToolResult is the complete answer to tools/call.
//
// A tool that fails in a way the model should see (bad input, an upstream
// error) returns a result with IsError set, not a JSON-RPC error.
type CallToolResult struct {
	Result
	// Content is the unstructured result. A nil Content is written as [].
	Content []ContentBlock `json:"content"`
	// StructuredContent, when not nil, is the structured result; it must
	// conform to the tool's output schema. When sending, set it to any
	// value that encodes to JSON (a struct, a map, a json.RawMessage). When
	// decoded, it holds the raw json.RawMessage; use
	// [CallToolResult.DecodeStructuredContent].
	StructuredContent any `json:"structuredContent,omitempty"`
	// IsError marks the result as a tool error. False is not sent.
	IsError bool `json:"isError,omitempty"`
}

// TextResult returns a result holding one text block.
func TextResult(text string) *CallToolResult {
	return &CallToolResult{Content: []ContentBlock{&TextContent{Text: text}}}
}

// ErrorResult returns a tool-error result (IsError set) holding one text
// block that tells the model what went wrong.
func ErrorResult(text string) *CallToolResult {
	return &CallToolResult{Content: []ContentBlock{&TextContent{Text: text}}, IsError: true}
}

// DecodeStructuredContent decodes StructuredContent into v. It reports
// false when there is none.
func (r *CallToolResult) DecodeStructuredContent(v any) (bool, error) {
	var raw []byte
	switch sc := r.StructuredContent.(type) {
	case nil:
		return false, nil
	case json.RawMessage:
		raw = sc
	case []byte:
		raw = sc
	default:
		b, err := json.Marshal(sc)
		if err != nil {
			return true, err
		}
		raw = b
	}
	return true, json.Unmarshal(raw, v)
}

// MarshalJSON writes a nil Content as [].
func (r CallToolResult) MarshalJSON() ([]byte, error) {
	bp := getEncBuf()
	b, err := r.appendJSON((*bp)[:0])
	if err != nil {
		encBufPool.Put(bp)
		type plain CallToolResult
		r.Content = nonNilContent(r.Content)
		return json.Marshal(plain(r))
	}
	return finishEncBuf(bp, b), nil
}

// appendJSON appends r as MarshalJSON writes it.
func (r *CallToolResult) appendJSON(dst []byte) ([]byte, error) {
	if r == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '{')
	var err error
	if r.Meta != nil {
		dst = append(dst, `"_meta":`...)
		if dst, err = r.Meta.appendJSON(dst); err != nil {
			return dst, err
		}
		dst = append(dst, ',')
	}
	if r.ResultType != "" {
		dst = append(dst, `"resultType":`...)
		dst = appendJSONString(dst, string(r.ResultType))
		dst = append(dst, ',')
	}
	dst = append(dst, `"content":`...)
	if dst, err = appendContentList(dst, r.Content); err != nil {
		return dst, err
	}
	if r.StructuredContent != nil {
		dst = append(dst, `,"structuredContent":`...)
		if raw, ok := r.StructuredContent.(json.RawMessage); ok {
			dst, err = appendRawMessage(dst, raw)
		} else {
			dst, err = appendMarshal(dst, r.StructuredContent)
		}
		if err != nil {
			return dst, err
		}
	}
	if r.IsError {
		dst = append(dst, `,"isError":true`...)
	}
	return append(dst, '}'), nil
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

// ListToolsResult is a page of tools/list. It is cacheable.
type ListToolsResult struct {
	CacheableResult
	// Tools are this page's tools, in a deterministic order.
	Tools []Tool `json:"tools"`
	// NextCursor, when not empty, fetches the next page.
	NextCursor Cursor `json:"nextCursor,omitempty"`
}

// MarshalJSON writes a nil Tools as [].
func (r ListToolsResult) MarshalJSON() ([]byte, error) {
	type plain ListToolsResult
	if r.Tools == nil {
		r.Tools = []Tool{}
	}
	return json.Marshal(plain(r))
}
