package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
)

// The JSON coding of the types declared in content.go, kept apart so that
// content.go reads as the schema: the hand-written one-pass coders, which keep
// encoding/json's rules (see jsonscan.go), and the decoders that choose the
// Go type of a union's member.

// The discriminator members the variants write.
const (
	typeText     = `"type":"text"`
	typeResource = `"type":"resource"`
)

// UnmarshalJSON decodes a text block, rejecting any other "type".
func (c *TextContent) UnmarshalJSON(data []byte) error { return c.decode(data, nil) }

// textContentKeys are the members of a text block, for foldKey.
var textContentKeys = []string{"text", "annotations", "_meta"}

// decode decodes a text block in one pass, taking the text from a (which
// may be nil). It accepts what encoding/json accepted when it decoded the
// block: the first "type" member, if any, must be "text"; member names
// match case-insensitively; a null member leaves its field alone, except
// annotations and _meta, which it clears.
func (c *TextContent) decode(data []byte, a *strArena) error {
	*c = TextContent{}
	var (
		fieldErr error
		typed    bool
	)
	it := newObjectIter(data)
	for it.Next() {
		var key string // always a constant: it ends up in errors
		switch string(it.Key) {
		case "type":
			if typed {
				continue
			}
			typed = true
			if string(it.Val) == `"text"` {
				continue
			}
			got, err := decodeString(it.Val)
			if err != nil {
				return fmt.Errorf("mcp: member %q: %w", "type", err)
			}
			if got != "text" {
				return fmt.Errorf("mcp: \"type\" is %q, want %q: %w", got, "text", ErrUnknownContentType)
			}
			continue
		case "text":
			key = "text"
		case "annotations":
			key = "annotations"
		case "_meta":
			key = "_meta"
		default:
			if key = foldKey(it.Key, textContentKeys); key == "" {
				continue
			}
		}
		if fieldErr != nil {
			continue
		}
		var err error
		switch key {
		case "text":
			if jsonKind(it.Val) == 'n' {
				continue
			}
			if jsonKind(it.Val) != '"' {
				err = &json.UnmarshalTypeError{Value: describe(it.Val), Type: stringType, Field: "text"}
			} else {
				c.Text, err = a.str(it.Val)
			}
		case "annotations":
			if jsonKind(it.Val) == 'n' {
				c.Annotations = nil
				continue
			}
			if c.Annotations == nil {
				c.Annotations = new(Annotations)
			}
			err = json.Unmarshal(it.Val, c.Annotations)
		case "_meta":
			err = json.Unmarshal(it.Val, &c.Meta)
		}
		if err != nil {
			fieldErr = fmt.Errorf("mcp: text content %q: %w", key, err)
		}
	}
	if it.Err != nil {
		return it.Err
	}
	return fieldErr
}

// MarshalJSON writes the block with "type":"resource".
func (c EmbeddedResource) MarshalJSON() ([]byte, error) {
	type plain EmbeddedResource
	if c.Resource == nil {
		return nil, errors.New("mcp: EmbeddedResource without Resource")
	}
	b, err := json.Marshal(plain(c))
	return prependMember(typeResource, b, err)
}

// UnmarshalJSON decodes an embedded resource, rejecting any other "type".
func (c *EmbeddedResource) UnmarshalJSON(data []byte) error {
	type plain EmbeddedResource
	*c = EmbeddedResource{}
	w := struct {
		*plain
		Resource resourceContentsValue `json:"resource"`
	}{plain: (*plain)(c)}
	if err := unmarshalTagged(data, "resource", &w, ErrUnknownContentType); err != nil {
		return err
	}
	c.Resource = w.Resource.v
	if c.Resource == nil {
		return errors.New("mcp: embedded resource without resource contents")
	}
	return nil
}

// unmarshalTagged checks that the discriminator "type", when present, is
// want, and decodes data into dst. A mismatch wraps sentinel.
func unmarshalTagged(data []byte, want string, dst any, sentinel error) error {
	got, ok, err := peekString(data, "type")
	if err != nil {
		return err
	}
	if ok && got != want {
		return fmt.Errorf("mcp: \"type\" is %q, want %q: %w", got, want, sentinel)
	}
	return json.Unmarshal(data, dst)
}

// DecodeContentBlock decodes one content block, choosing the Go type by its
// "type" member.
func DecodeContentBlock(data []byte) (ContentBlock, error) {
	return decodeContentBlock(data, nil, nil)
}

