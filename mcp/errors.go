package mcp

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/parley-mcp/parley/jsonrpc/wire"
)

// JSON-RPC error codes used by MCP. The standard codes are re-exported from
// package jsonrpc; -32020..-32022 are MCP's own (each sent with HTTP 400 on
// Streamable HTTP).
const (
	CodeParseError     = wire.CodeParseError     // -32700: the message is not JSON
	CodeInvalidRequest = wire.CodeInvalidRequest // -32600: not a valid JSON-RPC request
	CodeMethodNotFound = wire.CodeMethodNotFound // -32601: unknown, removed or unadvertised method
	CodeInvalidParams  = wire.CodeInvalidParams  // -32602: bad params, missing _meta keys, unknown tool…
	CodeInternalError  = wire.CodeInternalError  // -32603: the handler failed

	// CodeHeaderMismatch: an HTTP header (MCP-Protocol-Version, Mcp-Method,
	// Mcp-Name, Mcp-Param-*) is missing, malformed or differs from the body.
	CodeHeaderMismatch = wire.CodeHeaderMismatch
	// CodeMissingRequiredClientCapability: the server needs a client
	// capability the request did not declare; data.requiredCapabilities
	// says which.
	CodeMissingRequiredClientCapability = wire.CodeMissingRequiredClientCapability
	// CodeUnsupportedProtocolVersion: the server does not serve the
	// request's protocol version; data lists the supported ones.
	CodeUnsupportedProtocolVersion = wire.CodeUnsupportedProtocolVersion

	// CodeResourceNotFoundLegacy is the resource-not-found code of legacy
	// servers. 2026-07-28 uses -32602; never send it, but accept it.
	CodeResourceNotFoundLegacy int64 = -32002
	// CodeURLElicitationRequiredLegacy is the 2025-11-25 URL-elicitation
	// error, removed by 2026-07-28; never send it under 2026-07-28.
	CodeURLElicitationRequiredLegacy int64 = -32042
)

// Code-only errors for errors.Is: errors.Is(err, ErrUnsupportedProtocolVersion)
// is true for any *wire.Error with that code in err's chain (see
// wire.Error.Is). Do not modify or send them.
var (
	ErrHeaderMismatch                  = wire.CodeOnly(CodeHeaderMismatch)
	ErrMissingRequiredClientCapability = wire.CodeOnly(CodeMissingRequiredClientCapability)
	ErrUnsupportedProtocolVersion      = wire.CodeOnly(CodeUnsupportedProtocolVersion)
)

// NewHeaderMismatchError returns a -32020 error with message msg (or
// "Header mismatch" when msg is empty).
//
// Deprecated: use wire.HeaderMismatch, the one constructor of the code
// (package jsonrpc/wire builds every protocol error).
func NewHeaderMismatchError(msg string) *wire.Error {
	return wire.HeaderMismatch("%s", msg)
}

// NewInvalidParamsError returns a -32602 error with message msg.
//
// Deprecated: use wire.InvalidParams, the one constructor of the code
// (package jsonrpc/wire builds every protocol error).
func NewInvalidParamsError(msg string) *wire.Error {
	return wire.InvalidParams("%s", msg)
}

// InvalidRequestStateMessage is the message of the one error a server
// answers every unusable requestState with (code -32602, no data): altered,
// expired, sealed under a key the server lacks, replayed onto another
// request or principal, or not even a string. The wire never says which
// check failed; the server's log does.
const InvalidRequestStateMessage = "Invalid or expired requestState"

// NewInvalidRequestStateError returns the fixed requestState error, a fresh
// value each time.
func NewInvalidRequestStateError() *wire.Error {
	return wire.InvalidParams("%s", InvalidRequestStateMessage)
}

// IsInvalidRequestState reports whether err is, or wraps, the fixed
// requestState error. A client that gets it holds state no server will
// take (most often: a retry that reached an instance without the key that
// sealed it, or a server restarted since) and should start the call again
// from its first round.
func IsInvalidRequestState(err error) bool {
	var e *wire.Error
	return errors.As(err, &e) && e.Code == CodeInvalidParams && e.Message == InvalidRequestStateMessage
}

// NewMethodNotFoundError returns a -32601 error naming method.
//
// Deprecated: use wire.MethodNotFound, the one constructor of the code
// (package jsonrpc/wire builds every protocol error).
func NewMethodNotFoundError(method string) *wire.Error {
	return wire.MethodNotFound("Method not found: %s", method)
}

// MissingRequiredClientCapabilityData is the data of a -32021 error.
//
//mcp:json
type MissingRequiredClientCapabilityData struct {
	// RequiredCapabilities are the capabilities the request must declare.
	RequiredCapabilities *ClientCapabilities `json:"requiredCapabilities"`
}

// NewMissingRequiredClientCapabilityError returns a -32021 error whose data
// is {"requiredCapabilities": required}. A nil required is sent as {}.
func NewMissingRequiredClientCapabilityError(required *ClientCapabilities) *wire.Error {
	if required == nil {
		required = &ClientCapabilities{}
	}
	msg := "Missing required client capability"
	if names := capabilityNames(required); len(names) > 0 {
		msg += ": " + strings.Join(names, ", ")
	}
	data, _ := json.Marshal(MissingRequiredClientCapabilityData{RequiredCapabilities: required})
	return wire.MissingRequiredClientCapability("%s", msg).WithData(json.RawMessage(data))
}

