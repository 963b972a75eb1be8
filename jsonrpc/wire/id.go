// Package wire holds the two values of the JSON-RPC 2.0 wire format that
// protocol messages carry inside them: request ids (ID) and error objects
// (Error, with the standard codes). It does no I/O and imports nothing of
// Parley's, so that packages describing messages (package mcp, whose types
// hold ids and return errors) can use them without depending on the
// connection machinery of package jsonrpc, which re-exports them under the
// same names (jsonrpc.ID is wire.ID).
package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// ID is a JSON-RPC request id: a string or a number.
//
// An ID keeps the exact JSON text it was decoded from, so a response echoes
// the id byte for byte as the peer sent it (1, 1.0 and "1" are three different
// ids). IDs are comparable and can be used as map keys. The zero ID is "no id"
// and marks a notification.
type ID struct {
	raw string // JSON text of the id: a quoted string or a number literal
}

// StringID returns an ID holding the string s.
func StringID(s string) ID {
	b, _ := json.Marshal(s) // marshalling a string cannot fail
	return ID{raw: string(b)}
}

// Int64ID returns an ID holding the integer n.
func Int64ID(n int64) ID { return ID{raw: strconv.FormatInt(n, 10)} }

// IsValid reports whether id holds a value (the zero ID does not).
func (id ID) IsValid() bool { return id.raw != "" }

// IsString reports whether id is a JSON string.
func (id ID) IsString() bool { return len(id.raw) > 0 && id.raw[0] == '"' }

// Raw returns the id's JSON text exactly as received or built.
func (id ID) Raw() string { return id.raw }

// String returns the id for humans: the unquoted string, or the number's text.
func (id ID) String() string {
	if id.IsString() {
		var s string
		if json.Unmarshal([]byte(id.raw), &s) == nil {
			return s
		}
	}
	return id.raw
}

// Value returns the id as a Go value: a string, or a json.Number. It returns
// nil for the zero ID.
func (id ID) Value() any {
	switch {
	case !id.IsValid():
		return nil
	case id.IsString():
		return id.String()
	default:
		return json.Number(id.raw)
	}
}

// MarshalJSON writes the id's JSON text; the zero ID is written as null.
func (id ID) MarshalJSON() ([]byte, error) {
	if id.raw == "" {
		return []byte("null"), nil
	}
	return []byte(id.raw), nil
}

// errBadID is returned for ids that are neither a string nor a number.
var errBadID = errors.New("jsonrpc: id must be a string or a number")

// UnmarshalJSON accepts a JSON string or number; null decodes to the zero ID.
// It checks the text in place, so decoding costs one allocation: the copy
// of the text the ID keeps.
func (id *ID) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return errBadID
	}
	switch c := data[0]; {
	case c == 'n' && string(data) == "null":
		*id = ID{}
		return nil
	case c == '"':
		if !validIDString(data) {
			return errBadID
		}
	case c == '-' || (c >= '0' && c <= '9'):
		if !validIDNumber(data) {
			return errBadID
		}
	default:
		return errBadID
	}
	id.raw = string(data)
	return nil
}

// validIDString reports whether d is exactly one JSON string, as
// encoding/json would accept it (invalid UTF-8 included: encoding/json
// replaces it when decoding, and an ID keeps the text as it is).
func validIDString(d []byte) bool {
	if len(d) < 2 || d[0] != '"' {
		return false
	}
	for i := 1; i < len(d); i++ {
		switch c := d[i]; {
		case c == '"':
			return i == len(d)-1
		case c == '\\':
			i++
			if i >= len(d) {
				return false
			}
			switch d[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(d) || !idHexDigit(d[i+1]) || !idHexDigit(d[i+2]) || !idHexDigit(d[i+3]) || !idHexDigit(d[i+4]) {
					return false
				}
				i += 4
			default:
				return false
			}
		case c < 0x20:
			return false
		}
	}
	return false
}

func idHexDigit(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// validIDNumber reports whether d is exactly one JSON number.
func validIDNumber(d []byte) bool {
	i := 0
	if i < len(d) && d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i < len(d) && idDigit(d[i]) {
			i++
		}
	default:
		return false
	}
	if i < len(d) && d[i] == '.' {
		i++
		if i >= len(d) || !idDigit(d[i]) {
			return false
		}
		for i < len(d) && idDigit(d[i]) {
			i++
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || !idDigit(d[i]) {
			return false
		}
		for i < len(d) && idDigit(d[i]) {
			i++
		}
	}
	return i == len(d)
}

func idDigit(c byte) bool { return c >= '0' && c <= '9' }
