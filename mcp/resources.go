package mcp

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
)

// Resource is a piece of data a server exposes under a URI, as listed by
// resources/list.
type Resource struct {
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
	// Icons may be shown with the resource.
	Icons []Icon `json:"icons,omitempty"`
	// Meta is the resource's _meta.
	Meta MetaObject `json:"_meta,omitempty"`
}

// ResourceTemplate describes a family of resources by an RFC 6570 URI
// template, as listed by resources/templates/list.
type ResourceTemplate struct {
	// URITemplate is the template, such as "file:///{path}".
	URITemplate string `json:"uriTemplate"`
	// Name is the template's programmatic name.
	Name string `json:"name"`
	// Title is a display name.
	Title string `json:"title,omitempty"`
	// Description says what the resources are.
	Description string `json:"description,omitempty"`
	// MIMEType is the type of every matching resource, if they share one.
	MIMEType string `json:"mimeType,omitempty"`
	// Annotations are optional display hints.
	Annotations *Annotations `json:"annotations,omitempty"`
	// Icons may be shown with the template.
	Icons []Icon `json:"icons,omitempty"`
	// Meta is the template's _meta.
	Meta MetaObject `json:"_meta,omitempty"`
}

// ResourceContents is the contents of a resource, as read or embedded:
// *TextResourceContents or *BlobResourceContents (the schema's
// ResourceContents is their common part). The interface is sealed. Decode
// one with [DecodeResourceContents].
type ResourceContents interface {
	// ResourceURI returns the URI of the resource the contents belong to.
	ResourceURI() string
	isResourceContents()
}

// TextResourceContents is the contents of a text resource.
type TextResourceContents struct {
	// URI identifies the resource.
	URI string `json:"uri"`
	// MIMEType is the resource's type, if known.
	MIMEType string `json:"mimeType,omitempty"`
	// Text is the contents.
	Text string `json:"text"`
	// Meta is the contents' _meta.
	Meta MetaObject `json:"_meta,omitempty"`
}

// BlobResourceContents is the contents of a binary resource.
type BlobResourceContents struct {
	// URI identifies the resource.
	URI string `json:"uri"`
	// MIMEType is the resource's type, if known.
	MIMEType string `json:"mimeType,omitempty"`
	// Blob is the contents; it travels base64-encoded.
	Blob []byte `json:"blob"`
	// Meta is the contents' _meta.
	Meta MetaObject `json:"_meta,omitempty"`
}

// ResourceURI returns c.URI.
func (c *TextResourceContents) ResourceURI() string { return c.URI }

// ResourceURI returns c.URI.
func (c *BlobResourceContents) ResourceURI() string { return c.URI }

func (*TextResourceContents) isResourceContents() {}
func (*BlobResourceContents) isResourceContents() {}

// ErrUnknownResourceContents is matched by the error for resource contents
// that have neither "text" nor "blob".
var ErrUnknownResourceContents = errors.New("mcp: resource contents have neither text nor blob")

// DecodeResourceContents decodes resource contents, choosing the Go type by
// which member is present: "blob" for binary, "text" for text.
func DecodeResourceContents(data []byte) (ResourceContents, error) {
	return decodeResourceContents(data, nil, nil)
}

// decodeResourceContents is DecodeResourceContents, decoding text contents
// into text when it is not nil and taking their strings from a (which may
// be nil).
func decodeResourceContents(data []byte, a *strArena, text *TextResourceContents) (ResourceContents, error) {
	var hasText, hasBlob bool
	it := newObjectIter(data)
	for it.Next() {
		switch string(it.Key) {
		case "text":
			hasText = true
		case "blob":
			hasBlob = true
		}
	}
	if it.Err != nil {
		return nil, it.Err
	}
	switch {
	case hasBlob:
		c := new(BlobResourceContents)
		if err := json.Unmarshal(data, c); err != nil {
			return nil, err
		}
		return c, nil
	case hasText:
		if text == nil {
			text = new(TextResourceContents)
		}
		if err := text.decode(data, a); err != nil {
			return nil, err
		}
		return text, nil
	}
	return nil, ErrUnknownResourceContents
}

// textResourceContentsKeys are the members of text contents, for foldKey.
var textResourceContentsKeys = []string{"uri", "mimeType", "text", "_meta"}

