package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Sampling lets a server ask the client's LLM for a completion. Under
// 2026-07-28 the request travels inside an InputRequiredResult and the
// answer comes back in inputResponses. The feature is deprecated but still
// functional.

// CreateMessageRequest asks the client to sample its LLM
// (sampling/createMessage). Under 2026-07-28 it is embedded in
// [InputRequests]: it has no jsonrpc or id member.
type CreateMessageRequest struct {
	// Params are the sampling parameters.
	Params CreateMessageRequestParams
}

// NewCreateMessageRequest returns a sampling request.
func NewCreateMessageRequest(params CreateMessageRequestParams) *CreateMessageRequest {
	return &CreateMessageRequest{Params: params}
}

// Method returns "sampling/createMessage".
func (*CreateMessageRequest) Method() string { return MethodCreateMessage }

// MarshalJSON writes {"method":"sampling/createMessage","params":...}.
func (r CreateMessageRequest) MarshalJSON() ([]byte, error) {
	return marshalEmbeddedRequest(MethodCreateMessage, r.Params)
}

// UnmarshalJSON decodes the request, rejecting any other method.
func (r *CreateMessageRequest) UnmarshalJSON(data []byte) error {
	*r = CreateMessageRequest{}
	params, err := unmarshalEmbeddedRequest(data, MethodCreateMessage)
	if err != nil || params == nil {
		return err
	}
	return json.Unmarshal(params, &r.Params)
}

// IncludeContext asks the client to include context from MCP servers in a
// sampling prompt (deprecated except for "none").
type IncludeContext string

// The includeContext values.
const (
	IncludeContextNone       IncludeContext = "none"
	IncludeContextThisServer IncludeContext = "thisServer"
	IncludeContextAllServers IncludeContext = "allServers"
)

// CreateMessageRequestParams are the parameters of a sampling request.
type CreateMessageRequestParams struct {
	// Messages are the conversation to continue. A nil Messages is written
	// as [].
	Messages []SamplingMessage `json:"messages"`
	// ModelPreferences guide the client's choice of model.
	ModelPreferences *ModelPreferences `json:"modelPreferences,omitempty"`
	// SystemPrompt is a system prompt the client may use.
	SystemPrompt string `json:"systemPrompt,omitempty"`
	// IncludeContext asks for context from MCP servers; values other than
	// "none" need the client's sampling.context capability.
	IncludeContext IncludeContext `json:"includeContext,omitempty"`
	// Temperature is the sampling temperature, if any.
	Temperature *float64 `json:"temperature,omitempty"`
	// MaxTokens is the most tokens to sample. Always written.
	MaxTokens int64 `json:"maxTokens"`
	// StopSequences end sampling when produced.
	StopSequences []string `json:"stopSequences,omitempty"`
	// Metadata is passed to the LLM provider as is.
	Metadata map[string]any `json:"metadata,omitempty"`
	// Tools the model may call; needs the client's sampling.tools
	// capability.
	Tools []Tool `json:"tools,omitempty"`
	// ToolChoice controls tool use; needs sampling.tools.
	ToolChoice *ToolChoice `json:"toolChoice,omitempty"`
	// Meta is the params' _meta (legacy sessions only).
	Meta MetaObject `json:"_meta,omitempty"`
}

// MarshalJSON writes a nil Messages as [].
func (p CreateMessageRequestParams) MarshalJSON() ([]byte, error) {
	type plain CreateMessageRequestParams
	if p.Messages == nil {
		p.Messages = []SamplingMessage{}
	}
	return json.Marshal(plain(p))
}

// UsesTools reports whether the request needs the sampling.tools capability.
func (p *CreateMessageRequestParams) UsesTools() bool {
	return len(p.Tools) > 0 || p.ToolChoice != nil
}

// ToolChoiceMode says whether and how the model should use tools.
type ToolChoiceMode string

// The tool choice modes.
const (
	ToolChoiceAuto     ToolChoiceMode = "auto"
	ToolChoiceRequired ToolChoiceMode = "required"
	ToolChoiceNone     ToolChoiceMode = "none"
)

// ToolChoice controls tool use in sampling.
type ToolChoice struct {
	// Mode is the tool choice mode; empty means auto.
	Mode ToolChoiceMode `json:"mode,omitempty"`
}

// ModelPreferences guide the client's choice of model. Priorities range
// from 0 to 1; nil means unspecified.
type ModelPreferences struct {
	// Hints name models or families, in order of preference.
	Hints []ModelHint `json:"hints,omitempty"`
	// CostPriority is how much low cost matters.
	CostPriority *float64 `json:"costPriority,omitempty"`
	// SpeedPriority is how much low latency matters.
	SpeedPriority *float64 `json:"speedPriority,omitempty"`
	// IntelligencePriority is how much capability matters.
	IntelligencePriority *float64 `json:"intelligencePriority,omitempty"`
}

