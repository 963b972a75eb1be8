package server

import (
	"github.com/parley-mcp/parley/jsonrpc"
	"github.com/parley-mcp/parley/jsonrpc/wire"
)

// InvalidParams returns an invalid-params error (-32602) for a handler to
// return: an unknown tool or prompt, arguments that do not fit, and so on.
// The message is sent to the client as it is.
//
// Deprecated: use wire.InvalidParams (package jsonrpc/wire builds every
// protocol error; this is the same function).
func InvalidParams(format string, args ...any) *jsonrpc.Error {
	return wire.InvalidParams(format, args...)
}

// ResourceNotFound returns the error for a resources/read of a URI the
// server does not have: -32602 with the URI in data, as 2026-07-28 asks
// (never an empty contents list).
func ResourceNotFound(uri string) *jsonrpc.Error {
	return wire.InvalidParams("Resource not found: %s", uri).WithData(struct {
		URI string `json:"uri"`
	}{uri})
}