// decode decodes text contents in one pass, as encoding/json decodes the
// struct: member names match case-insensitively and a null member leaves
// its field alone (except _meta, which it clears).
func (c *TextResourceContents) decode(data []byte, a *strArena) error {
	*c = TextResourceContents{}
	fieldErr, err := decodeMembers(data, "text resource contents", textResourceContentsKeys, nil, func(key string, val []byte) (err error) {
		switch key {
		case "uri":
			err = decodeStringMember(val, a, &c.URI, key)
		case "mimeType":
			err = decodeStringMember(val, a, &c.MIMEType, key)
		case "text":
			err = decodeStringMember(val, a, &c.Text, key)
		case "_meta":
			err = json.Unmarshal(val, &c.Meta)
		}
		return err
	})
	if err != nil {
		return err
	}
	return fieldErr
}

// resourceContentsValue decodes one ResourceContents inside decoders.
type resourceContentsValue struct{ v ResourceContents }

func (r *resourceContentsValue) UnmarshalJSON(data []byte) error {
	if isNullJSON(data) {
		r.v = nil
		return nil
	}
	v, err := DecodeResourceContents(data)
	r.v = v
	return err
}

// ResourceRequestParams are the params of a request about one resource.
type ResourceRequestParams struct {
	// Meta is the request's _meta: protocol version, client capabilities
	// and the rest. A 2026-07-28 request must carry it; legacy requests may
	// omit it (nil).
	Meta *RequestMetaObject `json:"_meta,omitempty"`
	// URI identifies the resource.
	URI string `json:"uri"`
}

// RequestMeta returns the params' _meta, allocating it if needed.
func (p *ResourceRequestParams) RequestMeta() *RequestMetaObject { return requestMeta(&p.Meta) }

// ReadResourceRequestParams are the params of resources/read, one of the
// three requests that may be answered with an [InputRequiredResult].
type ReadResourceRequestParams struct {
	// Meta is the request's _meta: protocol version, client capabilities
	// and the rest. A 2026-07-28 request must carry it; legacy requests may
	// omit it (nil).
	Meta *RequestMetaObject `json:"_meta,omitempty"`
	// URI identifies the resource to read.
	URI string `json:"uri"`
	// InputResponses answer the inputRequests of the previous round.
	InputResponses InputResponses `json:"inputResponses,omitempty"`
	// RequestState echoes the previous round's requestState, byte for byte.
	RequestState string `json:"requestState,omitempty"`
}

// RequestMeta returns the params' _meta, allocating it if needed.
func (p *ReadResourceRequestParams) RequestMeta() *RequestMetaObject { return requestMeta(&p.Meta) }

// Continuation returns pointers to the params' inputResponses and
// requestState; see [InputResponseParams].
func (p *ReadResourceRequestParams) Continuation() (*InputResponses, *string) {
	return &p.InputResponses, &p.RequestState
}

// ReadResourceResult is the complete answer to resources/read. It is
// cacheable.
type ReadResourceResult struct {
	CacheableResult
	// Contents are the resource's contents (a template read may yield
	// several).
	Contents []ResourceContents `json:"contents"`
}

// MarshalJSON writes a nil Contents as [].
func (r ReadResourceResult) MarshalJSON() ([]byte, error) {
	type plain ReadResourceResult
	if r.Contents == nil {
		r.Contents = []ResourceContents{}
	}
	return json.Marshal(plain(r))
}

// UnmarshalJSON decodes the result in one pass, choosing each contents'
// type. It accepts what encoding/json accepted when it decoded the struct:
// member names match case-insensitively, and a null member leaves its
// field alone (except _meta and contents, which it clears).
func (r *ReadResourceResult) UnmarshalJSON(data []byte) error {
	*r = ReadResourceResult{}
	if isJSONNullText(data) {
		return nil
	}
	_, fieldErr, err := r.decode(data, nil)
	if err != nil {
		return err
	}
	return fieldErr
}

// readResourceResultKeys are the members of a result, for foldKey.
var readResourceResultKeys = []string{"_meta", "resultType", "ttlMs", "cacheScope", "contents"}

var int64Type = reflect.TypeFor[int64]()

// readResourceStore is room for what a decoded result commonly points to,
// allocated in one piece: its _meta with serverInfo and a one-item list.
type readResourceStore struct {
	meta     ResultMetaObject
	info     Implementation
	contents [1]ResourceContents
	text     TextResourceContents
	used     bool
	textUsed bool
}

// readResourceResultBlock is a result with its room, allocated in one
// piece.
type readResourceResultBlock struct {
	res   ReadResourceResult
	store readResourceStore
}

