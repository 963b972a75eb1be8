package mcp

import (
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
//
//mcp:json nonnil=Messages
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
//
//mcp:json
type ToolChoice struct {
	// Mode is the tool choice mode; empty means auto.
	Mode ToolChoiceMode `json:"mode,omitempty"`
}

// ModelPreferences guide the client's choice of model. Priorities range
// from 0 to 1; nil means unspecified.
//
//mcp:json
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
//
//mcp:json
type ModelHint struct {
	// Name is the hint, such as "claude-3-5-sonnet" or "claude".
	Name string `json:"name,omitempty"`
}

// SamplingMessage is one message of a sampling conversation.
//
//mcp:json
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

// SamplingContent is the content of a sampling message or result: one
// block or several. One block is written as a bare object (which every
// protocol version understands), any other number as an array; both forms
// decode.
type SamplingContent []SamplingMessageContentBlock

// ToolUseContent is a model's request to call a tool, in sampling.
//
//mcp:json type=tool_use nonnil=Input unknown=ErrUnknownContentType
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

// ToolResultContent is the result of a tool use, in sampling.
//
//mcp:json type=tool_result nonnil=Content
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
//
//mcp:json
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
