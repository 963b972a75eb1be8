package jsontext

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// This file is the validating mode of the package: readers of JSON that
// nothing has checked yet (the JSON-RPC decoder, the one-pass decoders of
// package mcp, the argument digest of package requeststate) walk it with
// these functions, which check the grammar of RFC 8259 exactly as
// json.Valid does and report the first error with its offset. The rest of
// the package is the trusting mode, for text already known to be valid.
//
// Both modes share one nesting limit, MaxDepth.

// MaxDepth is the deepest nesting of objects and arrays any reader in
// Parley accepts, the outermost value counting as one level: the JSON-RPC
// layer refuses deeper messages (jsonrpc.MaxNestingDepth is this constant),
// and the validating scanner, the argument digest and CheckUnambiguous
// refuse deeper values.
//
// 128 is the wire limit Parley has always had, so nothing a peer could send
// before is refused now; every value any reader sees is a part of a message
// that passed it, and a part is never deeper than the whole, so no reader
// can meet a value that the wire accepted and it refuses. It is far beyond
// what MCP messages nest (a tool's input schema in a tools/list result, the
// deepest thing the protocol carries, rarely passes 10 levels) and small
// enough that the recursive readers (the scanner, the digest, the
// ambiguity check) spend a bounded, small amount of stack on what a peer
// chooses. encoding/json's own limit (10,000) is a stack guard, not a
// protocol limit; the validating scanner agrees with json.Valid everywhere
// except past MaxDepth, where it refuses what json.Valid accepts.
const MaxDepth = 128

// A SyntaxError reports JSON that the validating scanner refused.
type SyntaxError struct {
	Msg    string // what is wrong
	Offset int    // where, in bytes from the start of the text
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.Offset, e.Msg)
}

// IsDepthError reports whether err is (or wraps) the scanner's refusal of
// a value nested deeper than MaxDepth.
func IsDepthError(err error) bool {
	var se *SyntaxError
	return errors.As(err, &se) && se.Msg == msgDepth
}

var msgDepth = fmt.Sprintf("exceeded the nesting limit of %d", MaxDepth)

// SkipSpace returns the offset of the first byte at or after i that is not
// JSON whitespace (len(data) when there is none).
func SkipSpace(data []byte, i int) int { return skipSpace(data, i) }

// Valid reports, as a *SyntaxError, why data is not exactly one JSON value
// surrounded by optional whitespace and nested at most MaxDepth deep; nil
// when it is.
func Valid(data []byte) error {
	i := skipSpace(data, 0)
	end, err := SkipValue(data, i, 0)
	if err != nil {
		return err
	}
	if j := skipSpace(data, end); j != len(data) {
		return &SyntaxError{Msg: "unexpected data after the value", Offset: j}
	}
	return nil
}

// ScanMembers is Valid that also reads an object's members in the same
// pass: when data is an object and member is not nil, it calls member with
// the name (unescaped, as ObjectIter and Members give it) and the raw value
// of each top-level member, in order, as the scan reaches them. Values are
// never empty and alias data. member may be called before the scan finds
// data invalid: a caller must discard what it gathered when the error is
// not nil. The JSON-RPC decoder reads every message with it, so that a
// message is walked once.
func ScanMembers(data []byte, member func(key, value []byte)) error {
	if member == nil || FirstByte(data) != '{' {
		return Valid(data)
	}
	it := NewObjectIter(data)
	for it.Next() {
		member(it.Key, it.Val)
	}
	return it.Err
}

