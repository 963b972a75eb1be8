package mcp

import "errors"

// ContentBlock is one piece of content in a tool result or prompt message:
// *TextContent, *ImageContent, *AudioContent, *ResourceLink or
// *EmbeddedResource. The interface is sealed; the types write their own
// "type" member, so a literal such as &TextContent{Text: "hi"} is complete.
// Decode one with [DecodeContentBlock].
type ContentBlock interface {
	isContentBlock()
}

// ErrUnknownContentType is matched by the error for a content block whose
// "type" is missing or not one the union allows.
var ErrUnknownContentType = errors.New("mcp: unknown content type")

// TextContent is text.
//
//mcp:json type=text
type TextContent struct {
	// Text is the text.
	Text string `json:"text"`
	// Annotations are optional display hints.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Meta is the block's _meta.
	Meta MetaObject `json:"_meta,omitempty"`
}

// ImageContent is an image.
//
//mcp:json type=image unknown=ErrUnknownContentType
type ImageContent struct {
	// Data is the image; it travels base64-encoded.
	Data []byte `json:"data"`
	// MIMEType is the image's type, such as "image/png".
	MIMEType string `json:"mimeType"`
	// Annotations are optional display hints.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Meta is the block's _meta.
	Meta MetaObject `json:"_meta,omitempty"`
}

// AudioContent is a sound.
//
//mcp:json type=audio unknown=ErrUnknownContentType
type AudioContent struct {
	// Data is the audio; it travels base64-encoded.
	Data []byte `json:"data"`
	// MIMEType is the audio's type, such as "audio/wav".
	MIMEType string `json:"mimeType"`
	// Annotations are optional display hints.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Meta is the block's _meta.
	Meta MetaObject `json:"_meta,omitempty"`
}

// ResourceLink points to a resource the client may read; unlike
// [EmbeddedResource] it does not carry the contents.
//
//mcp:json type=resource_link unknown=ErrUnknownContentType
type ResourceLink struct {
	// URI identifies the resource.
	URI string `json:"uri"`
	// Name is the resource's programmatic name.
	Name string `json:"name"`
	// Title is a display name.
	Title string `json:"title,omitempty"`
	// Description says what the resource is.
	Description string `json:"description,omitempty"`
	// MIMEType is the resource's type, if known.
	MIMEType string `json:"mimeType,omitempty"`
	// Size is the raw size in bytes, if known (0 is not sent).
	Size int64 `json:"size,omitempty"`
	// Annotations are optional display hints.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Icons may be shown with the link.
	Icons []Icon `json:"icons,omitempty"`
	// Meta is the block's _meta.
	Meta MetaObject `json:"_meta,omitempty"`
}

// EmbeddedResource carries a resource's contents inline.
type EmbeddedResource struct {
	// Resource is the contents: *TextResourceContents or
	// *BlobResourceContents.
	Resource ResourceContents `json:"resource"`
	// Annotations are optional display hints.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Meta is the block's _meta.
	Meta MetaObject `json:"_meta,omitempty"`
}

func (*TextContent) isContentBlock()      {}
func (*ImageContent) isContentBlock()     {}
func (*AudioContent) isContentBlock()     {}
func (*ResourceLink) isContentBlock()     {}
func (*EmbeddedResource) isContentBlock() {}

// NewTextContent returns a text block.
func NewTextContent(text string) *TextContent { return &TextContent{Text: text} }

// NewImageContent returns an image block.
func NewImageContent(data []byte, mimeType string) *ImageContent {
	return &ImageContent{Data: data, MIMEType: mimeType}
}

// NewAudioContent returns an audio block.
func NewAudioContent(data []byte, mimeType string) *AudioContent {
	return &AudioContent{Data: data, MIMEType: mimeType}
}

// NewEmbeddedResource returns a block embedding contents.
func NewEmbeddedResource(contents ResourceContents) *EmbeddedResource {
	return &EmbeddedResource{Resource: contents}
}
