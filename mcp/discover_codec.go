package mcp

import (
	"encoding/json"
	"fmt"
)

// The JSON coding of the types declared in discover.go, kept apart so that
// discover.go reads as the schema: the hand-written one-pass coders, which keep
// encoding/json's rules (see jsonscan.go), and the decoders that choose the
// Go type of a union's member.

// UnmarshalJSON decodes capabilities in one pass; it runs on every request.
// Unknown members are ignored.
func (c *ClientCapabilities) UnmarshalJSON(data []byte) error {
	return c.decode(data, nil)
}

// capsBlock holds the sub-capabilities of one ClientCapabilities, so that
// decoding allocates them together.
type capsBlock struct {
	elicitation ElicitationCapability
	sampling    SamplingCapability
	roots       RootsCapability
}

// decode decodes c from data, taking sub-capabilities from blk when it is
// not nil.
func (c *ClientCapabilities) decode(data []byte, blk *capsBlock) error {
	*c = ClientCapabilities{}
	if isNullJSON(data) {
		return nil
	}
	it := newObjectIter(data)
	for it.Next() {
		var err error
		if !isObject(it.Val) {
			if !isNullJSON(it.Val) {
				switch string(it.Key) {
				case "experimental", "extensions", "roots", "sampling", "elicitation":
					return fmt.Errorf("mcp: client capability %q: %w", it.Key, errNotObject(it.Val))
				}
			}
			continue
		}
		switch string(it.Key) {
		case "experimental":
			c.Experimental, err = decodeRawMap(it.Val)
		case "extensions":
			c.Extensions, err = decodeRawMap(it.Val)
		case "roots", "sampling", "elicitation":
			if blk == nil {
				blk = new(capsBlock)
			}
			switch string(it.Key) {
			case "roots":
				c.Roots = &blk.roots
				in := newObjectIter(it.Val)
				for err == nil && in.Next() {
					if string(in.Key) == "listChanged" {
						c.Roots.ListChanged, err = decodeBool(in.Val)
					}
				}
				if err == nil {
					err = in.Err
				}
			case "sampling":
				c.Sampling = &blk.sampling
				err = decodeFlags(it.Val, "context", &c.Sampling.Context, "tools", &c.Sampling.Tools)
			default:
				c.Elicitation = &blk.elicitation
				err = decodeFlags(it.Val, "form", &c.Elicitation.Form, "url", &c.Elicitation.URL)
			}
		}
		if err != nil {
			return fmt.Errorf("mcp: client capability %q: %w", it.Key, err)
		}
	}
	return it.Err
}

// decodeFlags decodes an object whose members k1 and k2 are presence flags
// (objects whose content is not kept).
func decodeFlags(raw []byte, k1 string, f1 **struct{}, k2 string, f2 **struct{}) error {
	it := newObjectIter(raw)
	for it.Next() {
		var f **struct{}
		switch string(it.Key) {
		case k1:
			f = f1
		case k2:
			f = f2
		default:
			continue
		}
		switch {
		case isObject(it.Val):
			*f = &struct{}{}
		case isNullJSON(it.Val):
			*f = nil
		default:
			return fmt.Errorf("%q: %w", it.Key, errNotObject(it.Val))
		}
	}
	return it.Err
}

func errNotObject(raw []byte) error {
	return fmt.Errorf("expected an object, found %s", describe(raw))
}

// decodeRawMap decodes an object into a map of raw values; null gives nil.
func decodeRawMap(raw []byte) (map[string]json.RawMessage, error) {
	if isNullJSON(raw) {
		return nil, nil
	}
	m := make(map[string]json.RawMessage)
	it := newObjectIter(raw)
	for it.Next() {
		m[string(it.Key)] = cloneRaw(it.Val)
	}
	return m, it.Err
}
