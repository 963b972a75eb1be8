package mcp

import (
	"encoding/json"
	"fmt"
)

// The JSON coding of the types declared in common.go, kept apart so that
// common.go reads as the schema: the hand-written one-pass coders, which keep
// encoding/json's rules (see jsonscan.go), and the decoders that choose the
// Go type of a union's member.

// UnmarshalJSON decodes an Implementation in one pass; it runs on every
// request that carries clientInfo. Unknown members are ignored. The string
// fields share one copy of the (small) object's text.
func (m *Implementation) UnmarshalJSON(data []byte) error { return m.decode(data, nil) }

// decode decodes m from data, taking its strings from a; a nil a stands for
// an arena of data itself.
func (m *Implementation) decode(data []byte, a *strArena) error {
	*m = Implementation{}
	if isNullJSON(data) {
		return nil
	}
	if a == nil {
		a = &strArena{src: data}
	}
	it := newObjectIter(data)
	for it.Next() {
		var err error
		switch string(it.Key) {
		case "name":
			m.Name, err = a.str(it.Val)
		case "title":
			m.Title, err = a.str(it.Val)
		case "version":
			m.Version, err = a.str(it.Val)
		case "description":
			m.Description, err = a.str(it.Val)
		case "websiteUrl":
			m.WebsiteURL, err = a.str(it.Val)
		case "icons":
			err = json.Unmarshal(it.Val, &m.Icons)
		}
		if err != nil {
			return fmt.Errorf("mcp: implementation %q: %w", it.Key, err)
		}
	}
	return it.Err
}

// MarshalJSON writes the implementation as its struct tags say, without
// encoding/json's reflection.
func (m Implementation) MarshalJSON() ([]byte, error) {
	bp := getEncBuf()
	b, err := m.appendJSON((*bp)[:0])
	if err != nil {
		encBufPool.Put(bp)
		type plain Implementation
		return json.Marshal(plain(m))
	}
	return finishEncBuf(bp, b), nil
}

// appendJSON appends m as json.Marshal encodes the struct.
func (m *Implementation) appendJSON(dst []byte) ([]byte, error) {
	if m == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, `{"name":`...)
	dst = appendJSONString(dst, m.Name)
	if m.Title != "" {
		dst = append(dst, `,"title":`...)
		dst = appendJSONString(dst, m.Title)
	}
	dst = append(dst, `,"version":`...)
	dst = appendJSONString(dst, m.Version)
	if m.Description != "" {
		dst = append(dst, `,"description":`...)
		dst = appendJSONString(dst, m.Description)
	}
	if m.WebsiteURL != "" {
		dst = append(dst, `,"websiteUrl":`...)
		dst = appendJSONString(dst, m.WebsiteURL)
	}
	if len(m.Icons) > 0 {
		dst = append(dst, `,"icons":`...)
		var err error
		if dst, err = appendMarshal(dst, m.Icons); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}