// decode is CallToolResult.decode for a resources/read result.
func (r *ReadResourceResult) decode(data []byte, store *readResourceStore) (rt []byte, fieldErr, err error) {
	a := newArena(data)
	fieldErr, err = decodeMembers(data, "resources/read result", readResourceResultKeys, &rt, func(key string, v []byte) (ferr error) {
		switch key {
		case "_meta":
			if v[0] != 'n' && store == nil {
				store = new(readResourceStore)
			}
			if store == nil {
				r.Meta = nil
			} else {
				r.Meta, ferr = decodeResultMetaMember(v, a, &store.meta, &store.info)
			}
		case "resultType":
			ferr = decodeResultTypeMember(v, a, &r.ResultType)
		case "ttlMs":
			switch c := v[0]; {
			case c == 'n':
			case c == '-' || (c >= '0' && c <= '9'):
				n, perr := strconv.ParseInt(string(v), 10, 64)
				if perr != nil {
					ferr = &json.UnmarshalTypeError{Value: "number " + string(v), Type: int64Type, Field: "ttlMs"}
				} else {
					r.TTLMs = n
				}
			default:
				ferr = &json.UnmarshalTypeError{Value: describe(v), Type: int64Type, Field: "ttlMs"}
			}
		case "cacheScope":
			switch string(v) {
			case `"public"`:
				r.CacheScope = CacheScopePublic
			case `"private"`:
				r.CacheScope = CacheScopePrivate
			default:
				s := string(r.CacheScope)
				ferr = decodeStringMember(v, a, &s, "cacheScope")
				r.CacheScope = CacheScope(s)
			}
		case "contents":
			switch v[0] {
			case 'n':
				r.Contents = nil
			case '[':
				if store == nil {
					store = new(readResourceStore)
				}
				r.Contents, ferr = decodeResourceContentsList(v, a, store)
			default:
				ferr = errNotArray(v)
			}
		}
		return ferr
	})
	return rt, fieldErr, err
}

// decodeResourceContentsList decodes a JSON array of contents, known to
// be an array, starting in store's room when it is unused.
func decodeResourceContentsList(data []byte, a *strArena, store *readResourceStore) ([]ResourceContents, error) {
	var out []ResourceContents
	if !store.used {
		store.used = true
		out = store.contents[:0:len(store.contents)]
	} else {
		out = []ResourceContents{}
	}
	it := newArrayIter(data)
	for i := 0; it.Next(); i++ {
		var text *TextResourceContents
		if !store.textUsed {
			text = &store.text
		}
		c, err := decodeResourceContents(it.Val, a, text)
		if err != nil {
			return nil, fmt.Errorf("contents[%d]: %w", i, err)
		}
		if text != nil && c == ResourceContents(text) {
			store.textUsed = true
		}
		out = append(out, c)
	}
	if it.Err != nil {
		return nil, it.Err
	}
	return out, nil
}

// ListResourcesResult is a page of resources/list. It is cacheable.
type ListResourcesResult struct {
	CacheableResult
	// Resources are this page's resources.
	Resources []Resource `json:"resources"`
	// NextCursor, when not empty, fetches the next page.
	NextCursor Cursor `json:"nextCursor,omitempty"`
}

// MarshalJSON writes a nil Resources as [].
func (r ListResourcesResult) MarshalJSON() ([]byte, error) {
	type plain ListResourcesResult
	if r.Resources == nil {
		r.Resources = []Resource{}
	}
	return json.Marshal(plain(r))
}

// ListResourceTemplatesResult is a page of resources/templates/list. It is
// cacheable.
type ListResourceTemplatesResult struct {
	CacheableResult
	// ResourceTemplates are this page's templates.
	ResourceTemplates []ResourceTemplate `json:"resourceTemplates"`
	// NextCursor, when not empty, fetches the next page.
	NextCursor Cursor `json:"nextCursor,omitempty"`
}

// MarshalJSON writes a nil ResourceTemplates as [].
func (r ListResourceTemplatesResult) MarshalJSON() ([]byte, error) {
	type plain ListResourceTemplatesResult
	if r.ResourceTemplates == nil {
		r.ResourceTemplates = []ResourceTemplate{}
	}
	return json.Marshal(plain(r))
}

// PaginatedRequestParams are the params of the list methods.
type PaginatedRequestParams struct {
	// Meta is the request's _meta: protocol version, client capabilities
	// and the rest. A 2026-07-28 request must carry it; legacy requests may
	// omit it (nil).
	Meta *RequestMetaObject `json:"_meta,omitempty"`
	// Cursor, when not empty, asks for the page after the one whose
	// nextCursor it is.
	Cursor Cursor `json:"cursor,omitempty"`
}

// RequestMeta returns the params' _meta, allocating it if needed.
func (p *PaginatedRequestParams) RequestMeta() *RequestMetaObject { return requestMeta(&p.Meta) }
