package wire

import (
	"encoding/json"
	"fmt"
)

// This file is the one place where Parley builds error objects: every
// package answers a peer with an *Error made by one of the constructors
// below (a test in internal/layering holds that no other file writes an
// Error literal or calls NewError). Each constructor's message is sent to
// the peer as it is, so callers pass text written for the peer, never a Go
// error's text: a Go error chain names types, files and values that are
// nobody's business on the wire, and it goes to the log instead.

// Standard JSON-RPC 2.0 error codes.
const (
	CodeParseError     int64 = -32700 // the message is not valid JSON
	CodeInvalidRequest int64 = -32600 // the JSON is not a valid request object
	CodeMethodNotFound int64 = -32601 // the method does not exist or is not served
	CodeInvalidParams  int64 = -32602 // the params are invalid for the method
	CodeInternalError  int64 = -32603 // the handler failed
)

// The error codes MCP defines (package mcp re-exports them with their
// data types and readers). Each is sent with HTTP 400 on Streamable HTTP.
const (
	// CodeHeaderMismatch: an HTTP header (MCP-Protocol-Version, Mcp-Method,
	// Mcp-Name, Mcp-Param-*) is missing, malformed or differs from the body.
	CodeHeaderMismatch int64 = -32020
	// CodeMissingRequiredClientCapability: the server needs a client
	// capability the request did not declare.
	CodeMissingRequiredClientCapability int64 = -32021
	// CodeUnsupportedProtocolVersion: the server does not serve the
	// request's protocol version.
	CodeUnsupportedProtocolVersion int64 = -32022
)

// ParseError returns a -32700 error: the message is not valid JSON. The
// error's message is fmt.Sprintf(format, args...), or "Parse error" when
// that is empty; so for every constructor below, each with its code's
// standard message.
func ParseError(format string, args ...any) *Error {
	return build(CodeParseError, "Parse error", format, args...)
}

// InvalidRequest returns a -32600 error: the message is not a valid request,
// or not one this peer takes now (a second initialize, a request the
// session's state does not allow).
func InvalidRequest(format string, args ...any) *Error {
	return build(CodeInvalidRequest, "Invalid request", format, args...)
}

// MethodNotFound returns a -32601 error: the method does not exist, was
// removed, or is not served here.
func MethodNotFound(format string, args ...any) *Error {
	return build(CodeMethodNotFound, "Method not found", format, args...)
}

// InvalidParams returns a -32602 error: the params do not fit the method
// (an unknown tool, arguments that break the schema, a missing _meta key).
func InvalidParams(format string, args ...any) *Error {
	return build(CodeInvalidParams, "Invalid params", format, args...)
}

// Internal returns a -32603 error: the handler failed. With an empty
// format its message is "Internal error", which is what a peer should get
// for a failure whose cause is logged, not sent.
func Internal(format string, args ...any) *Error {
	return build(CodeInternalError, "Internal error", format, args...)
}

// HeaderMismatch returns a -32020 error (see CodeHeaderMismatch).
func HeaderMismatch(format string, args ...any) *Error {
	return build(CodeHeaderMismatch, "Header mismatch", format, args...)
}

// MissingRequiredClientCapability returns a -32021 error (see
// CodeMissingRequiredClientCapability). The protocol wants its data to
// name the capabilities: mcp.NewMissingRequiredClientCapabilityError
// builds it with that data.
func MissingRequiredClientCapability(format string, args ...any) *Error {
	return build(CodeMissingRequiredClientCapability, "Missing required client capability", format, args...)
}

// UnsupportedProtocolVersion returns a -32022 error (see
// CodeUnsupportedProtocolVersion). The protocol wants its data to list the
// supported versions: mcp.NewUnsupportedProtocolVersionError builds it with
// that data.
func UnsupportedProtocolVersion(format string, args ...any) *Error {
	return build(CodeUnsupportedProtocolVersion, "Unsupported protocol version", format, args...)
}

// WithData returns e with data set to the JSON encoding of data (a
// json.RawMessage is used as it is; data that cannot be encoded is left
// out). It changes e and returns it, for chaining on a fresh error:
// wire.InvalidParams("Resource not found: %s", uri).WithData(v).
func (e *Error) WithData(data any) *Error {
	e.Data = encodeData(data)
	return e
}

// CodeOnly returns an error that matches, with errors.Is, every *Error of
// code whatever its message: a sentinel for callers, never sent.
func CodeOnly(code int64) *Error { return &Error{Code: code} }

func build(code int64, standard, format string, args ...any) *Error {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	if msg == "" {
		msg = standard
	}
	return &Error{Code: code, Message: msg}
}

func encodeData(data any) json.RawMessage {
	if data == nil {
		return nil
	}
	if raw, ok := data.(json.RawMessage); ok {
		return raw
	}
	if b, err := json.Marshal(data); err == nil {
		return b
	}
	return nil
}

// Error is a JSON-RPC error object. It is both the wire shape and a Go error:
// a handler that returns an *Error (directly or wrapped) sends exactly that
// object to the peer, and a call whose peer answered with an error returns an
// *Error that callers can inspect with errors.As.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// NewError returns an error with any code, the message as it is and, when
// data is not nil, the JSON encoding of data (a json.RawMessage is used as
// it is; data that cannot be encoded is left out). For the codes above,
// use their constructors; NewError is for the codes an application or an
// extension defines.
func NewError(code int64, message string, data any) *Error {
	return &Error{Code: code, Message: message, Data: encodeData(data)}
}

// Error implements the error interface.
func (e *Error) Error() string {
	if e == nil {
		return "jsonrpc error: <nil>"
	}
	if len(e.Data) > 0 {
		return fmt.Sprintf("jsonrpc error %d: %s (data: %s)", e.Code, e.Message, e.Data)
	}
	return fmt.Sprintf("jsonrpc error %d: %s", e.Code, e.Message)
}

// Is reports whether target is an *Error with the same code, so that
// errors.Is(err, &wire.Error{Code: wire.CodeInvalidParams}) matches any
// invalid-params error.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && e != nil && t != nil && t.Code == e.Code && (t.Message == "" || t.Message == e.Message)
}

// DecodeData decodes the error's data into v.
func (e *Error) DecodeData(v any) error {
	if len(e.Data) == 0 {
		return fmt.Errorf("jsonrpc: error %d carries no data", e.Code)
	}
	return json.Unmarshal(e.Data, v)
}