// capabilityNames lists the capabilities in c for a message, such as
// "elicitation.url" or "sampling.tools".
func capabilityNames(c *ClientCapabilities) []string {
	var names []string
	if e := c.Elicitation; e != nil {
		switch {
		case e.Form != nil && e.URL != nil:
			names = append(names, "elicitation.form", "elicitation.url")
		case e.URL != nil:
			names = append(names, "elicitation.url")
		default:
			names = append(names, "elicitation")
		}
	}
	if s := c.Sampling; s != nil {
		switch {
		case s.Tools != nil && s.Context != nil:
			names = append(names, "sampling.tools", "sampling.context")
		case s.Tools != nil:
			names = append(names, "sampling.tools")
		case s.Context != nil:
			names = append(names, "sampling.context")
		default:
			names = append(names, "sampling")
		}
	}
	if c.Roots != nil {
		names = append(names, "roots")
	}
	for _, k := range sortedKeys(c.Extensions) {
		names = append(names, "extensions."+k)
	}
	for _, k := range sortedKeys(c.Experimental) {
		names = append(names, "experimental."+k)
	}
	return names
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// UnsupportedProtocolVersionData is the data of a -32022 error.
//
//mcp:json
type UnsupportedProtocolVersionData struct {
	// Supported lists the versions the server serves.
	Supported []ProtocolVersion `json:"supported"`
	// Requested is the version the request asked for.
	Requested ProtocolVersion `json:"requested"`
}

// NewUnsupportedProtocolVersionError returns a -32022 error whose data is
// {"supported": supported, "requested": requested}. The message names the
// supported versions too, for clients that only show messages.
func NewUnsupportedProtocolVersionError(requested ProtocolVersion, supported []ProtocolVersion) *wire.Error {
	if supported == nil {
		supported = []ProtocolVersion{}
	}
	list := make([]string, len(supported))
	for i, v := range supported {
		list[i] = string(v)
	}
	msg := "Unsupported protocol version " + quote(string(requested)) +
		" (supported: " + strings.Join(list, ", ") + ")"
	data, _ := json.Marshal(UnsupportedProtocolVersionData{Supported: supported, Requested: requested})
	return wire.UnsupportedProtocolVersion("%s", msg).WithData(json.RawMessage(data))
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// asCode finds the first *wire.Error in err's chain and reports whether
// it has code.
func asCode(err error, code int64) (*wire.Error, bool) {
	var je *wire.Error
	if !errors.As(err, &je) || je == nil || je.Code != code {
		return nil, false
	}
	return je, true
}

// IsHeaderMismatch reports whether err is (or wraps) a -32020 error.
func IsHeaderMismatch(err error) bool {
	_, ok := asCode(err, CodeHeaderMismatch)
	return ok
}

// AsUnsupportedProtocolVersion reports whether err is (or wraps) a -32022
// error, and returns its data. When the data is absent or malformed it still
// reports true (the peer is a modern server) with whatever could be decoded.
func AsUnsupportedProtocolVersion(err error) (*UnsupportedProtocolVersionData, bool) {
	je, ok := asCode(err, CodeUnsupportedProtocolVersion)
	if !ok {
		return nil, false
	}
	d := new(UnsupportedProtocolVersionData)
	if len(je.Data) > 0 {
		_ = json.Unmarshal(je.Data, d)
	}
	return d, true
}

// AsMissingRequiredClientCapability reports whether err is (or wraps) a
// -32021 error, and returns its data. RequiredCapabilities is never nil in
// the returned data; it is empty when the data is absent or malformed.
func AsMissingRequiredClientCapability(err error) (*MissingRequiredClientCapabilityData, bool) {
	je, ok := asCode(err, CodeMissingRequiredClientCapability)
	if !ok {
		return nil, false
	}
	d := new(MissingRequiredClientCapabilityData)
	if len(je.Data) > 0 {
		_ = json.Unmarshal(je.Data, d)
	}
	if d.RequiredCapabilities == nil {
		d.RequiredCapabilities = &ClientCapabilities{}
	}
	return d, true
}

// Error is a JSON-RPC error object: the schema's Error.
type Error = wire.Error

// ParseError is the wire shape of a -32700 error object. Convert with
// (*wire.Error)(e) to use it as a Go error.
//
// Deprecated: the five per-code shapes only mirror the schema's names; an
// error object is a [wire.Error] (also [Error]) whatever its code, built
// with the constructors of package jsonrpc/wire (wire.ParseError, …) and
// told apart by its Code.
type ParseError wire.Error

// InvalidRequestError is the wire shape of a -32600 error object.
//
// Deprecated: use [Error] and wire.InvalidRequest (see [ParseError]).
type InvalidRequestError wire.Error

// MethodNotFoundError is the wire shape of a -32601 error object.
//
// Deprecated: use [Error] and wire.MethodNotFound (see [ParseError]).
type MethodNotFoundError wire.Error

// InvalidParamsError is the wire shape of a -32602 error object.
//
// Deprecated: use [Error] and wire.InvalidParams (see [ParseError]).
type InvalidParamsError wire.Error

// InternalError is the wire shape of a -32603 error object.
//
// Deprecated: use [Error] and wire.Internal (see [ParseError]).
type InternalError wire.Error
