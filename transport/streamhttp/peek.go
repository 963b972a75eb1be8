package streamhttp

import (
	"bytes"
	"encoding/json"
	"errors"

	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/mcp"
)

// This file reads what the client transport needs from an outgoing message
// (its kind, id and method, and the params its headers mirror) in one pass
// over the bytes, without decoding the message: every request goes through
// here on its way to a POST.

// outgoing is what peekOutgoing learns of a message.
type outgoing struct {
	response bool       // a response (which a client never POSTs)
	id       jsonrpc.ID // zero for a notification
	method   string
	info     requestInfo
}

// requestInfo is what the headers of a request are made from.
type requestInfo struct {
	version string          // _meta protocolVersion
	meta    json.RawMessage // the raw _meta, reused by the tools/list refetch
	name    *string         // params.name
	uri     *string         // params.uri
	args    json.RawMessage // params.arguments
}

var errNotMessage = errors.New("streamhttp: not a JSON-RPC message")

// peekOutgoing reads msg, which must be a JSON object. Raw values in the
// result alias msg.
func peekOutgoing(msg []byte) (outgoing, error) {
	var out outgoing
	if !json.Valid(msg) || firstNonSpace(msg) != '{' {
		return out, errNotMessage
	}
	var idRaw, methodRaw, params []byte
	members(msg, func(key, value []byte) {
		switch string(key) {
		case "id":
			idRaw = value
		case "method":
			methodRaw = value
		case "params":
			params = value
		case "result", "error":
			out.response = true
		}
	})
	if methodRaw == nil {
		if out.response {
			return out, nil
		}
		return out, errNotMessage
	}
	out.response = false
	method, ok := decodeJSONString(methodRaw)
	if !ok || method == "" {
		return out, errNotMessage
	}
	out.method = internMethod(method)
	if idRaw != nil && string(idRaw) != "null" {
		if err := out.id.UnmarshalJSON(idRaw); err != nil {
			return out, errNotMessage
		}
	}
	if firstNonSpace(params) != '{' {
		return out, nil
	}
	info := &out.info
	members(params, func(key, value []byte) {
		switch string(key) {
		case "_meta":
			info.meta = value
		case "name":
			if s, ok := decodeJSONString(value); ok {
				info.name = &s
			}
		case "uri":
			if s, ok := decodeJSONString(value); ok {
				info.uri = &s
			}
		case "arguments":
			info.args = value
		}
	})
	if firstNonSpace(info.meta) == '{' {
		members(info.meta, func(key, value []byte) {
			if string(key) == mcp.MetaKeyProtocolVersion {
				if s, ok := decodeJSONString(value); ok {
					info.version = internVersion(s)
				}
			}
		})
	}
	return out, nil
}

// The methods whose names are used as they are rather than copied.
var knownMethods = []string{
	mcp.MethodDiscover, mcp.MethodListTools, mcp.MethodCallTool, mcp.MethodListPrompts,
	mcp.MethodGetPrompt, mcp.MethodListResources, mcp.MethodListResourceTemplates,
	mcp.MethodReadResource, mcp.MethodComplete, mcp.MethodSubscriptionsListen,
	jsonrpc.CancelMethod,
}

func internMethod(m string) string {
	for _, k := range knownMethods {
		if m == k {
			return k
		}
	}
	return m
}

func internVersion(v string) string {
	if v == string(mcp.LatestVersion) {
		return string(mcp.LatestVersion)
	}
	return v
}

// decodeJSONString decodes a JSON string literal; ok is false for any
// other value.
func decodeJSONString(lit []byte) (string, bool) {
	lit = bytes.TrimSpace(lit)
	if len(lit) < 2 || lit[0] != '"' {
		return "", false
	}
	inner := lit[1 : len(lit)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return string(inner), true
	}
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return "", false
	}
	return s, true
}

// members calls f with the name (unescaped) and raw value of each member of
// the JSON object data, which must be valid JSON.
func members(data []byte, f func(key, value []byte)) {
	s := jsonScanner{data: data}
	s.space()
	if s.peek() != '{' {
		return
	}
	s.pos++
	for {
		s.space()
		if s.peek() != '"' {
			return
		}
		key := s.value()
		if bytes.IndexByte(key, '\\') >= 0 {
			k, _ := decodeJSONString(key)
			key = []byte(k)
		} else {
			key = key[1 : len(key)-1]
		}
		s.space()
		if s.peek() != ':' {
			return
		}
		s.pos++
		s.space()
		value := s.value()
		if len(value) == 0 {
			return
		}
		f(key, value)
		s.space()
		if s.peek() != ',' {
			return
		}
		s.pos++
	}
}

// jsonScanner finds where the values of a valid JSON text end.
type jsonScanner struct {
	data []byte
	pos  int
}

func (s *jsonScanner) peek() byte {
	if s.pos < len(s.data) {
		return s.data[s.pos]
	}
	return 0
}

func (s *jsonScanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value returns the raw value at the current position and moves past it.
func (s *jsonScanner) value() []byte {
	start := s.pos
	switch s.peek() {
	case '"':
		s.str()
	case '{', '[':
		depth := 0
		for s.pos < len(s.data) {
			switch s.data[s.pos] {
			case '"':
				s.str()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			s.pos++
			if depth == 0 {
				return s.data[start:s.pos]
			}
		}
	default: // number, true, false, null
		for s.pos < len(s.data) {
			switch s.data[s.pos] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return s.data[start:s.pos]
			}
			s.pos++
		}
	}
	return s.data[start:s.pos]
}

// str moves past the string literal at the current position.
func (s *jsonScanner) str() {
	s.pos++
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case '\\':
			s.pos += 2
			continue
		case '"':
			s.pos++
			return
		}
		s.pos++
	}
}
