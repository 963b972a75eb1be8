// Package jsontext is Parley's one JSON scanner. It reads JSON texts in
// place, without decoding them into Go values, in two modes:
//
//   - the trusting mode (FirstByte, Members, Unquote, Depth) reads texts
//     that json.Valid has already accepted: it only finds where values end,
//     never diagnoses errors, and on invalid input stops early or returns
//     nonsense, never panicking or indexing out of bounds. The JSON-RPC
//     connection, the server and the transports use it to pick a few
//     members out of messages already read, without allocating;
//   - the validating mode (Valid, ScanMembers, SkipValue, ScanString,
//     ScanNumber, ObjectIter, ArrayIter) reads texts nothing has checked
//     and accepts exactly what json.Valid accepts (up to MaxDepth),
//     reporting the first error as a *SyntaxError. The JSON-RPC layer
//     reads every message with ScanMembers (validation, the nesting limit
//     and the envelope's members in one pass) and checks what it writes
//     with Valid; the one-pass decoders of package mcp and the argument
//     digest of package requeststate use the rest.
//
// CheckUnambiguous, on valid text, finds what decoders in common use read
// differently. One nesting limit, MaxDepth, holds in every mode.
package jsontext

import (
	"encoding/json"
	"unicode/utf8"
)

// FirstByte returns the first byte of data that is not JSON whitespace, or
// 0 when there is none.
func FirstByte(data []byte) byte {
	return peek(data, skipSpace(data, 0))
}

// Members calls f with the name (unescaped) and the raw value of each member
// of the JSON object data, in order; leading whitespace is allowed. Values
// are never empty and alias data. Nothing is called when data is not an
// object.
func Members(data []byte, f func(key, value []byte)) {
	pos := skipSpace(data, 0)
	if peek(data, pos) != '{' {
		return
	}
	pos++
	for {
		pos = skipSpace(data, pos)
		if peek(data, pos) != '"' {
			return // '}' (or, on invalid input, anything)
		}
		key, end := value(data, pos)
		if k, plain := plainString(key); plain {
			key = k
		} else {
			s, _ := Unquote(key)
			key = []byte(s)
		}
		pos = skipSpace(data, end)
		if peek(data, pos) != ':' {
			return
		}
		pos = skipSpace(data, pos+1)
		val, end := value(data, pos)
		if len(val) == 0 {
			return
		}
		f(key, val)
		pos = skipSpace(data, end)
		if peek(data, pos) != ',' {
			return
		}
		pos++
	}
}

// Unquote decodes the JSON string literal lit (surrounding whitespace
// allowed) as encoding/json would, invalid UTF-8 replaced by U+FFFD. ok is
// false when lit is not a string literal.
func Unquote(lit []byte) (string, bool) {
	lit = lit[skipSpace(lit, 0):]
	end := len(lit)
	for end > 0 && isSpace(lit[end-1]) {
		end--
	}
	lit = lit[:end]
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return "", false
	}
	if inner, plain := plainString(lit); plain {
		return string(inner), true
	}
	// Declared here, not as a named result: its address escapes, and it
	// would be allocated on every call, plain strings included.
	var s string
	if json.Unmarshal(lit, &s) != nil {
		return "", false
	}
	return s, true
}

// plainString returns the inside of the string literal lit when it needs no
// decoding: no escapes, no control characters, valid UTF-8.
func plainString(lit []byte) ([]byte, bool) {
	if len(lit) < 2 {
		return nil, false
	}
	inner := lit[1 : len(lit)-1]
	for _, c := range inner {
		if c < 0x20 || c == '\\' {
			return nil, false
		}
	}
	return inner, utf8.Valid(inner)
}

func peek(data []byte, pos int) byte {
	if pos < len(data) {
		return data[pos]
	}
	return 0
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(data []byte, pos int) int {
	for pos < len(data) && isSpace(data[pos]) {
		pos++
	}
	return pos
}

// value returns the raw value starting at pos and the offset just past it.
func value(data []byte, pos int) ([]byte, int) {
	start := pos
	switch peek(data, pos) {
	case '"':
		pos = skipString(data, pos)
	case '{', '[':
		depth := 0
		for pos < len(data) {
			switch data[pos] {
			case '"':
				pos = skipString(data, pos)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			pos++
			if depth == 0 {
				return data[start:pos], pos
			}
		}
	default: // number, true, false, null
		for pos < len(data) {
			switch data[pos] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return data[start:pos], pos
			}
			pos++
		}
	}
	return data[start:min(pos, len(data))], min(pos, len(data))
}

// skipString returns the offset just past the string literal at pos.
func skipString(data []byte, pos int) int {
	pos++ // the opening quote
	for pos < len(data) {
		switch data[pos] {
		case '\\':
			pos += 2
			continue
		case '"':
			return pos + 1
		}
		pos++
	}
	return len(data)
}
