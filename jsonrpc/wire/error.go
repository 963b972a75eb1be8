package wire

import (
	"encoding/json"
	"fmt"
)

// Standard JSON-RPC 2.0 error codes.
const (
	CodeParseError     int64 = -32700 // the message is not valid JSON
	CodeInvalidRequest int64 = -32600 // the JSON is not a valid request object
	CodeMethodNotFound int64 = -32601 // the method does not exist or is not served
	CodeInvalidParams  int64 = -32602 // the params are invalid for the method
	CodeInternalError  int64 = -32603 // the handler failed
)

// Error is a JSON-RPC error object. It is both the wire shape and a Go error:
// a handler that returns an *Error (directly or wrapped) sends exactly that
// object to the peer, and a call whose peer answered with an error returns an
// *Error that callers can inspect with errors.As.
type Error struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// NewError returns an error with the given code and message and, when data is
// not nil, the JSON encoding of data (a json.RawMessage is used as it is).
// Data that cannot be encoded is left out.
func NewError(code int64, message string, data any) *Error {
	e := &Error{Code: code, Message: message}
	if data != nil {
		if raw, ok := data.(json.RawMessage); ok {
			e.Data = raw
		} else if b, err := json.Marshal(data); err == nil {
			e.Data = b
		}
	}
	return e
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