// SkipValue validates the JSON value starting at data[i] and returns the
// offset just past it. depth is the number of objects and arrays already
// open around the value: a container at depth MaxDepth or more is refused.
func SkipValue(data []byte, i, depth int) (int, error) {
	if i >= len(data) {
		return i, &SyntaxError{Msg: "unexpected end of input", Offset: i}
	}
	switch c := data[i]; {
	case c == '"':
		end, _, err := ScanString(data, i)
		return end, err
	case c == '{' || c == '[':
		if depth >= MaxDepth {
			return i, &SyntaxError{Msg: msgDepth, Offset: i}
		}
		closer := byte('}')
		if c == '[' {
			closer = ']'
		}
		j := skipSpace(data, i+1)
		if j < len(data) && data[j] == closer {
			return j + 1, nil
		}
		for {
			if c == '{' {
				if j >= len(data) || data[j] != '"' {
					return j, &SyntaxError{Msg: "expected a string key", Offset: j}
				}
				end, _, err := ScanString(data, j)
				if err != nil {
					return end, err
				}
				j = skipSpace(data, end)
				if j >= len(data) || data[j] != ':' {
					return j, &SyntaxError{Msg: "expected ':' after object key", Offset: j}
				}
				j = skipSpace(data, j+1)
			}
			end, err := SkipValue(data, j, depth+1)
			if err != nil {
				return end, err
			}
			j = skipSpace(data, end)
			if j >= len(data) {
				return j, &SyntaxError{Msg: "unexpected end of input", Offset: j}
			}
			if data[j] == closer {
				return j + 1, nil
			}
			if data[j] != ',' {
				return j, &SyntaxError{Msg: "expected ',' or closing bracket", Offset: j}
			}
			j = skipSpace(data, j+1)
		}
	case c == 't':
		return skipLiteral(data, i, "true")
	case c == 'f':
		return skipLiteral(data, i, "false")
	case c == 'n':
		return skipLiteral(data, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		n, err := ScanNumber(data, i)
		return n.End, err
	default:
		return i, &SyntaxError{Msg: fmt.Sprintf("invalid character %q looking for a value", c), Offset: i}
	}
}

func skipLiteral(data []byte, i int, lit string) (int, error) {
	if len(data)-i < len(lit) || string(data[i:i+len(lit)]) != lit {
		return i, &SyntaxError{Msg: "invalid literal", Offset: i}
	}
	return i + len(lit), nil
}

// ScanString validates the string literal starting at data[i] (a quote)
// and returns the offset just past its closing quote, and whether it holds
// escapes. Like json.Valid, it does not check that the bytes are UTF-8.
func ScanString(data []byte, i int) (end int, escaped bool, err error) {
	for j := i + 1; j < len(data); j++ {
		// Skip the plain bytes, the common case: eight at a time while
		// none of them needs attention, then one at a time.
		for len(data)-j >= 8 && !needsAttention(binary.LittleEndian.Uint64(data[j:])) {
			j += 8
		}
		for j < len(data) && plainStringByte[data[j]] {
			j++
		}
		if j >= len(data) {
			break
		}
		switch c := data[j]; {
		case c == '"':
			return j + 1, escaped, nil
		case c == '\\':
			escaped = true
			j++
			if j >= len(data) {
				break
			}
			switch data[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if len(data)-j < 5 || !isHex(data[j+1]) || !isHex(data[j+2]) || !isHex(data[j+3]) || !isHex(data[j+4]) {
					return j, false, &SyntaxError{Msg: "invalid \\u escape in string", Offset: j}
				}
				j += 4
			default:
				return j, false, &SyntaxError{Msg: "invalid escape in string", Offset: j}
			}
		case c < 0x20:
			return j, false, &SyntaxError{Msg: "control character in string", Offset: j}
		}
	}
	return len(data), false, &SyntaxError{Msg: "unterminated string", Offset: i}
}

// needsAttention reports whether any of the eight bytes in w is one
// plainStringByte does not mark: a control character, the quote or the
// backslash. Subtracting n from every byte sets the high bit of a byte below
// n whose own high bit is clear (&^ w drops bytes of 0x80 and up); a byte
// below n also borrows from the next, which may mark that one too, but no
// borrow happens unless some byte is below n, so "any marked" is exact. The
// quote and the backslash are the bytes below 1 once w is xored with them.
func needsAttention(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	control := (w - 0x20*ones) &^ w
	quote := w ^ '"'*ones
	backslash := w ^ '\\'*ones
	return (control|(quote-ones)&^quote|(backslash-ones)&^backslash)&highs != 0
}

// plainStringByte marks the bytes that need no attention inside a string:
// everything but the quote, the backslash and control characters.
var plainStringByte = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 0x20 && c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// A Number is the anatomy of a validated JSON number literal, as offsets
// into the text: value = ±(Int digits . Frac digits) × 10^(±Exp digits).
type Number struct {
	Neg                bool // a leading minus sign
	IntStart, IntEnd   int  // the integer digits
	FracStart, FracEnd int  // the fraction digits (empty when there is no '.')
	ExpNeg             bool // the exponent has a minus sign
	ExpStart, ExpEnd   int  // the exponent digits (empty when there is no exponent)
	Start, End         int  // the whole literal
}

// ScanNumber validates the JSON number literal starting at data[i] and
// returns its parts; n.End is the offset just past it.
func ScanNumber(data []byte, i int) (n Number, err error) {
	n.Start = i
	if i < len(data) && data[i] == '-' {
		n.Neg = true
		i++
	}
	n.IntStart = i
	switch {
	case i < len(data) && data[i] == '0':
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		for i < len(data) && isDigit(data[i]) {
			i++
		}
	default:
		return badNumber(n, i)
	}
	n.IntEnd = i
	n.FracStart, n.FracEnd = i, i
	if i < len(data) && data[i] == '.' {
		i++
		n.FracStart = i
		for i < len(data) && isDigit(data[i]) {
			i++
		}
		if i == n.FracStart {
			return badNumber(n, i)
		}
		n.FracEnd = i
	}
	n.ExpStart, n.ExpEnd = i, i
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			n.ExpNeg = data[i] == '-'
			i++
		}
		n.ExpStart = i
		for i < len(data) && isDigit(data[i]) {
			i++
		}
		if i == n.ExpStart {
			return badNumber(n, i)
		}
		n.ExpEnd = i
	}
	n.End = i
	return n, nil
}

