package mcp

import (
	"encoding/json"
	"fmt"
)

// The JSON coding of the types declared in discover.go, kept apart so that
// discover.go reads as the schema: the hand-written one-pass coders, which keep
// encoding/json's rules (see jsonscan.go), and the decoders that choose the
// Go type of a union's member.

// MarshalJSON writes a nil SupportedVersions as [].
func (r DiscoverResult) MarshalJSON() ([]byte, error) {
	type plain DiscoverResult
	if r.SupportedVersions == nil {
		r.SupportedVersions = []ProtocolVersion{}
	}
	return json.Marshal(plain(r))
}

// MarshalJSON writes the capabilities as their struct tags say, without
// encoding/json's reflection; the empty value, the most common, is {}.
func (c ClientCapabilities) MarshalJSON() ([]byte, error) {
	bp := getEncBuf()
	b, err := c.appendJSON((*bp)[:0])
	if err != nil {
		encBufPool.Put(bp)
		type plain ClientCapabilities
		return json.Marshal(plain(c))
	}
	return finishEncBuf(bp, b), nil
}

// appendJSON appends c as json.Marshal encodes the struct.
func (c *ClientCapabilities) appendJSON(dst []byte) ([]byte, error) {
	if c == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '{')
	n := len(dst)
	sep := func() {
		if len(dst) > n {
			dst = append(dst, ',')
		}
	}
	var err error
	if len(c.Experimental) > 0 {
		dst = append(dst, `"experimental":`...)
		if dst, err = appendRawMap(dst, c.Experimental); err != nil {
			return dst, err
		}
	}
	if c.Roots != nil {
		sep()
		if c.Roots.ListChanged {
			dst = append(dst, `"roots":{"listChanged":true}`...)
		} else {
			dst = append(dst, `"roots":{}`...)
		}
	}
	if c.Sampling != nil {
		sep()
		dst = append(dst, `"sampling":`...)
		dst = appendFlags(dst, "context", c.Sampling.Context != nil, "tools", c.Sampling.Tools != nil)
	}
	if c.Elicitation != nil {
		sep()
		dst = append(dst, `"elicitation":`...)
		dst = appendFlags(dst, "form", c.Elicitation.Form != nil, "url", c.Elicitation.URL != nil)
	}
	if len(c.Extensions) > 0 {
		sep()
		dst = append(dst, `"extensions":`...)
		if dst, err = appendRawMap(dst, c.Extensions); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// appendFlags appends an object whose members k1 and k2, when set, are
// presence flags ({}).
func appendFlags(dst []byte, k1 string, f1 bool, k2 string, f2 bool) []byte {
	dst = append(dst, '{')
	if f1 {
		dst = append(dst, '"')
		dst = append(dst, k1...)
		dst = append(dst, `":{}`...)
	}
	if f2 {
		if f1 {
			dst = append(dst, ',')
		}
		dst = append(dst, '"')
		dst = append(dst, k2...)
		dst = append(dst, `":{}`...)
	}
	return append(dst, '}')
}

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
