package jsonrpc

import (
	"bytes"
	"unicode/utf8"

	"github.com/parley-mcp/parley/internal/jsontext"
)

// scanJSON reports whether data is exactly one JSON value, surrounded by
// optional whitespace, by the same rules as encoding/json.Valid (RFC 8259;
// bytes inside strings are not checked for UTF-8, as encoding/json does not
// either), and how deep objects and arrays nest in it.
//
// It exists because it is one pass where json.Valid and a depth count were
// two, and because encoding/json's validator steps a state machine through
// a function call per byte: on the in-memory tools/call, json.Valid was a
// fifth of the CPU profile (BENCHMARKS.md, "Profile-driven changes"). The
// fuzz test FuzzScanJSON holds it to json.Valid.
func scanJSON(data []byte) (depth int, ok bool) { return scanMembers(data, nil) }

// scanMembers is scanJSON that also, when data is an object and member is
// not nil, calls member with the name (unescaped, as jsontext.Members gives
// it) and the raw value of each of its members, in order, as the scan goes:
// decoding a message takes one pass over it, not two. Values are never empty
// and alias data. member may be called before the scan finds data invalid:
// a caller must discard what it gathered when ok is false.
func scanMembers(data []byte, member func(key, value []byte)) (depth int, ok bool) {
	// The open containers, innermost last: '{' or '['. Messages nest a few
	// levels; the array keeps them off the heap.
	var buf [32]byte
	open := buf[:0]
	n := len(data)
	// The name and the value's start of the top-level member being scanned.
	var keyStart, keyEnd, valueStart int
	i := skipWS(data, 0)
	for {
		// A value starts at i.
		if i >= n {
			return depth, false
		}
		switch c := data[i]; c {
		case '{', '[':
			open = append(open, c)
			depth = max(depth, len(open))
			i = skipWS(data, i+1)
			if i < n && data[i] == c+2 { // '}' is '{'+2, ']' is '['+2
				open = open[:len(open)-1]
				i++
				break
			}
			if c == '{' {
				start := i
				end, next := scanKey(data, i)
				if next < 0 {
					return depth, false
				}
				if len(open) == 1 {
					keyStart, keyEnd, valueStart = start, end, next
				}
				i = next
			}
			continue // the first value of the container
		case '"':
			if i = scanString(data, i); i < 0 {
				return depth, false
			}
		case 't':
			if i = scanLiteral(data, i, "true"); i < 0 {
				return depth, false
			}
		case 'f':
			if i = scanLiteral(data, i, "false"); i < 0 {
				return depth, false
			}
		case 'n':
			if i = scanLiteral(data, i, "null"); i < 0 {
				return depth, false
			}
		default:
			if i = scanNumber(data, i); i < 0 {
				return depth, false
			}
		}
		// A value ended before i: close containers until another value
		// is due.
		for {
			if len(open) == 1 && open[0] == '{' && member != nil {
				member(memberName(data[keyStart:keyEnd]), data[valueStart:i])
			}
			i = skipWS(data, i)
			if len(open) == 0 {
				return depth, i == n
			}
			if i >= n {
				return depth, false
			}
			top := open[len(open)-1]
			c := data[i]
			if c == top+2 {
				open = open[:len(open)-1]
				i++
				continue
			}
			if c != ',' {
				return depth, false
			}
			i = skipWS(data, i+1)
			if top == '{' {
				end, next := scanKey(data, i)
				if next < 0 {
					return depth, false
				}
				if len(open) == 1 {
					keyStart, keyEnd, valueStart = i, end, next
				}
				i = next
			}
			break
		}
	}
}

// memberName returns the name the valid string literal lit holds: its
// inside when that needs no decoding, else the decoded string.
func memberName(lit []byte) []byte {
	inner := lit[1 : len(lit)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return inner
	}
	s, _ := jsontext.Unquote(lit)
	return []byte(s)
}

// scanKey scans an object member's name and its colon from i, returning
// the end of the name's literal and where the member's value starts (after
// whitespace), or -1 for the latter.
func scanKey(data []byte, i int) (keyEnd, value int) {
	if i >= len(data) || data[i] != '"' {
		return 0, -1
	}
	if i = scanString(data, i); i < 0 {
		return 0, -1
	}
	keyEnd = i
	i = skipWS(data, i)
	if i >= len(data) || data[i] != ':' {
		return 0, -1
	}
	return keyEnd, skipWS(data, i+1)
}

func skipWS(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// plainByte marks the bytes a string may hold as they are: anything but
// control characters, the quote and the backslash.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// scanString scans the string literal whose quote is at i, returning the
// index after its closing quote, or -1.
func scanString(data []byte, i int) int {
	i++
	for {
		for i < len(data) && plainByte[data[i]] {
			i++
		}
		if i >= len(data) {
			return -1
		}
		switch data[i] {
		case '"':
			return i + 1
		case '\\':
			if i+1 >= len(data) {
				return -1
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) {
					return -1
				}
				for _, h := range data[i+2 : i+6] {
					if !isHex(h) {
						return -1
					}
				}
				i += 6
			default:
				return -1
			}
		default: // a control character
			return -1
		}
	}
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func scanLiteral(data []byte, i int, lit string) int {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}

// scanNumber scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? from i,
// returning the index after it, or -1.
func scanNumber(data []byte, i int) int {
	n := len(data)
	if i < n && data[i] == '-' {
		i++
	}
	switch {
	case i >= n:
		return -1
	case data[i] == '0':
		i++
	case isDigit(data[i]):
		for i < n && isDigit(data[i]) {
			i++
		}
	default:
		return -1
	}
	if i < n && data[i] == '.' {
		i++
		if i >= n || !isDigit(data[i]) {
			return -1
		}
		for i < n && isDigit(data[i]) {
			i++
		}
	}
	if i < n && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < n && (data[i] == '+' || data[i] == '-') {
			i++
		}
		if i >= n || !isDigit(data[i]) {
			return -1
		}
		for i < n && isDigit(data[i]) {
			i++
		}
	}
	return i
}
