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
