package streamhttp

import (
	"encoding/json"
	"errors"

	"github.com/parley-mcp/parley/internal/jsontext"
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
	version   string          // _meta protocolVersion
	meta      json.RawMessage // the raw _meta, reused by the tools/list refetch
	name      *string         // params.name
	uri       *string         // params.uri
	args      json.RawMessage // params.arguments
	target    string          // an extension method's target (transport.WithTarget),
	targetSet bool            // when set
}

var errNotMessage = errors.New("streamhttp: not a JSON-RPC message")

// peekOutgoing reads msg, which must be a JSON object. Raw values in the
// result alias msg.
func peekOutgoing(msg []byte) (outgoing, error) {
	var out outgoing
	if !json.Valid(msg) || jsontext.FirstByte(msg) != '{' {
		return out, errNotMessage
	}
	var idRaw, methodRaw, params []byte
	jsontext.Members(msg, func(key, value []byte) {
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
	method, ok := unquoteKnown(methodRaw, knownMethods)
	if !ok || method == "" {
		return out, errNotMessage
	}
	out.method = method
	if idRaw != nil && string(idRaw) != "null" {
		if err := out.id.UnmarshalJSON(idRaw); err != nil {
			return out, errNotMessage
		}
	}
	if jsontext.FirstByte(params) != '{' {
		return out, nil
	}
	info := &out.info
	jsontext.Members(params, func(key, value []byte) {
		switch string(key) {
		case "_meta":
			info.meta = value
		case "name":
			if s, ok := jsontext.Unquote(value); ok {
				info.name = &s
			}
		case "uri":
			if s, ok := jsontext.Unquote(value); ok {
				info.uri = &s
			}
		case "arguments":
			info.args = value
		}
	})
	if jsontext.FirstByte(info.meta) == '{' {
		jsontext.Members(info.meta, func(key, value []byte) {
			if string(key) == mcp.MetaKeyProtocolVersion {
				if s, ok := unquoteKnown(value, knownVersions); ok {
					info.version = s
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

// knownVersions are the protocol versions whose names are used as they are.
var knownVersions = []string{string(mcp.LatestVersion)}

// unquoteKnown decodes the JSON string literal lit, returning the entry of
// known it spells without allocating; only other strings are copied. Every
// request names its method and version, and most name known ones.
func unquoteKnown(lit []byte, known []string) (string, bool) {
	if len(lit) >= 2 && lit[0] == '"' && lit[len(lit)-1] == '"' {
		inner := lit[1 : len(lit)-1]
		for _, k := range known {
			if string(inner) == k {
				return k, true
			}
		}
	}
	return jsontext.Unquote(lit)
}