func badNumber(n Number, i int) (Number, error) {
	n.End = i
	return n, &SyntaxError{Msg: "invalid number", Offset: n.Start}
}

// ObjectIter iterates over the members of one JSON object, validating as
// it goes:
//
//	it := jsontext.NewObjectIter(data)
//	for it.Next() {
//		switch string(it.Key) { ... it.Val ... }
//	}
//	if it.Err != nil { ... }
//
// The whole input must be exactly one object, optionally surrounded by
// whitespace, nested at most MaxDepth deep. Keys are unescaped (as
// encoding/json would, invalid UTF-8 replaced by U+FFFD); values are raw
// JSON texts, validated, that alias the input. Nothing is allocated unless
// a key holds escapes or invalid UTF-8.
type ObjectIter struct {
	Key []byte // the current member's name, unescaped
	Val []byte // the current member's value
	Err error  // why the iteration stopped early, a *SyntaxError

	data  []byte
	pos   int
	state uint8 // 0 before '{', 1 inside, 2 done
}

// NewObjectIter returns an iterator over the members of the object data.
func NewObjectIter(data []byte) ObjectIter { return ObjectIter{data: data} }

func (it *ObjectIter) fail(msg string, off int) bool {
	it.Err = &SyntaxError{Msg: msg, Offset: off}
	it.state = 2
	return false
}

