package jsonrpc

import "github.com/parley-mcp/parley/jsonrpc/wire"

// The request id and the error object live in package wire, which does no
// I/O, so that package mcp can hold them without importing this package;
// these aliases keep their names here, where most callers know them.

// ID is a JSON-RPC request id: a string or a number. See [wire.ID].
type ID = wire.ID

// Error is a JSON-RPC error object and a Go error. See [wire.Error].
type Error = wire.Error

// Standard JSON-RPC 2.0 error codes.
const (
	CodeParseError     = wire.CodeParseError     // the message is not valid JSON
	CodeInvalidRequest = wire.CodeInvalidRequest // the JSON is not a valid request object
	CodeMethodNotFound = wire.CodeMethodNotFound // the method does not exist or is not served
	CodeInvalidParams  = wire.CodeInvalidParams  // the params are invalid for the method
	CodeInternalError  = wire.CodeInternalError  // the handler failed
)

// StringID returns an ID holding the string s.
func StringID(s string) ID { return wire.StringID(s) }

// Int64ID returns an ID holding the integer n.
func Int64ID(n int64) ID { return wire.Int64ID(n) }

// NewError returns an error with the given code and message and, when data
// is not nil, the JSON encoding of data (a json.RawMessage is used as it
// is). Data that cannot be encoded is left out.
//
// Deprecated: use the constructor of the code in package jsonrpc/wire
// (wire.InvalidParams, wire.Internal, …), or wire.NewError for a code of
// your own; package wire builds every protocol error.
func NewError(code int64, message string, data any) *Error {
	return wire.NewError(code, message, data)
}
