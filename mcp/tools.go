package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/parley-mcp/parley/internal/jsontext"
)

// Tool describes a tool a server offers, as listed by tools/list.
//
//mcp:json default=InputSchema:emptyObjectSchema
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

// ToolAnnotations are hints about a tool's behaviour. They are not
// guarantees: clients must not trust them from untrusted servers. A nil hint
// means "unspecified", which is not the same as false (DestructiveHint and
// OpenWorldHint default to true).
//
//mcp:json
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
//
//mcp:json present=RequestState:ForceRequestState
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
	// An empty one is sent only with ForceRequestState.
	RequestState string `json:"requestState,omitempty"`
	// ForceRequestState makes an empty RequestState present:
	// "requestState":"" is a state, not none. Decoding sets it exactly when
	// the member is present and empty. Read the state with
	// LookupRequestState to tell the two apart.
	ForceRequestState bool `json:"-"`
}

// RequestMeta returns the params' _meta, allocating it if needed.
func (p *CallToolRequestParams) RequestMeta() *RequestMetaObject { return requestMeta(&p.Meta) }

// Continuation returns pointers to the params' inputResponses and
// requestState; see [InputResponseParams]. The *string cannot say that an
// empty state is present: use LookupRequestState and SetRequestState.
func (p *CallToolRequestParams) Continuation() (*InputResponses, *string) {
	return &p.InputResponses, &p.RequestState
}

// LookupRequestState returns the requestState and whether it is present;
// see [RequestStateParams].
func (p *CallToolRequestParams) LookupRequestState() (string, bool) {
	return lookupState(p.RequestState, p.ForceRequestState)
}

// SetRequestState sets or removes the requestState; see
// [RequestStateParams].
func (p *CallToolRequestParams) SetRequestState(state string, present bool) {
	setState(&p.RequestState, &p.ForceRequestState, state, present)
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
		return newArgumentsError(p.Name, err)
	}
	return nil
}

// ArgumentsError is the error of [CallToolRequestParams.DecodeArguments]
// for arguments that do not fit the value they are decoded into. Its
// message is written for the client, so a handler can send it as it is
// (wire.InvalidParams("Invalid params: %v", err)): it names the argument
// and the JSON kinds, never a Go type. The decoder's own error, with the Go
// detail, stays in Err for the log.
type ArgumentsError struct {
	// Tool is the tool whose arguments these are.
	Tool string
	// Argument is the path of the argument that did not fit (such as
	// "region" or "servers.2.port"), or "" when the arguments as a whole
	// did not (not an object, not JSON).
	Argument string
	// Got and Want are the JSON kinds found and wanted ("a string", "a
	// number", "an object", ...), when the error is one of kind.
	Got, Want string
	// Err is the decoder's error.
	Err error
}

// Error says which argument did not fit and how.
func (e *ArgumentsError) Error() string {
	switch {
	case e.Argument != "" && e.Want != "":
		return fmt.Sprintf("mcp: tool %q: argument %q must be %s, not %s", e.Tool, e.Argument, e.Want, e.Got)
	case e.Want != "":
		return fmt.Sprintf("mcp: tool %q: the arguments must be %s, not %s", e.Tool, e.Want, e.Got)
	}
	var se *json.SyntaxError
	if errors.As(e.Err, &se) {
		return fmt.Sprintf("mcp: tool %q: the arguments are not valid JSON", e.Tool)
	}
	return fmt.Sprintf("mcp: tool %q: the arguments do not fit", e.Tool)
}

// Unwrap returns the decoder's error.
func (e *ArgumentsError) Unwrap() error { return e.Err }

func newArgumentsError(tool string, err error) *ArgumentsError {
	ae := &ArgumentsError{Tool: tool, Err: err}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		ae.Argument = te.Field
		ae.Got = jsonKindPhrase(te.Value)
		if te.Type != nil {
			ae.Want = goKindPhrase(te.Type.Kind())
		}
	}
	return ae
}

// jsonKindPhrase turns the Value of a json.UnmarshalTypeError (the JSON
// kind found: "string", "number", "number 1.5", "object", ...) into a
// phrase.
func jsonKindPhrase(v string) string {
	kind, _, _ := strings.Cut(v, " ")
	switch kind {
	case "object", "array":
		return "an " + kind
	case "string", "number", "bool":
		if kind == "bool" {
			kind = "boolean"
		}
		return "a " + kind
	case "null":
		return "null"
	}
	return "another kind of value"
}

// goKindPhrase names the JSON kind a Go kind decodes from.
func goKindPhrase(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "another kind of value"
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
	b, err := Marshal(v) // json.Marshal's bytes and errors
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

// CallToolResult is the complete answer to tools/call.
//
// A tool that fails in a way the model should see (bad input, an upstream
// error) returns a result with IsError set, not a JSON-RPC error.
//
//mcp:json nonnil=Content
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
	return newTextResult(text, false)
}

// textResultBlock is a one-text-block result with its content, allocated
// in one piece (one allocation where three were: the result, the slice and
// the block; a tool returns one on every call).
type textResultBlock struct {
	res     CallToolResult
	content [1]ContentBlock
	text    TextContent
}

func newTextResult(text string, isError bool) *CallToolResult {
	b := &textResultBlock{text: TextContent{Text: text}}
	b.content[0] = &b.text
	b.res.Content = b.content[:]
	b.res.IsError = isError
	return &b.res
}

// ErrorResult returns a tool-error result (IsError set) holding one text
// block that tells the model what went wrong.
func ErrorResult(text string) *CallToolResult {
	return newTextResult(text, true)
}

// Text returns the text of the result's text blocks, in order, joined by
// newlines: what a tool said, for printing or logging it. Images, audio,
// resource links and embedded resources are left out, and so is
// StructuredContent (decode it with DecodeStructuredContent). A nil result
// has no text.
func (r *CallToolResult) Text() string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	n := 0
	for _, c := range r.Content {
		t, ok := c.(*TextContent)
		if !ok || t == nil {
			continue
		}
		if n > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(t.Text)
		n++
	}
	return b.String()
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

// ListToolsResult is a page of tools/list. It is cacheable.
//
//mcp:json nonnil=Tools
type ListToolsResult struct {
	CacheableResult
	// Tools are this page's tools, in a deterministic order.
	Tools []Tool `json:"tools"`
	// NextCursor, when not empty, fetches the next page.
	NextCursor Cursor `json:"nextCursor,omitempty"`
}