// decodeContentBlock is DecodeContentBlock, decoding a text block into text
// when it is not nil and taking its text from a (which may be nil).
func decodeContentBlock(data []byte, a *strArena, text *TextContent) (ContentBlock, error) {
	if v, ok := plainTextBlock(data); ok {
		// The block nearly every tool returns, written as Parley and most
		// SDKs write it: decoded without walking it twice.
		s, err := a.str(v)
		if err != nil {
			return nil, err
		}
		if text == nil {
			text = new(TextContent)
		}
		*text = TextContent{Text: s}
		return text, nil
	}
	typ, err := peekContentType(data)
	if err != nil {
		return nil, err
	}
	var c ContentBlock
	switch typ {
	case "text":
		if text == nil {
			text = new(TextContent)
		}
		if err := text.decode(data, a); err != nil {
			return nil, err
		}
		return text, nil
	case "image":
		c = new(ImageContent)
	case "audio":
		c = new(AudioContent)
	case "resource_link":
		c = new(ResourceLink)
	case "resource":
		c = new(EmbeddedResource)
	default:
		return nil, fmt.Errorf("mcp: content block type %q: %w", typ, ErrUnknownContentType)
	}
	if err := json.Unmarshal(data, c); err != nil {
		return nil, err
	}
	return c, nil
}

// plainTextPrefix starts a text block in its most common form.
const plainTextPrefix = `{"type":"text","text":"`

// plainTextBlock reports whether data is exactly {"type":"text","text":s}
// with s a string holding no quote, backslash or control character, and
// returns s's JSON text (quotes included). Such a block decodes to
// TextContent{Text: s} by the general path too; anything else takes it.
func plainTextBlock(data []byte) ([]byte, bool) {
	if len(data) < len(plainTextPrefix)+2 || string(data[:len(plainTextPrefix)]) != plainTextPrefix ||
		data[len(data)-2] != '"' || data[len(data)-1] != '}' {
		return nil, false
	}
	for _, b := range data[len(plainTextPrefix) : len(data)-2] {
		if b < 0x20 || b == '"' || b == '\\' {
			return nil, false
		}
	}
	return data[len(plainTextPrefix)-1 : len(data)-1], true
}

// contentTypes are the discriminators of the content blocks.
var contentTypes = []string{"text", "image", "audio", "resource_link", "resource"}

// peekContentType is peekString(data, "type") without allocating for the
// types of content blocks.
func peekContentType(data []byte) (string, error) {
	v, err := peekMember(data, "type")
	if err != nil || v == nil {
		return "", err
	}
	if len(v) >= 2 && v[0] == '"' {
		for _, t := range contentTypes {
			if string(v[1:len(v)-1]) == t {
				return t, nil
			}
		}
	}
	s, err := decodeString(v)
	if err != nil {
		return "", fmt.Errorf("mcp: member %q: %w", "type", err)
	}
	return s, nil
}

// contentBlockList decodes a JSON array of content blocks; it stands in for
// []ContentBlock inside decoders.
type contentBlockList []ContentBlock

func (l *contentBlockList) UnmarshalJSON(data []byte) error {
	if isNullJSON(data) {
		*l = nil
		return nil
	}
	if jsonKind(data) != '[' {
		return errNotArray(data)
	}
	out, err := decodeContentList(data, nil, nil)
	if err != nil {
		return err
	}
	*l = out
	return nil
}

// decodeContentList decodes a JSON array of content blocks, taking the
// texts from a (which may be nil). When store is not nil and unused, the
// list starts in its room and the first text block goes in it.
func decodeContentList(data []byte, a *strArena, store *contentStore) ([]ContentBlock, error) {
	var out []ContentBlock
	if store != nil && !store.used {
		store.used = true
		out = store.list[:0:len(store.list)]
	} else {
		out = []ContentBlock{}
	}
	it := newArrayIter(data)
	for i := 0; it.Next(); i++ {
		var text *TextContent
		if store != nil && !store.textUsed {
			text = &store.text
		}
		c, err := decodeContentBlock(it.Val, a, text)
		if err != nil {
			return nil, fmt.Errorf("content[%d]: %w", i, err)
		}
		if text != nil && c == ContentBlock(text) {
			store.textUsed = true
		}
		out = append(out, c)
	}
	if it.Err != nil {
		return nil, it.Err
	}
	return out, nil
}

// contentStore is room for the common content of a result, one text block,
// allocated with the result.
type contentStore struct {
	list     [1]ContentBlock
	text     TextContent
	used     bool
	textUsed bool
}

func errNotArray(raw []byte) error {
	return fmt.Errorf("expected an array, found %s", describe(raw))
}

// nonNilContent returns l, or an empty list when l is nil, so that a
// required content array is written as [] rather than null.
func nonNilContent(l []ContentBlock) []ContentBlock {
	if l == nil {
		return []ContentBlock{}
	}
	return l
}