// Next advances to the next member and reports whether there is one.
func (it *ObjectIter) Next() bool {
	d := it.data
	switch it.state {
	case 2:
		return false
	case 0:
		i := skipSpace(d, 0)
		if i >= len(d) || d[i] != '{' {
			if len(d)-i >= 4 && string(d[i:i+4]) == "null" {
				return it.fail("expected an object, found null", i)
			}
			return it.fail("expected an object", i)
		}
		i = skipSpace(d, i+1)
		if i < len(d) && d[i] == '}' {
			return it.finish(i + 1)
		}
		it.pos = i
		it.state = 1
	default:
		i := skipSpace(d, it.pos)
		if i >= len(d) {
			return it.fail("unexpected end of input in object", i)
		}
		switch d[i] {
		case '}':
			return it.finish(i + 1)
		case ',':
			it.pos = skipSpace(d, i+1)
		default:
			return it.fail("expected ',' or '}' after object member", i)
		}
	}
	// One member at it.pos.
	i := it.pos
	if i >= len(d) || d[i] != '"' {
		return it.fail("expected a string key", i)
	}
	end, esc, err := ScanString(d, i)
	if err != nil {
		it.Err, it.state = err, 2
		return false
	}
	if esc || !utf8.Valid(d[i+1:end-1]) {
		// Escapes, or invalid UTF-8 that encoding/json would replace.
		var s string
		if err := json.Unmarshal(d[i:end], &s); err != nil {
			return it.fail("bad key: "+err.Error(), i)
		}
		it.Key = []byte(s)
	} else {
		it.Key = d[i+1 : end-1]
	}
	i = skipSpace(d, end)
	if i >= len(d) || d[i] != ':' {
		return it.fail("expected ':' after object key", i)
	}
	i = skipSpace(d, i+1)
	vend, err := SkipValue(d, i, 1) // inside the object: one level deep
	if err != nil {
		it.Err, it.state = err, 2
		return false
	}
	it.Val = d[i:vend]
	it.pos = vend
	return true
}

// finish ends the iteration at offset i (just after the closing brace),
// checking that only whitespace follows.
func (it *ObjectIter) finish(i int) bool {
	it.state = 2
	if j := skipSpace(it.data, i); j != len(it.data) {
		return it.fail("unexpected data after object", j)
	}
	return false
}

// ArrayIter iterates over the elements of one JSON array, validating as it
// goes, as ObjectIter does over an object's members:
//
//	it := jsontext.NewArrayIter(data)
//	for it.Next() { ... it.Val ... }
//	if it.Err != nil { ... }
type ArrayIter struct {
	Val []byte // the current element
	Err error  // why the iteration stopped early, a *SyntaxError

	data  []byte
	pos   int
	state uint8 // 0 before '[', 1 inside, 2 done
}

// NewArrayIter returns an iterator over the elements of the array data.
func NewArrayIter(data []byte) ArrayIter { return ArrayIter{data: data} }

func (it *ArrayIter) fail(msg string, off int) bool {
	it.Err = &SyntaxError{Msg: msg, Offset: off}
	it.state = 2
	return false
}

// Next advances to the next element and reports whether there is one.
func (it *ArrayIter) Next() bool {
	d := it.data
	switch it.state {
	case 2:
		return false
	case 0:
		i := skipSpace(d, 0)
		if i >= len(d) || d[i] != '[' {
			return it.fail("expected an array", i)
		}
		i = skipSpace(d, i+1)
		if i < len(d) && d[i] == ']' {
			return it.finish(i + 1)
		}
		it.pos = i
		it.state = 1
	default:
		i := skipSpace(d, it.pos)
		if i >= len(d) {
			return it.fail("unexpected end of input in array", i)
		}
		switch d[i] {
		case ']':
			return it.finish(i + 1)
		case ',':
			it.pos = skipSpace(d, i+1)
		default:
			return it.fail("expected ',' or ']' after array element", i)
		}
	}
	end, err := SkipValue(d, it.pos, 1)
	if err != nil {
		it.Err, it.state = err, 2
		return false
	}
	it.Val = d[it.pos:end]
	it.pos = end
	return true
}

func (it *ArrayIter) finish(i int) bool {
	it.state = 2
	if j := skipSpace(it.data, i); j != len(it.data) {
		return it.fail("unexpected data after array", j)
	}
	return false
}

// Depth returns the deepest nesting of objects and arrays in the valid JSON
// text data (trusting mode: brackets are counted outside strings, nothing
// is checked), the outermost value counting as one level.
func Depth(data []byte) int {
	depth, deepest := 0, 0
	inString := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch c {
			case '\\':
				i++
			case '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			deepest = max(deepest, depth)
		case '}', ']':
			depth--
		}
	}
	return deepest
}