// ModelHint names a model or model family, matched as a substring.
type ModelHint struct {
	// Name is the hint, such as "claude-3-5-sonnet" or "claude".
	Name string `json:"name,omitempty"`
}

// SamplingMessage is one message of a sampling conversation.
type SamplingMessage struct {
	// Role is who says it.
	Role Role `json:"role"`
	// Content is one block or several.
	Content SamplingContent `json:"content"`
	// Meta is the message's _meta.
	Meta MetaObject `json:"_meta,omitempty"`
}

// SamplingMessageContentBlock is one block of sampling content:
// *TextContent, *ImageContent, *AudioContent, *ToolUseContent or
// *ToolResultContent. The interface is sealed. Decode one with
// [DecodeSamplingMessageContentBlock].
type SamplingMessageContentBlock interface {
	isSamplingContent()
}

func (*TextContent) isSamplingContent()       {}
func (*ImageContent) isSamplingContent()      {}
func (*AudioContent) isSamplingContent()      {}
func (*ToolUseContent) isSamplingContent()    {}
func (*ToolResultContent) isSamplingContent() {}

// DecodeSamplingMessageContentBlock decodes one sampling content block,
// choosing the Go type by its "type" member.
func DecodeSamplingMessageContentBlock(data []byte) (SamplingMessageContentBlock, error) {
	typ, _, err := peekString(data, "type")
	if err != nil {
		return nil, err
	}
	var c SamplingMessageContentBlock
	switch typ {
	case "text":
		c = new(TextContent)
	case "image":
		c = new(ImageContent)
	case "audio":
		c = new(AudioContent)
	case "tool_use":
		c = new(ToolUseContent)
	case "tool_result":
		c = new(ToolResultContent)
	default:
		return nil, fmt.Errorf("mcp: sampling content type %q: %w", typ, ErrUnknownContentType)
	}
	if err := json.Unmarshal(data, c); err != nil {
		return nil, err
	}
	return c, nil
}

// SamplingContent is the content of a sampling message or result: one
// block or several. One block is written as a bare object (which every
// protocol version understands), any other number as an array; both forms
// decode.
type SamplingContent []SamplingMessageContentBlock

// MarshalJSON writes one block as an object and anything else as an array.
func (c SamplingContent) MarshalJSON() ([]byte, error) {
	if len(c) == 1 {
		return json.Marshal(c[0])
	}
	if c == nil {
		return []byte("[]"), nil
	}
	return json.Marshal([]SamplingMessageContentBlock(c))
}

// UnmarshalJSON decodes a block or an array of blocks.
func (c *SamplingContent) UnmarshalJSON(data []byte) error {
	switch jsonKind(data) {
	case '{':
		b, err := DecodeSamplingMessageContentBlock(data)
		if err != nil {
			return err
		}
		*c = SamplingContent{b}
		return nil
	case '[':
		var raws []json.RawMessage
		if err := json.Unmarshal(data, &raws); err != nil {
			return err
		}
		out := make(SamplingContent, len(raws))
		for i, raw := range raws {
			b, err := DecodeSamplingMessageContentBlock(raw)
			if err != nil {
				return fmt.Errorf("content[%d]: %w", i, err)
			}
			out[i] = b
		}
		*c = out
		return nil
	case 'n':
		*c = nil
		return nil
	default:
		return fmt.Errorf("mcp: sampling content must be an object or an array, not %s", describe(data))
	}
}

// ToolUseContent is a model's request to call a tool, in sampling.
type ToolUseContent struct {
	// ID identifies this tool use; a ToolResultContent refers to it.
	ID string `json:"id"`
	// Name is the tool to call.
	Name string `json:"name"`
	// Input is the tool's arguments. A nil Input is written as {}.
	Input map[string]any `json:"input"`
	// Meta is the block's _meta.
	Meta MetaObject `json:"_meta,omitempty"`
}

// MarshalJSON writes the block with "type":"tool_use".
func (c ToolUseContent) MarshalJSON() ([]byte, error) {
	type plain ToolUseContent
	if c.Input == nil {
		c.Input = map[string]any{}
	}
	b, err := json.Marshal(plain(c))
	return prependMember(typeToolUse, b, err)
}

// UnmarshalJSON decodes a tool-use block, rejecting any other "type".
func (c *ToolUseContent) UnmarshalJSON(data []byte) error {
	type plain ToolUseContent
	*c = ToolUseContent{}
	return unmarshalTagged(data, "tool_use", (*plain)(c), ErrUnknownContentType)
}

