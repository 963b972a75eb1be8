package mcp

import (
	"encoding/json"
	"fmt"
)

// The JSON coding of the types declared in sampling.go, kept apart so that
// sampling.go reads as the schema: the hand-written one-pass coders, which keep
// encoding/json's rules (see jsonscan.go), and the decoders that choose the
// Go type of a union's member.

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
