package mcp

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
)

// The JSON coding of the types declared in resources.go, kept apart so that
// resources.go reads as the schema: the hand-written one-pass coders, which keep
// encoding/json's rules (see jsonscan.go), and the decoders that choose the
// Go type of a union's member.

// UnmarshalJSON decodes p as encoding/json decodes the struct, and sets
// ForceRequestState when the requestState it decoded is present and empty.
func (p *ReadResourceRequestParams) UnmarshalJSON(data []byte) error {
	type plain ReadResourceRequestParams
	if err := json.Unmarshal(data, (*plain)(p)); err != nil {
		return err
	}
	p.ForceRequestState = forceAfterDecode(data, p.RequestState, p.ForceRequestState)
	return nil
}

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