// ToolResultContent is the result of a tool use, in sampling.
type ToolResultContent struct {
	// ToolUseID is the ID of the ToolUseContent this answers.
	ToolUseID string `json:"toolUseId"`
	// Content is the unstructured result. A nil Content is written as [].
	Content []ContentBlock `json:"content"`
	// StructuredContent is the structured result, if any; see
	// [CallToolResult.StructuredContent] for how it encodes and decodes.
	StructuredContent any `json:"structuredContent,omitempty"`
	// IsError marks a failed tool use. False is not sent.
	IsError bool `json:"isError,omitempty"`
	// Meta is the block's _meta.
	Meta MetaObject `json:"_meta,omitempty"`
}

// MarshalJSON writes the block with "type":"tool_result".
func (c ToolResultContent) MarshalJSON() ([]byte, error) {
	type plain ToolResultContent
	c.Content = nonNilContent(c.Content)
	b, err := json.Marshal(plain(c))
	return prependMember(typeToolResult, b, err)
}

// UnmarshalJSON decodes a tool-result block, rejecting any other "type".
func (c *ToolResultContent) UnmarshalJSON(data []byte) error {
	type plain ToolResultContent
	*c = ToolResultContent{}
	w := struct {
		*plain
		Content           contentBlockList `json:"content"`
		StructuredContent json.RawMessage  `json:"structuredContent"`
	}{plain: (*plain)(c)}
	if err := unmarshalTagged(data, "tool_result", &w, ErrUnknownContentType); err != nil {
		return err
	}
	c.Content = w.Content
	if len(w.StructuredContent) > 0 && !isNullJSON(w.StructuredContent) {
		c.StructuredContent = w.StructuredContent
	}
	return nil
}

// Standard stop reasons of a [CreateMessageResult]; the field is open to
// provider-specific values.
const (
	StopReasonEndTurn      = "endTurn"
	StopReasonStopSequence = "stopSequence"
	StopReasonMaxTokens    = "maxTokens"
	StopReasonToolUse      = "toolUse"
)

// CreateMessageResult is the client's answer to a sampling request: the
// sampled message. Under 2026-07-28 it travels in inputResponses and is not
// a Result (it has no resultType).
type CreateMessageResult struct {
	// Role is who sent the message, normally assistant.
	Role Role `json:"role"`
	// Content is one block or several.
	Content SamplingContent `json:"content"`
	// Model names the model that produced the message.
	Model string `json:"model"`
	// StopReason says why sampling stopped, such as StopReasonEndTurn.
	StopReason string `json:"stopReason,omitempty"`
	// Meta is the result's _meta.
	Meta MetaObject `json:"_meta,omitempty"`
}

// Text returns the text of the result's text blocks, concatenated.
func (r *CreateMessageResult) Text() string {
	var s string
	for _, b := range r.Content {
		if t, ok := b.(*TextContent); ok {
			s += t.Text
		}
	}
	return s
}

// validate checks what a server needs from a sampling answer: a valid role
// and some content.
func (r *CreateMessageResult) validate() error {
	if !r.Role.Valid() {
		return fmt.Errorf("role %q is not user or assistant", r.Role)
	}
	if len(r.Content) == 0 {
		return errors.New("no content")
	}
	return nil
}

// marshalEmbeddedRequest writes {"method":method,"params":params}.
func marshalEmbeddedRequest(method string, params any) ([]byte, error) {
	b, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, len(b)+len(method)+24)
	out = append(out, `{"method":`...)
	out = appendJSONString(out, method)
	if !isNullJSON(b) {
		out = append(out, `,"params":`...)
		out = append(out, b...)
	}
	return append(out, '}'), nil
}

// unmarshalEmbeddedRequest checks an embedded request's method and returns
// its raw params (nil when absent or null).
func unmarshalEmbeddedRequest(data []byte, want string) (json.RawMessage, error) {
	var method string
	var params json.RawMessage
	var sawMethod bool
	it := newObjectIter(data)
	for it.Next() {
		switch string(it.Key) {
		case "method":
			m, err := decodeString(it.Val)
			if err != nil {
				return nil, err
			}
			method, sawMethod = m, true
		case "params":
			if !isNullJSON(it.Val) {
				params = it.Val
			}
		}
	}
	if it.Err != nil {
		return nil, it.Err
	}
	if sawMethod && method != want {
		return nil, fmt.Errorf("mcp: method is %q, want %q: %w", method, want, ErrUnknownInputRequest)
	}
	return params, nil
}
